// Which prefix lengths a shared pool keeps markers at, as its stored definition says: every entry
// (address or block) registers in the markers of the blocks around it at those lengths, and blocks
// may be claimed only at lengths whose markers are complete. See docs/shared-pools.md, "Blocks".
// The same read brings the pool's quotas (quota-counter.ts), so a write reads the definition once.
import type * as k8s from "@kubernetes/client-node" with { "resolution-mode": "import" };
import { familyBits } from "../../allocator/address";
import { formatPrefix, hostMask } from "../../allocator/prefix";
import { IpamError } from "../../core/ipam-error";
import { shared } from "../../core/process-registry";
import type { KubeClients } from "../../kube/kube-config";
import { isNotFound } from "../../kube/kube-errors";
import { entrySpan, isBlock } from "../held-entry";
import { canonicalQuotas, quotaProblems, type PoolQuotas } from "../quota-rules";
import { poolObjectName } from "./claim-names";
import { assertKnownFormat } from "./definition-format";
import { ledgerUnavailable } from "./ledger-unavailable";

/** Prefix lengths from `min` to `max`, both included. */
export interface LengthRange {
  min: number;
  max: number;
}

/** What a shared pool's stored definition says about blocks. */
export interface MarkerRule {
  /** The pool's `prefixLengths` rule as stored in its definition, when it has one. */
  rule?: { min?: number; max?: number };
  /**
   * The lengths at which every entry registers in the markers of the blocks around it (none: the
   * pool has no markers). It only ever grows, so blocks claimed under an earlier rule stay guarded.
   */
  markers?: LengthRange;
  /** The lengths whose markers are complete (every entry of the pool registered): blocks may be claimed there. */
  ready?: LengthRange;
  /** The quotas the pool's owner stored with the definition (key `quotas`), when it stored any. */
  quotas?: StoredQuotas;
}

/** A shared pool's quotas as its definition object stores them. */
export interface StoredQuotas {
  /** The rule (empty when it cannot be read: see `problem`). */
  rules: PoolQuotas;
  /** Its canonical JSON. */
  text: string;
  /**
   * Which setting of the quotas this is, as a quota counter records what it counts under: the
   * definition's `quotasVersion` (new at every change of the quotas), or `text` where an earlier
   * version wrote none.
   */
  version: string;
  /** Who set them, as refusals name them: `stack <org/project/stack> (<IpPool urn>)`. */
  setBy: string;
  /** Why the stored value is no quota rule, when it is none (entries counted by it are refused). */
  problem?: string;
}

/**
 * How wide (`max - min`) a shared pool's `prefixLengths` rule may be in one family. An address
 * registers in a marker at every length of the rule (a block at those shorter than its own), so a
 * rule 8 wide costs an address 9 marker writes at preview and 9 at release, besides its claim
 * (against 1 and 1 without the rule), and it spans every length from a /24 block to the addresses in
 * it (IPv6: a /56 to its /64s). Wider rules multiply the writes of every address of the pool.
 */
export const maxRuleWidth = 8;

/** `24-27`, as the definition object stores a range. */
export const formatRange = (r: LengthRange): string => `${r.min}-${r.max}`;

/** The range `text` (`24-27`) stands for, or undefined when it is none. */
export function parseRange(text: string | undefined): LengthRange | undefined {
  const m = /^(\d{1,3})-(\d{1,3})$/.exec(text ?? "");
  if (!m) return undefined;
  const [min, max] = [Number(m[1]), Number(m[2])];
  return min <= max ? { min, max } : undefined;
}

/** The smallest range containing both (either may be absent). */
export function hull(a: LengthRange | undefined, b: LengthRange | undefined): LengthRange | undefined {
  if (!a || !b) return a ?? b;
  return { min: Math.min(a.min, b.min), max: Math.max(a.max, b.max) };
}

/** Whether `outer` contains every length of `inner`. */
export const covers = (outer: LengthRange | undefined, inner: LengthRange): boolean =>
  !!outer && outer.min <= inner.min && inner.max <= outer.max;

/** The lengths a rule asks markers for: its min to its max, when it has both. */
export function ruleRange(rule: MarkerRule["rule"]): LengthRange | undefined {
  if (rule?.min === undefined || rule.max === undefined) return undefined;
  return { min: rule.min, max: rule.max };
}

/** The marker rule and the quotas a definition object's `data` records. */
export function markerRuleOf(data: Record<string, string> | undefined): MarkerRule {
  const out: MarkerRule = {};
  try {
    const d = JSON.parse(data?.definition ?? "{}") as { prefixLengths?: MarkerRule["rule"] };
    if (d.prefixLengths && typeof d.prefixLengths === "object") out.rule = d.prefixLengths;
  } catch {
    // Not a definition this package wrote: the pool's own check says so; it has no rule here.
  }
  const markers = parseRange(data?.markers);
  const ready = parseRange(data?.markersReady);
  if (markers) out.markers = markers;
  if (markers && ready) out.ready = ready;
  if (data?.quotas !== undefined) out.quotas = storedQuotas(data.quotas, data);
  return out;
}

function storedQuotas(text: string, data: Record<string, string>): StoredQuotas {
  const setBy = `stack ${data.stack ?? "?"} (${data.owner ?? "?"})`;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { rules: {}, text, version: text, setBy, problem: "it is not JSON" };
  }
  const problems = quotaProblems(value);
  const version = (canonical: string) => data.quotasVersion || canonical;
  if (problems.length > 0) {
    const problem = problems.map(([at, why]) => `${at}: ${why}`).join("; ");
    return { rules: {}, text, version: version(text), setBy, problem };
  }
  const rules = (value ?? {}) as PoolQuotas;
  const canonical = canonicalQuotas(rules) ?? "{}";
  return { rules, text: canonical, version: version(canonical), setBy };
}

/**
 * The blocks around `entry` whose markers it registers in: those at the lengths of `markers` that
 * contain it, shorter than the entry for a block (an address's own length counts: a /32 block and
 * the address in it meet in the /32's marker), widest first.
 */
export function ancestorsOf(entry: string, markers: LengthRange | undefined): string[] {
  if (!markers) return [];
  const span = entrySpan(entry);
  const bits = familyBits(span.family);
  const below = isBlock(entry) ? bits - Number(hostMaskBits(span.start, span.end)) - 1 : bits;
  const out: string[] = [];
  for (let length = markers.min; length <= Math.min(markers.max, below); length++) {
    const network = span.start & ~hostMask(span.family, length);
    out.push(formatPrefix(span.family, network, length));
  }
  return out;
}

// The number of host bits of an aligned block [start, end].
const hostMaskBits = (start: bigint, end: bigint): bigint =>
  BigInt((end - start + 1n).toString(2).length - 1);

/** The prefix length of a block entry. */
export const lengthOf = (block: string): number => Number(block.slice(block.indexOf("/") + 1));

/**
 * Why `block` may not be held in the shared pool `what` under `r`, or undefined when it may.
 * @returns IpamError PREFIX_NOT_ALLOWED naming the pool and what to set or do.
 */
export function blockRefusal(block: string, r: MarkerRule, what: string): IpamError | undefined {
  const length = lengthOf(block);
  const range = ruleRange(r.rule);
  if (!range) {
    return new IpamError(
      "PREFIX_NOT_ALLOWED",
      `block ${block} in shared ${what}: blocks of a shared pool need the pool's rule with both ends, ` +
        `prefixLengths: { min, max } (the markers that keep blocks apart are written at those lengths); ` +
        `set both on the IpPool, e.g. prefixLengths: { min: ${Math.min(length, 24)}, max: ${Math.max(length, 28)} }`,
    );
  }
  if (length < range.min || length > range.max) {
    return new IpamError(
      "PREFIX_NOT_ALLOWED",
      `block ${block} in shared ${what} is outside the pool's rule prefixLengths /${range.min} to /${range.max}`,
    );
  }
  if (!r.ready || length < r.ready.min || length > r.ready.max) {
    return new IpamError(
      "PREFIX_NOT_ALLOWED",
      `block ${block} in shared ${what}: the markers of /${length} blocks are still being written by the ` +
        `update that set the pool's rule (or it was interrupted): run pulumi up of the stack that owns the ` +
        `IpPool to finish it, then this update again`,
    );
  }
  return undefined;
}

/**
 * Reads the pool's marker rule (and quotas) from its definition object, each call a read that starts
 * after the call (what the protocols need after a write); calls that arrive while a read runs share
 * the next one. A read refuses a definition this version may not act under (definition-format.ts),
 * so every plan, claim and release does.
 */
export interface MarkerRuleReader {
  (): Promise<MarkerRule>;
  /** What the latest read that ended found, without reading; undefined before the first. */
  last(): MarkerRule | undefined;
}

/** The {@link MarkerRuleReader} of a pool in this process: one per server, namespace and pool. */
export function markerRuleReader(clients: KubeClients, namespace: string, pool: string): MarkerRuleReader {
  const key = `${clients.server}\u0000${namespace}\u0000${pool}`;
  return shared("pool-rule", key, () => {
    const name = poolObjectName(pool);
    const place = { server: clients.server, context: clients.context, namespace };
    // The resourceVersion whose format was accepted: the pool is listed for what an earlier version
    // dropped once per definition, not at every read.
    let accepted = "";
    const readOnce = async (): Promise<MarkerRule> => {
      let cm: k8s.V1ConfigMap;
      try {
        cm = await clients.core.readNamespacedConfigMap({ name, namespace });
      } catch (err) {
        if (isNotFound(err)) return {};
        throw ledgerUnavailable(`reading the definition of pool "${pool}"`, err, place);
      }
      const rv = cm.metadata?.resourceVersion ?? "";
      if (rv === "" || rv !== accepted) {
        await assertKnownFormat({ clients, namespace, pool, data: cm.data ?? {} });
        accepted = rv;
      }
      return markerRuleOf(cm.data);
    };
    let latest: MarkerRule | undefined;
    const read = nextRead(() => readOnce().then((r) => (latest = r)));
    return Object.assign(() => read(), { last: () => latest });
  });
}

/** Coalesces reads: a call gets a read that started after it, shared with the calls around it. */
export function nextRead<T>(read: () => Promise<T>): () => Promise<T> {
  let running: Promise<T> | undefined;
  let next: Promise<T> | undefined;
  const start = (): Promise<T> => {
    const p = read();
    running = p;
    const clear = () => {
      if (running === p) running = undefined;
    };
    p.then(clear, clear);
    return p;
  };
  return () => {
    if (!running) return start();
    next ??= running
      .then(
        () => undefined,
        () => undefined,
      )
      .then(() => {
        next = undefined;
        return start();
      });
    return next;
  };
}
