import { familyOfText, type AddressSet } from "../allocator";
import { IpamError } from "../core/ipam-error";
import { anyTaken, describeEntry, freeEntry, isBlock, takeEntry } from "./held-entry";
import type { Plan, PlanRequest } from "./ledger";

/** An address a ledger records for one holder, with its place in the allocation order. */
export interface Held {
  ip: string;
  seq: number;
}

/** Who holds an address another owner asks for, as planning reports it. */
export interface OtherHolder {
  /** The holder as messages name it. */
  name: string;
  /** Whether `adopt: true` could take the address over (the stack ledger: always). */
  adoptable: boolean;
  /** The holder holds not the entry asked for but one overlapping it: nothing can take that over. */
  overlaps?: boolean;
}

/** A pool as one ledger sees it at the moment of planning. */
export interface PoolView {
  /** The pool as messages name it, e.g. `pool "urn:…"` or `pool "egress" (namespace "ipam")`. */
  what: string;
  /** Every address that is taken now; planning adds its picks (and takes them out again on failure). */
  taken: AddressSet;
  /** The round-robin cursor: the addresses of the newest allocation, in the order they were planned. */
  latest: readonly string[];
  /** The highest `seq` of any live allocation (0 when there is none). */
  maxSeq: number;
  /**
   * The holder of `ip` (an address or a block) when someone other than `owner` holds it or, for a
   * block, anything overlapping it; `adoptable` only when that holder holds exactly `ip`.
   */
  otherHolder(ip: string, owner: string): OtherHolder | undefined;
  /** Added to an exhausted pool's message (e.g. how many addresses a shared pool has held). */
  exhaustedNote?: string;
}

/**
 * The plan an owner gets back because it holds what it asks for already: every requested address,
 * or (automatic) exactly as many addresses as it needs — the record of an interrupted create, or
 * what its preview planned. Its `seq` is the highest of its addresses; undefined when it does not.
 */
export function heldPlan(req: PlanRequest, all: readonly Held[]): Plan | undefined {
  // An automatic plan is held only in the shape asked for: addresses, or blocks of the length asked,
  // of the family asked.
  const shaped = req.requested ? all : all.filter((h) => entryLength(h.ip) === req.prefixLength);
  const held = req.family ? shaped.filter((h) => familyOfText(h.ip) === req.family) : shaped;
  const ips = [...held].sort((a, b) => a.seq - b.seq).map((h) => h.ip);
  if (req.requested)
    return req.requested.every((ip) => ips.includes(ip)) ? { ips: [...req.requested], seq: 0 } : undefined;
  if (held.length !== (req.count ?? 1)) return undefined;
  return { ips, seq: Math.max(...held.map((h) => h.seq)) };
}

/** The prefix length of a block entry; undefined for an address. */
const entryLength = (entry: string): number | undefined =>
  isBlock(entry) ? Number(entry.slice(entry.indexOf("/") + 1)) : undefined;

/** What a refusal of an address another owner holds adds where `adopt: true` could take it over. */
export const adoptHint = "; set adopt: true to take it over";

/**
 * Plans new addresses for `req` in `view`, the rules both ledgers share:
 * - a requested address held by another owner is refused (unless adopted), naming that holder;
 * - requested addresses get `seq` 0 and do not move the round-robin cursor, chosen ones the next
 *   `seq` after the pool's newest;
 * - every pick is chosen with the earlier picks of the plan taken, and from the cursor as it was
 *   before the plan (a dual-stack pool keeps one cursor per family);
 * - a plan that fails half-way (its second family exhausted) leaves nothing of itself in `view.taken`.
 * @throws IpamError IP_UNAVAILABLE for a requested address of another owner; POOL_EXHAUSTED.
 */
export function planAddresses(req: PlanRequest, view: PoolView): Plan {
  // `adopt` takes over an entry exactly as held, never one overlapping another holder's (an address
  // inside a block, a block around an address); other refusals of an adopt are the ledger's own.
  for (const ip of req.requested ?? []) {
    const other = view.otherHolder(ip, req.owner);
    if (!other || (req.adopt && !other.overlaps && (other.adoptable || !isBlock(ip)))) continue;
    const hint = other.adoptable ? adoptHint : "";
    const what = isBlock(ip) ? describeEntry(ip) : `address ${ip}`;
    const held = other.overlaps ? "overlaps what is held by" : "is held by";
    throw new IpamError("IP_UNAVAILABLE", `requested ${what} in ${view.what} ${held} ${other.name}${hint}`);
  }
  const seq = req.requested ? 0 : view.maxSeq + 1;
  const count = req.requested ? req.requested.length : (req.count ?? 1);
  const ips: string[] = [];
  const added: string[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const ip = req.requested ? req.requested[i]! : req.choose(view.taken, view.latest, i);
      if (!anyTaken(view.taken, ip)) added.push(ip);
      takeEntry(view.taken, ip);
      ips.push(ip);
    }
  } catch (e) {
    for (const ip of added) freeEntry(view.taken, ip);
    if (e instanceof IpamError && e.code === "POOL_EXHAUSTED" && view.exhaustedNote) {
      throw new IpamError("POOL_EXHAUSTED", `${e.message} (${view.exhaustedNote})`);
    }
    throw e;
  }
  return { ips, seq };
}

/**
 * Whether planning ahead (a holder's check planning the holders before it in program order)
 * leaves `req` to its own check: an automatic holder that holds addresses keeps them, and its own
 * check says so (or plans it again).
 */
export function leftToItsOwnCheck(req: PlanRequest, holdsAny: boolean): boolean {
  return !req.requested && holdsAny;
}
