import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { EgressIpamProvider } from "../../provider/plugin/plugin-provider";
import { ServedStacks } from "../../provider/plugin/served-stack";
import type { Props, ProviderImpl } from "../../provider/resources/provider-props";

const sig = "4dabf18193072939515e22adb298388d";
const ref = (urn: string) => ({ [sig]: "5cf8f73096256a8f31e491e813e4eb8e", urn, id: "", packageVersion: "" });
const secret = (value: unknown) => ({ [sig]: "1b47061264138c4ac30d75fd1eb44270", value });
const urn = (kind: string, name: string) => `urn:pulumi:dev::proj::egress-ipam:index:${kind}::${name}`;

/** The stack the tests' resources belong to, holding `names` (IpAllocations) besides its root. */
const stackHolding = (...names: string[]) =>
  new ServedStacks({
    env: {},
    load: async () =>
      [
        "urn:pulumi:dev::proj::pulumi:pulumi:Stack::proj-dev",
        ...names.map((n) => urn("IpAllocation", n)),
      ].map((u) => ({ urn: u, type: "" })),
  });

/**
 * A provider table that records what each kind's check was given and returns it as its inputs,
 * served in a stack that holds `held`.
 */
function recording(held = stackHolding("b")) {
  const seen: Record<string, Props[]> = {};
  const impl = (kind: string): ProviderImpl => ({
    check: async (_olds, news) => {
      (seen[kind] ??= []).push(news);
      return { inputs: { ...news, planned: true } };
    },
    diff: async () => ({}),
    create: async (inputs) => ({ id: "x", outs: inputs }),
    read: async (id, props) => ({ id, props }),
    update: async (_id, _olds, news) => ({ outs: news }),
    delete: async () => undefined,
  });
  return { seen, provider: new EgressIpamProvider("0.1.0", "{}", impl, held) };
}

describe("the plugin's check turns what the engine sends into what the package's providers take", () => {
  it("gives a holder its pool's settings, its stack and its URN; keeps the ledger's kubeconfig secret", async () => {
    const { seen, provider } = recording();
    const ledger = { kind: "kubernetes", name: "p", namespace: "n", kubeconfig: secret("apiVersion: v1") };
    await provider.check(urn("IpPool", "pool"), {}, { ranges: [{ subnet: "10.0.0.0/24" }], ledger });
    const result = await provider.check(urn("IpAllocation", "web"), {}, { pool: ref(urn("IpPool", "pool")) });
    expect(seen.IpPool?.[0]).toMatchObject({ stack: "organization/proj/dev", poolId: urn("IpPool", "pool") });
    expect(seen.IpAllocation?.[0]).toMatchObject({
      holder: { stack: "organization/proj/dev", owner: urn("IpAllocation", "web") },
      pool: {
        ranges: [{ subnet: "10.0.0.0/24" }],
        id: urn("IpPool", "pool"),
        ledger: { kubeconfig: "apiVersion: v1" },
      },
    });
    expect((result.inputs as Props).pool.ledger.kubeconfig).toEqual(secret("apiVersion: v1"));
  });

  it.each([
    [
      "a pool that is not a reference",
      { pool: "urn:x" },
      "pool",
      /\[INVALID_INPUT\] give pool as a reference/,
    ],
    ["no pool", {}, "pool", /\[INVALID_INPUT\] give pool as a reference/],
    [
      "a pool another provider checked",
      { pool: ref(urn("IpPool", "other")) },
      "pool",
      /\[INVALID_CONFIG\] pool .*::other was not checked in this run by the provider that serves .*::web: either it was left out by --target: add --target .*::other .*different egress-ipam providers/,
    ],
    [
      "a pool that is a resource of another type",
      { pool: ref(urn("IpAllocation", "other")) },
      "pool",
      /\[INVALID_INPUT\] pool .*::other is of type egress-ipam:index:IpAllocation, not an egress-ipam IpPool: give .*::web a reference to the IpPool/,
    ],
  ])("refuses %s, naming the property", async (_name, news, property, reason) => {
    const { seen, provider } = recording();
    const result = await provider.check(urn("IpAllocation", "web"), {}, news);
    expect(result.failures).toEqual([{ property, reason: expect.stringMatching(reason) }]);
    expect(seen.IpAllocation).toBeUndefined();
  });

  it("refuses a plain input of the schema not known at preview, naming it, before the kind's provider sees it", async () => {
    const schema = fs.readFileSync(path.join(__dirname, "../../provider/plugin/schema.json"), "utf8");
    const seen: Props[] = [];
    const provider = new EgressIpamProvider(
      "0.1.0",
      schema,
      () =>
        ({
          ...recording().provider,
          check: async (_olds: Props, news: Props) => {
            seen.push(news);
            return { inputs: news };
          },
        }) as unknown as ProviderImpl,
    );
    const output = { [sig]: "d0e6a833031e9bbcd3f4e8bde6ca49a4" }; // an output value not known yet
    const result = await provider.check(
      urn("EgressIpAssignment", "egress"),
      {},
      {
        ip: "10.0.0.5",
        provisioner: { kind: "none" },
        failureDomain: output,
      },
    );
    expect(result.failures).toEqual([
      {
        property: "failureDomain",
        reason: expect.stringMatching(
          /^\[INVALID_INPUT\] failureDomain of EgressIpAssignment is an output not known at preview/,
        ),
      },
    ]);
    expect(seen).toEqual([]);
  });

  it("refuses a second new holder nothing orders on after, and lets an existing one be", async () => {
    const { provider } = recording();
    await provider.check(urn("IpPool", "pool"), {}, { ranges: [{ subnet: "10.0.0.0/24" }] });
    const pool = ref(urn("IpPool", "pool"));
    expect((await provider.check(urn("IpAllocation", "a"), {}, { pool })).failures).toEqual([]);
    const existing = {
      poolId: urn("IpPool", "pool"),
      owner: urn("IpAllocation", "b"),
      ips: ["10.0.0.9"],
      seq: 1,
    };
    expect((await provider.check(urn("IpAllocation", "b"), existing, { pool })).failures).toEqual([]);
    const c = await provider.check(urn("IpAllocation", "c"), {}, { pool });
    expect(c.failures).toEqual([
      { property: "after", reason: expect.stringMatching(/c and a both take a new address/) },
    ]);
    expect(
      (await provider.check(urn("IpAllocation", "d"), {}, { pool, after: ref(urn("IpAllocation", "a")) }))
        .failures,
    ).toEqual([]);
  });

  it("refuses a type it does not serve", async () => {
    const { provider } = recording();
    await expect(provider.check("urn:pulumi:dev::proj::egress-ipam:testing:Echo::e", {}, {})).rejects.toThrow(
      /serves no resource type egress-ipam:testing:Echo/,
    );
  });
});

describe("the plugin reads a stack's checkpoint only as the stack of a resource it holds", () => {
  const pool = urn("IpPool", "pool");
  const state = {
    stack: "organization/proj/dev",
    owner: urn("IpAllocation", "web"),
    ips: ["10.0.0.9"],
    seq: 1,
  };

  it.each([
    [
      "the check of one the stack has",
      (p: EgressIpamProvider) => p.check(urn("IpAllocation", "web"), state, { pool: ref(pool) }),
    ],
    ["an update", (p: EgressIpamProvider) => p.update("x", urn("IpAllocation", "web"), state, state)],
    ["a refresh", (p: EgressIpamProvider) => p.read("x", urn("IpAllocation", "web"), state)],
    ["a delete", (p: EgressIpamProvider) => p.delete("x", urn("IpAllocation", "web"), state)],
  ])("refuses %s where the checkpoint does not hold it, before its provider is called", async (_name, op) => {
    const { seen, provider } = recording(stackHolding("other"));
    await provider.check(pool, {}, { ranges: [{ subnet: "10.0.0.0/24" }] });
    await expect(op(provider)).rejects.toThrow(
      /^\[STACK_MISMATCH\] the checkpoint of stack "organization\/proj\/dev" holds no urn:pulumi:dev::proj::egress-ipam:index:IpAllocation::web: it is another stack of the same name/,
    );
    expect(seen.IpAllocation).toBeUndefined();
  });

  it("refuses a create in a checkpoint without the stack's root, and checks a new resource without reading one", async () => {
    const none = new ServedStacks({ env: {}, load: async () => [] });
    const { seen, provider } = recording(none);
    await provider.check(pool, {}, { ranges: [{ subnet: "10.0.0.0/24" }] });
    await provider.check(urn("IpAllocation", "web"), {}, { pool: ref(pool) });
    expect(seen.IpAllocation).toHaveLength(1);
    await expect(provider.create(urn("IpAllocation", "web"), state)).rejects.toThrow(
      /^\[STACK_MISMATCH\] the checkpoint of stack "organization\/proj\/dev" holds no urn:pulumi:dev::proj::pulumi:pulumi:Stack::proj-dev \(the root of every deployed stack\)/,
    );
  });

  it("plans in the organization the stack's config names", async () => {
    const acme = new ServedStacks({
      env: { PULUMI_CONFIG: '{"organization":"acme"}' },
      load: async () => [],
    });
    const { seen, provider } = recording(acme);
    await provider.check(pool, {}, { ranges: [{ subnet: "10.0.0.0/24" }] });
    expect(seen.IpPool?.[0]).toMatchObject({ stack: "acme/proj/dev" });
  });
});
