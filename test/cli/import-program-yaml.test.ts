import * as yaml from "js-yaml";
import { describe, expect, it } from "vitest";
import { importProgramYaml } from "../../provider/cli/import-program-yaml";
import schema from "../../provider/plugin/schema.json";
import { ocpStatic, plan } from "./fixtures/imported-plan";

type Program = {
  name: string;
  runtime: string;
  resources: Record<string, { type: string; properties: Record<string, unknown> }>;
  outputs?: Record<string, string>;
};

describe("import's YAML program", () => {
  const text = importProgramYaml(plan);
  const program = yaml.load(text) as Program;

  it("is a whole Pulumi.yaml of the plugin's resources, every value the plan's", () => {
    expect(program.name).toBe("egress-ipam-imported");
    expect(program.runtime).toBe("yaml");
    expect(program.resources).toEqual({
      "egress-zone-a": {
        type: "egress-ipam:IpPool",
        properties: { ranges: [{ subnet: "10.0.1.0/24", gateway: "10.0.1.0" }], exclude: ["10.0.1.5"] },
      },
      "10.0.2.0-24": {
        type: "egress-ipam:IpPool",
        properties: { ranges: [{ subnet: "10.0.2.0/24", gateway: "10.0.2.0" }], cloudReserved: "aws" },
      },
      "team-a": {
        type: "egress-ipam:EgressIp",
        properties: {
          namespace: "team-a",
          // A name with a dot is referred to in the bracket form, which reads it whole.
          pool: { "zone-a": "${egress-zone-a}", "zone-b": '${["10.0.2.0-24"]}' },
          failureDomains: ["zone-a", "zone-b"],
          provisioner: { ...ocpStatic, cloud: { kind: "aws", region: "us-east-1" } },
          adopt: true,
        },
      },
      default: {
        type: "egress-ipam:EgressIp",
        properties: {
          namespace: "default",
          pool: { "zone-a": "${egress-zone-a}" },
          failureDomains: ["zone-a"],
          // Text from the cluster is never read as an interpolation.
          provisioner: { kind: "antrea", externalIPPool: "pool-$${x}" },
          adopt: true,
          // Each EgressIp after the one before it: one order for preview and up (holder-order).
          after: "${team-a}",
        },
      },
      "egress-zone-a-hosts": {
        type: "egress-ipam:CidrAssignment",
        properties: { pool: "${egress-zone-a}", provisioner: { kind: "ovn" }, hosts: ["n1", "n3"] },
      },
    });
    expect(program.outputs).toEqual({ teamAIps: "${team-a.ips}", defaultIps: "${default.ips}" });
  });

  it("sets only properties the plugin's schema has", () => {
    const resources = schema.resources as Record<string, { inputProperties: Record<string, unknown> }>;
    for (const [name, r] of Object.entries(program.resources)) {
      const token = r.type.replace(/^egress-ipam:/, "egress-ipam:index:");
      const known = Object.keys(resources[token]?.inputProperties ?? {});
      expect(known, `${name} (${r.type})`).not.toEqual([]);
      expect(
        Object.keys(r.properties).filter((k) => !known.includes(k)),
        name,
      ).toEqual([]);
    }
  });

  it("keeps what the cluster had, problems and the header as comments, each on its own line", () => {
    const comments = text.split("\n").filter((l) => l.trimStart().startsWith("#"));
    expect(comments).toContain(
      "# Written by `pulumi-egress-ipam import` from https://api.prod:6443 (context admin@prod).",
    );
    expect(comments).toContain("# not imported: 10.9.9.9 of namespace lost: give --cidr");
    expect(comments).toContain("  # 10.0.2.1 in zone-b on n2: NetNamespace team-a");
    expect(comments).toContain("  # 10.0.1.2 in zone-a (placed by the platform): Egress e");
    expect(comments).toContain("  # --cidr x: 1");
    expect(text.split("\n").filter((l) => l.startsWith("x:"))).toEqual([]);
  });

  it("writes an empty plan as a program without resources", () => {
    const empty = { ...plan, pools: [], egressIps: [], cidrAssignments: [], problems: [] };
    expect(yaml.load(importProgramYaml(empty))).toMatchObject({ runtime: "yaml", resources: {} });
  });
});
