import { describe, expect, it } from "vitest";
import {
  AddressSet,
  IpAllocator,
  type IpAllocatorOptions,
  MemoryStore,
  type MemoryStoreSeed,
  type RangeInit,
  RangeSet,
  type ReadonlyAddressSet,
  type Store,
} from "../../provider/allocator";

/**
 * The smallest honest Store: plain maps, and a fresh snapshot (not a live view) from `reserved()`.
 * Running every table over it as well shows the allocator relies on the Store interface only.
 */
class PlainStore implements Store {
  readonly owners = new Map<string, string>();
  readonly last = new Map<string, string>();
  constructor(seed: MemoryStoreSeed = {}) {
    for (const [ip, id] of Object.entries(seed.reservations ?? {})) this.owners.set(ip, id);
    for (const [rangeId, ip] of Object.entries(seed.lastReserved ?? {})) this.last.set(rangeId, ip);
  }
  async reserve(id: string, ip: string, rangeId: string): Promise<boolean> {
    if (this.owners.has(ip)) return false;
    this.owners.set(ip, id);
    this.last.set(rangeId, ip);
    return true;
  }
  async lastReservedIP(rangeId: string): Promise<string | undefined> {
    return this.last.get(rangeId);
  }
  async releaseByID(id: string): Promise<void> {
    for (const [ip, owner] of this.owners) if (owner === id) this.owners.delete(ip);
  }
  async getByID(id: string): Promise<string[]> {
    return [...this.owners].filter(([, owner]) => owner === id).map(([ip]) => ip);
  }
  async reserved(): Promise<ReadonlyAddressSet> {
    return new AddressSet(this.owners.keys());
  }
}

const stores: Array<[string, (seed?: MemoryStoreSeed) => Store]> = [
  ["MemoryStore", (seed) => new MemoryStore(seed)],
  ["a minimal Store", (seed) => new PlainStore(seed)],
];

const subnets = (...s: string[]): RangeInit[] => s.map((subnet) => ({ subnet }));
const cursorSeed = (lastIP: string | undefined): { [rangeId: string]: string } =>
  lastIP === undefined ? {} : { "0": lastIP };
const taken = (...ips: string[]): { [ip: string]: string } =>
  Object.fromEntries(ips.map((ip) => [ip, "other"]));

describe.each(stores)("IpAllocator over %s", (_storeName, makeStore) => {
  function allocator(ranges: RangeInit[], seed: MemoryStoreSeed = {}, options?: IpAllocatorOptions) {
    const store = makeStore(seed);
    return { store, alloc: new IpAllocator(new RangeSet(ranges), store, 0, options) };
  }

  describe("round-robin (host-local)", () => {
    it.each<[string, RangeInit[], string[], string | undefined, string]>([
      ["fresh start", subnets("10.0.0.0/29"), [], undefined, "10.0.0.2"],
      ["fresh IPv6 start", subnets("2001:db8:1::0/64"), [], undefined, "2001:db8:1::2"],
      ["fresh /30", subnets("10.0.0.0/30"), [], undefined, "10.0.0.2"],
      ["first address taken", subnets("10.0.0.0/29"), ["10.0.0.2"], undefined, "10.0.0.3"],
      ["next after the last reserved", subnets("10.0.0.0/29"), [], "10.0.0.5", "10.0.0.6"],
      [
        "skips taken after the last reserved",
        subnets("10.0.0.0/29"),
        ["10.0.0.4", "10.0.0.5"],
        "10.0.0.3",
        "10.0.0.6",
      ],
      ["wraps to the beginning", subnets("10.0.0.0/29"), ["10.0.0.6"], "10.0.0.5", "10.0.0.2"],
      ["last reserved outside the set", subnets("10.0.0.0/29"), ["10.0.0.2"], "10.0.0.128", "10.0.0.3"],
      ["last reserved of the other family", subnets("10.0.0.0/29"), [], "2001:db8::5", "10.0.0.2"],
      [
        "only the last reserved IP is free",
        subnets("10.0.0.0/29"),
        ["10.0.0.2", "10.0.0.4", "10.0.0.5", "10.0.0.6"],
        "10.0.0.3",
        "10.0.0.3",
      ],
      ["multiple ranges, fresh", subnets("10.0.0.0/30", "10.0.1.0/30"), [], undefined, "10.0.0.2"],
      ["advances to the next range", subnets("10.0.0.0/30", "10.0.1.0/30"), [], "10.0.0.2", "10.0.1.2"],
      [
        "wraps to the first range",
        subnets("10.0.0.0/30", "10.0.1.0/30", "10.0.2.0/30"),
        [],
        "10.0.2.2",
        "10.0.0.2",
      ],
      [
        "wraps past a full first range",
        subnets("10.0.0.0/30", "10.0.1.0/29", "10.0.2.0/30"),
        ["10.0.0.2"],
        "10.0.2.2",
        "10.0.1.2",
      ],
      ["IPv6 next after the last reserved", subnets("2001:db8::/64"), [], "2001:db8::ffff", "2001:db8::1:0"],
      ["IPv6 wraps at the last address", subnets("2001:db8::/120"), [], "2001:db8::ff", "2001:db8::2"],
    ])("%s", async (_name, ranges, held, lastIP, expected) => {
      const seed = {
        reservations: taken(...held),
        lastReserved: cursorSeed(lastIP),
      };
      const { alloc } = allocator(ranges, seed);
      const result = await alloc.get("ID");
      expect(result.address.split("/")[0]).toBe(expected);
    });

    it.each<[string, string | undefined, string[]]>([
      [
        "from the beginning",
        undefined,
        ["192.168.1.2", "192.168.1.3", "192.168.1.4", "192.168.1.5", "192.168.1.6"],
      ],
      [
        "from the end",
        "192.168.1.6",
        ["192.168.1.2", "192.168.1.3", "192.168.1.4", "192.168.1.5", "192.168.1.6"],
      ],
      [
        "from the middle",
        "192.168.1.3",
        ["192.168.1.4", "192.168.1.5", "192.168.1.6", "192.168.1.2", "192.168.1.3"],
      ],
    ])("walks the whole set once %s, then is exhausted", async (_name, lastIP, order) => {
      const { alloc } = allocator(subnets("192.168.1.0/29"), { lastReserved: lastIP ? { "0": lastIP } : {} });
      const got: string[] = [];
      for (let i = 0; i < order.length; i++) got.push((await alloc.get(`id${i}`)).address);
      expect(got).toEqual(order.map((ip) => `${ip}/29`));
      await expect(alloc.get("one-more")).rejects.toMatchObject({
        code: "POOL_EXHAUSTED",
        message: expect.stringContaining("range set 192.168.1.1-192.168.1.6"),
      });
    });

    it("moves to the first address of the next range after the last address of a range", async () => {
      const ranges = [
        { subnet: "192.168.1.0/30", rangeStart: "192.168.1.0", rangeEnd: "192.168.1.3" },
        { subnet: "192.168.2.0/30", rangeStart: "192.168.2.0", rangeEnd: "192.168.2.3" },
      ];
      const { alloc } = allocator(ranges, { lastReserved: { "0": "192.168.1.3" } });
      expect(await alloc.get("a")).toEqual({ address: "192.168.2.0/30", gateway: "192.168.2.1" });
      expect(await alloc.get("b")).toEqual({ address: "192.168.2.2/30", gateway: "192.168.2.1" });
    });

    it("gives the next address after a release, not the released one", async () => {
      const { alloc } = allocator(subnets("192.168.1.0/29"));
      expect(await alloc.get("ID")).toEqual({ address: "192.168.1.2/29", gateway: "192.168.1.1" });
      await alloc.release("ID");
      expect(await alloc.get("ID")).toEqual({ address: "192.168.1.3/29", gateway: "192.168.1.1" });
    });

    it("skips a gateway that is not the first address, and hands out network+1", async () => {
      const { alloc } = allocator([{ subnet: "10.0.0.0/29", gateway: "10.0.0.4" }]);
      const got: string[] = [];
      for (let i = 0; i < 5; i++) got.push((await alloc.get(`id${i}`)).address);
      expect(got).toEqual(["10.0.0.1/29", "10.0.0.2/29", "10.0.0.3/29", "10.0.0.5/29", "10.0.0.6/29"]);
    });

    it("hands out every address when the gateway is outside the range", async () => {
      const { alloc } = allocator([{ subnet: "10.0.0.0/29", rangeStart: "10.0.0.4", gateway: "10.0.0.1" }]);
      const got: string[] = [];
      for (let i = 0; i < 3; i++) got.push((await alloc.get(`id${i}`)).address);
      expect(got).toEqual(["10.0.0.4/29", "10.0.0.5/29", "10.0.0.6/29"]);
    });

    it("skips a gateway only inside its own range, as host-local's iterator does", async () => {
      // Each half's gateway lies in the other half, so neither is skipped.
      const { alloc } = allocator(
        [
          { subnet: "10.0.0.0/29", rangeEnd: "10.0.0.3", gateway: "10.0.0.5" },
          { subnet: "10.0.0.0/29", rangeStart: "10.0.0.4", gateway: "10.0.0.1" },
        ],
        {},
        { strategy: "lowest-free" },
      );
      const got: string[] = [];
      for (let i = 0; i < 6; i++) got.push((await alloc.get(`id${i}`)).address);
      expect(got).toEqual([
        "10.0.0.1/29",
        "10.0.0.2/29",
        "10.0.0.3/29",
        "10.0.0.4/29",
        "10.0.0.5/29",
        "10.0.0.6/29",
      ]);
      await expect(alloc.get("id6")).rejects.toMatchObject({ code: "POOL_EXHAUSTED" });
    });

    it("reports each range's own prefix length and gateway", async () => {
      const { alloc } = allocator([
        { subnet: "10.0.0.0/30" },
        { subnet: "10.1.0.0/16", gateway: "10.1.255.254" },
      ]);
      expect(await alloc.get("a")).toEqual({ address: "10.0.0.2/30", gateway: "10.0.0.1" });
      expect(await alloc.get("b")).toEqual({ address: "10.1.0.1/16", gateway: "10.1.255.254" });
    });

    it("fills an IPv6 /126 and is exhausted", async () => {
      const { alloc } = allocator(subnets("2001:db8::/126"));
      expect(await alloc.get("a")).toEqual({ address: "2001:db8::2/126", gateway: "2001:db8::1" });
      expect(await alloc.get("b")).toEqual({ address: "2001:db8::3/126", gateway: "2001:db8::1" });
      await expect(alloc.get("c")).rejects.toMatchObject({ code: "POOL_EXHAUSTED" });
    });

    it.each<[string, RangeInit[], string[]]>([
      ["a /30 with its one address taken", subnets("10.0.0.0/30"), ["10.0.0.2"]],
      ["a full /29", subnets("10.0.0.0/29"), ["10.0.0.2", "10.0.0.3", "10.0.0.4", "10.0.0.5", "10.0.0.6"]],
      ["two full ranges", subnets("10.0.0.0/30", "10.0.1.0/30"), ["10.0.0.2", "10.0.1.2"]],
    ])("is exhausted with %s, naming the set", async (_name, ranges, held) => {
      const { alloc } = allocator(ranges, { reservations: taken(...held) });
      const set = new RangeSet(ranges).canonicalize().toString();
      await expect(alloc.get("ID")).rejects.toMatchObject({
        name: "IpamError",
        code: "POOL_EXHAUSTED",
        message: `no free address left in range set ${set}`,
      });
    });
  });

  describe("lowest-free", () => {
    const lowest = { strategy: "lowest-free" as const };
    it.each<[string, RangeInit[], string[], string | undefined, string]>([
      ["fresh start", subnets("10.0.0.0/29"), [], undefined, "10.0.0.2"],
      ["ignores the last reserved address", subnets("10.0.0.0/29"), [], "10.0.0.5", "10.0.0.2"],
      ["fills a hole first", subnets("10.0.0.0/29"), ["10.0.0.2", "10.0.0.4"], "10.0.0.5", "10.0.0.3"],
      ["takes ranges in set order", subnets("10.0.1.0/30", "10.0.0.0/30"), [], undefined, "10.0.1.2"],
      [
        "goes on to the next range",
        subnets("10.0.0.0/30", "10.0.1.0/30"),
        ["10.0.0.2"],
        "10.0.1.2",
        "10.0.1.2",
      ],
      ["IPv6", subnets("2001:db8::/64"), ["2001:db8::2", "2001:db8::3"], "2001:db8::9", "2001:db8::4"],
    ])("%s", async (_name, ranges, held, lastIP, expected) => {
      const seed = {
        reservations: taken(...held),
        lastReserved: cursorSeed(lastIP),
      };
      const { alloc } = allocator(ranges, seed, lowest);
      expect((await alloc.get("ID")).address.split("/")[0]).toBe(expected);
    });

    it("gives a released address straight back", async () => {
      const { alloc } = allocator(subnets("192.168.1.0/29"), {}, lowest);
      await alloc.get("a");
      await alloc.get("b");
      await alloc.release("a");
      expect((await alloc.get("c")).address).toBe("192.168.1.2/29");
    });
  });

  describe("exclusions", () => {
    it.each<[string, IpAllocatorOptions, string[]]>([
      ["single addresses", { exclude: ["10.0.0.2", "10.0.0.4"] }, ["10.0.0.3", "10.0.0.5", "10.0.0.6"]],
      ["a CIDR", { exclude: ["10.0.0.0/30"] }, ["10.0.0.4", "10.0.0.5", "10.0.0.6"]],
      [
        "other-family and outside entries are ignored",
        { exclude: ["2001:db8::/64", "10.9.0.0/16", "10.0.0.3"] },
        ["10.0.0.2", "10.0.0.4", "10.0.0.5", "10.0.0.6"],
      ],
      [
        "lowest-free too",
        { strategy: "lowest-free", exclude: ["10.0.0.5"] },
        ["10.0.0.2", "10.0.0.3", "10.0.0.4", "10.0.0.6"],
      ],
    ])("never hands out %s", async (_name, options, expected) => {
      const { alloc } = allocator(subnets("10.0.0.0/29"), {}, options);
      const got: string[] = [];
      for (;;) {
        try {
          got.push((await alloc.get(`id${got.length}`)).address.split("/")[0] as string);
        } catch (err) {
          expect(err).toMatchObject({ code: "POOL_EXHAUSTED" });
          break;
        }
      }
      expect(got).toEqual(expected);
    });

    it("accepts exclusions covering the whole pool, then fails at get", async () => {
      const { alloc } = allocator(subnets("10.0.0.0/29"), {}, { exclude: ["10.0.0.0/29"] });
      await expect(alloc.get("a")).rejects.toMatchObject({ code: "POOL_EXHAUSTED" });
    });
  });

  describe("requested addresses", () => {
    it("reserves the requested address", async () => {
      const { alloc, store } = allocator(subnets("192.168.1.0/29"));
      expect(await alloc.get("ID", "192.168.1.5")).toEqual({
        address: "192.168.1.5/29",
        gateway: "192.168.1.1",
      });
      expect(await store.getByID("ID")).toEqual(["192.168.1.5"]);
    });

    it("canonicalizes the requested address", async () => {
      const { alloc } = allocator(subnets("2001:db8:1::/64"));
      expect((await alloc.get("ID", "2001:DB8:1:0::0:5")).address).toBe("2001:db8:1::5/64");
    });

    it("advances the round-robin cursor", async () => {
      const { alloc } = allocator(subnets("192.168.1.0/29"));
      await alloc.get("a", "192.168.1.4");
      expect((await alloc.get("b")).address).toBe("192.168.1.5/29");
    });

    it.each<[string, RangeInit[], string, string, RegExp]>([
      [
        "taken by another id",
        subnets("192.168.1.0/29"),
        "192.168.1.6",
        "IP_UNAVAILABLE",
        /192\.168\.1\.6 is already allocated in range set 192\.168\.1\.1-192\.168\.1\.6/,
      ],
      [
        "the gateway",
        subnets("192.168.1.0/29"),
        "192.168.1.1",
        "IP_UNAVAILABLE",
        /192\.168\.1\.1 is the gateway/,
      ],
      [
        "after rangeEnd",
        [{ subnet: "192.168.1.0/29", rangeEnd: "192.168.1.4" }],
        "192.168.1.5",
        "NOT_IN_RANGE",
        /192\.168\.1\.5 is not in range set 192\.168\.1\.1-192\.168\.1\.4/,
      ],
      [
        "before rangeStart",
        [{ subnet: "192.168.1.0/29", rangeStart: "192.168.1.3" }],
        "192.168.1.2",
        "NOT_IN_RANGE",
        /192\.168\.1\.2 is not in/,
      ],
      ["outside the subnet", subnets("192.168.1.0/29"), "10.0.0.1", "NOT_IN_RANGE", /10\.0\.0\.1/],
      ["of the other family", subnets("192.168.1.0/29"), "2001:db8::2", "NOT_IN_RANGE", /2001:db8::2/],
      ["the broadcast address", subnets("192.168.1.0/29"), "192.168.1.7", "NOT_IN_RANGE", /192\.168\.1\.7/],
      ["garbage", subnets("192.168.1.0/29"), "192.168.1", "INVALID_ADDRESS", /"192\.168\.1"/],
    ])("refuses an address that is %s", async (_name, ranges, ip, code, message) => {
      const { alloc } = allocator(ranges, { reservations: { "192.168.1.6": "other" } });
      await expect(alloc.get("ID", ip)).rejects.toMatchObject({
        code,
        message: expect.stringMatching(message),
      });
    });

    it("refuses an excluded address", async () => {
      const { alloc } = allocator(subnets("10.0.0.0/24"), {}, { exclude: ["10.0.0.16/28"] });
      await expect(alloc.get("ID", "10.0.0.20")).rejects.toMatchObject({
        code: "IP_UNAVAILABLE",
        message: expect.stringMatching(/excluded/),
      });
      expect((await alloc.get("ID", "10.0.0.32")).address).toBe("10.0.0.32/24");
    });
  });

  describe("ids", () => {
    it("refuses a second allocation for the same id in the same set", async () => {
      const { alloc } = allocator(subnets("10.0.0.0/29"));
      await alloc.get("pod");
      await expect(alloc.get("pod")).rejects.toMatchObject({
        code: "DUPLICATE_ALLOCATION",
        message: expect.stringMatching(/pod already holds 10\.0\.0\.2 in range set/),
      });
      await expect(alloc.get("pod", "10.0.0.5")).rejects.toMatchObject({ code: "DUPLICATE_ALLOCATION" });
    });

    it("lets one id hold one address per range set (dual stack), and releases them all", async () => {
      const store = makeStore();
      const v4 = new IpAllocator(new RangeSet(subnets("10.0.0.0/29")), store, 0);
      const v6 = new IpAllocator(new RangeSet(subnets("2001:db8::/64")), store, 1);
      expect((await v4.get("pod")).address).toBe("10.0.0.2/29");
      expect((await v6.get("pod")).address).toBe("2001:db8::2/64");
      await v4.release("pod");
      expect(await store.getByID("pod")).toEqual([]);
      expect((await v6.get("pod")).address).toBe("2001:db8::3/64");
    });

    it("keeps a round-robin cursor per range id, compared as a string", async () => {
      const store = makeStore({ lastReserved: { "1": "10.0.0.4" } });
      const first = new IpAllocator(new RangeSet(subnets("10.0.0.0/29")), store, 0);
      const second = new IpAllocator(new RangeSet(subnets("10.0.0.0/29")), store, 1);
      expect((await second.get("a")).address).toBe("10.0.0.5/29");
      expect((await first.get("b")).address).toBe("10.0.0.2/29");
      expect(await store.lastReservedIP("1")).toBe("10.0.0.5");
      expect(await store.lastReservedIP("0")).toBe("10.0.0.2");
    });

    it("releases an unknown id without error", async () => {
      const { alloc } = allocator(subnets("10.0.0.0/29"));
      await expect(alloc.release("nobody")).resolves.toBeUndefined();
    });
  });
});
