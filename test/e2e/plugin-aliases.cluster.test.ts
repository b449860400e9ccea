// Renames with aliases in a YAML program, as in TypeScript (docs/languages.md): an IpPool renamed
// with an alias is the same pool, so its holders (an IpAllocation, an EgressIp's allocation) are
// unchanged, at preview and at up; a holder renamed with an alias keeps its address. Found by a
// review of the plugin (issue #53's "a YAML pool rename"): the holders were replaced.
import { afterAll, expect, it } from "vitest";
import { changesOf } from "../support/harness";
import { pluginProject, writeProjectFile } from "../support/plugin-project";

const net = `10.49.${Math.floor(Math.random() * 250)}`;

/** The program: a pool named `pool`, an allocation `web` and an EgressIp after it; `options` of each. */
const program = (
  names: { pool: string; web: string },
  options: { pool?: string; web?: string } = {},
) => `name: aliases
runtime: yaml
resources:
  ${names.pool}:
    type: egress-ipam:IpPool
    properties:
      ranges: [{ subnet: ${net}.0/26 }]
${options.pool ?? ""}
  ${names.web}:
    type: egress-ipam:IpAllocation
    properties:
      pool: \${${names.pool}}
${options.web ?? ""}
  team:
    type: egress-ipam:EgressIp
    properties:
      pool: \${${names.pool}}
      namespace: team
      failureDomains: [z1]
      provisioner: { kind: none, hosts: { z1: [node-1] } }
      after: \${${names.web}}
outputs:
  web: \${${names.web}.ips}
  team: \${team.addresses}
`;

const aliasOf = (stack: string, type: string, name: string) =>
  `    options:\n      aliases: ["urn:pulumi:${stack}::aliases::egress-ipam:index:${type}::${name}"]`;

const h = pluginProject(process.env.EGRESS_IPAM_CONSUMER!, "aliases", {
  "Pulumi.yaml": program({ pool: "pool", web: "web" }),
});
afterAll(async () => {
  await h.destroy().catch(() => undefined);
  h.dispose();
});

it("an IpPool, then an IpAllocation, renamed with an alias change nothing and move no address", async () => {
  await h.project();
  const first = await h.up();
  const outputs = (up: typeof first) =>
    Object.fromEntries(Object.entries(up.outputs).map(([k, v]) => [k, v.value]));
  const held = outputs(first);
  expect(held.web).toEqual([`${net}.2`]);

  writeProjectFile(
    h,
    "Pulumi.yaml",
    program({ pool: "egress", web: "web" }, { pool: aliasOf(h.stackName, "IpPool", "pool") }),
  );
  expect(changesOf((await h.preview()).changeSummary), "the pool renamed with an alias").toEqual({});
  const renamed = await h.up();
  expect(changesOf(renamed.summary.resourceChanges)).toEqual({});
  expect(outputs(renamed)).toEqual(held);

  writeProjectFile(
    h,
    "Pulumi.yaml",
    program(
      { pool: "egress", web: "site" },
      { pool: aliasOf(h.stackName, "IpPool", "pool"), web: aliasOf(h.stackName, "IpAllocation", "web") },
    ),
  );
  expect(changesOf((await h.preview()).changeSummary), "the allocation renamed with an alias").toEqual({});
  const again = await h.up();
  expect(changesOf(again.summary.resourceChanges)).toEqual({});
  expect(outputs(again)).toEqual(held);
});
