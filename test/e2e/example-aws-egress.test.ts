// examples/aws-egress cannot run with plain `pulumi up` here: the AWS provider plugin that answers
// its @pulumi/aws subnet lookups is not served. So it is tested in two halves: its @pulumi/aws part
// under Pulumi's own unit-test mocks, and the whole program with the real engine against moto,
// the lookups answered by a stand-in that asks moto's DescribeSubnets with the same filters.
import { CreateTagsCommand, DescribeSubnetsCommand, type EC2Client } from "@aws-sdk/client-ec2";
import * as path from "node:path";
import { createRequire } from "node:module";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exampleProgram, repoRoot } from "../../scripts/consumer.mjs";
import { prepareExamplesProject } from "../support/example-project";
import { changesOf, Harness } from "../support/harness";
import {
  createWorld,
  ec2Client,
  motoCredentials,
  secondaryIps,
  startMoto,
  type MotoServer,
  type World,
} from "../support/moto";

type Pulumi = typeof import("@pulumi/pulumi");
type Filter = { name: string; values: string[] };

const example = path.join(repoRoot, "examples", "aws-egress", "index.ts");
const project = "egress-ipam-aws-egress";
const region = "us-east-1";
const subnets = { "us-east-1a": "10.0.1.0/24", "us-east-1b": "10.0.2.0/24" };
const worker = { "node-role.kubernetes.io/worker": "" };

/** Stack config as the example's Pulumi.dev.yaml gives it, plus overrides. */
function config(extra: Record<string, string> = {}): Record<string, string> {
  return {
    [`${project}:region`]: region,
    [`${project}:zones`]: JSON.stringify(Object.keys(subnets)),
    [`${project}:tenants`]: JSON.stringify(["team-a", "team-b"]),
    [`${project}:hostTags`]: JSON.stringify(worker),
    ...extra,
  };
}

let examplesDir = "";
beforeAll(() => {
  examplesDir = prepareExamplesProject();
}, 600_000);

describe("example aws-egress: its @pulumi/aws lookups under Pulumi's mocks", () => {
  it("builds one pool per zone over the subnet found by tag, and an EgressIp per tenant", async () => {
    const pulumi = createRequire(path.join(examplesDir, "package.json"))("@pulumi/pulumi") as Pulumi;
    const lookups: Filter[][] = [];
    const registered: { type: string; name: string; inputs: Record<string, unknown> }[] = [];
    pulumi.runtime.setAllConfig(config());
    await pulumi.runtime.setMocks(
      {
        call(args) {
          if (args.token !== "aws:ec2/getSubnet:getSubnet")
            throw new Error(`unexpected invoke ${args.token}`);
          const filters = args.inputs.filters as Filter[];
          lookups.push(filters);
          const zone = filters.find((f) => f.name === "availability-zone")!.values[0] as keyof typeof subnets;
          return { id: `subnet-${zone}`, availabilityZone: zone, cidrBlock: subnets[zone] };
        },
        newResource(args) {
          registered.push({ type: args.type, name: args.name, inputs: args.inputs });
          return { id: `${args.name}-id`, state: args.inputs };
        },
      },
      project,
      "dev",
      false,
      "organization",
    );
    const outputs = await exampleProgram(example, examplesDir)();
    await new Promise<void>((resolve) => pulumi.all(Object.values(outputs)).apply(() => resolve()));

    expect(lookups).toEqual(
      Object.keys(subnets).map((zone) => [
        { name: "tag-key", values: ["egress-ipam"] },
        { name: "availability-zone", values: [zone] },
      ]),
    );
    const pools = registered.filter((r) => r.name.startsWith("egress-"));
    expect(pools.map((p) => [p.name, (p.inputs.ranges as { subnet: string }[])[0]!.subnet])).toEqual([
      ["egress-us-east-1a", "10.0.1.0/24"],
      ["egress-us-east-1b", "10.0.2.0/24"],
    ]);
    const components = registered.filter((r) => r.type === "egress-ipam:index:EgressIp").map((r) => r.name);
    expect(components).toEqual(["team-a", "team-b"]);
    const placements = registered.filter((r) => r.type.endsWith(":EgressIpAssignment"));
    expect(placements).toHaveLength(4);
    for (const p of placements) {
      expect(p.inputs.provisioner).toEqual({ kind: "aws", region, hostTags: worker });
    }
  });
});

describe("example aws-egress with the real engine against moto (lookups answered by moto: no AWS plugin here)", () => {
  const h = () => harness!;
  let harness: Harness | undefined;
  let moto: MotoServer;
  let ec2: EC2Client;
  let world: World;

  /** @pulumi/aws's ec2.getSubnetOutput, answered by moto's DescribeSubnets with the same filters. */
  const awsStandIn = (pulumi: Pulumi) => ({
    ec2: {
      getSubnetOutput: (args: { filters: Filter[] }) =>
        pulumi.output(
          ec2
            .send(
              new DescribeSubnetsCommand({
                Filters: args.filters.map((f) => ({ Name: f.name, Values: f.values })),
              }),
            )
            .then((out) => {
              if (out.Subnets?.length !== 1)
                throw new Error(`expected one subnet for ${JSON.stringify(args)}`);
              return { id: out.Subnets[0]!.SubnetId!, cidrBlock: out.Subnets[0]!.CidrBlock! };
            }),
        ),
    },
  });

  const run = async (tenants: string[]) => {
    const pulumi = createRequire(path.join(examplesDir, "package.json"))("@pulumi/pulumi") as Pulumi;
    const stack = await h().program(
      exampleProgram(example, examplesDir, { "@pulumi/aws": awsStandIn(pulumi) }),
    );
    const values = config({
      [`${project}:tenants`]: JSON.stringify(tenants),
      [`${project}:ec2Endpoint`]: moto.endpoint,
    });
    await stack.setAllConfig(Object.fromEntries(Object.entries(values).map(([k, value]) => [k, { value }])));
  };
  const placed = () => secondaryIps(ec2, Object.values(world.subnetIds));

  beforeAll(async () => {
    moto = await startMoto();
    ec2 = ec2Client(moto.endpoint, region);
    world = await createWorld(ec2, {
      region,
      subnets,
      instances: {
        "us-east-1a": [{ tags: worker }, { tags: worker }],
        "us-east-1b": [{ tags: worker }, { tags: worker }],
      },
    });
    await ec2.send(
      new CreateTagsCommand({
        Resources: Object.values(world.subnetIds),
        Tags: [{ Key: "egress-ipam", Value: "" }],
      }),
    );
    harness = Harness.create(project, { env: motoCredentials, consumerDir: examplesDir });
  }, 120_000);
  afterAll(async () => {
    harness?.dispose();
    await moto?.stop();
  });

  it("previews the addresses, puts them on the nodes, stays still, adds a tenant, and destroys", async () => {
    await run(["team-a", "team-b"]);
    const preview = await h().preview();
    const planned = ["team-a", "team-b"].flatMap((t) =>
      Object.keys(subnets).map((zone) => preview.planned(`IpAllocation::${t}-${zone}`)?.ip),
    );
    expect(planned.every((ip) => typeof ip === "string")).toBe(true);

    const up = await h().up();
    const ips = up.outputs.egressIps!.value as Record<string, string[]>;
    expect([...ips["team-a"]!, ...ips["team-b"]!]).toEqual(planned);
    const onHosts = Object.values(await placed())
      .flat()
      .sort();
    expect(onHosts).toEqual([...planned].sort());
    expect(changesOf((await h().up()).summary.resourceChanges)).toEqual({});

    await run(["team-a", "team-b", "team-c"]); // step2: a third tenant
    const step2 = await h().up();
    const after = step2.outputs.egressIps!.value as Record<string, string[]>;
    expect(after["team-a"]).toEqual(ips["team-a"]);
    expect(Object.values(await placed()).flat()).toHaveLength(6);

    await h().destroy();
    expect(await placed()).toEqual({});
  });
});
