// An address given as a secret in a YAML program (`ip: { fn::secret: … }`) through the plugin: the
// stack's taken set is read from its state, where the engine keeps a secret encrypted, so the
// address must still be readable there, or a holder added later is planned the same address.
// Issue #53 found it from Python (Output.secret); the TypeScript case is ip-allocation-secret.test.ts.
import { afterAll, expect, it } from "vitest";
import { changesOf } from "../support/harness";
import { pluginProject, writeProjectFile } from "../support/plugin-project";

const net = `10.51.${Math.floor(Math.random() * 250)}`;

const program = (later: boolean) => `name: secret-ip
runtime: yaml
resources:
  pool:
    type: egress-ipam:IpPool
    properties:
      ranges: [{ subnet: ${net}.0/26, rangeStart: ${net}.10 }]
  secret:
    type: egress-ipam:IpAllocation
    properties:
      pool: \${pool}
      ip:
        fn::secret: ${net}.10
${
  later
    ? `  later:
    type: egress-ipam:IpAllocation
    properties:
      pool: \${pool}
`
    : ""
}outputs:
  later: ${later ? "${later.ip}" : '""'}
`;

const h = pluginProject(process.env.EGRESS_IPAM_CONSUMER!, "secret-ip", { "Pulumi.yaml": program(false) });
afterAll(async () => {
  await h.destroy().catch(() => undefined);
  h.dispose();
});

it("keeps a secret address from a holder added later, at preview and up", async () => {
  await h.project();
  await h.up();
  // The ip stays the secret it was given as; the record the taken set reads (ips) is plain, as the
  // resource's ID (the address) always was.
  const held = (await h.resources()).find((r) => r.urn.endsWith("::secret"))!;
  const secretSig = "1b47061264138c4ac30d75fd1eb44270";
  expect(JSON.stringify(held.outputs?.ip)).toContain(secretSig);
  expect(held.outputs?.ips).toEqual([`${net}.10`]);
  expect(held.id).toBe(`${net}.10`);
  writeProjectFile(h, "Pulumi.yaml", program(true));
  const preview = await h.preview();
  expect(preview.planned("later")?.ip).toBe(`${net}.11`);
  const up = await h.up();
  expect(up.outputs.later?.value).toBe(`${net}.11`);
  expect(changesOf((await h.refresh()).summary.resourceChanges)).toEqual({});
});
