import * as fs from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { changesOf, Harness } from "../support/harness";

type Pkg = typeof import("../../provider/index");
const ipsOf = (outputs: Record<string, { value: unknown }>, names: string[]) =>
  names.map((n) => outputs[n]?.value);

describe("many allocations in parallel", () => {
  const h = Harness.create("many");
  const { IpPool, IpAllocation } = h.pkg<Pkg>("pulumi-egress-ipam");
  const names = Array.from({ length: 60 }, (_, i) => `alloc-${i}`);
  afterAll(() => h.dispose());

  it("plans 60 IPs in program order at preview and up assigns exactly them at --parallel 32", async () => {
    await h.program(async () => {
      const pool = new IpPool("pool", { ranges: [{ subnet: "10.20.0.0/24" }], strategy: "lowest-free" });
      return Object.fromEntries(names.map((n) => [n, new IpAllocation(n, { pool }).ip]));
    });
    const preview = await h.preview({ parallel: 32 });
    const planned = names.map((n) => preview.planned(n)?.ip);
    // The engine checks them in the order their registrations arrive, which is not program order.
    expect(planned).toEqual(names.map((_, i) => `10.20.0.${i + 2}`));
    const up = await h.up({ parallel: 32 });
    expect(ipsOf(up.outputs, names)).toEqual(planned);
    const again = await h.up({ parallel: 32 });
    expect(changesOf(again.summary.resourceChanges)).toEqual({});
  });
});

describe("lowest-free across deployments", () => {
  const h = Harness.create("lowest");
  const { IpPool, IpAllocation } = h.pkg<Pkg>("pulumi-egress-ipam");
  const program = (names: string[]) => async () => {
    const pool = new IpPool("pool", { ranges: [{ subnet: "10.30.0.0/29" }], strategy: "lowest-free" });
    return Object.fromEntries(names.map((n) => [n, new IpAllocation(n, { pool }).ip]));
  };
  afterAll(() => h.dispose());

  it("does not hand out the IP of an allocation deleted in the same up", async () => {
    await h.program(program(["a", "b"]));
    const first = await h.up();
    expect(ipsOf(first.outputs, ["a", "b"])).toEqual(["10.30.0.2", "10.30.0.3"]);
    await h.program(program(["b", "c"]));
    const preview = await h.preview();
    expect(preview.planned("c")?.ip).toBe("10.30.0.4");
    const second = await h.up();
    expect(changesOf(second.summary.resourceChanges)).toEqual({ create: 1, delete: 1 });
    expect(second.outputs.c?.value).toBe("10.30.0.4");
  });

  it("reuses the freed IP in the next deployment, in a new provider process", async () => {
    await h.program(program(["b", "c", "d"]));
    const up = await h.up();
    expect(up.outputs.d?.value).toBe("10.30.0.2");
  });

  it("refuses at preview when the pool is exhausted, naming the range set, and creates nothing", async () => {
    await h.program(program(["b", "c", "d", "e", "f", "g", "h"]));
    const err = await h.preview().catch((e: Error) => e);
    expect(String(err)).toMatch(
      /ip value .* has a problem: \[POOL_EXHAUSTED\] no free address left in range set 10\.30\.0\.1-10\.30\.0\.6/,
    );
    expect((await h.resources()).filter((r) => r.type.endsWith("IpAllocation"))).toHaveLength(3);
  });
});

describe("pool validation and protection", () => {
  const h = Harness.create("guard");
  const { IpPool, IpAllocation } = h.pkg<Pkg>("pulumi-egress-ipam");
  afterAll(() => h.dispose());

  it("refuses bad pool input at preview with every problem named, and creates nothing", async () => {
    await h.program(async () => {
      new IpPool("bad", {
        ranges: [{ subnet: "10.0.8.1/24" }, { subnet: "10.0.9.0/24", rangeStart: "10.0.10.5" }],
        exclude: ["not-an-ip"],
      });
    });
    const err = String(await h.preview().catch((e: Error) => e));
    expect(err).toContain("10.0.8.0/24"); // the real network address of 10.0.8.1/24
    expect(err).toContain("10.0.10.5");
    expect(err).toContain("not-an-ip");
    await expect(h.up()).rejects.toThrow();
    expect((await h.resources()).filter((r) => r.type.includes("egress-ipam"))).toEqual([]);
  });

  it("keeps allocations stable when the pool grows, and refuses a shrink that strands a holder", async () => {
    const program = (ranges: { subnet: string; rangeStart?: string; rangeEnd?: string }[]) => async () => {
      const pool = new IpPool("pool", { ranges });
      const web = new IpAllocation("web", { pool, ip: "10.0.8.50" });
      const api = new IpAllocation("api", { pool });
      return { web: web.ip, api: api.ip, size: pool.size };
    };
    await h.program(program([{ subnet: "10.0.8.0/24" }]));
    const first = await h.up();
    // A requested address does not move the round-robin cursor: api gets the first address.
    expect(ipsOf(first.outputs, ["web", "api"])).toEqual(["10.0.8.50", "10.0.8.2"]);

    await h.program(program([{ subnet: "10.0.8.0/24" }, { subnet: "10.0.9.0/24" }]));
    const grown = await h.up();
    expect(changesOf(grown.summary.resourceChanges)).toEqual({ update: 1 });
    expect(ipsOf(grown.outputs, ["web", "api"])).toEqual(["10.0.8.50", "10.0.8.2"]);
    expect(grown.outputs.size?.value).toBe(String(253 + 253));

    await h.program(program([{ subnet: "10.0.8.0/24", rangeStart: "10.0.8.10" }]));
    const err = String(await h.preview().catch((e: Error) => e));
    expect(err).toMatch(/10\.0\.8\.2 \(held by urn:pulumi:test::guard::[^)]*IpAllocation::api\)/);
    await expect(h.up()).rejects.toThrow(/10\.0\.8\.2\b/);
    const pool = (await h.resources()).find((r) => r.type.endsWith("IpPool"));
    expect(pool?.outputs?.size).toBe(String(253 + 253));
  });

  it("adopts an IP held by another resource when told to, and refuses without adopt", async () => {
    const program = (names: Record<string, boolean | undefined>) => async () => {
      const pool = new IpPool("pool", { ranges: [{ subnet: "10.0.8.0/24" }, { subnet: "10.0.9.0/24" }] });
      for (const [name, adopt] of Object.entries(names))
        new IpAllocation(name, { pool, ip: "10.0.8.50", adopt });
    };
    await h.program(program({ web: undefined, "web-renamed": undefined }));
    expect(String(await h.preview().catch((e: Error) => e))).toMatch(
      /10\.0\.8\.50 .*held by .*IpAllocation::web; set adopt/,
    );
    await h.program(program({ "web-renamed": true }));
    const up = await h.up();
    expect(changesOf(up.summary.resourceChanges)).toMatchObject({ create: 1, delete: 2 });
    const holders = (await h.resources()).filter((r) => r.type.endsWith("IpAllocation"));
    expect(holders.map((r) => [r.urn.split("::").pop(), r.outputs?.ip])).toEqual([
      ["web-renamed", "10.0.8.50"],
    ]);
  });
});

describe("an interrupted create (the state a killed provider leaves)", () => {
  const h = Harness.create("interrupted");
  const { IpPool, IpAllocation } = h.pkg<Pkg>("pulumi-egress-ipam");
  const program = (names: string[]) => async () => {
    const pool = new IpPool("pool", { ranges: [{ subnet: "10.40.0.0/24" }], strategy: "lowest-free" });
    return Object.fromEntries(names.map((n) => [n, new IpAllocation(n, { pool }).ip]));
  };
  afterAll(() => h.dispose());

  it("takes its planned address back on the next up, ahead of a new allocation declared before it, and preview shows it", async () => {
    const stack = await h.program(program(["a", "b"]));
    expect(ipsOf((await h.up()).outputs, ["a", "b"])).toEqual(["10.40.0.2", "10.40.0.3"]);

    // Turn b into a create interrupted after check, as a killed `pulumi up` leaves it: its checked
    // inputs (with the plan) in `pending_operations`, nothing of it in `resources`. Written into the
    // file backend's checkpoint directly: `pulumi stack import` drops pending operations ("removing
    // pending operation ... from snapshot"), so an import cannot produce this state.
    const file = h.checkpointFile;
    const checkpoint = JSON.parse(fs.readFileSync(file, "utf8"));
    const latest = checkpoint.checkpoint.latest as {
      resources: { urn: string; id?: string; outputs?: Record<string, unknown> }[];
      pending_operations?: unknown[];
    };
    const b = latest.resources.find((r) => r.urn.endsWith("IpAllocation::b"))!;
    latest.resources = latest.resources.filter((r) => r !== b);
    latest.pending_operations = [{ type: "creating", resource: { ...b, id: "", outputs: {} } }];
    fs.writeFileSync(file, JSON.stringify(checkpoint));
    const state = (await stack.exportStack()).deployment;
    expect(state.resources.map((r: { urn: string }) => r.urn)).not.toContain(b.urn);
    expect(state.pending_operations).toMatchObject([{ type: "creating", resource: { urn: b.urn } }]);

    // c, new and declared before b, would get b's address if the interrupted create's plan were not
    // read from pending_operations: the pool plans its holders in program order.
    await h.program(program(["a", "c", "b"]));
    const preview = await h.preview();
    expect(preview.planned("b")?.ip).toBe("10.40.0.3");
    expect(preview.planned("c")?.ip).toBe("10.40.0.4");
    const up = await h.up();
    expect(changesOf(up.summary.resourceChanges)).toEqual({ create: 2 });
    expect(ipsOf(up.outputs, ["a", "c", "b"])).toEqual(["10.40.0.2", "10.40.0.4", "10.40.0.3"]);
    const again = await h.up();
    expect(changesOf(again.summary.resourceChanges)).toEqual({});
    expect(ipsOf(again.outputs, ["a", "c", "b"])).toEqual(["10.40.0.2", "10.40.0.4", "10.40.0.3"]);
  });
});
