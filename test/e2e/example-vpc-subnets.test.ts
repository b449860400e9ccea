// examples/vpc-subnets cannot run with plain `pulumi up` here: the AWS provider plugin its VPCs and
// subnets need is not served. So it is tested in two halves: its @pulumi/aws part under Pulumi's
// own unit-test mocks (each Vpc and Subnet gets the CIDR its PrefixAllocation holds, and its zone),
// and the whole program with the real engine, @pulumi/aws stood in by Echo resources that keep
// what each Vpc and Subnet was given. The config is the example's Pulumi.dev.yaml, then step2's.
import { loadYaml } from "@kubernetes/client-node";
import * as fs from "node:fs";
import { createRequire } from "node:module";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exampleProgram, repoRoot } from "../../scripts/consumer.mjs";
import { prepareExamplesProject } from "../support/example-project";
import { changesOf, Harness } from "../support/harness";

type Pulumi = typeof import("@pulumi/pulumi");
type Testing = typeof import("../../provider/testing/index");
type Resource = { urn: import("@pulumi/pulumi").Output<string> };
type AwsClass = new (name: string, args: unknown, opts?: unknown) => Resource;

const dir = path.join(repoRoot, "examples", "vpc-subnets");
const example = path.join(dir, "index.ts");
const project = "egress-ipam-vpc-subnets";

/** The stack config a `Pulumi.dev.yaml` of the example gives, as `key → value text`. */
function stackConfig(step: "." | "step2"): Record<string, string> {
  const file = path.join(dir, step, "Pulumi.dev.yaml");
  const { config } = loadYaml(fs.readFileSync(file, "utf8")) as { config: Record<string, unknown> };
  return Object.fromEntries(
    Object.entries(config).map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)]),
  );
}

// Every CIDR the sample config plans (prod, dev; two zones), then what step2 adds (staging between
// them, a third zone): round-robin /16s from 10.0.0.0/8 and /24s from each /16, none moved. The
// first block of each holds its network address and gateway, so it is never handed out.
const dev = {
  prod: "10.1.0.0/16",
  "prod-us-east-1a": "10.1.1.0/24",
  "prod-us-east-1b": "10.1.2.0/24",
  dev: "10.2.0.0/16",
  "dev-us-east-1a": "10.2.1.0/24",
  "dev-us-east-1b": "10.2.2.0/24",
};
const step2 = {
  ...dev,
  "prod-us-east-1c": "10.1.3.0/24",
  staging: "10.3.0.0/16",
  "staging-us-east-1a": "10.3.1.0/24",
  "staging-us-east-1b": "10.3.2.0/24",
  "staging-us-east-1c": "10.3.3.0/24",
  "dev-us-east-1c": "10.2.3.0/24",
};
type Plan = Record<string, string>;

/** The example's outputs for a plan: `vpcCidrs` by environment, `subnetCidrs` by environment and zone. */
function outputsOf(plan: Plan, config: Record<string, string>) {
  const envs = JSON.parse(config[`${project}:environments`]!) as string[];
  const zones = JSON.parse(config[`${project}:zones`]!) as string[];
  return {
    vpcCidrs: Object.fromEntries(envs.map((e) => [e, plan[e]])),
    subnetCidrs: Object.fromEntries(
      envs.map((e) => [e, Object.fromEntries(zones.map((z) => [z, plan[`${e}-${z}`]]))]),
    ),
  };
}

/** What each Vpc (by environment) and Subnet (by `env-zone`) is given, for a plan. */
function awsInputsOf(plan: Plan) {
  return Object.fromEntries(
    Object.entries(plan).map(([name, cidr]) => {
      const zone = /-(us-east-1\w)$/.exec(name)?.[1];
      const env = zone ? name.slice(0, -zone.length - 1) : name;
      return [
        name,
        zone
          ? { vpcId: `vpc-${env}`, cidrBlock: cidr, availabilityZone: zone }
          : { cidrBlock: cidr, tags: { Name: env } },
      ];
    }),
  );
}

let examplesDir = "";
beforeAll(() => {
  examplesDir = prepareExamplesProject();
}, 600_000);

describe("example vpc-subnets: its @pulumi/aws part under Pulumi's mocks", () => {
  it("gives each Vpc its environment's block and each Subnet its zone's block and zone, in that Vpc", async () => {
    const pulumi = createRequire(path.join(examplesDir, "package.json"))("@pulumi/pulumi") as Pulumi;
    const registered: { type: string; name: string; inputs: Record<string, unknown> }[] = [];
    pulumi.runtime.setAllConfig(stackConfig("."));
    await pulumi.runtime.setMocks(
      {
        call(args) {
          throw new Error(`unexpected invoke ${args.token}`);
        },
        newResource(args) {
          registered.push({ type: args.type, name: args.name, inputs: args.inputs });
          // The mocks do not run the provider: a block holds what the engine half plans for it.
          const state = args.type.endsWith(":PrefixAllocation")
            ? { ...args.inputs, cidr: dev[args.name as keyof typeof dev] }
            : args.inputs;
          const id = args.type === "aws:ec2/vpc:Vpc" ? `vpc-${args.name}` : `${args.name}-id`;
          return { id, state };
        },
      },
      project,
      "dev",
      false,
      "organization",
    );
    // The real @pulumi/aws classes, each instance kept so that the test waits for its registration.
    const made: Resource[] = [];
    const tracked = (C: AwsClass): AwsClass =>
      class extends C {
        constructor(name: string, args: unknown, opts?: unknown) {
          super(name, args, opts);
          made.push(this);
        }
      };
    const aws = createRequire(path.join(examplesDir, "package.json"))("@pulumi/aws") as {
      ec2: { Vpc: AwsClass; Subnet: AwsClass };
    };
    const standIn = { ec2: { Vpc: tracked(aws.ec2.Vpc), Subnet: tracked(aws.ec2.Subnet) } };
    const outputs = await exampleProgram(example, examplesDir, { "@pulumi/aws": standIn })();
    const resolved = await new Promise<Record<string, unknown>>((resolve) =>
      pulumi.output(outputs).apply((o) => resolve(o as Record<string, unknown>)),
    );
    await new Promise<void>((resolve) => pulumi.all(made.map((r) => r.urn)).apply(() => resolve()));
    expect(resolved).toEqual(outputsOf(dev, stackConfig(".")));

    const inputsOf = (type: string, keys: string[]) =>
      Object.fromEntries(
        registered
          .filter((r) => r.type === type)
          .map((r) => [r.name, Object.fromEntries(keys.map((k) => [k, r.inputs[k]]))]),
      );
    const vpcs = inputsOf("aws:ec2/vpc:Vpc", ["cidrBlock", "tags"]);
    const subnets = inputsOf("aws:ec2/subnet:Subnet", ["vpcId", "cidrBlock", "availabilityZone"]);
    expect({ ...vpcs, ...subnets }).toEqual(awsInputsOf(dev));
    expect(Object.keys(vpcs)).toEqual(["prod", "dev"]);

    // The pools: the /8 with its rule, and one child pool per environment over that environment's /16.
    const pools = registered.filter((r) => r.type.endsWith(":IpPool"));
    expect(pools.map((p) => [p.name, p.inputs.ranges, p.inputs.prefixLengths])).toEqual([
      ["vpc-space", [{ subnet: "10.0.0.0/8" }], { min: 16, max: 16, default: 16 }],
      ["prod-subnets", [{ subnet: dev.prod }], { min: 24, max: 28, default: 24 }],
      ["dev-subnets", [{ subnet: dev.dev }], { min: 24, max: 28, default: 24 }],
    ]);
  });
});

describe("example vpc-subnets with the real engine (@pulumi/aws stood in: no AWS plugin here)", () => {
  let h: Harness;
  beforeAll(() => {
    h = Harness.create(project, { consumerDir: examplesDir });
  });
  afterAll(() => h?.dispose());

  /**
   * @pulumi/aws's ec2.Vpc and ec2.Subnet as Echo resources keeping what they were given (JSON), so
   * preview shows it and state keeps it. A Vpc's id is `vpc-<name>`, known once its Echo is planned.
   */
  const awsStandIn = (pulumi: Pulumi, { Echo }: Testing) => ({
    ec2: {
      Vpc: class {
        readonly id: import("@pulumi/pulumi").Output<string>;
        constructor(name: string, args: Record<string, unknown>) {
          const echo = new Echo(`vpc-${name}`, { value: pulumi.jsonStringify(args) });
          this.id = echo.value.apply(() => `vpc-${name}`);
        }
      },
      Subnet: class {
        constructor(name: string, args: Record<string, unknown>) {
          const { tags: _, ...given } = args;
          new Echo(`subnet-${name}`, { value: pulumi.jsonStringify(given) });
        }
      },
    },
  });

  const run = async (step: "." | "step2") => {
    const pulumi = createRequire(path.join(examplesDir, "package.json"))("@pulumi/pulumi") as Pulumi;
    const testing = h.pkg<Testing>("pulumi-egress-ipam/testing");
    const stack = await h.program(
      exampleProgram(example, examplesDir, { "@pulumi/aws": awsStandIn(pulumi, testing) }),
    );
    await stack.setAllConfig(
      Object.fromEntries(Object.entries(stackConfig(step)).map(([k, value]) => [k, { value }])),
    );
  };
  /** What a preview shows for every block (PrefixAllocation) and every stood-in Vpc and Subnet. */
  const previewed = (preview: Awaited<ReturnType<Harness["preview"]>>, plan: Plan) => ({
    blocks: Object.fromEntries(Object.keys(plan).map((n) => [n, preview.planned(n)?.cidr])),
    aws: Object.fromEntries(
      Object.keys(plan).map((n) => {
        const given = preview.planned(`${n.includes("-us-east-1") ? "subnet" : "vpc"}-${n}`)?.value;
        return [n, typeof given === "string" ? JSON.parse(given) : given];
      }),
    ),
  });
  /** The same from state, after an up. */
  const stored = async (plan: Plan) => {
    const state = await h.resources();
    const find = (name: string) => state.find((r) => r.urn.endsWith(`::${name}`))?.outputs;
    return {
      blocks: Object.fromEntries(Object.keys(plan).map((n) => [n, find(n)?.cidr])),
      aws: Object.fromEntries(
        Object.keys(plan).map((n) => {
          const given = find(`${n.includes("-us-east-1") ? "subnet" : "vpc"}-${n}`)?.value;
          return [n, typeof given === "string" ? JSON.parse(given) : given];
        }),
      ),
    };
  };

  it("previews every CIDR, up creates exactly those, and a second up changes nothing", async () => {
    await run(".");
    const preview = await h.preview();
    expect(previewed(preview, dev)).toEqual({ blocks: dev, aws: awsInputsOf(dev) });
    // The stack, the /8 pool, two blocks, two child pools, four subnet blocks, two VPCs, four subnets.
    expect(preview.changeSummary.create).toBe(16);

    const up = await h.up();
    const outputs = Object.fromEntries(Object.entries(up.outputs).map(([k, o]) => [k, o.value]));
    expect(outputs).toEqual(outputsOf(dev, stackConfig(".")));
    expect(await stored(dev)).toEqual({ blocks: dev, aws: awsInputsOf(dev) });

    expect(changesOf((await h.up()).summary.resourceChanges)).toEqual({});
  });

  it("step2 (an environment between the others, a third zone) adds blocks and moves none", async () => {
    await run("step2");
    const preview = await h.preview();
    expect(previewed(preview, step2)).toEqual({ blocks: step2, aws: awsInputsOf(step2) });
    for (const name of Object.keys(dev)) expect(preview.op(name), name).toBe("same");

    const up = await h.up();
    // staging: its block, child pool, three subnet blocks, VPC and three subnets; a subnet block and
    // a subnet in each of the other two VPCs.
    expect(changesOf(up.summary.resourceChanges)).toEqual({ create: 13 });
    const outputs = Object.fromEntries(Object.entries(up.outputs).map(([k, o]) => [k, o.value]));
    expect(outputs).toEqual(outputsOf(step2, stackConfig("step2")));
    expect(await stored(step2)).toEqual({ blocks: step2, aws: awsInputsOf(step2) });
    expect(changesOf((await h.up()).summary.resourceChanges)).toEqual({});
  });

  it("destroys everything", async () => {
    await h.destroy();
    expect((await h.resources()).filter((r) => !r.type.startsWith("pulumi:"))).toEqual([]);
  });
});
