import {
  canonicalAddress,
  familyOfText,
  IpAllocator,
  MemoryStore,
  canonicalCidr,
  cloudReservedAddresses,
  loadIpamConfig,
  nextFree,
  NodeAllocator,
  poolCapacity,
  Range,
  RangeSet,
  type AllocationStrategy,
  type IpamErrorCode,
  type ReadonlyAddressSet,
} from "../../allocator";
import { errorMessage, failureOf, inputFailure, type Failure } from "../../core/failure";
import { shown } from "../../core/text";
import { cursorOf } from "../../ledger/held-entry";

/** One range in CNI host-local form. */
export interface RangeArgs {
  /** The subnet, e.g. `10.0.8.0/24`; must be a network address. */
  subnet: string;
  /** First address handed out (default: network+1). */
  rangeStart?: string;
  /** Last address handed out (default: broadcast−1 for IPv4, the last address for IPv6). */
  rangeEnd?: string;
  /** Never handed out (default: network+1). */
  gateway?: string;
}

/** The inputs of an IpPool that decide which addresses it hands out. */
export interface PoolSpec {
  /** One range set in host-local form; or give `cniConfig`. */
  ranges?: RangeArgs[];
  /** A CNI host-local config (JSON text); each of its range sets is one family of the pool. */
  cniConfig?: string;
  /** CIDRs or addresses never handed out and never accepted when requested. */
  exclude?: string[];
  /** Addresses never handed out automatically, but accepted when requested explicitly. */
  reserved?: string[];
  /** `round-robin` (default, host-local) or `lowest-free`. */
  strategy?: AllocationStrategy;
  /** Cloud whose reserved addresses in each range's subnet are excluded: `aws`. */
  cloudReserved?: "aws";
  /** A webmesh node network: one host prefix per node ID (instead of `ranges` / `cniConfig`). */
  network?: string;
  /** Fixed addresses of node IDs in `network`. */
  static?: Record<string, string>;
  /** The prefix lengths blocks of the pool may have, and the length of a block that gives none. */
  prefixLengths?: PrefixLengthRule;
}

/** A pool's rule for blocks (as AWS VPC IPAM's allocation netmask rules): lengths allowed and the default. */
export interface PrefixLengthRule {
  /** The shortest prefix (largest block) allowed, e.g. 16. */
  min?: number;
  /** The longest prefix (smallest block) allowed, e.g. 28. */
  max?: number;
  /** The length of a block that asks for none. */
  default?: number;
}

/** The inputs of an IpPool (and of a holder's pool reference) that make up its {@link PoolSpec}. */
export const poolSpecKeys = [
  "ranges",
  "cniConfig",
  "exclude",
  "reserved",
  "strategy",
  "cloudReserved",
  "network",
  "static",
  "prefixLengths",
] as const;

/** The {@link PoolSpec} among a pool's properties (inputs, outputs or a checkpoint's copy of them). */
export const poolSpecOf = (props: Record<string, unknown>): PoolSpec =>
  Object.fromEntries(
    poolSpecKeys.filter((k) => props[k] !== undefined).map((k) => [k, props[k]]),
  ) as PoolSpec;

/** A validated pool: canonical range sets and everything the allocator needs. */
export interface ResolvedPool {
  rangeSets: RangeSet[];
  /** Canonical exclusions, cloud-reserved addresses included. */
  exclude: string[];
  /** Canonical reserved addresses. */
  reserved: string[];
  strategy: AllocationStrategy;
  /** A node network (webmesh): node IDs get host prefixes from it, statics honoured. */
  node?: { network: string; static: Record<string, string> };
  /** The rule for blocks, when the pool has one (its fields as given, checked). */
  prefixLengths?: PrefixLengthRule;
}

const strategies: readonly AllocationStrategy[] = ["round-robin", "lowest-free"];

/**
 * Validates a pool spec with the allocator and collects every problem at once, each under the
 * property it comes from (`ranges[1].subnet`, `exclude[0]`, …), so `check` can report all of them
 * at preview.
 */
export function resolvePool(spec: PoolSpec, at = ""): { pool?: ResolvedPool; failures: Failure[] } {
  const failures: Failure[] = [];
  const fail = (property: string, reason: string, code?: IpamErrorCode) =>
    failures.push(inputFailure(at + property, reason, code));
  const failWith = (property: string, err: unknown) => failures.push(failureOf(at + property, err));
  const rangeSets: RangeSet[] = [];
  let node: ResolvedPool["node"];

  if (spec.network !== undefined) {
    if (spec.ranges !== undefined || spec.cniConfig !== undefined) {
      fail("network", "give either `network` (node addresses) or `ranges` / `cniConfig`, not both");
    } else {
      try {
        // The node allocator's own checks: network address, statics inside it and not shared.
        new NodeAllocator({ network: spec.network, store: new MemoryStore(), static: spec.static });
        const range = new Range({ subnet: spec.network }).canonicalize();
        rangeSets.push(new RangeSet([range]).canonicalize());
        node = {
          network: range.subnet,
          static: Object.fromEntries(Object.entries(spec.static ?? {}).sort()),
        };
      } catch (e) {
        failWith(/static/.test(errorMessage(e)) ? "static" : "network", e);
      }
    }
  } else if (spec.static !== undefined) {
    fail("static", "static node addresses need a node `network`");
  } else if ((spec.ranges === undefined) === (spec.cniConfig === undefined)) {
    fail("ranges", "give exactly one of `ranges` or `cniConfig`");
  } else if (spec.ranges !== undefined) {
    if (!Array.isArray(spec.ranges) || spec.ranges.length === 0) {
      fail("ranges", 'must be a non-empty list of ranges such as { subnet: "10.0.8.0/24" }');
    } else {
      const ranges: Range[] = [];
      spec.ranges.forEach((r, i) => {
        try {
          const range = new Range(r);
          range.canonicalize();
          ranges.push(range);
        } catch (e) {
          failWith(`ranges[${i}]`, e);
        }
      });
      if (ranges.length === spec.ranges.length) {
        // Ranges of two families are a dual-stack pool: one range set per family (the family of the
        // first range first), as a CNI config's `ranges` gives them.
        const byFamily = new Map<string, Range[]>();
        for (const r of ranges) {
          const family = familyOfText(r.subnet);
          byFamily.set(family, [...(byFamily.get(family) ?? []), r]);
        }
        for (const family of byFamily.values()) {
          try {
            const set = new RangeSet(family);
            set.canonicalize();
            rangeSets.push(set);
          } catch (e) {
            failWith("ranges", e);
          }
        }
      }
    }
  } else {
    try {
      rangeSets.push(...loadIpamConfig(spec.cniConfig!).config.ranges);
    } catch (e) {
      failWith("cniConfig", e);
    }
  }

  const exclude: string[] = [];
  (spec.exclude ?? []).forEach((x, i) => {
    try {
      exclude.push(x.includes("/") ? canonicalCidr(x) : canonicalAddress(x));
    } catch (e) {
      failWith(`exclude[${i}]`, e);
    }
  });
  const reserved: string[] = [];
  (spec.reserved ?? []).forEach((x, i) => {
    try {
      const ip = canonicalAddress(x);
      if (rangeSets.length > 0 && !rangeSets.some((s) => s.contains(ip))) {
        fail(
          `reserved[${i}]`,
          `${ip} is outside the pool's ranges (${rangeSets.join(" and ")})`,
          "NOT_IN_RANGE",
        );
      }
      reserved.push(ip);
    } catch (e) {
      failWith(`reserved[${i}]`, e);
    }
  });
  if (spec.cloudReserved !== undefined) {
    if (spec.cloudReserved !== "aws") {
      fail("cloudReserved", `unknown cloud ${shown(spec.cloudReserved)}; use "aws" or leave it out`);
    } else {
      for (const subnet of poolSubnets(rangeSets)) exclude.push(...cloudReservedAddresses(subnet, "aws"));
    }
  }
  const strategy = spec.strategy ?? "round-robin";
  if (!strategies.includes(strategy)) {
    fail("strategy", `unknown strategy ${shown(strategy)}; use ${strategies.join(" or ")}`);
  }
  const rule = spec.prefixLengths;
  if (rule !== undefined) {
    for (const problem of prefixRuleProblems(rule, rangeSets)) fail(`prefixLengths${problem[0]}`, problem[1]);
  }
  if (failures.length > 0) return { failures };
  const prefixLengths = rule && sortedRule(rule);
  return {
    pool: {
      rangeSets,
      exclude,
      reserved,
      strategy,
      ...(node ? { node } : {}),
      ...(prefixLengths ? { prefixLengths } : {}),
    },
    failures,
  };
}

/** The rule's fields in one order (min, max, default), as definitions compare them. */
function sortedRule(rule: PrefixLengthRule): PrefixLengthRule {
  const out: PrefixLengthRule = {};
  if (rule.min !== undefined) out.min = rule.min;
  if (rule.max !== undefined) out.max = rule.max;
  if (rule.default !== undefined) out.default = rule.default;
  return out;
}

/** What is wrong with a pool's block rule: `[".min", why]` pairs. */
function prefixRuleProblems(rule: PrefixLengthRule, rangeSets: readonly RangeSet[]): [string, string][] {
  const bits = rangeSets.some((set) => familyOfSet(set) === "ipv6") ? 128 : 32;
  const widest = widestSubnet(rangeSets);
  const out: [string, string][] = [];
  for (const key of ["min", "max", "default"] as const) {
    const v = rule[key];
    if (v === undefined) continue;
    if (!Number.isInteger(v) || v < 0 || v > bits) {
      out.push([
        `.${key}`,
        `${shown(v)} is not a prefix length of this pool's family (an integer from 0 to ${bits})`,
      ]);
    } else if (Number.isFinite(widest) && v < widest) {
      out.push([
        `.${key}`,
        `/${v} is larger than the pool's subnets (the largest is a /${widest}): no block of it fits`,
      ]);
    }
  }
  if (out.length > 0) return out;
  const { min, max, default: dflt } = rule;
  if (min !== undefined && max !== undefined && min > max) {
    out.push(["", `min /${min} is longer than max /${max}: min is the largest block (shortest prefix)`]);
  }
  if (dflt !== undefined && ((min !== undefined && dflt < min) || (max !== undefined && dflt > max))) {
    out.push([".default", `/${dflt} is outside the rule's own range ${ruleText(rule)}`]);
  }
  return out;
}

/**
 * The prefix length of the pool's largest subnet (the shortest prefix; Infinity for no ranges): no
 * block can be larger than the subnet it comes from.
 */
export function widestSubnet(rangeSets: readonly RangeSet[]): number {
  return Math.min(...rangeSets.flatMap((set) => set.ranges.map((r) => Number(r.subnet.split("/")[1]))));
}

/** A rule as messages show it: `/16 to /28, default /24`. */
export function ruleText(rule: PrefixLengthRule): string {
  const range =
    rule.min !== undefined && rule.max !== undefined
      ? `/${rule.min} to /${rule.max}`
      : rule.min !== undefined
        ? `/${rule.min} or longer`
        : rule.max !== undefined
          ? `/${rule.max} or shorter`
          : "any length";
  return rule.default === undefined ? range : `${range}, default /${rule.default}`;
}

/** The distinct subnets of the ranges of some range sets, in order. */
export function poolSubnets(rangeSets: readonly RangeSet[]): string[] {
  return [...new Set(rangeSets.flatMap((set) => [...set].map((r) => r.subnet)))];
}

/** The canonical ranges of a resolved pool, one list per range set, as pool outputs show them. */
export function canonicalRanges(pool: ResolvedPool): RangeArgs[][] {
  return pool.rangeSets.map((set) =>
    [...set].map((r) => ({
      subnet: r.subnet,
      rangeStart: r.rangeStart,
      rangeEnd: r.rangeEnd,
      gateway: r.gateway,
    })),
  );
}

/** How many addresses the pool hands out automatically, as a decimal string (it may exceed 2^53). */
export function poolSize(pool: ResolvedPool): string {
  const never = [...pool.exclude, ...pool.reserved];
  return pool.rangeSets.reduce((sum, set) => sum + poolCapacity(set, never), 0n).toString();
}

/**
 * The chooser for the ledger: the `index`-th address of a plan comes from range set
 * `index % rangeSets.length`, so a dual-stack pool gives one address per family. `inUse` lists
 * addresses a provisioner sees in use outside Pulumi state; they are never planned.
 */
export function poolChooser(pool: ResolvedPool, inUse: readonly string[] = []) {
  const never = [...pool.exclude, ...pool.reserved, ...inUse];
  return (taken: ReadonlyAddressSet, latest: readonly string[], index: number): string => {
    const rangeSet = pool.rangeSets[index % pool.rangeSets.length]!;
    const cursor = latest.map(cursorOf).findLast((ip) => rangeSet.contains(ip));
    return nextFree({ rangeSet, exclude: never, taken, cursor, strategy: pool.strategy });
  };
}

/**
 * Checks that `ip` may be held in the pool: inside a range, not a gateway, not excluded and not in
 * `inUse` (reserved addresses are allowed: that is what they are for). Returns the canonical address.
 * @throws IpamError NOT_IN_RANGE or IP_UNAVAILABLE naming the address and the range set.
 */
export async function checkRequestable(
  pool: ResolvedPool,
  ip: string,
  inUse: readonly string[] = [],
): Promise<string> {
  const canonical = canonicalAddress(ip);
  const rangeSet = pool.rangeSets.find((s) => s.contains(canonical)) ?? pool.rangeSets[0]!;
  // The allocator's own request path, on an empty store: exactly its rules and its messages.
  const probe = new IpAllocator(rangeSet, new MemoryStore(), 0, { exclude: [...pool.exclude, ...inUse] });
  await probe.get("requested", canonical);
  return canonical;
}

/** The address with its subnet's prefix length (`10.0.8.10/24`) and its range's gateway. */
export function addressDetails(pool: ResolvedPool, ip: string): { cidr: string; gateway: string } {
  const set = pool.rangeSets.find((s) => s.contains(ip));
  if (!set) return { cidr: ip, gateway: "" };
  const range = set.rangeFor(ip);
  return { cidr: `${ip}/${range.subnet.split("/")[1]}`, gateway: range.gateway ?? "" };
}

/** The family of a range set, as holders name it. */
export const familyOfSet = (set: RangeSet): "ipv4" | "ipv6" => familyOfText([...set][0]!.subnet);

/**
 * The part of `pool` a holder of one family plans from: its range set of that family (the whole pool
 * without a family). Undefined when the pool has no range set of that family.
 */
export function poolOfFamily(
  pool: ResolvedPool,
  family: "ipv4" | "ipv6" | undefined,
): ResolvedPool | undefined {
  if (family === undefined) return pool;
  const set = pool.rangeSets.find((s) => familyOfSet(s) === family);
  return set && { ...pool, rangeSets: [set] };
}
