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
  /** A pool of a cloud world's subnet in this zone (its only range; `cloudReserved: "aws"`). */
  zone?: string;
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
  /** The requested ip given as a secret (pulumi.secret, YAML's fn::secret). */
  secret?: true;
  family?: "ipv4" | "ipv6";
}

/** A PrefixAllocation of `prefixLength` from a pool of one family. */
export interface PrefixModel extends HolderBase {
  kind: "prefix";
  prefixLength: number;
}

/** An EgressIp on the `none` provisioner over the world's hosts, or (`aws`) on a cloud world's instances. */
export interface EgressModel extends HolderBase {
  kind: "egress";
  namespace: string;
  domains: string[];
  families?: "ipv4" | "ipv6" | "dual";
  host?: string;
  /** The `aws` provisioner's settings; its pool is then the zone pool of each domain (`zonePools`). */
  aws?: AwsSettings;
  /** The pool of each domain (aws). */
  zonePools?: Record<string, number>;
  /** Only the namespace's pods labelled `app=web` (a platform world's kinds but ocp-static). */
  podSelector?: boolean;
}

/** What an aws EgressIp asks of its provisioner. */
export interface AwsSettings {
  /** `role`: every instance tagged `role=egress`; `role+team`: those also tagged `team=t`. */
  hostTags: "role" | "role+team";
  /** `allocate`, or adopt the Elastic IPs its addresses have now (`adoptOwn`), or none. */
  elasticIps?: "allocate" | "adoptOwn";
}

/**
 * A cloud world's instances per domain, by the names the model gives them: `<zone letter>0` and
 * `…1` are tagged `role=egress, team=t`, `…2` only `role=egress`; `…3` is untagged and carries a
 * planted address and Elastic IP of somebody else's (so is never terminated).
 */
export const cloudHosts: Record<string, string[]> = {
  za: ["a0", "a1", "a2", "a3"],
  zb: ["b0", "b1", "b2", "b3"],
};

/** The instances an aws EgressIp's `hostTags` take, of those not terminated. */
export function awsEligible(w: World, domain: string, hostTags: AwsSettings["hostTags"]): string[] {
  return (cloudHosts[domain] ?? []).filter(
    (h) =>
      !w.down.includes(h) && (h.endsWith("0") || h.endsWith("1") || (hostTags === "role" && h.endsWith("2"))),
  );
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
  /** A cloud world: a VPC with a subnet per domain and {@link cloudHosts} in moto. */
  cloud: boolean;
  /** Instances of a cloud world that were terminated. */
  down: string[];
  /** An address was handed to somebody else's interface on a host (which is then never terminated). */
  handedOver?: boolean;
  /**
   * A shared world: every pool is a shared pool on the test cluster's ledger, and a second stack,
   * the tenant, holds allocations of them ({@link World.tenant}).
   */
  shared: boolean;
  /** The tenant stack's allocations, each on a pool of this program by its `IpPool.shared` reference. */
  tenant: AllocModel[];
  /** A YAML world: the program is Pulumi YAML through the plugin (program-yaml.ts). */
  yaml: boolean;
  /**
   * A platform world: every EgressIp is on this Kubernetes provisioner over Nodes of the test
   * cluster named as {@link World.hosts} (`down`: set NotReady), beside somebody else's objects.
   */
  platform?: PlatformKind;
}

/** The Kubernetes provisioner kinds a platform world explores (ocp-dynamic's CidrAssignment is not generated). */
export const platformKinds = ["ovn", "cilium", "antrea", "ocp-static"] as const;
export type PlatformKind = (typeof platformKinds)[number];

/** Failure domains of every world. */
export const domains = ["za", "zb"] as const;

/** Which kind of world a sequence explores. */
export type WorldKind = "local" | "cloud" | "shared" | "yaml" | "platform";

/**
 * An empty world with two hosts in each domain (and, `cloud`, a VPC with {@link cloudHosts}; or,
 * `shared`, pools on a ledger with a tenant stack; or, `yaml`, a YAML program through the plugin;
 * or, `platform`, EgressIps on the Kubernetes provisioner `platform`, by default ovn).
 */
export function emptyWorld(kind: WorldKind = "local", platform: PlatformKind = "ovn"): World {
  return {
    pools: [],
    holders: [],
    hosts: { za: ["a1", "a2"], zb: ["b1", "b2"] },
    nextId: 0,
    freedNames: [],
    cloud: kind === "cloud",
    down: [],
    shared: kind === "shared",
    tenant: [],
    yaml: kind === "yaml",
    ...(kind === "platform" ? { platform } : {}),
  };
}

/** The kind of world `w` is. */
export const kindOfWorld = (w: Pick<World, "cloud" | "shared" | "yaml" | "platform">): WorldKind =>
  w.cloud ? "cloud" : w.shared ? "shared" : w.yaml ? "yaml" : w.platform ? "platform" : "local";

/** The name of a shared world's pool on its ledger: it stays with the pool's subnet, whatever the IpPool is called. */
export const ledgerName = (pool: Pick<PoolModel, "subnet">): string => `pool-${pool.subnet}`;

/** The subnet of a cloud world's zone. */
export const zoneSubnets: Record<string, string> = { za: "10.0.1.0/24", zb: "10.0.2.0/24" };

/** The subnets of a pool: a /26 of IPv4 and a /122 of IPv6 (64 addresses each) per subnet index. */
export function subnetsOf(pool: Pick<PoolModel, "family" | "subnet" | "zone">): {
  ipv4?: string;
  ipv6?: string;
} {
  if (pool.zone) return { ipv4: zoneSubnets[pool.zone] };
  const v4 = `10.${100 + pool.subnet}.0.0/26`;
  const v6 = `fd00:${pool.subnet.toString(16)}::/122`;
  if (pool.family === "ipv4") return { ipv4: v4 };
  if (pool.family === "ipv6") return { ipv6: v6 };
  return { ipv4: v4, ipv6: v6 };
}

/** The address at `offset` in the pool's first family's subnet. */
export function addressAt(pool: Pick<PoolModel, "family" | "subnet" | "zone">, offset: number): string {
  const { ipv4, ipv6 } = subnetsOf(pool);
  if (ipv4) return `${ipv4.split(".").slice(0, 3).join(".")}.${offset}`;
  return `${ipv6!.split("/")[0]!.replace(/::$/, "")}::${offset.toString(16)}`;
}

/** An edit of the program, or an engine operation on it. */
export type Edit =
  | { op: "addPool"; family: PoolFamily; strategy?: "lowest-free"; name?: string; zone?: string }
  | { op: "addAlloc"; pool: number; ip?: number; secret?: true; family?: "ipv4" | "ipv6"; name?: string }
  | { op: "addPrefix"; pool: number; prefixLength: number; name?: string }
  | {
      op: "addEgress";
      pool: number;
      domains: string[];
      families?: "ipv4" | "ipv6" | "dual";
      host?: string;
      name?: string;
      aws?: AwsSettings;
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
  | { op: "hostTags"; holder: number; hostTags: AwsSettings["hostTags"] }
  | { op: "elasticIps"; holder: number; elasticIps?: AwsSettings["elasticIps"] }
  | { op: "unassign"; holder: number }
  | { op: "handOver"; holder: number }
  | { op: "terminate"; host: string }
  /** A platform world's EgressIp takes only the pods labelled `app=web` (`on`), or the whole namespace. */
  | { op: "podSelector"; holder: number; on: boolean }
  /** A platform world's Node is set NotReady (a host failing), for the rest of the sequence. */
  | { op: "nodeDown"; host: string }
  | { op: "refresh" }
  /** The tenant stack (a shared world) adds an allocation of `pool`, or removes one. */
  | { op: "tenantAdd"; pool: number; ip?: number; family?: "ipv4" | "ipv6"; name?: string }
  | { op: "tenantRemove"; holder: number }
  /** `edit`, whose `up` is killed (SIGKILL) `afterMs` after it starts; the next `up` must finish it. */
  | { op: "killed"; afterMs: number; edit: Edit };

const clone = (w: World): World => structuredClone(w);

/** The names in use in the program (current names and aliases), which no new resource may take. */
export function namesInUse(w: World): Set<string> {
  const names = new Set<string>();
  for (const r of [...w.pools, ...w.holders, ...w.tenant]) {
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
    case "killed":
      return applyEdit(world, edit.edit);
    case "refresh":
      return w;
    case "unassign":
      // A person takes one of the EgressIp's addresses off its host: the program stays as it is.
      return holder?.kind === "egress" && holder.aws && w.cloud ? w : undefined;
    case "handOver":
      // The platform hands the EgressIp's first address to a pod on another interface of its host
      // (the VPC CNI's eth1): the address is somebody else's now, and the user removes the EgressIp.
      if (holder?.kind !== "egress" || !holder.aws || !w.cloud) return undefined;
      w.holders = w.holders.filter((h) => h !== holder);
      w.freedNames.push(holder.name, ...holder.aliases);
      w.handedOver = true;
      return w;
    case "terminate":
      if (!w.cloud || w.handedOver || w.down.includes(edit.host) || edit.host.endsWith("3")) return undefined;
      w.down.push(edit.host);
      return w;
    case "podSelector":
      if (holder?.kind !== "egress" || !w.platform || Boolean(holder.podSelector) === edit.on)
        return undefined;
      if (edit.on) holder.podSelector = true;
      else delete holder.podSelector;
      return w;
    case "nodeDown":
      if (!w.platform || w.down.includes(edit.host) || !Object.values(w.hosts).flat().includes(edit.host))
        return undefined;
      w.down.push(edit.host);
      return w;
    case "hostTags":
      if (holder?.kind !== "egress" || !holder.aws) return undefined;
      holder.aws.hostTags = edit.hostTags;
      return w;
    case "elasticIps":
      if (holder?.kind !== "egress" || !holder.aws) return undefined;
      if (edit.elasticIps) holder.aws.elasticIps = edit.elasticIps;
      else delete holder.aws.elasticIps;
      return w;
    case "addPool": {
      const name = newName(edit.name, "pool");
      if (!name) return undefined;
      if (edit.zone && (!w.cloud || edit.family !== "ipv4" || w.pools.some((p) => p.zone === edit.zone)))
        return undefined;
      const subnet = Math.max(-1, ...w.pools.map((p) => p.subnet)) + 1;
      w.pools.push({
        id: w.nextId++,
        name,
        aliases: [],
        family: edit.family,
        subnet,
        ...(edit.strategy ? { strategy: edit.strategy } : {}),
        exclude: [],
        ...(edit.zone ? { zone: edit.zone } : {}),
      });
      return w;
    }
    case "addAlloc":
    case "addPrefix":
    case "addEgress": {
      const p = holderPool(edit.pool);
      const name = newName(edit.name, "h");
      if (!p || !name || (edit.op === "addEgress" && edit.host && w.platform)) return undefined;
      const base = { id: w.nextId++, name, aliases: [], pool: p.id };
      if (edit.op === "addAlloc")
        w.holders.push({
          ...base,
          kind: "alloc",
          ...(edit.ip === undefined ? {} : { ip: edit.ip, ...(edit.secret ? { secret: edit.secret } : {}) }),
          ...(edit.family ? { family: edit.family } : {}),
        });
      else if (edit.op === "addPrefix") {
        if (p.family === "dual") return undefined;
        w.holders.push({ ...base, kind: "prefix", prefixLength: edit.prefixLength });
      } else {
        const zonePools = edit.aws ? zonePoolsOf(w, edit.domains) : undefined;
        if (edit.aws && !zonePools) return undefined;
        w.holders.push({
          ...base,
          kind: "egress",
          namespace: `ns-${name}`,
          domains: edit.domains,
          ...(edit.families ? { families: edit.families } : {}),
          ...(edit.host ? { host: edit.host } : {}),
          ...(edit.aws ? { aws: { ...edit.aws }, zonePools } : {}),
        });
      }
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
        for (const h of [...w.holders, ...w.tenant]) {
          if (h.pool === pool.id) h.pool = id;
          if (h.kind === "egress" && h.zonePools)
            for (const d of Object.keys(h.zonePools)) if (h.zonePools[d] === pool.id) h.zonePools[d] = id;
        }
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
    case "domains": {
      if (holder?.kind !== "egress") return undefined;
      if (holder.aws) {
        const zonePools = zonePoolsOf(w, edit.domains);
        if (!zonePools) return undefined;
        holder.zonePools = zonePools;
      }
      holder.domains = edit.domains;
      return w;
    }
    case "pin":
      if (holder?.kind !== "egress" || holder.aws || w.platform) return undefined;
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
      // A platform world's hosts are its Nodes: they fail (nodeDown), they are not listed.
      if (w.platform) return undefined;
      w.hosts[edit.domain] = edit.hosts;
      return w;
    case "tenantAdd": {
      const p = holderPool(edit.pool);
      const name = newName(edit.name, "t");
      if (!w.shared || !p || !name) return undefined;
      w.tenant.push({
        id: w.nextId++,
        name,
        aliases: [],
        pool: p.id,
        kind: "alloc",
        ...(edit.ip === undefined ? {} : { ip: edit.ip }),
        ...(edit.family ? { family: edit.family } : {}),
      });
      w.freedNames = w.freedNames.filter((n) => n !== name);
      return w;
    }
    case "tenantRemove": {
      const t = w.tenant.find((h) => h.id === edit.holder);
      if (!t) return undefined;
      w.tenant = w.tenant.filter((h) => h !== t);
      w.freedNames.push(t.name);
      return w;
    }
  }
}

/** The zone pool of each domain, or undefined when one is missing. */
function zonePoolsOf(w: World, domainList: string[]): Record<string, number> | undefined {
  const out: Record<string, number> = {};
  for (const d of domainList) {
    const pool = w.pools.find((p) => p.zone === d);
    if (!pool) return undefined;
    out[d] = pool.id;
  }
  return out;
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
  /**
   * What its public address depends on (aws): while the same, the public address stays. Adopting
   * the Elastic IP an address has is no change of it.
   */
  publicKey?: string;
}

/** The hosts of a domain of the `none` provisioner or a platform world's Nodes, but those down. */
export const upHosts = (w: World, domain: string): string[] =>
  (w.hosts[domain] ?? []).filter((h) => !w.down.includes(h));

/** The families an EgressIp places per domain, or undefined where the program is refused. */
export function egressFamilies(h: EgressModel, pool: PoolModel): ("ipv4" | "ipv6")[] | undefined {
  if (h.families === "dual") return pool.family === "dual" ? ["ipv4", "ipv6"] : undefined;
  if (h.families) return pool.family === "dual" || pool.family === h.families ? [h.families] : undefined;
  return pool.family === "dual" ? undefined : [pool.family];
}

/**
 * Every address slot of the world's holders: the program's, then the tenant stack's (`t<id>`),
 * whose addresses depend on the pool's ledger, not on the owner's IpPool resource.
 */
export function slotsOf(w: World): Slot[] {
  const out: Slot[] = [];
  for (const t of w.tenant) {
    const pool = w.pools.find((p) => p.id === t.pool)!;
    const addressKey = `ledger ${ledgerName(pool)} ip ${t.ip} family ${t.family}`;
    out.push({ key: `t${t.id}`, holder: `tenant ${t.name}`, addressKey });
  }
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
            addressKey: h.zonePools ? `pool ${h.zonePools[domain]}` : poolKey,
            hostKey: `pin ${h.host ?? "none"}`,
            eligible: h.aws ? awsEligible(w, domain, h.aws.hostTags) : h.host ? [h.host] : upHosts(w, domain),
            ...(h.aws
              ? { publicKey: `eip ${h.aws.elasticIps === "adoptOwn" ? "allocate" : h.aws.elasticIps}` }
              : {}),
          });
    }
  }
  return out;
}
