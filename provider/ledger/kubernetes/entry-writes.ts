import { isBlock } from "../held-entry";
import { BlockMarkers } from "./block-markers";
import type { Claim, ClaimFields, ClaimStore } from "./claim-store";
import { blockRefusal, markerRuleReader, type MarkerRule, type MarkerRuleReader } from "./marker-range";
import { MarkerStore } from "./marker-store";

// Writes of an entry's claim object with the marker protocol around them. In a pool without a
// marker range (no `prefixLengths` rule with min and max ever stored) they are the plain writes of
// the claim store, plus one read of the pool's definition; with one, every entry object that is
// written is registered in the markers around it, in the order the exclusivity argument needs:
//
// - an object that exists already (a hold being renewed or claimed, a lapsed hold taken over) is
//   registered first, then written with the resourceVersion read before, so it existed without a
//   break from before its registration to its write;
// - a new object (created, or made from a marker at a block's name) is written first, then the
//   marker range is read, then it registers writing every marker: whoever reads a marker after that
//   finds the object. A new claim is written as a hold first (it lapses if this process dies before
//   it registered) and becomes a claim last.

/** Entry writes of one pool (see the file's comment). */
export interface EntryWrites {
  /** The pool's marker protocol. */
  markers: BlockMarkers;
  /** The pool's marker rule, read afresh. */
  rule: MarkerRuleReader;
  /**
   * Writes `fields` for `entry` over `existing` (its claim object as read), or creates it. `pending`
   * is the hold a new claim is written as until it has registered.
   * @returns what was written; undefined when a create found a claim there (someone else won).
   * @throws MarkerConflict naming the holder of an overlapping entry; IpamError PREFIX_NOT_ALLOWED
   *   for a block the pool does not allow; a 409 when an object changed since it was read.
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

  const refuseBlock = (entry: string, r: MarkerRule) => {
    const refused = isBlock(entry) ? blockRefusal(entry, r, what) : undefined;
    if (refused) throw refused;
  };

  /** Registers a new object, then writes `fields` over it when it was written as `first`. */
  const settle = async (entry: string, created: Claim, first: ClaimFields, fields: ClaimFields) => {
    // Read after the object exists: a rule stored later finds the object when it lists the pool.
    const r = await rule();
    try {
      refuseBlock(entry, r);
      if (r.markers) await markers.register(entry, created.uid, r.markers, true);
      return first === fields ? created : await store.replace(created, fields);
    } catch (e) {
      await remove(created).catch(() => undefined);
      throw e;
    }
  };

  const remove = async (c: Claim): Promise<boolean> => {
    // Registrations are removed by the uid of the object that made them, so only once it is gone: a
    // hold taken over by an update keeps its uid, and its registrations are the new owner's.
    const deleted = await store.delete(c);
    const r = await rule();
    if (r.markers) await markers.release(c.ip, c.uid, r.markers);
    return deleted;
  };

  return {
    markers,
    rule,
    remove,
    async write(entry, existing, fields, pending) {
      if (existing) {
        // No rule check: the object exists, so its length was allowed once, and the marker lengths
        // never shrink; a block held when the rule was tightened stays held (renewed, claimed).
        const r = await rule();
        const wrote = r.markers ? await markers.register(entry, existing.uid, r.markers, false) : [];
        try {
          return await store.replace(existing, fields);
        } catch (e) {
          await markers.unregister(entry, wrote).catch(() => undefined);
          throw e;
        }
      }
      let first = fields;
      if (isBlock(entry) || fields.state === "claim") {
        const r = await rule();
        refuseBlock(entry, r);
        if (pending && fields.state === "claim" && r.markers) first = pending;
      }
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
