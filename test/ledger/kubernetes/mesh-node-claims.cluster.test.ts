// Webmesh node addresses through the IpAllocation provider and the Kubernetes ledger: the same node
// ID gets the same address from any stack, statics are honoured, the claim goes with its last
// reference, and a pool without a network or a ledger is a clear check failure.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ipAllocationProvider } from "../../../provider/resources/ip-allocation/ip-allocation-provider";
import { ClaimStore } from "../../../provider/ledger/kubernetes/claim-store";
import { kubeClients } from "../../../provider/kube/kube-config";
import { kubeLedger } from "../../../provider/ledger/kubernetes/kube-ledger";
import { planNodeAddress } from "../../../provider/ledger/kubernetes/mesh-node-claims";
import { freshNamespace, kube, testKubeconfig, uniqueName } from "../../support/kube";

// The stack's identity, without a `pulumi stack export` of a stack that does not exist here.
vi.mock("../../../provider/ledger/stack/stack-identity", () => ({
  stackIdentity: async (stack: string) => `id-of-${stack}`,
}));

describe("node addresses in a shared pool", () => {
  let ns = "";
  const name = uniqueName("mesh");
  const poolRef = (stack: string, more: Record<string, unknown> = {}) => ({
    id: `urn:pulumi:${stack}::p::egress-ipam:IpPool::mesh`,
    network: "10.42.0.0/29",
    static: { gw: "10.42.0.1" },
    ledger: { kind: "kubernetes", name, namespace: ns, context: "admin@test" },
    ...more,
  });
  const inputs = (stack: string, node: string, more: Record<string, unknown> = {}) => ({
    stack: `o/p/${stack}`,
    owner: `urn:pulumi:${stack}::p::egress-ipam:IpAllocation::${node}`,
    pool: poolRef(stack),
    nodeId: node,
    ...more,
  });
  // The program sends the stack and owner in its `holder` input.
  const check = async ({ stack, owner, ...news }: Record<string, unknown>) =>
    ipAllocationProvider.check({}, { holder: { stack, owner }, ...news });
  const store = () => new ClaimStore(kubeClients({ context: "admin@test" }), ns, name);

  beforeAll(async () => {
    process.env.KUBECONFIG = testKubeconfig();
    ns = await freshNamespace("nodes");
  });
  afterAll(() => kube().core.deleteNamespace({ name: ns }));

  it("gives a node the same address from two stacks, honouring statics, until the last reference goes", async () => {
    const a = await check(inputs("a", "n1"));
    expect(a.failures ?? []).toEqual([]);
    expect(a.inputs).toMatchObject({ ip: "10.42.0.2", prefix: "10.42.0.2/32" }); // .1 is static for gw
    const b = await check(inputs("b", "n1"));
    expect(b.inputs.prefix).toBe("10.42.0.2/32");
    const gw = await check(inputs("b", "gw"));
    expect(gw.inputs.prefix).toBe("10.42.0.1/32");
    expect((await check(inputs("a", "n2"))).inputs.prefix).toBe("10.42.0.3/32");

    const madeA = (await ipAllocationProvider.create(a.inputs)).outs;
    const madeB = (await ipAllocationProvider.create(b.inputs)).outs;
    // One reference per resource instance: the stack's identity, the URN and a value of its create.
    const refs = (await store().read("10.42.0.2"))?.refs?.sort();
    expect(refs).toEqual([madeA.nodeRef, madeB.nodeRef]);
    const [stackId, urn, instance] = String(refs?.[0]).split(" ");
    expect([stackId, urn]).toEqual(["id-of-o/p/a", inputs("a", "n1").owner]);
    expect(instance).toMatch(/^[0-9a-f-]{36}$/);
    await ipAllocationProvider.delete("10.42.0.2", madeA);
    expect((await store().read("10.42.0.2"))?.state).toBe("claim"); // stack b still has it
    await ipAllocationProvider.delete("10.42.0.2", madeB);
    expect(await store().read("10.42.0.2")).toBeUndefined();
  });

  it.each([
    [
      "a pool without a network (ErrNoNetwork)",
      { network: undefined, static: undefined, ranges: [{ subnet: "10.43.0.0/29" }] },
      /no network configured/,
      "NO_NETWORK",
    ],
    ["a pool without a ledger (ErrNoStorage)", { ledger: undefined }, /no storage configured/, "NO_STORAGE"],
  ])("refuses %s at check", async (_what, change, message, code) => {
    const news = inputs("c", "n9", { pool: poolRef("c", change) });
    const result = await check(news);
    expect(result.failures?.map((f) => f.reason).join()).toMatch(message);
    expect(result.failures).toContainEqual(
      expect.objectContaining({ reason: expect.stringMatching(message), code }),
    );
  });

  it("reports POOL_EXHAUSTED naming the network when every address is taken", async () => {
    // Free: .2 (released above) and .4–.7 (the last address included, as webmesh does).
    const nodes = ["x1", "x2", "x3", "x4", "x5"];
    for (const n of nodes) expect((await check(inputs("d", n))).failures ?? []).toEqual([]);
    const full = await check(inputs("d", "x6"));
    expect(full.failures?.[0]?.reason).toMatch(/no free address left in network 10\.42\.0\.0\/29/);
    expect(full.failures?.[0]).toMatchObject({ code: "POOL_EXHAUSTED" });
  });

  it("fault-injected: a listing that missed another stack's plan of the same node gives the node that address, never a second", async () => {
    const pool = uniqueName("mesh-race");
    const ledgerOf = (stack: string, clients = kubeClients({ context: "admin@test" })) =>
      kubeLedger({
        stack,
        stackId: `id-of-${stack}`,
        clients,
        ledger: { name: pool, namespace: ns, lockDuration: 10_000, lockAcquireTimeout: 30_000 },
      });
    const net = { network: "10.44.0.0/29", static: {} };
    const first = await planNodeAddress(ledgerOf("o/p/a"), "urn:a", "n1", net);
    expect(first).toMatch(/^10\.44\.0\.\d\/32$/);
    // Stack b lists the pool as it was before stack a's plan: the Lease alone would have ordered them.
    const real = kubeClients({ context: "admin@test" });
    const stale = Object.create(real.core) as typeof real.core;
    stale.listNamespacedConfigMap = async (args) => {
      const list = await real.core.listNamespacedConfigMap(args);
      return { ...list, items: list.items.filter((cm) => cm.data?.nodeId !== "n1") };
    };
    const second = await planNodeAddress(ledgerOf("o/p/b", { ...real, core: stale }), "urn:b", "n1", net);
    expect(second).toBe(first);
    const claims = await new ClaimStore(real, ns, pool).list();
    expect(claims.filter((c) => c.nodeId === "n1").map((c) => `${c.ip}/32`)).toEqual([first]);
  });
});
