/**
 * The explorer's model of a program: pools and holders as plain data, the edits a user makes to
 * them, and what each edit leaves unchanged (which addresses must therefore stay where they are).
 * Pure: no engine, no I/O. The runner turns a world into a Pulumi program (program.ts) and checks
 * the engine's results against what this model says.
 */

/** A pool's families: one range set of IPv4 or IPv6, or one of each (a CNI config of two). */
export type PoolFamily = "ipv4" | "ipv6" | "dual";

/** An IpPool of the program. `subnet` picks its ranges and stays with it through renames. */
export interface PoolModel {
  /** Identity in the model: kept by a rename with an alias, new for a rename without one. */
  id: number;
  name: string;
  /** Earlier names of this identity, each an alias of the resource. */
  aliases: string[];
  family: PoolFamily;
  subnet: number;
  strategy?: "round-robin" | "lowest-free";
  /** Addresses excluded from the pool (by offset from the subnet's network address). */
  exclude: number[];
}

interface HolderBase {
  id: number;
  name: string;
  aliases: string[];
  pool: number;
}

/** An IpAllocation: `ip` (an offset into the pool's subnet) requests that address. */
export interface AllocModel extends HolderBase {
  kind: "alloc";
  ip?: number;
  family?: "ipv4" | "ipv6";
}

/** A PrefixAllocation of `prefixLength` from a pool of one family. */
export interface PrefixModel extends HolderBase {
  kind: "prefix";
  prefixLength: number;
}

/** An EgressIp on the `none` provisioner over the world's hosts. */
export interface EgressModel extends HolderBase {
  kind: "egress";
  namespace: string;
  domains: string[];
  families?: "ipv4" | "ipv6" | "dual";
  host?: string;
}

export type HolderModel = AllocModel | PrefixModel | EgressModel;

/** A whole program: what `programOf` builds. */
export interface World {
  pools: PoolModel[];
  holders: HolderModel[];
  /** The `none` provisioner's hosts by failure domain. */
  hosts: Record<string, string[]>;
  /** The next identity to hand out (pools and holders share the counter). */
  nextId: number;
  /** Names freed by renames and removals, which a new resource may take (a new owner of an old name). */
  freedNames: string[];
}

/** Failure domains of every world. */
export const domains = ["za", "zb"] as const;

/** An empty world with two hosts in each domain. */
export function emptyWorld(): World {
  return { pools: [], holders: [], hosts: { za: ["a1", "a2"], zb: ["b1", "b2"] }, nextId: 0, freedNames: [] };
}

/** The subnets of a pool: a /26 of IPv4 and a /122 of IPv6 (64 addresses each) per subnet index. */
export function subnetsOf(pool: Pick<PoolModel, "family" | "subnet">): { ipv4?: string; ipv6?: string } {
  const v4 = `10.${100 + pool.subnet}.0.0/26`;
  const v6 = `fd00:${pool.subnet.toString(16)}::/122`;
  if (pool.family === "ipv4") return { ipv4: v4 };
  if (pool.family === "ipv6") return { ipv6: v6 };
  return { ipv4: v4, ipv6: v6 };
}

/** The address at `offset` in the pool's first family's subnet. */
export function addressAt(pool: Pick<PoolModel, "family" | "subnet">, offset: number): string {
  const { ipv4, ipv6 } = subnetsOf(pool);
  if (ipv4) return `10.${100 + pool.subnet}.0.${offset}`;
  return `${ipv6!.split("/")[0]!.replace(/::$/, "")}::${offset.toString(16)}`;
}

/** An edit of the program, or an engine operation on it. */
export type Edit =
  | { op: "addPool"; family: PoolFamily; strategy?: "lowest-free"; name?: string }
  | { op: "addAlloc"; pool: number; ip?: number; family?: "ipv4" | "ipv6"; name?: string }
  | { op: "addPrefix"; pool: number; prefixLength: number; name?: string }
  | {
      op: "addEgress";
      pool: number;
      domains: string[];
      families?: "ipv4" | "ipv6" | "dual";
      host?: string;
      name?: string;
    }
  | { op: "remove"; holder: number }
  | { op: "rename"; holder: number; alias: boolean; name: string }
  | { op: "renamePool"; pool: number; alias: boolean; name: string }
  | { op: "requestIp"; holder: number; ip?: number }
  | { op: "families"; holder: number; families?: "ipv4" | "ipv6" | "dual" }
  | { op: "domains"; holder: number; domains: string[] }
  | { op: "pin"; holder: number; host?: string }
  | { op: "prefixLength"; holder: number; prefixLength: number }
  | { op: "exclude"; pool: number; offset: number }
  | { op: "strategy"; pool: number; strategy?: "lowest-free" }
  | { op: "hosts"; domain: string; hosts: string[] }
  | { op: "refresh" };

const clone = (w: World): World => structuredClone(w);

/** The names in use in the program (current names and aliases), which no new resource may take. */
export function namesInUse(w: World): Set<string> {
  const names = new Set<string>();
  for (const r of [...w.pools, ...w.holders]) {
    names.add(r.name);
    for (const a of r.aliases) names.add(a);
  }
  return names;
}

/**
 * The world after `edit`, or undefined where the edit no longer fits it (a shrunk sequence may
 * drop the step that made what a later step edits). Engine operations leave the world as it is.
 */
export function applyEdit(world: World, edit: Edit): World | undefined {
  const w = clone(world);
  const holder = "holder" in edit ? w.holders.find((h) => h.id === edit.holder) : undefined;
  const pool =
    "pool" in edit && edit.op !== "addAlloc" && edit.op !== "addPrefix" && edit.op !== "addEgress"
      ? w.pools.find((p) => p.id === edit.pool)
      : undefined;
  const taken = namesInUse(w);
  const newName = (given: string | undefined, prefix: string) => {
    if (given !== undefined) return taken.has(given) ? undefined : given;
    for (let i = 0; ; i++) if (!taken.has(`${prefix}${i}`)) return `${prefix}${i}`;
  };
  const holderPool = (id: number) => w.pools.find((p) => p.id === id);
  switch (edit.op) {
    case "refresh":
      return w;
    case "addPool": {
      const name = newName(edit.name, "pool");
      if (!name) return undefined;
      const subnet = Math.max(-1, ...w.pools.map((p) => p.subnet)) + 1;
      w.pools.push({
        id: w.nextId++,
        name,
        aliases: [],
        family: edit.family,
        subnet,
        ...(edit.strategy ? { strategy: edit.strategy } : {}),
        exclude: [],
      });
      return w;
    }
    case "addAlloc":
    case "addPrefix":
    case "addEgress": {
      const p = holderPool(edit.pool);
      const name = newName(edit.name, "h");
      if (!p || !name) return undefined;
      const base = { id: w.nextId++, name, aliases: [], pool: p.id };
      if (edit.op === "addAlloc")
        w.holders.push({
          ...base,
          kind: "alloc",
          ...(edit.ip === undefined ? {} : { ip: edit.ip }),
          ...(edit.family ? { family: edit.family } : {}),
        });
      else if (edit.op === "addPrefix") {
        if (p.family === "dual") return undefined;
        w.holders.push({ ...base, kind: "prefix", prefixLength: edit.prefixLength });
      } else
        w.holders.push({
          ...base,
          kind: "egress",
          namespace: `ns-${name}`,
          domains: edit.domains,
          ...(edit.families ? { families: edit.families } : {}),
          ...(edit.host ? { host: edit.host } : {}),
        });
      w.freedNames = w.freedNames.filter((n) => n !== name);
      return w;
    }
    case "remove":
      if (!holder) return undefined;
      w.holders = w.holders.filter((h) => h !== holder);
      w.freedNames.push(holder.name, ...holder.aliases);
      return w;
    case "rename": {
      if (!holder || taken.has(edit.name)) return undefined;
      if (edit.alias) holder.aliases.push(holder.name);
      else {
        // A new identity: the old resource is deleted and a new one made under the new name.
        w.freedNames.push(holder.name, ...holder.aliases);
        holder.aliases = [];
        holder.id = w.nextId++;
      }
      holder.name = edit.name;
      return w;
    }
    case "renamePool": {
      if (!pool || taken.has(edit.name)) return undefined;
      if (edit.alias) pool.aliases.push(pool.name);
      else {
        const id = w.nextId++;
        for (const h of w.holders) if (h.pool === pool.id) h.pool = id;
        w.freedNames.push(pool.name, ...pool.aliases);
        pool.aliases = [];
        pool.id = id;
      }
      pool.name = edit.name;
      return w;
    }
    case "requestIp":
      if (holder?.kind !== "alloc") return undefined;
      if (edit.ip === undefined) delete holder.ip;
      else holder.ip = edit.ip;
      return w;
    case "families":
      if (holder?.kind !== "egress") return undefined;
      if (edit.families === undefined) delete holder.families;
      else holder.families = edit.families;
      return w;
    case "domains":
      if (holder?.kind !== "egress") return undefined;
      holder.domains = edit.domains;
      return w;
    case "pin":
      if (holder?.kind !== "egress") return undefined;
      if (edit.host === undefined) delete holder.host;
      else holder.host = edit.host;
      return w;
    case "prefixLength":
      if (holder?.kind !== "prefix") return undefined;
      holder.prefixLength = edit.prefixLength;
      return w;
    case "exclude":
      if (!pool || pool.exclude.includes(edit.offset)) return undefined;
      pool.exclude.push(edit.offset);
      return w;
    case "strategy":
      if (!pool) return undefined;
      if (edit.strategy) pool.strategy = edit.strategy;
      else delete pool.strategy;
      return w;
    case "hosts":
      w.hosts[edit.domain] = edit.hosts;
      return w;
  }
}

/** One address (or block) a holder has, named by what keeps it: the holder's identity, domain and family. */
export interface Slot {
  /** `h<id>` for an allocation or block; `h<id>/<domain>/<family>` for an egress address. */
  key: string;
  /** The holder's logical name now, for messages. */
  holder: string;
  /**
   * What the address depends on: while this text is the same before and after a step, the step
   * must not change the address (a rename with an alias keeps it; a new pool or request does not).
   */
  addressKey: string;
  /** The pin (egress addresses only): while it is the same, the host stays unless it left `eligible`. */
  hostKey?: string;
  /** The hosts the address may be on (egress addresses only): the pin, or its domain's hosts. */
  eligible?: string[];
}

/** The families an EgressIp places per domain, or undefined where the program is refused. */
export function egressFamilies(h: EgressModel, pool: PoolModel): ("ipv4" | "ipv6")[] | undefined {
  if (h.families === "dual") return pool.family === "dual" ? ["ipv4", "ipv6"] : undefined;
  if (h.families) return pool.family === "dual" || pool.family === h.families ? [h.families] : undefined;
  return pool.family === "dual" ? undefined : [pool.family];
}

/** Every address slot of the world's holders. */
export function slotsOf(w: World): Slot[] {
  const out: Slot[] = [];
  for (const h of w.holders) {
    const pool = w.pools.find((p) => p.id === h.pool)!;
    const poolKey = `pool ${pool.id}`;
    if (h.kind === "alloc") {
      out.push({ key: `h${h.id}`, holder: h.name, addressKey: `${poolKey} ip ${h.ip} family ${h.family}` });
    } else if (h.kind === "prefix") {
      out.push({ key: `h${h.id}`, holder: h.name, addressKey: `${poolKey} /${h.prefixLength}` });
    } else {
      for (const family of egressFamilies(h, pool) ?? [])
        for (const domain of h.domains)
          out.push({
            key: `h${h.id}/${domain}/${family}`,
            holder: h.name,
            addressKey: poolKey,
            hostKey: `pin ${h.host ?? "none"}`,
            eligible: h.host ? [h.host] : (w.hosts[domain] ?? []),
          });
    }
  }
  return out;
}
