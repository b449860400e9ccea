import { isConflict } from "../../kube/kube-errors";
import { isBlock } from "../held-entry";
import { BlockMarkers } from "./block-markers";
import type { Claim, ClaimFields, ClaimStore } from "./claim-store";
import { blockRefusal, markerRuleReader, type MarkerRule, type MarkerRuleReader } from "./marker-range";
import { MarkerStore } from "./marker-store";
import { groupOf, QuotaCounters } from "./quota-counter";

// Writes of an entry's claim object with the marker protocol around them. In a pool without a
// marker range (no `prefixLengths` rule with min and max ever stored) they are the plain writes of
// the claim store, plus one read of the pool's definition; with one, every entry object that is
// written is registered in the markers around it, in the order the exclusivity argument needs:
//
// - an object that exists already (a hold being renewed or claimed, a lapsed hold taken over) is
//   registered first, then written with the resourceVersion read before, so it existed without a
//   break from before its registration to its write. When the write (or the registration) fails,
//   nothing is taken back: registrations are by the object's uid, which every write of the object
//   keeps, so they are right for as long as it exists, whoever wrote it last; and another writer of
//   it (two stacks taking over one lapsed hold) may have found this one's tokens and written none.
//   Once the object is gone they are garbage, which a block converting the marker skips (it finds
//   no object) and the sweep drops;
// - a new object (created, or made from a marker at a block's name) is written first, then the
//   marker range is read, then it registers writing every marker: whoever reads a marker after that
//   finds the object. A new claim is written as a hold first (it lapses if this process dies before
//   it registered) and becomes a claim last.
//
// In a pool with quotas, an entry of a stack a quota applies to is counted in its group
// (quota-counter.ts) in the same order: a new object is created as a lapsed hold (it counts
// nowhere), registered, then written as what it is; an object that exists registers before it is
// written (nothing to do when it is listed already and keeps its stack). Without quotas, the writes
// are the same as without this paragraph. The counter and the markers are registered at once: each
// only has to land before the write that makes the object live (or writes it again).

/**
 * Waits for an entry's quota registration and its marker registrations (`false`: none), made at
 * once: neither depends on the other, only the write that makes the object live (or writes it
 * again) on both. The quota's refusal first when both fail.
 */
async function both(quota: Promise<void>, markers: Promise<void> | false | undefined): Promise<void> {
  const [q, m] = await Promise.allSettled([quota, markers || undefined]);
  if (q.status === "rejected") throw q.reason;
  if (m.status === "rejected") throw m.reason;
}

/** Entry writes of one pool (see the file's comment). */
export interface EntryWrites {
  /** The pool's marker protocol. */
  markers: BlockMarkers;
  /** The pool's marker rule and quotas, read afresh. */
  rule: MarkerRuleReader;
  /** The pool's quota counters. */
  quotas: QuotaCounters;
  /**
   * Writes `fields` for `entry` over `existing` (its claim object as read), or creates it. `pending`
   * is the hold a new claim is written as until it has registered.
   * @returns what was written; undefined when a create found a claim there (someone else won).
   * @throws MarkerConflict naming the holder of an overlapping entry; IpamError PREFIX_NOT_ALLOWED
   *   for a block the pool does not allow, QUOTA_EXCEEDED for an entry its stack's quota has no room
   *   for (nothing written stays); a 409 when an object changed since it was read.
   */
  write(
    entry: string,
    existing: Claim | undefined,
    fields: ClaimFields,
    pending?: ClaimFields,
  ): Promise<Claim | undefined>;
  /**
   * Deletes `c` (preconditioned on its uid and resourceVersion), then its registrations. True when
   * it was deleted, false when already gone.
   * @throws the 409 of a delete whose object changed since it was read.
   */
  remove(c: Claim): Promise<boolean>;
}

/**
 * The entry writes of `store`'s pool.
 * @param what - the pool as messages name it.
 * @param forget - told of every claim object the protocol deletes or turns into a marker.
 */
export function entryWrites(store: ClaimStore, what: string, forget: (entry: string) => void): EntryWrites {
  const markers = new BlockMarkers(new MarkerStore(store), forget);
  const rule = markerRuleReader(store.clients, store.namespace, store.pool);

  /** Deletes a hold that lapsed, for the room a quota counter needs (its counter entry goes with it). */
  const collect = async (c: Claim): Promise<boolean> => {
    try {
      await store.delete(c);
    } catch (e) {
      if (isConflict(e)) return false; // renewed or taken over since it was read
      throw e;
    }
    forget(c.ip);
    const r = await rule();
    if (r.markers) await markers.release(c.ip, c.uid, r.markers).catch(() => undefined);
    return true;
  };
  const quotas = new QuotaCounters(store, what, collect);

  const refuseBlock = (entry: string, r: MarkerRule) => {
    const refused = isBlock(entry) ? blockRefusal(entry, r, what) : undefined;
    if (refused) throw refused;
  };

  /** What an entry counted under `r` is written as until it has registered: a lapsed hold. */
  const uncounted = (r: MarkerRule, fields: ClaimFields): ClaimFields | undefined =>
    groupOf(r.quotas, fields) ? { ...fields, state: "hold", expires: Date.now() } : undefined;

  /** Registers a new object, then writes `fields` over it when it was written as `first`. */
  const settle = async (entry: string, created: Claim, first: ClaimFields, fields: ClaimFields) => {
    // Read after the object exists: a rule stored later finds the object when it lists the pool.
    const r = await rule();
    try {
      refuseBlock(entry, r);
      await both(
        quotas.register(r.quotas, entry, created, fields, "new"),
        r.markers && markers.register(entry, created.uid, r.markers, true),
      );
      return first === fields ? created : await store.replace(created, fields);
    } catch (e) {
      await remove(created).catch(() => undefined);
      throw e;
    }
  };

  const remove = async (c: Claim): Promise<boolean> => {
    // A definition this version may not act under refuses the release before anything is deleted
    // (definition-format.ts): what it would leave registered is not known to this version.
    await rule();
    // Registrations are removed by the uid of the object that made them, so only once it is gone: a
    // hold taken over by an update keeps its uid, and its registrations are the new owner's.
    const deleted = await store.delete(c);
    const r = await rule();
    await quotas.release(r.quotas, c).catch(() => undefined); // left listed: pruned when room is needed
    if (r.markers) await markers.release(c.ip, c.uid, r.markers);
    return deleted;
  };

  return {
    markers,
    rule,
    quotas,
    remove,
    async write(entry, existing, fields, pending) {
      if (existing) {
        // No rule check: the object exists, so its length was allowed once, and the marker lengths
        // never shrink; a block held when the rule was tightened stays held (renewed, claimed).
        const r = await rule();
        const kept =
          existing.stack === fields.stack &&
          existing.stackId === fields.stackId &&
          existing.nodeId === fields.nodeId &&
          existing.malformed === undefined;
        await both(
          quotas.register(r.quotas, entry, existing, fields, kept ? "kept" : "moved"),
          r.markers && markers.register(entry, existing.uid, r.markers, false),
        );
        return store.replace(existing, fields);
      }
      // The rule as last read decides how a hold is created (none read yet: as without quotas, which
      // the ledger avoids by reading it with the pool); the read after it exists decides what counts.
      let r = rule.last() ?? {};
      if (isBlock(entry) || fields.state === "claim") {
        r = await rule();
        refuseBlock(entry, r);
      }
      const first =
        uncounted(r, fields) ?? (pending && fields.state === "claim" && r.markers ? pending : fields);
      const created = await store.create(entry, first);
      if (created) return settle(entry, created, first, fields);
      if (!isBlock(entry)) return undefined;
      // A marker at the block's name: the block may be written over it once all it lists are gone.
      const at = await markers.store.read(entry);
      if (at?.kind !== "marker") return undefined;
      await markers.clearInside(entry, at.marker, (await rule()).markers);
      const converted = await store.replace({ ip: entry, resourceVersion: at.marker.resourceVersion }, first);
      return settle(entry, converted, first, fields);
    },
  };
}
