import { describe, expect, it } from "vitest";
import { MemoryStore, NodeAllocator, type NodeAllocatorOptions } from "../../provider/allocator";

describe("NodeAllocator", () => {
  it("hands out the lowest free address after the network address, as a /32", async () => {
    const alloc = new NodeAllocator({ network: "10.0.0.0/24", store: new MemoryStore() });
    expect(await alloc.allocate("a")).toBe("10.0.0.1/32");
    expect(await alloc.allocate("b")).toBe("10.0.0.2/32");
    expect(await alloc.allocate("c")).toBe("10.0.0.3/32");
  });

  it("gives a node the same prefix again", async () => {
    const alloc = new NodeAllocator({ network: "10.0.0.0/24", store: new MemoryStore() });
    await alloc.allocate("a");
    await alloc.allocate("b");
    expect(await alloc.allocate("a")).toBe("10.0.0.1/32");
    expect(await alloc.allocate("b")).toBe("10.0.0.2/32");
  });

  it("fills holes left by others and skips taken addresses", async () => {
    const store = new MemoryStore({ reservations: { "10.0.0.1": "x", "10.0.0.2": "y", "10.0.0.4": "z" } });
    const alloc = new NodeAllocator({ network: "10.0.0.0/24", store });
    expect(await alloc.allocate("a")).toBe("10.0.0.3/32");
    expect(await alloc.allocate("b")).toBe("10.0.0.5/32");
    await store.releaseByID("y");
    expect(await alloc.allocate("c")).toBe("10.0.0.2/32");
  });

  it.each<[string, { [node: string]: string }, string[], string[]]>([
    ["bare address", { s: "10.0.0.2" }, ["a", "s", "b"], ["10.0.0.1/32", "10.0.0.2/32", "10.0.0.3/32"]],
    ["prefix form", { s: "10.0.0.1/32" }, ["a", "b", "s"], ["10.0.0.2/32", "10.0.0.3/32", "10.0.0.1/32"]],
    ["mapped form", { s: "::ffff:10.0.0.1" }, ["s", "a"], ["10.0.0.1/32", "10.0.0.2/32"]],
    [
      "several statics",
      { s: "10.0.0.1", t: "10.0.0.3" },
      ["a", "b", "t", "s"],
      ["10.0.0.2/32", "10.0.0.4/32", "10.0.0.3/32", "10.0.0.1/32"],
    ],
  ])("honours statics (%s) and never hands them to others", async (_name, statics, nodes, expected) => {
    const alloc = new NodeAllocator({ network: "10.0.0.0/24", store: new MemoryStore(), static: statics });
    const got: string[] = [];
    for (const node of nodes) got.push(await alloc.allocate(node));
    expect(got).toEqual(expected);
  });

  it("returns a static address again without reserving it twice", async () => {
    const store = new MemoryStore();
    const alloc = new NodeAllocator({ network: "10.0.0.0/24", store, static: { s: "10.0.0.9/32" } });
    expect(await alloc.allocate("s")).toBe("10.0.0.9/32");
    expect(await alloc.allocate("s")).toBe("10.0.0.9/32");
    expect(await store.getByID("s")).toEqual(["10.0.0.9"]);
  });

  it("refuses a static address someone else holds", async () => {
    const store = new MemoryStore({ reservations: { "10.0.0.9": "intruder" } });
    const alloc = new NodeAllocator({ network: "10.0.0.0/24", store, static: { s: "10.0.0.9" } });
    await expect(alloc.allocate("s")).rejects.toMatchObject({
      code: "IP_UNAVAILABLE",
      message: expect.stringContaining("10.0.0.9"),
    });
  });

  it("allocates /128 prefixes in an IPv6 network", async () => {
    const alloc = new NodeAllocator({
      network: "fd00:1::/64",
      store: new MemoryStore(),
      static: { s: "fd00:1::1/128" },
    });
    expect(await alloc.allocate("a")).toBe("fd00:1::2/128");
    expect(await alloc.allocate("s")).toBe("fd00:1::1/128");
  });

  it("hands out the last address too, then is exhausted naming the network", async () => {
    const alloc = new NodeAllocator({ network: "10.0.0.0/30", store: new MemoryStore() });
    expect([await alloc.allocate("a"), await alloc.allocate("b"), await alloc.allocate("c")]).toEqual([
      "10.0.0.1/32",
      "10.0.0.2/32",
      "10.0.0.3/32",
    ]);
    await expect(alloc.allocate("d")).rejects.toMatchObject({
      code: "POOL_EXHAUSTED",
      message: expect.stringContaining("network 10.0.0.0/30"),
    });
  });

  it("has nothing to give in a /32 but its statics", async () => {
    const alloc = new NodeAllocator({
      network: "10.0.0.7/32",
      store: new MemoryStore(),
      static: { s: "10.0.0.7" },
    });
    await expect(alloc.allocate("a")).rejects.toMatchObject({ code: "POOL_EXHAUSTED" });
    expect(await alloc.allocate("s")).toBe("10.0.0.7/32");
  });

  it.each<[string, Partial<NodeAllocatorOptions>, string]>([
    ["no network", { store: new MemoryStore() }, "NO_NETWORK"],
    ["an empty network", { network: "", store: new MemoryStore() }, "NO_NETWORK"],
    ["no store", { network: "10.0.0.0/24" }, "NO_STORAGE"],
    ["a garbage network", { network: "10.0.0/24", store: new MemoryStore() }, "INVALID_ADDRESS"],
    ["host bits", { network: "10.0.0.1/24", store: new MemoryStore() }, "HOST_BITS_SET"],
    [
      "a static that is a subnet",
      { network: "10.0.0.0/24", store: new MemoryStore(), static: { s: "10.0.0.4/30" } },
      "INVALID_ADDRESS",
    ],
    [
      "a static outside the network",
      { network: "10.0.0.0/24", store: new MemoryStore(), static: { s: "10.0.1.4" } },
      "NOT_IN_RANGE",
    ],
    [
      "a static of the other family",
      { network: "10.0.0.0/24", store: new MemoryStore(), static: { s: "fd00::4" } },
      "NOT_IN_RANGE",
    ],
    [
      "one static for two nodes",
      { network: "10.0.0.0/24", store: new MemoryStore(), static: { s: "10.0.0.4", t: "10.0.0.4/32" } },
      "IP_UNAVAILABLE",
    ],
  ])("rejects %s", (_name, options, code) => {
    expect(() => new NodeAllocator(options as NodeAllocatorOptions)).toThrow(
      expect.objectContaining({ name: "IpamError", code }),
    );
  });

  it("checks the network before the store, as webmesh does", () => {
    expect(() => new NodeAllocator({} as NodeAllocatorOptions)).toThrow(
      expect.objectContaining({ code: "NO_NETWORK" }),
    );
  });
});
