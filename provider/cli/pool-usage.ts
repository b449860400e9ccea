import { AddressSet, freeCount, type AddressFamily } from "../allocator";
import { parseAddress } from "../allocator/address";
import { exclusionSet } from "../allocator/exclusions";
import { IntervalSet } from "../allocator/interval-set";
import { resolveRange } from "../allocator/range";
import { poolSize, poolSubnets, type PrefixLengthRule, type ResolvedPool } from "../resources/pool/pool-spec";
import { readRecord } from "../ledger/stack/allocation-record";
import { entrySpan, isBlock, takeEntry } from "../ledger/held-entry";
import { defaultShape, mapSubnet, type MapLayers, type MapShape, type SubnetMap } from "./address-map";
import { compareHolders, splitHolders, type BlockHolder, type HoldState, type Holder } from "./holder";
import { linkPools, type PoolParent } from "./pool-tree";
import type { PoolOwner, StackUsage } from "./quota-usage";
import type { PoolQuotas } from "../ledger/quota-rules";
import { stackPools } from "./stack-pools";
import { deploymentAt, type SnapshotResource, type StackSnapshot } from "./stack-snapshot";
import { ownKind } from "../core/resource-types";

/** What a shared pool's ledger says, for one stack's report or check. */
export interface SharedView {
  /** Every stack's live claims and holds. */
  holders: Holder[];
  /** The claims made for the asking stack (by its identity), with the command that deletes each. */
  own: { ip: string; owner: string; fix: string }[];
}

/** One pool of a stack: its ranges, counts, holders and map. Counts are decimal strings. */
export interface PoolUsage {
  /** The pool's URN (its identity in allocation records). */
  pool: string;
  /** Its logical name. */
  name: string;
  /** Each range as `start-end` with its subnet and gateway. */
  ranges: { subnet: string; rangeStart: string; rangeEnd: string; gateway: string }[];
  strategy: string;
  /** Addresses handed out automatically (reserved and excluded ones not counted), as the pool's `size`. */
  size: string;
  /** Distinct addresses held by created resources (including ones pending deletion), every address of a held block included. */
  held: string;
  /** Distinct addresses planned by interrupted creates and held by nobody else: taken, not created. */
  planned: string;
  /** Addresses that can still be handed out automatically: those of the ranges nothing holds, as the pool's `free` after refresh. */
  free: string;
  /** Reserved addresses (handed out only when requested). */
  reserved: string;
  /** Addresses inside the ranges that are excluded (cloud-reserved ones included). */
  excluded: string;
  /** Gateways inside the ranges. */
  gateways: string;
  /** The holders of single addresses, by address. */
  holders: Holder[];
  /** The holders of blocks (aligned CIDRs), by block, each with its size and the pools made of it. */
  blocks: BlockHolder[];
  /** The pool's rule for blocks, when it has one. */
  prefixLengths?: PrefixLengthRule;
  /** The block of another pool of the stack that this pool's ranges lie inside, when there is one. */
  parent?: PoolParent;
  /**
   * For a shared pool in a stack's report: claims the ledger has for this stack that no resource
   * of its state holds (left by a `pulumi state delete`, a lost checkpoint, an interrupted delete),
   * each with the command that frees it.
   */
  stale?: { ip: string; owner: string; fix: string }[];
  /**
   * In a ledger's report: the stacks among its claims whose state could not be read here, so
   * their claims could not be told stale or held (another backend, no access).
   */
  unchecked?: string[];
  /** In a ledger's report: the stack that owns the pool (defines it and sets its quotas). */
  ownedBy?: PoolOwner;
  /** In a ledger's report: the quotas the owner set, as it gave them, when it set any. */
  quotas?: PoolQuotas;
  /** In a ledger's report: every stack with entries in the pool (and the owner), with its quota. */
  stacks?: StackUsage[];
  /**
   * In a ledger's report: the holds that lapsed (planned at a preview or a check, never claimed),
   * by entry, with when each lapsed (RFC 3339); a plan of another stack or `collect` deletes them.
   */
  lapsed?: { ip: string; stack: string; owner: string; lapsed: string }[];
  /**
   * In a ledger's report: the pool's largest object (claims, markers, quota counters, its
   * definition) and the size of its data against a ConfigMap's limit, in bytes.
   */
  largest?: { name: string; role: string; bytes: number; keys: number; limit: number; objects: number };
  maps: SubnetMap[];
}

/**
 * The pools of a stack that `select` keeps (all by default) with their usage, as a tree: by name,
 * each pool made of a block (its ranges inside it) right after its parent, under that block (see
 * {@link linkPools}). `shared` adds, by pool, what a shared pool's ledger says: other stacks'
 * holders (an entry the stack holds itself is shown as its own), and this stack's claims that its
 * state does not hold (stale).
 */
export function poolUsages(
  snapshot: StackSnapshot,
  select: (name: string, urn: string) => boolean = () => true,
  shape: MapShape = defaultShape,
  shared: ReadonlyMap<string, SharedView> = new Map(),
): PoolUsage[] {
  const holders = holdersByPool(snapshot);
  const of = (id: string, pool: ResolvedPool) => {
    const own = holders.get(id) ?? [];
    const inState = new Set(own.map((h) => h.ip));
    const view = shared.get(id);
    const all = [...own, ...(view?.holders ?? []).filter((h) => !inState.has(h.ip))].sort(compareHolders);
    const u = usage(id, id.split("::").pop()!, pool, all, shape);
    if (view) u.stale = view.own.filter((c) => !inState.has(c.ip));
    return u;
  };
  // Every pool is linked, so that a selected one still names the block it is made of.
  const all = stackPools(snapshot)
    .map(({ id, pool }) => of(id, pool))
    .sort((a, b) => a.name.localeCompare(b.name) || a.pool.localeCompare(b.pool));
  return linkPools(all).filter((u) => select(u.name, u.pool));
}

/** The public address each address of the stack's live EgressIpAssignments recorded, by address. */
function publicIps(snapshot: StackSnapshot): Map<string, string> {
  const out = new Map<string, string>();
  for (const r of snapshot.resources) {
    const { ip, publicIp } = (r.outputs ?? {}) as { ip?: unknown; publicIp?: unknown };
    if (ownKind(r.type) !== "EgressIpAssignment" || r.delete) continue;
    if (typeof ip === "string" && typeof publicIp === "string" && !out.has(ip)) out.set(ip, publicIp);
  }
  return out;
}

function holdersByPool(snapshot: StackSnapshot): Map<string, Holder[]> {
  const byPool = new Map<string, Holder[]>();
  const publicIp = publicIps(snapshot);
  const add = (r: SnapshotResource, state: HoldState, props: Record<string, unknown> | undefined) => {
    const record = readRecord(props);
    if (!record) return;
    const since = deploymentAt(snapshot.deployments, r.created);
    for (const ip of record.ips) {
      // The holder is the resource carrying the record (a resource renamed with an alias keeps its old name's).
      const holder: Holder = { ip, owner: r.urn, state };
      if (since) Object.assign(holder, { sinceVersion: since.version, sinceKind: since.kind });
      if (r.created) holder.sinceTime = r.created;
      if (publicIp.has(ip)) holder.publicIp = publicIp.get(ip);
      byPool.set(record.pool, [...(byPool.get(record.pool) ?? []), holder]);
    }
  };
  for (const r of snapshot.resources) {
    add(
      r,
      r.delete || r.pendingReplacement ? "deleting" : "held",
      readRecord(r.outputs) ? r.outputs : r.inputs,
    );
  }
  for (const r of snapshot.pendingCreates) add(r, "planned", r.inputs);
  for (const list of byPool.values()) list.sort(compareHolders);
  return byPool;
}

/** The addresses of some entries, blocks spanned, never enumerated. */
function entrySet(holders: readonly Holder[]): AddressSet {
  const set = new AddressSet();
  for (const h of holders) takeEntry(set, h.ip);
  return set;
}

/** `set` without the addresses of `other`. */
function without(set: AddressSet, other: AddressSet): AddressSet {
  for (const family of [4, 6] as const) {
    for (const [s, e] of other.intervalsOf(family).intervals()) set.deleteRange(family, s, e);
  }
  return set;
}

/**
 * The usage of one pool from its holders: counts, ranges and the map.
 * @param id - the pool's identity (URN, or `kubernetes:<namespace>/<name>` for a shared pool).
 * @param name - what the report calls it (a logical or ledger name).
 * @param holders - entries (addresses and blocks) with their holders, sorted by entry.
 */
export function usage(
  id: string,
  name: string,
  pool: ResolvedPool,
  holders: Holder[],
  shape: MapShape = defaultShape,
): PoolUsage {
  const held = entrySet(holders.filter((h) => h.state !== "planned"));
  const planned = without(entrySet(holders.filter((h) => h.state === "planned")), held);
  const taken = entrySet(holders);
  const blocks = holders.filter((h) => isBlock(h.ip)).map((h) => entrySpan(h.ip));
  const never = [...pool.exclude, ...pool.reserved];
  const free = pool.rangeSets.reduce((sum, set) => sum + freeCount(set, never, taken), 0n);
  const layers = new Map<AddressFamily, MapLayers>();
  let excluded = 0n;
  let gateways = 0n;
  for (const set of pool.rangeSets) {
    for (const range of set) {
      const r = resolveRange(range);
      let l = layers.get(r.family);
      if (!l) {
        l = {
          held: held.intervalsOf(r.family),
          planned: planned.intervalsOf(r.family),
          reserved: new AddressSet(pool.reserved).intervalsOf(r.family),
          gateway: new IntervalSet(),
          excluded: exclusionSet(r.family, pool.exclude),
          inRange: new IntervalSet(),
          blocks: blocks.filter((b) => b.family === r.family).map((b) => [b.start, b.end] as const),
        };
        layers.set(r.family, l);
      }
      (l.inRange as IntervalSet).add(r.start, r.end);
      (l.gateway as IntervalSet).add(r.gateway);
      excluded += l.excluded.countIn(r.start, r.end);
      if (r.gateway >= r.start && r.gateway <= r.end && !l.excluded.has(r.gateway)) gateways++;
    }
  }
  const maps = poolSubnets(pool.rangeSets).map((subnet) =>
    mapSubnet(subnet, layers.get(parseAddress(subnet.split("/")[0]!).family)!, shape),
  );
  return {
    pool: id,
    name,
    ranges: pool.rangeSets.flatMap((set) =>
      [...set].map((r) => ({
        subnet: r.subnet,
        rangeStart: r.rangeStart!,
        rangeEnd: r.rangeEnd!,
        gateway: r.gateway!,
      })),
    ),
    strategy: pool.strategy,
    size: poolSize(pool),
    held: held.size.toString(),
    planned: planned.size.toString(),
    free: free.toString(),
    reserved: new AddressSet(pool.reserved).size.toString(),
    excluded: excluded.toString(),
    gateways: gateways.toString(),
    ...splitHolders(holders),
    ...(pool.prefixLengths ? { prefixLengths: pool.prefixLengths } : {}),
    maps,
  };
}
