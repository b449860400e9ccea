import { describe, expect, it, vi } from "vitest";
import type { EgressIPProvisioner } from "../../../provider/provisioners";
import { fakeProvisioner } from "../../support/fake-provisioners";
import { cidrAssignmentProvider as provider } from "../../../provider/resources/cidr-assignment/cidr-assignment-provider";

vi.mock("../../../provider/provisioners/factory/create-provisioner", async (original) =>
  (await import("../../support/fake-provisioners")).withFakes(await original()),
);
// The stack's identity, without a `pulumi stack export` of a stack that does not exist here.
vi.mock("../../../provider/ledger/stack/stack-identity", () => ({
  stackIdentity: async (stack: string) => `id-of-${stack}`,
}));
// The stack's state, which has no other owner: every owner text is the plain `<identity> <URN>`.
vi.mock("../../../provider/ledger/stack/stack-ledger", async (original) => ({
  ...(await original<typeof import("../../../provider/ledger/stack/stack-ledger")>()),
  stackResources: async () => [],
}));

// A recording provisioner, in place of this process's "ocp-dynamic".
const assigned: string[] = [];
const configs: unknown[] = [];
fakeProvisioner("ocp-dynamic", (config) => {
  configs.push(config);
  const p: Partial<EgressIPProvisioner> = {
    async findHostForNewIP(domain) {
      if (domain !== "zone-a") throw new Error(`no host in failure domain "${domain}"`);
      return "node-a1";
    },
    async assignCIDR(host) {
      assigned.push(host);
    },
  };
  return p as EgressIPProvisioner;
});

let n = 0;
const inputs = (over: Record<string, unknown>) => ({
  stack: "org/p/s",
  owner: "urn:c",
  pool: { id: "urn:pool", ranges: [{ subnet: "10.0.8.0/24" }] },
  provisioner: { kind: "ocp-dynamic", context: `c${n++}` },
  ...over,
});

describe("CidrAssignment provider", () => {
  it.each([
    ["neither hosts nor failureDomain", {}],
    ["both hosts and failureDomain", { requestedHosts: ["n1"], failureDomain: "zone-a" }],
    ["an empty host list", { requestedHosts: [] }],
  ])("refuses %s at check", async (_what, over) => {
    const { failures } = await provider.check({}, inputs(over));
    expect(failures?.map((f) => f.property)).toEqual(["hosts"]);
  });

  it("assigns the pool's subnets to each host, and only new hosts on update", async () => {
    assigned.length = 0;
    const { inputs: checked } = await provider.check({}, inputs({ requestedHosts: ["n1", "n2"] }));
    expect(checked).toMatchObject({ hosts: ["n1", "n2"], cidrs: ["10.0.8.0/24"] });
    const { id, outs } = await provider.create(checked);
    expect(id).toBe("10.0.8.0/24");
    expect(assigned).toEqual(["n1", "n2"]);
    expect(configs.at(-1)).toMatchObject({ kind: "ocp-dynamic", cidrs: ["10.0.8.0/24"] });

    const { inputs: more } = await provider.check(outs, { ...checked, requestedHosts: ["n1", "n2", "n3"] });
    expect(await provider.diff(id, outs, more)).toEqual({ changes: true, replaces: [] });
    await provider.update(id, outs, more);
    expect(assigned).toEqual(["n1", "n2", "n3"]);
  });

  it("lets the provisioner pick the host of a failure domain, and reports a domain without hosts", async () => {
    const { inputs: checked } = await provider.check({}, inputs({ failureDomain: "zone-a" }));
    expect(checked.hosts).toEqual(["node-a1"]);
    const { failures } = await provider.check({}, inputs({ failureDomain: "zone-z" }));
    expect(failures).toEqual([
      { property: "failureDomain", reason: 'no host in failure domain "zone-z"', code: "PROVISIONER_FAILED" },
    ]);
  });

  it("records who it is on the objects it changes (stack identity and URN), made once and kept", async () => {
    const { inputs: checked } = await provider.check({}, inputs({ requestedHosts: ["n1"] }));
    expect(checked.ownerId).toBe("id-of-org/p/s urn:c");
    const { id, outs } = await provider.create(checked);
    expect(configs.at(-1)).toMatchObject({ owner: "id-of-org/p/s urn:c" });
    expect(outs.ownerId).toBe("id-of-org/p/s urn:c");
    // Renamed (another URN, e.g. with an alias): the same owner.
    const { inputs: renamed } = await provider.check(outs, { ...checked, owner: "urn:renamed" });
    expect(renamed.ownerId).toBe("id-of-org/p/s urn:c");
    expect(await provider.diff(id, outs, renamed)).toEqual({ changes: false, replaces: [] });
  });

  it("gives an assignment of an earlier version (no owner in state) its owner record on its hosts", async () => {
    assigned.length = 0;
    const { inputs: checked } = await provider.check({}, inputs({ requestedHosts: ["n1", "n2"] }));
    const { ownerId: _none, ...legacy } = checked;
    const { inputs: now } = await provider.check(legacy, { ...legacy });
    expect(await provider.diff("x", legacy, now)).toEqual({ changes: true, replaces: [] });
    await provider.update("x", legacy, now);
    expect(assigned).toEqual(["n1", "n2"]);
    expect(configs).toContainEqual(
      expect.objectContaining({
        owner: "id-of-org/p/s urn:c",
        adoptPresent: true,
        context: legacy.provisioner.context,
      }),
    );
  });
});
