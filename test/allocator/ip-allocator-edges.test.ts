import { describe, expect, it } from "vitest";
import {
  AddressSet,
  IpAllocator,
  MemoryStore,
  type MemoryStoreSeed,
  type RangeInit,
  RangeSet,
  type ReadonlyAddressSet,
  type Store,
} from "../../provider/allocator";

const subnets = (...s: string[]): RangeInit[] => s.map((subnet) => ({ subnet }));
const taken = (...ips: string[]): { [ip: string]: string } =>
  Object.fromEntries(ips.map((ip) => [ip, "other"]));

describe("IpAllocator construction", () => {
  it("canonicalizes the range set in place", () => {
    const set = new RangeSet([{ subnet: "2001:DB8::/64" }]);
    new IpAllocator(set, new MemoryStore(), 0);
    expect(set.ranges[0]?.toJSON()).toEqual({
      subnet: "2001:db8::/64",
      rangeStart: "2001:db8::1",
      rangeEnd: "2001:db8::ffff:ffff:ffff:ffff",
      gateway: "2001:db8::1",
    });
  });

  it.each<[string, () => unknown, string]>([
    [
      "an unknown strategy",
      () =>
        new IpAllocator(new RangeSet(subnets("10.0.0.0/29")), new MemoryStore(), 0, {
          strategy: "random" as "lowest-free",
        }),
      "INVALID_CONFIG",
    ],
    [
      "a negative range id",
      () => new IpAllocator(new RangeSet(subnets("10.0.0.0/29")), new MemoryStore(), -1),
      "INVALID_CONFIG",
    ],
    [
      "a fractional range id",
      () => new IpAllocator(new RangeSet(subnets("10.0.0.0/29")), new MemoryStore(), 1.5),
      "INVALID_CONFIG",
    ],
    [
      "an unparsable exclusion",
      () =>
        new IpAllocator(new RangeSet(subnets("10.0.0.0/29")), new MemoryStore(), 0, {
          exclude: ["10.0.0.x"],
        }),
      "INVALID_ADDRESS",
    ],
    [
      "an exclusion with host bits",
      () =>
        new IpAllocator(new RangeSet(subnets("10.0.0.0/29")), new MemoryStore(), 0, {
          exclude: ["10.0.0.1/30"],
        }),
      "HOST_BITS_SET",
    ],
    ["an empty set", () => new IpAllocator(new RangeSet([]), new MemoryStore(), 0), "EMPTY_RANGE_SET"],
    [
      "a bad range",
      () => new IpAllocator(new RangeSet(subnets("10.0.0.0/31")), new MemoryStore(), 0),
      "NETWORK_TOO_SMALL",
    ],
  ])("rejects %s", (_name, build, code) => {
    expect(build).toThrow(expect.objectContaining({ code }));
  });
});

/** A store whose view never shows anything taken, as if every reservation happened elsewhere. */
class RacyStore extends MemoryStore {
  override async reserved(): Promise<ReadonlyAddressSet> {
    return new AddressSet();
  }
  override reservedSync(): ReadonlyAddressSet {
    return new AddressSet();
  }
}

/** The same, seen only through the async Store methods (no synchronous face). */
class AsyncRacyStore implements Store {
  readonly #inner: MemoryStore;
  constructor(seed: MemoryStoreSeed) {
    this.#inner = new MemoryStore(seed);
  }
  reserve(id: string, ip: string, rangeId: string): Promise<boolean> {
    return this.#inner.reserve(id, ip, rangeId);
  }
  lastReservedIP(rangeId: string): Promise<string | undefined> {
    return this.#inner.lastReservedIP(rangeId);
  }
  releaseByID(id: string): Promise<void> {
    return this.#inner.releaseByID(id);
  }
  getByID(id: string): Promise<string[]> {
    return this.#inner.getByID(id);
  }
  async reserved(): Promise<ReadonlyAddressSet> {
    return new AddressSet();
  }
}

describe.each<[string, (seed: MemoryStoreSeed) => Store]>([
  ["with a synchronous face", (seed) => new RacyStore(seed)],
  ["through async calls only", (seed) => new AsyncRacyStore(seed)],
])("IpAllocator against a store that loses races, %s", (_name, makeStore) => {
  it("skips addresses the store refuses and reserves the next free one", async () => {
    const store = makeStore({ reservations: taken("10.0.0.2", "10.0.0.3", "10.0.0.5") });
    const alloc = new IpAllocator(new RangeSet(subnets("10.0.0.0/29")), store, 0);
    expect((await alloc.get("a")).address).toBe("10.0.0.4/29");
    expect((await alloc.get("b")).address).toBe("10.0.0.6/29");
  });

  it("still ends with POOL_EXHAUSTED when everything is taken", async () => {
    const store = makeStore({
      reservations: taken("10.0.0.2", "10.0.0.3", "10.0.0.4", "10.0.0.5", "10.0.0.6"),
    });
    const alloc = new IpAllocator(new RangeSet(subnets("10.0.0.0/29")), store, 0);
    await expect(alloc.get("a")).rejects.toMatchObject({ code: "POOL_EXHAUSTED" });
  });
});

describe("IpAllocator with concurrent callers", () => {
  it("hands out distinct addresses to concurrent callers", async () => {
    const alloc = new IpAllocator(new RangeSet(subnets("10.0.0.0/28")), new MemoryStore(), 0);
    const results = await Promise.all(Array.from({ length: 13 }, (_, i) => alloc.get(`id${i}`)));
    const addresses = results.map((r) => r.address);
    expect(new Set(addresses).size).toBe(13);
    await expect(alloc.get("late")).rejects.toMatchObject({ code: "POOL_EXHAUSTED" });
  });
});
