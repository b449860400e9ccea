// The EgressIp component's inputs that decide its children (failureDomains and each of its
// elements, families, adopt, the ips list, pool, after) from a Python program that gives them as
// outputs, as the schema's types do not stop it doing (issue #55): each is refused at preview with
// INVALID_INPUT naming the input and saying to give a plain value, where the construct used to crash
// ("object is not iterable"), name a child after an Output's toString, refuse an unknown family as
// "04da6b54-… is not a family", or take an output `adopt` for true. The same program with plain
// values, and outputs only where TypeScript takes them (the ips' elements) or known at preview,
// previews and goes up. A YAML program's unknown failure domain and family are refused the same way.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Harness } from "../support/harness";
import { pluginProject, pythonSdk, writeProjectFile } from "../support/plugin-project";
import { testKubeconfig } from "../support/kube";

const consumer = () => process.env.EGRESS_IPAM_CONSUMER!;

const net = `10.45.${100 + Math.floor(Math.random() * 100)}`;

/** The program: an EgressIp over domains a and b of the none provisioner, with `args` as given. */
const program = (args: string) => `import pulumi
import pulumi_egress_ipam as ipam

pool = ipam.IpPool("pool", ranges=[ipam.IpPoolRangeArgs(subnet="${net}.0/24", range_start="${net}.10")])


def later(value):
    """An output not known at preview, as any output of a resource still to be created."""
    return pool.id.apply(lambda _: value)


provisioner = {"kind": "none", "hosts": {"a": ["node-1"], "b": ["node-2"]}}
team = ipam.EgressIp("team", pool=pool, namespace="team", provisioner=provisioner, ${args})
pulumi.export("ips", team.ips)
`;

describe("an EgressIp from Python given outputs where its shape needs plain values", () => {
  let h: Harness;

  beforeAll(async () => {
    h = pluginProject(
      consumer(),
      "plugin-plain",
      {
        "Pulumi.yaml": "name: plugin-plain\nruntime: python\n",
        "__main__.py": program('failure_domains=["a"]'),
      },
      { env: { KUBECONFIG: testKubeconfig(), PYTHONPATH: pythonSdk(consumer()) } },
    );
    await h.project();
  });
  afterAll(() => h?.dispose());

  const refused = async (args: string) => {
    writeProjectFile(h, "__main__.py", program(args));
    return String(
      await h.preview().then(
        () => "preview succeeded",
        (e: Error) => e,
      ),
    );
  };

  it.each([
    ["failureDomains", 'failure_domains=later(["a", "b"])'],
    ["failureDomains\\[0\\]", 'failure_domains=[later("a"), "b"]'],
    ["failureDomains\\[1\\]", 'failure_domains=["a", pulumi.Output.secret("b")]'],
    ["families", 'failure_domains=["a", "b"], families=later("ipv4")'],
    ["adopt", `failure_domains=["a", "b"], ips=["${net}.20", "${net}.21"], adopt=later(False)`],
    ["ips", `failure_domains=["a", "b"], ips=later(["${net}.20", "${net}.21"])`],
  ])(
    "refuses %s given as an output at preview, naming it and asking for a plain value",
    async (input, args) => {
      const err = await refused(args);
      expect(err).toMatch(
        new RegExp(
          `\\[INVALID_INPUT\\] EgressIp "team": ${input} is (an output not known at preview|a secret):`,
        ),
      );
      expect(err).toContain("give it as a plain value");
      expect(err).not.toMatch(/not iterable|toString|is not a family/);
    },
  );

  it("takes plain values, and outputs in the ips list, at preview and up", async () => {
    writeProjectFile(
      h,
      "__main__.py",
      program(
        `failure_domains=["a", "b"], families="ipv4", adopt=pulumi.Output.from_input(False), ` +
          `ips=[later("${net}.20"), "${net}.21"]`,
      ),
    );
    const preview = await h.preview();
    expect(preview.planned("EgressIpAssignment::team-b")?.host).toBe("node-2");
    const up = await h.up();
    expect(up.outputs.ips?.value).toEqual([`${net}.20`, `${net}.21`]);
    await h.destroy();
    expect(await h.resources()).toEqual([]);
  });
});

describe("an EgressIp from YAML given an output not known at preview where it needs plain values", () => {
  const yaml = (properties: string) => `name: plugin-plain-yaml
runtime: yaml
resources:
  pool:
    type: egress-ipam:IpPool
    properties:
      ranges: [{ subnet: ${net}.0/24, rangeStart: ${net}.10 }]
  team:
    type: egress-ipam:EgressIp
    properties:
      pool: \${pool}
      namespace: team
      provisioner: { kind: none, hosts: { a: [node-1], b: [node-2] } }
${properties}
`;

  it.each([
    ["failureDomains\\[0\\]", '      failureDomains: ["${pool.id}", b]'],
    ["families", "      failureDomains: [a, b]\n      families: ${pool.id}"],
  ])("refuses %s at preview, naming it", async (input, properties) => {
    const h = pluginProject(consumer(), "plugin-plain-yaml", { "Pulumi.yaml": yaml(properties) });
    try {
      await h.project();
      const err = String(
        await h.preview().then(
          () => "preview succeeded",
          (e: Error) => e,
        ),
      );
      expect(err).toMatch(
        new RegExp(`\\[INVALID_INPUT\\] EgressIp "team": ${input} is an output not known at preview:`),
      );
      expect(err).not.toMatch(/not iterable|toString|is not a family/);
    } finally {
      h.dispose();
    }
  });
});
