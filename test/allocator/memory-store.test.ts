import { describe, expect, it } from "vitest";
import { MemoryStore } from "../../provider/allocator";

describe("MemoryStore", () => {
  it("reserves an address once, remembering the last one per range id", async () => {
    const store = new MemoryStore();
    expect(await store.reserve("a", "10.0.0.2", "0")).toBe(true);
    expect(await store.reserve("b", "10.0.0.2", "0")).toBe(false);
    expect(await store.reserve("b", "10.0.0.3", "1")).toBe(true);
    expect(await store.lastReservedIP("0")).toBe("10.0.0.2");
    expect(await store.lastReservedIP("1")).toBe("10.0.0.3");
    expect(await store.lastReservedIP("2")).toBeUndefined();
  });

  it("keeps the last reserved address when a reservation fails", async () => {
    const store = new MemoryStore({ reservations: { "10.0.0.9": "x" } });
    await store.reserve("a", "10.0.0.2", "0");
    await store.reserve("b", "10.0.0.9", "0");
    expect(await store.lastReservedIP("0")).toBe("10.0.0.2");
  });

  it("treats spellings of one address as the same address", async () => {
    const store = new MemoryStore();
    expect(await store.reserve("a", "2001:DB8::0:1", "0")).toBe(true);
    expect(await store.reserve("b", "2001:db8::1", "0")).toBe(false);
    expect(await store.reserve("c", "::ffff:10.0.0.1", "0")).toBe(true);
    expect(await store.reserve("d", "10.0.0.1", "0")).toBe(false);
    expect(await store.getByID("a")).toEqual(["2001:db8::1"]);
    expect(await store.getByID("c")).toEqual(["10.0.0.1"]);
    expect(await store.lastReservedIP("0")).toBe("10.0.0.1");
  });

  it("gets and releases everything an id holds, and nothing else", async () => {
    const store = new MemoryStore();
    await store.reserve("a", "10.0.0.2", "0");
    await store.reserve("a", "10.0.0.3", "0");
    await store.reserve("a", "2001:db8::2", "1");
    await store.reserve("b", "10.0.0.4", "0");
    expect(await store.getByID("a")).toEqual(["10.0.0.2", "10.0.0.3", "2001:db8::2"]);
    await store.releaseByID("a");
    expect(await store.getByID("a")).toEqual([]);
    expect(await store.getByID("b")).toEqual(["10.0.0.4"]);
    expect([...(await store.reserved())]).toEqual(["10.0.0.4"]);
    expect(await store.reserve("c", "10.0.0.2", "0")).toBe(true);
    await expect(store.releaseByID("nobody")).resolves.toBeUndefined();
  });

  it("keeps every address of an id however lookups and reservations interleave", async () => {
    const store = new MemoryStore();
    expect(await store.getByID("a")).toEqual([]);
    expect(await store.getByID("b")).toEqual([]);
    await store.reserve("a", "10.0.0.1", "0");
    await store.reserve("a", "10.0.0.2", "0");
    expect(await store.getByID("c")).toEqual([]);
    await store.reserve("b", "10.0.0.3", "0");
    await store.reserve("a", "10.0.0.4", "0");
    expect(await store.getByID("a")).toEqual(["10.0.0.1", "10.0.0.2", "10.0.0.4"]);
    expect(await store.getByID("b")).toEqual(["10.0.0.3"]);
  });

  it("hands out copies, not its own lists", async () => {
    const store = new MemoryStore();
    await store.reserve("a", "10.0.0.2", "0");
    (await store.getByID("a")).push("10.0.0.99");
    expect(await store.getByID("a")).toEqual(["10.0.0.2"]);
  });

  it("exposes an ordered interval view per family", async () => {
    const store = new MemoryStore({
      reservations: { "10.0.0.3": "a", "10.0.0.2": "b", "10.0.0.9": "c", "2001:db8::5": "d" },
    });
    const view = await store.reserved();
    expect([...view.intervalsOf(4).intervals()]).toEqual([
      [0x0a000002n, 0x0a000003n],
      [0x0a000009n, 0x0a000009n],
    ]);
    expect(view.intervalsOf(6).size).toBe(1n);
    expect(view.has("10.0.0.9")).toBe(true);
    expect(view.size).toBe(4n);
  });

  it("round-trips its contents through snapshot and seed, canonically", async () => {
    const seed = {
      reservations: { "10.0.0.2": "a", "2001:DB8::2": "b" },
      lastReserved: { "0": "::ffff:10.0.0.2" },
    };
    const store = new MemoryStore(seed);
    await store.reserve("a", "10.0.0.3", "1");
    const snap = store.snapshot();
    expect(snap).toEqual({
      reservations: { "10.0.0.2": "a", "10.0.0.3": "a", "2001:db8::2": "b" },
      lastReserved: { "0": "10.0.0.2", "1": "10.0.0.3" },
    });
    expect(new MemoryStore(snap).snapshot()).toEqual(snap);
  });

  it("rejects a seed or reservation that is not an address", async () => {
    expect(() => new MemoryStore({ reservations: { "10.0.0.300": "a" } })).toThrow(
      expect.objectContaining({ code: "INVALID_ADDRESS" }),
    );
    await expect(new MemoryStore().reserve("a", "nope", "0")).rejects.toMatchObject({
      code: "INVALID_ADDRESS",
    });
  });
});
