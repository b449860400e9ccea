/**
 * The promises of the product as checks over what the engine did: each returns the ways a step
 * broke one (empty when it kept them). Inputs are plain data read from the engine (preview events,
 * the checkpoint, stack outputs), so the checks are tested on their own with tables.
 */
import { awsEligible, egressFamilies, slotsOf, upHosts, type EgressModel, type World } from "./world";

/** The engine's placeholder for a value not known at preview. */
export const unknownValue = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

/** A broken promise: which one, and what was seen. */
export interface Violation {
  invariant:
    | "preview-is-up"
    | "stable"
    | "unique"
    | "quiet"
    | "destroy"
    | "coded"
    | "accepts-valid"
    | "foreign"
    | "check"
    | "killed";
  message: string;
}

/** What preview planned for one resource: its operation and checked inputs. */
export interface Planned {
  op: string;
  inputs?: Record<string, unknown>;
}

/** One resource of the checkpoint. */
export interface Held {
  urn: string;
  type: string;
  outputs?: Record<string, unknown>;
  delete?: boolean;
}

/** The values of a resource that preview must show and `up` must then give. */
const shownFields = ["ip", "ips", "cidr", "host", "publicIp"] as const;
/** The fields that are addresses and blocks (not where they are placed, nor their public side). */
export const addressFields: readonly (typeof shownFields)[number][] = ["ip", "ips", "cidr"];
/** Resource kinds whose address (or block, or host) preview must show when it plans a new one. */
const mustShow: Record<string, readonly string[]> = {
  IpAllocation: ["ip"],
  PrefixAllocation: ["cidr"],
  EgressIpAssignment: ["ip", "host"],
};

const kindOf = (type: string) => type.split(":").pop() ?? "";
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
const hasUnknown = (v: unknown) => JSON.stringify(v ?? null).includes(unknownValue);
/** A secret as preview's events show it (its value masked): the program's own, not comparable. */
const masked = (v: unknown) => JSON.stringify(v ?? null).includes('"ciphertext":"[secret]"');

/**
 * A value as the decrypted checkpoint holds it, its secrets replaced by what they hold (a secret
 * `ip` or, as the plugin stored it before it kept records plain, a secret `ips`), so the checks
 * compare addresses however they were stored.
 */
export function revealed<T>(value: T): T {
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (v === null || typeof v !== "object") return v;
    const o = v as Record<string, unknown>;
    if (typeof o.plaintext === "string" && Object.keys(o).length === 2) return walk(JSON.parse(o.plaintext));
    return Object.fromEntries(Object.entries(o).map(([k, item]) => [k, walk(item)]));
  };
  return walk(value) as T;
}

/**
 * Promise 1: every address, block, host and public address preview showed is what `up` recorded,
 * and preview showed each of a new holder's. A value preview shows masked (a secret the program
 * gave, such as a requested ip) is not compared, but a holder's addresses may not all be masked:
 * its record (`ips`) must show them.
 */
export function previewIsUp(
  planned: Record<string, Planned>,
  after: Held[],
  fields: readonly (typeof shownFields)[number][] = shownFields,
): Violation[] {
  const out: Violation[] = [];
  const byUrn = new Map(after.filter((r) => !r.delete).map((r) => [r.urn, r]));
  for (const [urn, plan] of Object.entries(planned)) {
    if (plan.op === "delete" || plan.op === "discard" || plan.op === "read") continue;
    const held = byUrn.get(urn);
    const kind = kindOf(urn.split("::")[2] ?? "");
    if (!held) {
      if (mustShow[kind])
        out.push({
          invariant: "preview-is-up",
          message: `${urn}: planned (${plan.op}) but not in state after up`,
        });
      continue;
    }
    const hidden = addressFields.filter((f) => masked(plan.inputs?.[f]));
    if (hidden.length > 0 && addressFields.every((f) => plan.inputs?.[f] === undefined || hidden.includes(f)))
      out.push({
        invariant: "preview-is-up",
        message: `${urn}: preview showed its ${hidden.join(" and ")} only as secrets`,
      });
    for (const field of fields) {
      const shown = plan.inputs?.[field];
      if (masked(shown)) continue;
      if (shown === undefined || hasUnknown(shown)) {
        if (
          (plan.op === "create" || plan.op === "replace" || plan.op === "create-replacement") &&
          mustShow[kind]?.includes(field)
        )
          out.push({
            invariant: "preview-is-up",
            message: `${urn}: preview did not show its ${field} (${plan.op})`,
          });
        continue;
      }
      const done = held.outputs?.[field];
      if (!same(shown, done))
        out.push({
          invariant: "preview-is-up",
          message: `${urn}: preview showed ${field} ${JSON.stringify(shown)}, up recorded ${JSON.stringify(done)}`,
        });
    }
  }
  return out;
}

/**
 * What each slot of a world holds, from the stacks' outputs (`h<id>` per holder, `t<id>` per tenant
 * allocation). `names` maps the model's domains to the zones the program gave, and the hosts the
 * outputs name to the model's (a cloud world's instances, a platform world's Nodes).
 */
export function slotValues(
  w: World,
  outputs: Record<string, unknown>,
  names?: { zoneOf: Record<string, string>; nameOf: Record<string, string> },
): Map<string, SlotValue> {
  const out = new Map<string, SlotValue>();
  for (const t of w.tenant) {
    const v = outputs[`t${t.id}`];
    if (v !== undefined) out.set(`t${t.id}`, { value: (v as string[]).join(",") });
  }
  for (const h of w.holders) {
    const v = outputs[`h${h.id}`];
    if (v === undefined) continue;
    if (h.kind === "alloc") out.set(`h${h.id}`, { value: (v as string[]).join(",") });
    else if (h.kind === "prefix") out.set(`h${h.id}`, { value: v as string });
    else {
      const pool = w.pools.find((p) => p.id === h.pool)!;
      const byDomain = v as Record<string, Record<string, { ip: string; host: string }>>;
      const publicIps = (outputs[`h${h.id}.publicIps`] ?? []) as (string | null | undefined)[];
      const mapped = (h.aws || w.platform) && names;
      for (const family of egressFamilies(h, pool) ?? [])
        h.domains.forEach((domain, i) => {
          const placed = byDomain[mapped ? names.zoneOf[domain]! : domain]?.[family];
          if (!placed) return;
          const host = mapped ? (names.nameOf[placed.host] ?? placed.host) : placed.host;
          const publicIp = family === "ipv4" && publicIps[i] ? { publicIp: publicIps[i] } : {};
          out.set(`h${h.id}/${domain}/${family}`, { value: placed.ip, host, ...publicIp });
        });
    }
  }
  return out;
}

/** What one slot holds after an `up`: its address or block, and (egress) its host and public address. */
export interface SlotValue {
  value: string;
  host?: string;
  publicIp?: string;
}

/**
 * Promise 2: a slot whose address depends on nothing the step changed keeps its address, and its
 * host unless the pin changed or the host left the hosts it may be on. Every slot of the world
 * after the step has a value.
 */
export function stable(
  before: World,
  beforeValues: Map<string, SlotValue>,
  after: World,
  afterValues: Map<string, SlotValue>,
): Violation[] {
  const out: Violation[] = [];
  const old = new Map(slotsOf(before).map((s) => [s.key, s]));
  for (const slot of slotsOf(after)) {
    const now = afterValues.get(slot.key);
    if (!now) {
      out.push({ invariant: "stable", message: `${slot.holder} (${slot.key}) has no address after up` });
      continue;
    }
    const was = old.get(slot.key);
    const wasValue = beforeValues.get(slot.key);
    if (!was || !wasValue || was.addressKey !== slot.addressKey) continue;
    if (wasValue.value !== now.value)
      out.push({
        invariant: "stable",
        message: `${slot.holder} (${slot.key}): its address moved from ${wasValue.value} to ${now.value} though nothing it depends on changed`,
      });
    else if (
      was.hostKey === slot.hostKey &&
      wasValue.host !== now.host &&
      slot.eligible?.includes(wasValue.host ?? "")
    )
      out.push({
        invariant: "stable",
        message: `${slot.holder} (${slot.key}): moved from host ${wasValue.host} to ${now.host}, which it could stay on`,
      });
    else if (was.publicKey === slot.publicKey && wasValue.publicIp && wasValue.publicIp !== now.publicIp)
      out.push({
        invariant: "stable",
        message: `${slot.holder} (${slot.key}): its public address ${wasValue.publicIp} became ${now.publicIp ?? "none"} though its Elastic IP setting did not change (${slot.publicKey})`,
      });
  }
  return out;
}

/** An address or CIDR block as the closed interval of the integers it covers. */
export function span(text: string): { family: 4 | 6; first: bigint; last: bigint } {
  const [address, length] = text.split("/");
  const v6 = address!.includes(":");
  const bits = v6 ? 128 : 32;
  let value: bigint;
  if (v6) {
    const [head, tail] = address!.split("::");
    const parts = (s: string | undefined) => (s ? s.split(":") : []);
    const h = parts(head);
    const t = tail === undefined ? [] : parts(tail);
    const groups = [...h, ...Array<string>(8 - h.length - t.length).fill("0"), ...t];
    value = groups.reduce((acc, g) => (acc << 16n) | BigInt(parseInt(g, 16)), 0n);
  } else value = address!.split(".").reduce((acc, o) => (acc << 8n) | BigInt(Number(o)), 0n);
  const size = 1n << BigInt(bits - (length === undefined ? bits : Number(length)));
  return { family: v6 ? 6 : 4, first: value, last: value + size - 1n };
}

/**
 * Promise 3: no two live holders of one pool share an address or overlap, as the checkpoint
 * records them (an allocation's addresses, a block's CIDR). `perPool` false: none of any pool (the
 * stacks of a shared world, where each pool is a subnet of its own, have a pool ID each).
 */
export function unique(after: Held[], perPool = true): Violation[] {
  const out: Violation[] = [];
  const byPool = new Map<string, { urn: string; text: string; span: ReturnType<typeof span> }[]>();
  for (const r of after) {
    if (r.delete) continue;
    const kind = kindOf(r.type);
    const texts =
      kind === "IpAllocation"
        ? ((r.outputs?.ips as string[] | undefined) ?? [])
        : kind === "PrefixAllocation"
          ? [r.outputs?.cidr as string]
          : [];
    const pool = perPool ? String(r.outputs?.poolId ?? "") : "any";
    for (const text of texts.filter((t) => typeof t === "string"))
      (byPool.get(pool) ?? byPool.set(pool, []).get(pool)!).push({ urn: r.urn, text, span: span(text) });
  }
  for (const [pool, held] of byPool)
    for (let i = 0; i < held.length; i++)
      for (let j = i + 1; j < held.length; j++) {
        const [a, b] = [held[i]!, held[j]!];
        if (a.span.family === b.span.family && a.span.first <= b.span.last && b.span.first <= a.span.last)
          out.push({
            invariant: "unique",
            message: `pool ${pool}: ${a.urn} holds ${a.text} and ${b.urn} holds ${b.text}`,
          });
      }
  return out;
}

/** Promise 5 and 7 over one engine operation's printed errors: an uncoded error, or UNEXPECTED. */
export function coded(messages: string[]): Violation[] {
  return messages.flatMap((m) =>
    !/\[[A-Z][A-Z_]*[A-Z]\] /.test(m) || /\[UNEXPECTED\]/.test(m)
      ? [
          {
            invariant: "coded" as const,
            message: `an error without a documented code (or UNEXPECTED): ${m.slice(0, 600)}`,
          },
        ]
      : [],
  );
}

/**
 * Whether the program of `w` is one the product must accept: every EgressIp's families fit its
 * pool and its domains have hosts, no address is requested or excluded, no blocks, and every pool
 * has room for all its holders (the tenant stack's too). A refusal of such a program breaks promise 6's other half: a
 * refusal is for a program that is wrong.
 */
export function mustAccept(w: World): boolean {
  const demand = new Map<string, number>();
  const add = (pool: number, family: string, n: number) =>
    demand.set(`${pool}/${family}`, (demand.get(`${pool}/${family}`) ?? 0) + n);
  for (const p of w.pools) if (p.exclude.length > 0) return false;
  for (const h of [...w.holders, ...w.tenant]) {
    const pool = w.pools.find((p) => p.id === h.pool)!;
    const poolFamilies = pool.family === "dual" ? ["ipv4", "ipv6"] : [pool.family];
    if (h.kind === "prefix") return false;
    if (h.kind === "alloc") {
      if (h.ip !== undefined) return false;
      if (h.family && !poolFamilies.includes(h.family)) return false;
      for (const f of h.family ? [h.family] : poolFamilies) add(h.pool, f, 1);
      continue;
    }
    const families = egressFamilies(h, pool);
    if (!families) return false;
    if (w.platform && !platformTakes(w, h, families)) return false;
    const hostsOf = (d: string) => (h.aws ? awsEligible(w, d, h.aws.hostTags) : upHosts(w, d));
    if (!h.host && h.domains.some((d) => hostsOf(d).length === 0)) return false;
    for (const f of families) for (const d of h.domains) add(h.zonePools?.[d] ?? h.pool, f, 1);
  }
  return [...demand.values()].every((n) => n <= 40);
}

/**
 * Whether a platform world's kind takes an EgressIp of these families (docs/provisioners.md):
 * OpenShift SDN has no IPv6 and no pod selection; Antrea applies one Egress to a Pod, so no dual
 * stack; ovnkube puts no two addresses of one object on one Node, so dual stack needs two Nodes up
 * in each domain.
 */
function platformTakes(w: World, h: EgressModel, families: ("ipv4" | "ipv6")[]): boolean {
  switch (w.platform) {
    case "ocp-static":
      return !families.includes("ipv6") && !h.podSelector;
    case "antrea":
      return families.length < 2;
    case "ovn":
      return families.length < 2 || h.domains.every((d) => upHosts(w, d).length >= 2);
    default:
      return true;
  }
}
