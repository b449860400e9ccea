import { errorMessage } from "../../core/failure";
import { IpamError } from "../../core/ipam-error";
import type { QuotaGroup } from "../quota-rules";
import { dataBytes } from "./object-sizes";

// How large a quota counter (quota-counter.ts) is, as this package counts ConfigMap data (keys and
// values, object-sizes.ts), and the refusals of one that would not fit: LEDGER_FULL before a write
// would take it past the object limit, LEDGER_UNAVAILABLE when the API server refused it anyway.

/** The data bytes of a counter of `group` under `rule` listing `entries`. */
export function counterBytes(group: QuotaGroup, rule: string, entries: Map<string, string[]>): number {
  let n = dataBytes({ group: group.key, rule });
  for (const [k, v] of entries) n += keyBytes(k, v);
  return n;
}

/** What the key `name` listing `tokens` adds to a counter (nothing when it lists none). */
export const keyBytes = (name: string, tokens: string[]): number =>
  tokens.length === 0 ? 0 : Buffer.byteLength(name) + Buffer.byteLength(tokens.join(" "));

/** Whether the API server (`Too long`, 413) or etcd (`request is too large`) refused an object as too large. */
export const refusedAsTooLarge = (e: unknown): boolean => /too long|too large|\b413\b/i.test(errorMessage(e));

/**
 * The refusal of an admission that would take counter `counter` of `group` in `what` (listing `size`
 * entries, `bytes`) past `limit` bytes.
 */
export function counterFull(
  what: string,
  counter: string,
  group: QuotaGroup,
  size: number,
  bytes: number,
  limit: number,
): IpamError {
  return new IpamError(
    "LEDGER_FULL",
    `quota counter "${counter}" of ${group.rule} in ${what} lists ${size} entries (${bytes} bytes), and ` +
      `one more would take it past ${limit} bytes, the most one ledger object may hold: release entries of ` +
      `that group, or ask the pool's owner to split it with narrower quota patterns`,
  );
}

/** A counter write the API server refused even pruned, with what it lists and what to do. */
export function counterTooLarge(
  what: string,
  name: string,
  group: QuotaGroup,
  entries: Map<string, string[]>,
  e: unknown,
): IpamError {
  const bytes = [...entries].reduce((n, [k, v]) => n + k.length + v.join(" ").length, 0);
  return new IpamError(
    "LEDGER_UNAVAILABLE",
    `${errorMessage(e)}; quota counter "${name}" of ${group.rule} in ${what} would list ${entries.size} ` +
      `entries (${bytes} bytes) after dropping those that are gone, and a ConfigMap holds at most 1 MiB: ` +
      `release entries of that group, or ask the pool's owner to split it with narrower quota patterns`,
  );
}
