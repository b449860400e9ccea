import { AddressSet, freeCount } from "../allocator";
import { type AddressFamily, parseAddress } from "../allocator/address";
import { exclusionSet } from "../allocator/exclusions";
import { IntervalSet } from "../allocator/interval-set";
import { resolveRange } from "../allocator/range";
import {
  poolSize,
  poolSubnets,
  resolvePool,
  type PoolSpec,
  type ResolvedPool,
} from "../resources/pool/pool-spec";
import { readRecord } from "../ledger/stack/allocation-record";
import { resolveLedger } from "../resources/pool/ledger-option";
import type { KubeLedgerConfig } from "../ledger/kubernetes/kube-ledger";
import { CliError, exitCodes } from "./cli-error";
import { defaultShape, mapSubnet, type MapLayers, type MapShape, type SubnetMap } from "./address-map";
import { deploymentAt, type SnapshotResource, type StackSnapshot } from "./stack-snapshot";

/** How an address is held: by a live resource, one pending deletion, or an interrupted create. */
export type HoldState = "held" | "deleting" | "planned";

/** One address of a pool and who holds it. */
export interface Holder {
  ip: string;
  /** URN of the holding resource. */
  owner: string;
  /** Its stack, for a shared pool's holders (they come from several stacks). */
  stack?: string;
  state: HoldState;
  /** The deployment (stack version) that created the holder, when the checkpoint and history tell. */
  sinceVersion?: number;
  /** That deployment's kind: `update`, `refresh`, … */
  sinceKind?: string;
  /** When the holder was created (RFC 3339), when the checkpoint tells. */
  sinceTime?: string;
}

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
  /** Distinct addresses held by created resources (including ones pending deletion). */
  held: string;
  /** Distinct addresses planned by interrupted creates and held by nobody else: taken, not created. */
  planned: string;
  /** Addresses that can still be handed out automatically. */
  free: string;
  /** Reserved addresses (handed out only when requested). */
  reserved: string;
  /** Addresses inside the ranges that are excluded (cloud-reserved ones included). */
  excluded: string;
  /** Gateways inside the ranges. */
  gateways: string;
  holders: Holder[];
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
  maps: SubnetMap[];
}

const specKeys = ["ranges", "cniConfig", "exclude", "reserved", "strategy", "cloudReserved"] as const;

/** Whether a checkpoint resource is an IpPool of this package (type token `…egress-ipam:IpPool`). */
const isPool = (r: SnapshotResource) => r.type.endsWith("egress-ipam:IpPool");

/** A pool of a stack: its URN and its validated spec. */
export interface StackPool {
  id: string;
  pool: ResolvedPool;
  /** The shared ledger its addresses are agreed in, when it has one. */
  ledger?: KubeLedgerConfig;
}

/**
 * The IpPools of a stack in checkpoint order (a copy pending deletion only when it is the only one).
 * @throws CliError naming the pool when its recorded spec is not valid.
 */
export function stackPools(snapshot: StackSnapshot): StackPool[] {
  const pools = new Map<string, SnapshotResource>();
  for (const r of snapshot.resources) {
    const id = String(r.outputs?.poolId ?? r.inputs?.poolId ?? r.urn);
    if (isPool(r) && (!pools.has(id) || !r.delete)) pools.set(id, r);
  }
  return [...pools].map(([id, r]) => {
    const props = r.outputs && Object.keys(r.outputs).length > 0 ? r.outputs : (r.inputs ?? {});
    const spec = Object.fromEntries(specKeys.filter((k) => props[k] !== undefined).map((k) => [k, props[k]]));
    const { pool, failures } = resolvePool(spec as PoolSpec);
    if (!pool) {
      const why = failures.map((f) => `${f.property}: ${f.reason}`).join("; ");
      throw new CliError(
        `pool ${id} in the checkpoint of stack "${snapshot.stack}" is not a valid pool (${why}); fix its inputs and run pulumi up`,
        exitCodes.usage,
        failures[0]?.code,
      );
    }
    const { config } = resolveLedger(props.ledger);
    return config ? { id, pool, ledger: config } : { id, pool };
  });
}

/**
 * The pools of a stack that `select` keeps (all by default), by name, with their usage; `shared`
 * adds, by pool, what a shared pool's ledger says: other stacks' holders (an address the stack
 * holds itself is shown as its own), and this stack's claims that its state does not hold (stale).
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
    const all = [...own, ...(view?.holders ?? []).filter((h) => !inState.has(h.ip))].sort(
      (a, b) => compareAddresses(a.ip, b.ip) || a.owner.localeCompare(b.owner),
    );
    const u = usage(id, id.split("::").pop()!, pool, all, shape);
    if (view) u.stale = view.own.filter((c) => !inState.has(c.ip));
    return u;
  };
  return stackPools(snapshot)
    .filter(({ id }) => select(id.split("::").pop()!, id))
    .map(({ id, pool }) => of(id, pool))
    .sort((a, b) => a.name.localeCompare(b.name) || a.pool.localeCompare(b.pool));
}

function holdersByPool(snapshot: StackSnapshot): Map<string, Holder[]> {
  const byPool = new Map<string, Holder[]>();
  const add = (r: SnapshotResource, state: HoldState, props: Record<string, unknown> | undefined) => {
    const record = readRecord(props);
    if (!record) return;
    const since = deploymentAt(snapshot.deployments, r.created);
    for (const ip of record.ips) {
      // The holder is the resource carrying the record (a resource renamed with an alias keeps its old name's).
      const holder: Holder = { ip, owner: r.urn, state };
      if (since) Object.assign(holder, { sinceVersion: since.version, sinceKind: since.kind });
      if (r.created) holder.sinceTime = r.created;
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
  for (const list of byPool.values())
    list.sort((a, b) => compareAddresses(a.ip, b.ip) || a.owner.localeCompare(b.owner));
  return byPool;
}

/** Orders addresses: IPv4 before IPv6, then by value. */
export function compareAddresses(a: string, b: string): number {
  const x = parseAddress(a);
  const y = parseAddress(b);
  if (x.family !== y.family) return x.family - y.family;
  return x.value < y.value ? -1 : x.value > y.value ? 1 : 0;
}

/**
 * The usage of one pool from its holders: counts, ranges and the map.
 * @param id - the pool's identity (URN, or `kubernetes:<namespace>/<name>` for a shared pool).
 * @param name - what the report calls it (a logical or ledger name).
 * @param holders - sorted by address.
 */
export function usage(
  id: string,
  name: string,
  pool: ResolvedPool,
  holders: Holder[],
  shape: MapShape = defaultShape,
): PoolUsage {
  const held = new AddressSet(holders.filter((h) => h.state !== "planned").map((h) => h.ip));
  const planned = new AddressSet(
    holders.filter((h) => h.state === "planned" && !held.has(h.ip)).map((h) => h.ip),
  );
  const taken = new AddressSet([...held, ...planned]);
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
    holders,
    maps,
  };
}
