// The explorer's own parts, without the engine: generation is seeded and always applies, the
// invariants see what they must see (and nothing else), and shrinking finds the smallest failing
// sequence. The engine runs are test/e2e/explore-*.test.ts and `npm run explore`.
import { loadYaml } from "@kubernetes/client-node";
import { spawn } from "node:child_process";
import * as net from "node:net";
import { describe, expect, it } from "vitest";
import { connectedToPort } from "../support/provider-processes";
import { generateSequence } from "./generate";
import {
  mustAccept,
  previewIsUp,
  revealed,
  slotValues,
  span,
  stable,
  unique,
  unknownValue,
} from "./invariants";
import { programText } from "./program";
import { yamlProgramOf } from "./program-yaml";
import { shrink } from "./shrink";
import { applyEdit, emptyWorld, slotsOf, type Edit, type World, type WorldKind } from "./world";

/** A world of each kind in turn, by seed. */
const kindOf = (seed: number): WorldKind => (["local", "cloud", "shared", "platform"] as const)[seed % 4]!;

const walk = (edits: Edit[]): World => edits.reduce<World>((w, e) => applyEdit(w, e)!, emptyWorld());

describe("generation", () => {
  it("gives the same sequence for a seed, and another for another seed", () => {
    expect(generateSequence(7, 30)).toEqual(generateSequence(7, 30));
    expect(generateSequence(7, 30).edits).not.toEqual(generateSequence(8, 30).edits);
  });

  it.each([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])("seed %i: every edit applies to the world before it", (seed) => {
    let w = emptyWorld(kindOf(seed));
    for (const edit of generateSequence(seed, 40, kindOf(seed)).edits) {
      const next = applyEdit(w, edit);
      expect(next, JSON.stringify(edit)).toBeDefined();
      w = next!;
    }
    const names = [...w.pools, ...w.holders, ...w.tenant].flatMap((r) => [r.name, ...r.aliases]);
    expect(new Set(names).size).toBe(names.length);
  });

  it("with kills, wraps some program edits (never a person's or a failure's) in a killed up, and leaves the rest as without", () => {
    const runs = Array.from({ length: 20 }, (_, s) =>
      generateSequence(200 + s, 30, kindOf(s), { kills: true }),
    );
    const killed = runs.flatMap((r) => r.edits).filter((e) => e.op === "killed");
    expect(killed.length).toBeGreaterThan(20);
    for (const k of killed) {
      if (k.op !== "killed") continue;
      expect(["refresh", "unassign", "handOver", "terminate", "nodeDown", "killed"]).not.toContain(k.edit.op);
      expect(k.afterMs).toBeGreaterThanOrEqual(200);
      expect(k.afterMs).toBeLessThanOrEqual(4000);
      const w = emptyWorld();
      expect(applyEdit(w, k)).toEqual(applyEdit(w, k.edit));
    }
    expect(generateSequence(7, 30, "local", { kills: true })).toEqual(
      generateSequence(7, 30, "local", { kills: true }),
    );
    // Without kills, a seed's sequence is the one it always was (the slice in npm test stays the same).
    expect(generateSequence(7, 30, "local", {}).edits.some((e) => e.op === "killed")).toBe(false);
  });

  it("covers every kind of edit over a few hundred steps", () => {
    const ops = new Set(
      Array.from({ length: 30 }, (_, s) =>
        generateSequence(100 + s, 30, kindOf(s)).edits.map((e) => e.op),
      ).flat(),
    );
    expect([...ops].sort()).toEqual(
      [
        "addAlloc",
        "addEgress",
        "addPool",
        "addPrefix",
        "domains",
        "elasticIps",
        "exclude",
        "families",
        "handOver",
        "hostTags",
        "hosts",
        "nodeDown",
        "pin",
        "podSelector",
        "prefixLength",
        "refresh",
        "remove",
        "rename",
        "renamePool",
        "requestIp",
        "tenantAdd",
        "tenantRemove",
        "strategy",
        "terminate",
        "unassign",
      ].sort(),
    );
  });
});

describe("the model", () => {
  const base: Edit[] = [
    { op: "addPool", family: "dual" },
    { op: "addEgress", pool: 0, domains: ["za"], families: "ipv6" },
  ];

  it("keeps a holder's identity through a rename with an alias, and makes a new one without", () => {
    const aliased = walk([...base, { op: "rename", holder: 1, alias: true, name: "web" }]);
    expect(aliased.holders[0]).toMatchObject({ id: 1, name: "web", aliases: ["h0"] });
    const renamed = walk([...base, { op: "rename", holder: 1, alias: false, name: "web" }]);
    expect(renamed.holders[0]).toMatchObject({ id: 2, name: "web", aliases: [] });
    expect(renamed.freedNames).toContain("h0");
  });

  it("does not apply an edit whose holder is gone, or a name in use", () => {
    expect(applyEdit(walk(base), { op: "remove", holder: 9 })).toBeUndefined();
    expect(applyEdit(walk(base), { op: "rename", holder: 1, alias: true, name: "pool0" })).toBeUndefined();
  });

  it("names a dual-stack EgressIp's slots by domain and family, so a change of families keeps the family it had", () => {
    const before = walk(base);
    const after = applyEdit(before, { op: "families", holder: 1, families: "dual" })!;
    const values = new Map([["h1/za/ipv6", { value: "fd00:0::2", host: "a1" }]]);
    const now = new Map([
      ["h1/za/ipv4", { value: "10.100.0.2", host: "a1" }],
      ["h1/za/ipv6", { value: "fd00:0::3", host: "a1" }],
    ]);
    expect(stable(before, values, after, now)).toEqual([
      expect.objectContaining({
        invariant: "stable",
        message: expect.stringContaining("moved from fd00:0::2 to fd00:0::3"),
      }),
    ]);
    now.set("h1/za/ipv6", { value: "fd00:0::2", host: "a1" });
    expect(stable(before, values, after, now)).toEqual([]);
  });

  it("lets a host change where the pin changed or the host left the domain, not otherwise", () => {
    const before = walk([
      { op: "addPool", family: "ipv4" },
      { op: "addEgress", pool: 0, domains: ["za"] },
    ]);
    const was = new Map([["h1/za/ipv4", { value: "10.100.0.2", host: "a1" }]]);
    const moved = new Map([["h1/za/ipv4", { value: "10.100.0.2", host: "a2" }]]);
    expect(stable(before, was, before, moved)).toHaveLength(1);
    const pinned = applyEdit(before, { op: "pin", holder: 1, host: "a2" })!;
    expect(stable(before, was, pinned, moved)).toEqual([]);
    const gone = applyEdit(before, { op: "hosts", domain: "za", hosts: ["a2"] })!;
    expect(stable(before, was, gone, moved)).toEqual([]);
  });

  it("reads slot values from the stack outputs", () => {
    const w = walk([
      { op: "addPool", family: "dual" },
      { op: "addEgress", pool: 0, domains: ["za", "zb"], families: "dual" },
    ]);
    const values = slotValues(w, {
      h1: { za: { ipv4: { ip: "10.100.0.2", host: "a1" }, ipv6: { ip: "fd00:0::2", host: "a1" } }, zb: {} },
    });
    expect([...values.keys()]).toEqual(["h1/za/ipv4", "h1/za/ipv6"]);
    expect(stable(w, new Map(), w, values).map((v) => v.message)).toEqual([
      "h0 (h1/zb/ipv4) has no address after up",
      "h0 (h1/zb/ipv6) has no address after up",
    ]);
  });

  it("writes the world as a program that names every pool and holder with its aliases", () => {
    const text = programText(walk([...base, { op: "rename", holder: 1, alias: true, name: "web" }]));
    expect(text).toContain(`new IpPool("pool0", {"cniConfig":`);
    expect(text).toContain(`new EgressIp("web", { "pool": pool0,"namespace":"ns-h0"`);
    expect(text).toContain(`{ aliases: [{ name: "h0" }] }`);
  });
});

describe("a shared world", () => {
  const shared = [
    { op: "addPool", family: "ipv4" },
    { op: "tenantAdd", pool: 0 },
  ] as const satisfies Edit[];
  const withTenant = shared.reduce<World>((w, e) => applyEdit(w, e)!, emptyWorld("shared"));

  it("has a tenant stack only there", () => {
    expect(applyEdit(applyEdit(emptyWorld(), shared[0])!, shared[1])).toBeUndefined();
    expect(withTenant.tenant.map((t) => [t.name, t.pool])).toEqual([["t0", 0]]);
  });

  it("keeps a tenant's address through a rename of the pool without an alias (one pool on the ledger), not the program's", () => {
    const slots = (w: World) => Object.fromEntries(slotsOf(w).map((slot) => [slot.key, slot.addressKey]));
    const ours = applyEdit(withTenant, { op: "addAlloc", pool: 0 })!;
    const renamed = applyEdit(ours, { op: "renamePool", pool: 0, alias: false, name: "other" })!;
    expect(renamed.tenant[0]!.pool).toBe(renamed.pools[0]!.id);
    expect(slots(renamed).t1).toBe(slots(ours).t1);
    expect(slots(renamed).h2).not.toBe(slots(ours).h2);
  });

  it("asks the tenant's demand of the pool too before it insists on acceptance", () => {
    let w = applyEdit(emptyWorld("shared"), { op: "addPool", family: "ipv4" })!;
    for (let i = 0; i < 40; i++) w = applyEdit(w, { op: "addAlloc", pool: 0 })!;
    expect(mustAccept(w)).toBe(true);
    expect(mustAccept(applyEdit(w, { op: "tenantAdd", pool: 0 })!)).toBe(false);
  });

  it("shows the tenant's program beside the program's", () => {
    const text = programText(withTenant);
    expect(text).toContain(`"ledger":{"kind":"kubernetes","name":"pool-0","namespace":"ipam"}`);
    expect(text).toContain(`IpPool.shared("pool-0"`);
    expect(text).toContain(`new IpAllocation("t0", { "pool": shared0}).ips`);
  });
});

describe("a requested ip given as a secret", () => {
  it("is written with pulumi.secret in the printed program and fn::secret in YAML, the plain one as before", () => {
    const w = walk([
      { op: "addPool", family: "ipv4" },
      { op: "addAlloc", pool: 0, ip: 5, secret: true },
      { op: "addAlloc", pool: 0, ip: 6 },
    ]);
    const text = programText(w);
    expect(text).toMatch(/"h0", \{ "pool": pool0,"ip":pulumi\.secret\("[0-9.]+\.5"\)/);
    expect(text).toMatch(/"h1", \{ "pool": pool0,"ip":"[0-9.]+\.6"/);
    const yaml = loadYaml(yamlProgramOf({ ...w, yaml: true }, "test")) as {
      resources: Record<string, { properties: Record<string, unknown> }>;
    };
    expect(yaml.resources.h0!.properties.ip).toEqual({ "fn::secret": expect.stringMatching(/\.5$/) });
    expect(yaml.resources.h1!.properties.ip).toMatch(/\.6$/);
  });
});

describe("a YAML world", () => {
  it("writes the program with aliases as URNs and the after chains the plugin needs", () => {
    const w = walk([
      { op: "addPool", family: "ipv4" },
      { op: "addAlloc", pool: 0 },
      { op: "addEgress", pool: 0, domains: ["za"] },
      { op: "addPrefix", pool: 0, prefixLength: 29 },
      { op: "addAlloc", pool: 0 },
      { op: "renamePool", pool: 0, alias: true, name: "egress" },
    ]);
    const program = loadYaml(yamlProgramOf({ ...w, yaml: true }, "test")) as {
      resources: Record<string, { type: string; properties: Record<string, unknown>; options?: unknown }>;
      outputs: Record<string, string>;
    };
    const r = program.resources;
    expect(r.egress!.options).toEqual({
      aliases: ["urn:pulumi:test::explore::egress-ipam:index:IpPool::pool0"],
    });
    expect(r.h0!.properties.pool).toBe("${egress}");
    expect(r.h0!.properties.after).toBeUndefined();
    expect(r.h3!.properties.after).toBe("${h0}"); // the allocations' chain
    expect(r.h2!.properties.after).toBeUndefined(); // the blocks' chain starts
    expect(r.h1!.properties.after).toBe("${h3}"); // the EgressIps follow the last allocation
    expect(program.outputs).toEqual({
      h1: "${h0.ips}",
      h2: "${h1.addresses}",
      h3: "${h2.cidr}",
      h4: "${h3.ips}",
    });
  });
});

describe("a cloud world", () => {
  const withZone = applyEdit(emptyWorld("cloud"), { op: "addPool", family: "ipv4", zone: "za" })!;

  it("takes an aws EgressIp only over zones with a pool of their subnet, and one pool per zone", () => {
    const both = { op: "addEgress", pool: 0, domains: ["za", "zb"], aws: { hostTags: "role" } } as const;
    expect(applyEdit(withZone, { ...both, domains: [...both.domains] })).toBeUndefined();
    expect(applyEdit(withZone, { op: "addPool", family: "ipv4", zone: "za" })).toBeUndefined();
    expect(applyEdit(emptyWorld(), { op: "addPool", family: "ipv4", zone: "za" })).toBeUndefined();
    const one = applyEdit(withZone, {
      op: "addEgress",
      pool: 0,
      domains: ["za"],
      aws: { hostTags: "role" },
    })!;
    expect(one.holders[0]).toMatchObject({ zonePools: { za: 0 }, aws: { hostTags: "role" } });
  });

  it("lets a placement move only off hosts its tags no longer take or that were terminated, and keeps its public address while adopting it", () => {
    const w = applyEdit(withZone, {
      op: "addEgress",
      pool: 0,
      domains: ["za"],
      aws: { hostTags: "role", elasticIps: "allocate" },
    })!;
    const on = (host: string, publicIp = "54.0.0.1") =>
      new Map([["h1/za/ipv4", { value: "10.0.1.4", host, publicIp }]]);
    const narrowed = applyEdit(w, { op: "hostTags", holder: 1, hostTags: "role+team" })!;
    expect(stable(w, on("a2"), narrowed, on("a0"))).toEqual([]);
    expect(stable(w, on("a1"), narrowed, on("a0"))).toHaveLength(1);
    const down = applyEdit(w, { op: "terminate", host: "a1" })!;
    expect(stable(w, on("a1"), down, on("a0"))).toEqual([]);
    const adopting = applyEdit(w, { op: "elasticIps", holder: 1, elasticIps: "adoptOwn" })!;
    expect(stable(w, on("a1"), adopting, on("a1", "54.0.0.2"))).toEqual([
      expect.objectContaining({
        message: expect.stringContaining("public address 54.0.0.1 became 54.0.0.2"),
      }),
    ]);
    const none = applyEdit(w, { op: "elasticIps", holder: 1 })!;
    expect(stable(w, on("a1"), none, on("a1", ""))).toEqual([]);
  });
});

describe("a platform world", () => {
  const w = [
    { op: "addPool", family: "dual" },
    { op: "addEgress", pool: 0, domains: ["za", "zb"], families: "ipv4" },
  ].reduce<World>((x, e) => applyEdit(x, e as Edit)!, emptyWorld("platform", "cilium"));

  it("narrows an EgressIp's pods and fails Nodes there only; pins and host lists are the none provisioner's", () => {
    expect(applyEdit(w, { op: "podSelector", holder: 1, on: true })!.holders[0]).toMatchObject({
      podSelector: true,
    });
    expect(applyEdit(w, { op: "podSelector", holder: 1, on: false })).toBeUndefined();
    expect(applyEdit(w, { op: "nodeDown", host: "a1" })!.down).toEqual(["a1"]);
    expect(applyEdit(w, { op: "nodeDown", host: "c9" })).toBeUndefined();
    expect(applyEdit(w, { op: "pin", holder: 1, host: "a1" })).toBeUndefined();
    expect(applyEdit(w, { op: "hosts", domain: "za", hosts: ["a1"] })).toBeUndefined();
    const local = applyEdit(emptyWorld(), { op: "addPool", family: "ipv4" })!;
    const egress = applyEdit(local, { op: "addEgress", pool: 0, domains: ["za"] })!;
    expect(applyEdit(egress, { op: "podSelector", holder: 1, on: true })).toBeUndefined();
    expect(applyEdit(egress, { op: "nodeDown", host: "a1" })).toBeUndefined();
  });

  it("lets an address leave a Node that went down, and no other", () => {
    const on = (host: string) =>
      new Map([
        ["h1/za/ipv4", { value: "10.100.0.1", host }],
        ["h1/zb/ipv4", { value: "10.100.0.2", host: "b1" }],
      ]);
    const down = applyEdit(w, { op: "nodeDown", host: "a1" })!;
    expect(stable(w, on("a1"), down, on("a2"))).toEqual([]);
    expect(stable(w, on("a2"), down, on("a1"))).toHaveLength(1);
  });

  it("may be refused what a kind cannot do (IPv6 or pods on ocp-static, dual stack on antrea, or on ovn with one Node); must take the rest", () => {
    expect(mustAccept(w)).toBe(true);
    const dual = applyEdit(w, { op: "families", holder: 1, families: "dual" })!;
    expect(mustAccept(dual)).toBe(true);
    expect(mustAccept({ ...dual, platform: "ovn" })).toBe(true);
    expect(mustAccept({ ...applyEdit(dual, { op: "nodeDown", host: "b2" })!, platform: "ovn" })).toBe(false);
    expect(mustAccept({ ...dual, platform: "antrea" })).toBe(false);
    const v6 = applyEdit(w, { op: "families", holder: 1, families: "ipv6" })!;
    expect(mustAccept({ ...v6, platform: "antrea" })).toBe(true);
    expect(mustAccept({ ...v6, platform: "ocp-static" })).toBe(false);
    const selecting = applyEdit(w, { op: "podSelector", holder: 1, on: true })!;
    expect(mustAccept(selecting)).toBe(true);
    expect(mustAccept({ ...selecting, platform: "ocp-static" })).toBe(false);
    const zaDown = [
      { op: "nodeDown", host: "a1" },
      { op: "nodeDown", host: "a2" },
    ].reduce<World>((x, e) => applyEdit(x, e as Edit)!, w);
    expect(mustAccept(zaDown)).toBe(false);
  });

  it("maps Nodes and zones to the model's hosts and domains in slot values, and prints the kind", () => {
    const names = { zoneOf: { za: "w-1-za", zb: "w-1-zb" }, nameOf: { "w-1-a2": "a2", "w-1-b1": "b1" } };
    const outputs = {
      h1: {
        "w-1-za": { ipv4: { ip: "10.100.0.1", host: "w-1-a2" } },
        "w-1-zb": { ipv4: { ip: "10.100.0.2", host: "w-1-b1" } },
      },
    };
    expect([...slotValues(w, outputs, names)]).toEqual([
      ["h1/za/ipv4", { value: "10.100.0.1", host: "a2" }],
      ["h1/zb/ipv4", { value: "10.100.0.2", host: "b1" }],
    ]);
    expect(programText(w)).toMatch(/"provisioner":\{"kind":"cilium","nodeSelector":\{/);
  });
});

// A secret as preview's events show it, and as the decrypted checkpoint holds it.
const secretSig = { "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270" };
const maskedSecret = { ...secretSig, ciphertext: "[secret]" };
const plainSecret = (v: unknown) => ({ ...secretSig, plaintext: JSON.stringify(v) });

describe("invariants", () => {
  const urn = (kind: string, name: string) =>
    `urn:pulumi:s::p::pulumi-nodejs:dynamic/egress-ipam:${kind}::${name}`;

  it.each([
    ["same address", { op: "create", inputs: { ip: "10.0.0.2" } }, { ip: "10.0.0.2" }, 0],
    ["another address", { op: "create", inputs: { ip: "10.0.0.2" } }, { ip: "10.0.0.3" }, 1],
    ["not shown at preview", { op: "create", inputs: { ip: unknownValue } }, { ip: "10.0.0.3" }, 1],
    ["an unchanged holder", { op: "same", inputs: { ip: "10.0.0.2" } }, { ip: "10.0.0.2" }, 0],
    [
      "a secret ip, its record shown",
      { op: "create", inputs: { ip: maskedSecret, ips: ["10.0.0.2"] } },
      { ip: plainSecret("10.0.0.2"), ips: ["10.0.0.2"] },
      0,
    ],
    [
      "a secret ip whose record is secret too",
      { op: "create", inputs: { ip: maskedSecret, ips: maskedSecret } },
      { ip: plainSecret("10.0.0.2"), ips: plainSecret(["10.0.0.2"]) },
      1,
    ],
    [
      "a host that moved",
      { op: "same", inputs: { ip: "10.0.0.2", host: "a1" } },
      { ip: "10.0.0.2", host: "a2" },
      1,
    ],
  ])("preview = up: %s", (_, plan, outputs, broken) => {
    const kind = "host" in plan.inputs ? "EgressIpAssignment" : "IpAllocation";
    const u = urn(kind, "x");
    const found = previewIsUp({ [u]: plan }, [
      { urn: u, type: `pulumi-nodejs:dynamic/egress-ipam:${kind}`, outputs },
    ]);
    expect(found).toHaveLength(broken);
  });

  it("reads a secret of the decrypted checkpoint as what it holds", () => {
    expect(revealed({ ip: plainSecret("10.0.0.2"), ips: plainSecret(["10.0.0.2"]), n: 1 })).toEqual({
      ip: "10.0.0.2",
      ips: ["10.0.0.2"],
      n: 1,
    });
  });

  it("finds two holders of one pool on one address or overlapping blocks, and not across pools", () => {
    const alloc = (name: string, ip: string, poolId = "p") => ({
      urn: urn("IpAllocation", name),
      type: "pulumi-nodejs:dynamic/egress-ipam:IpAllocation",
      outputs: { ips: [ip], poolId },
    });
    const block = (name: string, cidr: string) => ({
      urn: urn("PrefixAllocation", name),
      type: "pulumi-nodejs:dynamic/egress-ipam:PrefixAllocation",
      outputs: { cidr, poolId: "p" },
    });
    expect(unique([alloc("a", "10.0.0.2"), alloc("b", "10.0.0.3")])).toEqual([]);
    expect(unique([alloc("a", "10.0.0.2"), alloc("b", "10.0.0.2")])).toHaveLength(1);
    expect(unique([alloc("a", "10.0.0.2"), alloc("b", "10.0.0.2", "q")])).toEqual([]);
    expect(unique([block("a", "10.0.0.16/28"), alloc("b", "10.0.0.20")])).toHaveLength(1);
    expect(unique([block("a", "10.0.0.16/28"), block("b", "10.0.0.32/28")])).toEqual([]);
    expect(unique([{ ...alloc("a", "10.0.0.2"), delete: true }, alloc("b", "10.0.0.2")])).toEqual([]);
  });

  it("spans addresses and blocks of both families", () => {
    expect(span("10.0.0.16/28")).toEqual({ family: 4, first: 0x0a000010n, last: 0x0a00001fn });
    expect(span("fd00:1::40/122")).toEqual({
      family: 6,
      first: 0xfd000001000000000000000000000040n,
      last: 0xfd00000100000000000000000000007fn,
    });
    expect(span("fd00:1::2")).toEqual({
      family: 6,
      first: 0xfd000001000000000000000000000002n,
      last: 0xfd000001000000000000000000000002n,
    });
  });

  it("must accept a program whose holders fit, and may refuse one with a request, a block or families the pool lacks", () => {
    const fits = walk([
      { op: "addPool", family: "dual" },
      { op: "addEgress", pool: 0, domains: ["za", "zb"], families: "dual" },
    ]);
    expect(mustAccept(fits)).toBe(true);
    expect(mustAccept(applyEdit(fits, { op: "families", holder: 1 })!)).toBe(false);
    expect(mustAccept(applyEdit(fits, { op: "addAlloc", pool: 0, ip: 5 })!)).toBe(false);
    expect(
      mustAccept(
        walk([
          { op: "addPool", family: "ipv4" },
          { op: "addPrefix", pool: 0, prefixLength: 28 },
        ]),
      ),
    ).toBe(false);
  });
});

describe("shrinking", () => {
  // A stand-in for the engine: a sequence fails when it renames holder 1 with an alias and then adds
  // a holder under the freed name (whatever else it holds).
  const fails = (edits: Edit[]) => {
    const renamed = edits.findIndex((e) => e.op === "rename" && e.alias);
    const reused = edits.findIndex((e, i) => i > renamed && e.op === "addAlloc" && e.name === "h0");
    return renamed >= 0 && reused >= 0 ? { invariant: "destroy", step: reused } : {};
  };

  it("drops every edit the failure does not need, and the steps after it", async () => {
    const edits: Edit[] = [
      { op: "addPool", family: "ipv4" },
      { op: "addAlloc", pool: 0 },
      { op: "addPool", family: "ipv6" },
      { op: "addEgress", pool: 2, domains: ["za"] },
      { op: "rename", holder: 1, alias: true, name: "web" },
      { op: "strategy", pool: 0, strategy: "lowest-free" },
      { op: "addAlloc", pool: 0, name: "h0" },
      { op: "refresh" },
      { op: "remove", holder: 3 },
    ];
    const { edits: shrunk, runs } = await shrink(
      edits,
      "destroy",
      6,
      async (e) => fails(e),
      Date.now() + 10_000,
    );
    expect(shrunk).toEqual([
      { op: "rename", holder: 1, alias: true, name: "web" },
      { op: "addAlloc", pool: 0, name: "h0" },
    ]);
    expect(runs).toBeGreaterThan(0);
  });
});

// How a killed step tells a provider process that served this package (connected to its engine)
// from Pulumi's bare host: by the process's TCP connections, read from /proc.
describe("connectedToPort", () => {
  it("sees a process's connection to a local port, and none where it has none", async () => {
    const server = net.createServer((s) => s.on("error", () => undefined));
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as net.AddressInfo).port;
    const child = (connect: boolean) =>
      spawn(
        process.execPath,
        [
          "-e",
          connect
            ? `require("net").connect(${port}, "127.0.0.1", () => console.log("up")); setInterval(() => {}, 1000)`
            : `console.log("up"); setInterval(() => {}, 1000)`,
        ],
        { stdio: ["ignore", "pipe", "ignore"] },
      );
    const [on, off] = [child(true), child(false)];
    try {
      await Promise.all([on, off].map((c) => new Promise((r) => c.stdout!.once("data", r))));
      expect(connectedToPort(on.pid!, port)).toBe(true);
      expect(connectedToPort(off.pid!, port)).toBe(false);
      expect(connectedToPort(on.pid!, port === 65535 ? 1 : port + 1)).toBe(false);
    } finally {
      on.kill("SIGKILL");
      off.kill("SIGKILL");
      server.close();
    }
  });
});
