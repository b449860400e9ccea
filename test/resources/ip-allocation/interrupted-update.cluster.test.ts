// An IpAllocation of a shared pool whose state has no claim instance (written by an earlier version,
// or a pool just put on a ledger): its first update writes one to the claim. When that update is
// interrupted before the engine saves its outputs (the provider killed), the state keeps the old
// props; the delete that follows must still find and release the claim.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ipAllocationProvider } from "../../../provider/resources/ip-allocation/ip-allocation-provider";
import { ClaimStore } from "../../../provider/ledger/kubernetes/claim-store";
import { kubeClients } from "../../../provider/kube/kube-config";
import { freshNamespace, kube, testKubeconfig, uniqueName } from "../../support/kube";

// The stack's identity and records, without a `pulumi stack export` of a stack that does not exist here.
vi.mock("../../../provider/ledger/stack/stack-identity", () => ({
  stackIdentity: async (stack: string) => `id-of-${stack}`,
}));
vi.mock("../../../provider/ledger/stack/stack-ledger", async (original) => ({
  ...(await original<object>()),
  stateRecords: async () => [],
}));

describe("an interrupted first update of a shared pool's holder", () => {
  let ns = "";
  const pool = uniqueName("upd");
  const store = () => new ClaimStore(kubeClients({ context: "admin@test" }), ns, pool);
  beforeAll(async () => {
    process.env.KUBECONFIG = testKubeconfig();
    ns = await freshNamespace("upd");
  });
  afterAll(() => kube().core.deleteNamespace({ name: ns }));

  it("leaves no claim behind when the delete runs with the props saved before it", async () => {
    const owner = "urn:pulumi:a::p::pulumi-nodejs:dynamic/egress-ipam:IpAllocation::web";
    const news = {
      holder: { stack: "o/p/a", owner },
      pool: {
        id: "urn:pulumi:a::p::pulumi-nodejs:dynamic/egress-ipam:IpPool::egress",
        ranges: [{ subnet: "10.45.0.0/29" }],
        ledger: { kind: "kubernetes", name: pool, namespace: ns, context: "admin@test" },
      },
    };
    const checked = await ipAllocationProvider.check({}, news);
    expect(checked.failures ?? []).toEqual([]);
    const made = await ipAllocationProvider.create(checked.inputs);
    const ip = String(made.outs.ip);
    // What an earlier version left: no instance in the state or in the claim.
    const { instance: _instance, ...legacy } = made.outs as Record<string, unknown>;
    const claim = (await store().read(ip))!;
    const { instance: _i, ...rest } = claim;
    await store().replace(claim, { ...rest, stackId: claim.stackId });
    expect((await store().read(ip))?.instance).toBeUndefined();

    // The first update writes an instance to the claim; its outputs are never saved.
    await ipAllocationProvider.update!(made.id, legacy, { ...legacy });
    expect((await store().read(ip))?.instance).toMatch(/./);
    await ipAllocationProvider.delete!(made.id, legacy);
    expect(await store().read(ip)).toBeUndefined();
  });
});
