// What a shared pool's planning decides for one request, against the pool's claims as one view has
// them, before anything is written: pure, so its rules can be tested case by case.
import { AddressSet, IpamError } from "../../allocator";
import type { Plan, PlanRequest } from "../ledger";
import { anyTaken, entriesOverlap, entrySpan, takeEntry } from "../held-entry";
import { heldPlan, planAddresses } from "../planner";
import { definitionMark } from "./definition-mark";
import type { CarriedRecord } from "../stack/allocation-record";
import {
  describeHolder,
  holderKey,
  isLive,
  ofStack,
  ownedBy,
  tookFrom,
  type Claim,
  type ClaimFields,
  type StackRef,
} from "./claim-store";

/** What planning decided for one request before writing it. */
export interface StagedPlan {
  plan: Plan;
  /** Holds to write: over `existing` when there is one. */
  writes: { ip: string; existing: Claim | undefined; fields: ClaimFields }[];
  /** A new plan (its holds are released when one of its writes fails), not a renewal. */
  fresh: boolean;
  /** The owner's earlier hold that another owner took over after it lapsed. */
  lost?: Claim;
  /**
   * The owner's holds the pool no longer hands out (see {@link PlanRequest.refuses}) or that can no
   * longer be registered (another holder's entry overlaps them), with why: planned anew instead;
   * the run fails naming them once the new holds are written.
   */
  outdated?: { ip: string; reason: string }[];
  /** The owner's holds to delete once the new ones are written: outdated, or left out of the new plan. */
  release?: Claim[];
}

/** Who plans, and how: the stack, the pool as messages name it, and the hold a plan writes. */
export interface Planning {
  me: StackRef;
  what: string;
  /** A hold's fields for `owner` at `seq`, expiring after the hold duration. */
  hold(owner: string, seq: number): ClaimFields;
}

/**
 * Chooses addresses for `req` against `claims` (at wall-clock `at`) and says what to write: the
 * owner's holds renewed, or new holds (a lapsed hold of another owner taken over). It never writes
 * over a claim: the owner's own stays as it is, and one the owner adopts (of its stack) stays its
 * holder's claim until `reserve` takes it over at create — so a preview can add holds, never
 * weaken a claim.
 * @throws IpamError IP_UNAVAILABLE (a requested address of another, or of another stack with
 *   `adopt`) and POOL_EXHAUSTED, as {@link planAddresses}.
 */
export function decidePlan(
  req: PlanRequest,
  all: Claim[],
  at: number,
  p: Planning,
  outdated: ReadonlyMap<string, string> = new Map(),
): StagedPlan {
  const { me, what } = p;
  // A hold of a reference records the definition it was planned under (see definition-mark.ts).
  const mark = req.definition === undefined ? {} : { definition: definitionMark(req.definition) };
  const hold = (seq: number): ClaimFields => ({ ...p.hold(req.owner, seq), ...mark });
  const byIp = new Map(all.map((c) => [c.ip, c]));
  // A hold the pool no longer hands out (or that cannot be registered): the owner's holds are
  // planned anew, as if it had none.
  const ownHolds = all.filter(
    (c) => ownedBy(c, me, req.owner) && c.state === "hold" && c.resourceVersion !== "",
  );
  const stale = ownHolds.some((c) => outdated.has(c.ip)) ? ownHolds : [];
  const claims = stale.length > 0 ? all.filter((c) => !stale.includes(c)) : all;
  const mine = claims.filter((c) => ownedBy(c, me, req.owner));
  const held = heldPlan(req, mine);
  if (held) {
    // Planning again renews the owner's holds (claims stay claims); one staged in this batch is new.
    const writes = mine
      .filter((c) => c.state === "hold" && held.ips.includes(c.ip) && c.resourceVersion !== "")
      .map((c) => {
        const renewed = hold(c.seq);
        return {
          ip: c.ip,
          existing: c,
          fields: c.takenFrom ? { ...renewed, takenFrom: c.takenFrom } : renewed,
        };
      });
    return { plan: held, writes, fresh: false };
  }
  const live = claims.filter((c) => isLive(c, at));
  const maxSeq = live.reduce((m, c) => Math.max(m, c.seq), 0);
  const taken = new AddressSet();
  for (const c of live) takeEntry(taken, c.ip);
  const { ips, seq } = planAddresses(req, {
    what,
    taken,
    latest: live.filter((c) => c.seq === maxSeq && maxSeq > 0).map((c) => c.ip),
    maxSeq,
    otherHolder: (ip, owner) => {
      const other = byIp.get(ip);
      if (other && isLive(other, at) && !ownedBy(other, me, owner)) {
        return { name: describeHolder(other, me), adoptable: ofStack(other, me) };
      }
      // Anything overlapping it (a block around an address, an entry inside a block): never adoptable.
      if (!anyTaken(taken, ip)) return undefined;
      const span = entrySpan(ip);
      const around = live.find(
        (c) => c.ip !== ip && !ownedBy(c, me, owner) && entriesOverlap(span, entrySpan(c.ip)),
      );
      return (
        around && { name: `${describeHolder(around, me)} (${around.ip})`, adoptable: false, overlaps: true }
      );
    },
    exhaustedNote: `shared ${what}, ${live.length} held`,
  });
  const writes: StagedPlan["writes"] = [];
  for (const ip of ips) {
    const existing = byIp.get(ip);
    if (existing && isLive(existing, at) && !ofStack(existing, me) && req.adopt) {
      throw new IpamError(
        "IP_UNAVAILABLE",
        `${ip} in ${what} is held by ${describeHolder(existing, me)}; adopt takes over addresses of this stack only`,
      );
    }
    if (existing?.state === "claim") continue;
    // Taking over another owner's lapsed hold: say whose, so that owner's next plan can tell.
    const takenFrom =
      existing && !ownedBy(existing, me, req.owner) ? holderKey(existing, existing.owner) : undefined;
    writes.push({ ip, existing, fields: { ...hold(seq), ...(takenFrom ? { takenFrom } : {}) } });
  }
  // The owner's earlier hold (the one its preview showed) lapsed and went to another owner: this
  // run fails naming it once its new holds are written (what the owner's next plan gets).
  const lost = claims.find((c) => tookFrom(c, me, req.owner) && !ips.includes(c.ip));
  const changed = stale.flatMap((c) => {
    const reason = outdated.get(c.ip);
    return reason === undefined ? [] : [{ ip: c.ip, reason }];
  });
  const release = stale.filter((c) => !ips.includes(c.ip));
  return {
    plan: { ips, seq },
    writes,
    fresh: true,
    ...(lost ? { lost } : {}),
    ...(changed.length > 0 ? { outdated: changed, release } : {}),
  };
}

/**
 * `claims` as the stack's state `records` of the pool say who holds them:
 * - a claim of the stack whose instance a resource of the state carries is that resource's (a
 *   resource renamed with an alias keeps the claims of its old name; a new resource given that
 *   name later is another holder, which must not find them its own);
 * - where no live claim is (a pool just put on a ledger, claims lost since), the records as claims
 *   of their holders, never written over (they have no resourceVersion), so planning never hands a
 *   holder of the stack another holder's address.
 */
export function withRecords(
  claims: readonly Claim[],
  records: readonly CarriedRecord[],
  at: number,
  p: Pick<Planning, "me" | "hold">,
): Claim[] {
  const carrier = new Map(records.flatMap((r) => (r.instance === undefined ? [] : [[r.instance, r.owner]])));
  const attributed = claims.map((c) => {
    const owner = c.instance === undefined ? undefined : carrier.get(c.instance);
    return owner !== undefined && owner !== c.owner && ofStack(c, p.me) ? { ...c, owner } : c;
  });
  const live = new Set(attributed.filter((c) => isLive(c, at)).map((c) => c.ip));
  const recorded = new Map<string, Claim>();
  for (const r of records) {
    for (const ip of r.ips) {
      if (live.has(ip) || recorded.has(ip)) continue;
      recorded.set(ip, {
        ...p.hold(r.owner, r.seq),
        state: "claim",
        expires: 0,
        ip,
        resourceVersion: "",
        uid: "",
      });
    }
  }
  return [...attributed.filter((c) => !recorded.has(c.ip)), ...recorded.values()];
}
