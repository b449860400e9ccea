// Collecting the holds that lapsed: what a preview (or the check of an `up` that failed) leaves
// when nothing claims it. Each one is a claim object, a token in every marker around it and a key in
// its quota counter; nothing else deletes them (a lapsed hold is only taken over when a plan chooses
// its address), so without this an abandoned preview would grow the pool's objects for good. Planners
// collect a few per plan; `pulumi-egress-ipam collect` collects them all. See docs/shared-pools.md.
import { isConflict } from "../../kube/kube-errors";
import type { Claim } from "./claim-store";
import type { EntryWrites } from "./entry-writes";
import { lapsedGraceMs } from "./quota-counter";

/** How many lapsed holds one plan collects at most (after it released the pool's Lease, before its check returns). */
export const collectPerPlan = 8;

/**
 * How long after it lapsed a plan collects a hold: a hold duration more (15 minutes), so that a
 * preview's `up` that comes a little late still renews what the preview showed, as before.
 */
export const planCollectsAfterMs = 15 * 60_000;

/**
 * The holds of `claims` that lapsed more than `after` (at least a minute) before `at`: a new entry
 * is created as a lapsed hold and written live once it has registered, so one that lapsed within
 * the minute may be in flight. Node addresses are left out (their holds are shared by reference).
 */
export function lapsedHolds(claims: readonly Claim[], at: number, after = lapsedGraceMs): Claim[] {
  const before = at - Math.max(after, lapsedGraceMs);
  return claims.filter(
    (c) =>
      c.state === "hold" &&
      c.expires <= before &&
      c.resourceVersion !== "" &&
      c.nodeId === undefined &&
      c.malformed === undefined,
  );
}

/**
 * Deletes `holds` (each preconditioned on the uid and resourceVersion read, so a hold renewed or
 * taken over since stays), then their marker tokens and counter keys, as a release does. A
 * renewal that comes after the delete fails on its resourceVersion and its owner plans again.
 * @param forget - told of each hold deleted.
 * @returns the holds deleted, and those left with why (changed since read, or the error).
 */
export async function collectHolds(
  entries: EntryWrites,
  holds: readonly Claim[],
  forget: (c: Claim) => void = () => undefined,
): Promise<{ collected: Claim[]; left: { hold: Claim; why: string }[] }> {
  const collected: Claim[] = [];
  const left: { hold: Claim; why: string }[] = [];
  // A few at a time: each is a delete and a write per marker and counter.
  for (let i = 0; i < holds.length; i += collectPerPlan) {
    await Promise.all(
      holds.slice(i, i + collectPerPlan).map(async (hold) => {
        try {
          if (await entries.remove(hold)) {
            forget(hold);
            collected.push(hold);
          }
        } catch (e) {
          const why = isConflict(e) ? "renewed or taken over since it was read" : (e as Error).message;
          left.push({ hold, why });
        }
      }),
    );
  }
  return { collected, left };
}
