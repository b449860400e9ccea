import { isLive } from "./claim-store";
import { changeMarker, MarkerConflict, uidOf, type MarkerChange } from "./marker-batch";
import { ancestorsOf, type LengthRange } from "./marker-range";
import type { Marker, MarkerStore } from "./marker-store";

// Blocks and the entries inside them meet in one object: a block's claim is named for the block,
// and every entry registers in a *marker* at the name of each block around it (at the pool's marker
// lengths). So a claim of a block and a claim of anything inside it or around it write the same
// object, and AlreadyExists or a stale resourceVersion decides which one wins, whatever the timing
// and whatever the Lease says. The argument, race by race, is in docs/shared-pools.md ("Blocks").

export { MarkerConflict } from "./marker-batch";

/**
 * The marker protocol of one pool: registering an entry in the markers around it, taking that back,
 * checking the entries registered at a block's own name before the block is claimed there, and
 * collecting markers whose entries are all gone.
 */
export class BlockMarkers {
  /**
   * @param store - the pool's marker objects.
   * @param forget - told of every claim object this protocol removes or turns into a marker (for a view).
   * @param now - the clock that decides whether a hold has lapsed.
   */
  constructor(
    readonly store: MarkerStore,
    private readonly forget: (entry: string) => void = () => undefined,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Registers `entry`, whose claim object has `uid`, in the marker of each block around it at the
   * lengths `range` (all at once). `fresh` (the object was just created, or made from a marker)
   * writes every marker; otherwise a marker that lists the entry with a token of `uid` is left as it
   * is. A lapsed hold of a block around it becomes a marker. Nothing is taken back when it fails:
   * another writer of the same object may have found a token this call wrote and counted on it,
   * and a token stays right for as long as its object exists (the caller deletes a new object,
   * and its registrations with it).
   * @throws MarkerConflict naming a live claim or hold of a block around the entry; LEDGER_UNAVAILABLE;
   *   CONFLICT.
   */
  async register(entry: string, uid: string, range: LengthRange, fresh: boolean): Promise<void> {
    const change = { kind: "register", entry, uid, fresh } as const;
    await this.changeAll(ancestorsOf(entry, range), change);
  }

  /**
   * Removes the registrations of `entry` by the claim object `uid` from the markers around it at
   * `range` (after that object was deleted), but the marker of `except`; a marker left without
   * entries is deleted.
   */
  async release(entry: string, uid: string, range: LengthRange | undefined, except?: string): Promise<void> {
    const blocks = ancestorsOf(entry, range).filter((b) => b !== except);
    await this.changeAll(blocks, { kind: "remove", entry, uid });
  }

  /** Applies `change` to the marker of each of `blocks` at once (each with this process's other changes to it). */
  private async changeAll(blocks: string[], change: MarkerChange): Promise<void> {
    const results = await Promise.allSettled(
      blocks.map((b) => changeMarker(this.store, b, change, this.forget, this.now)),
    );
    for (const r of results) {
      if (r.status === "rejected") throw r.reason;
      if (r.value) throw r.value;
    }
  }

  /**
   * Checks that the entries registered in `marker` (at the name of `block`, which is about to be
   * claimed) are all gone: a lapsed hold among them is deleted (preconditioned on what was read),
   * so its owner cannot renew it afterwards.
   * @throws MarkerConflict naming a live claim or hold inside the block; 409 when a lapsed hold
   *   changed meanwhile (read again and retry).
   */
  async clearInside(block: string, marker: Marker, range: LengthRange | undefined): Promise<void> {
    await Promise.all(
      Object.keys(marker.children).map(async (child) => {
        const at = await this.store.read(child);
        if (at?.kind !== "claim") return;
        if (isLive(at.claim, this.now())) throw new MarkerConflict(block, at.claim, false);
        if (await this.store.claims.delete(at.claim)) this.forget(child);
        // Its other registrations; the one in `marker` goes when the block is written over it.
        await this.release(child, at.claim.uid, range, block).catch(() => undefined);
      }),
    );
  }

  /**
   * Garbage collection: removes from every marker of the pool the registrations whose claim object
   * is gone (deleted, replaced by another object, or turned into a marker), and deletes the markers
   * left without any. Each write is preconditioned on the marker as read, so a registration made
   * meanwhile keeps it. Needed only after interrupted releases: a release removes its own.
   * @returns how many markers it deleted.
   */
  async sweep(): Promise<number> {
    let deleted = 0;
    for (const m of await this.store.list()) {
      const alive = await Promise.all(
        Object.entries(m.children).map(async ([child, token]) => {
          const at = await this.store.read(child);
          return at?.kind === "claim" && at.claim.uid === uidOf(token);
        }),
      );
      const kept = Object.fromEntries(Object.entries(m.children).filter((_, i) => alive[i]));
      if (Object.keys(kept).length === Object.keys(m.children).length) continue;
      try {
        if (Object.keys(kept).length === 0) {
          await this.store.delete(m);
          deleted++;
        } else await this.store.replace(m.block, m.resourceVersion, kept);
      } catch (e) {
        if ((e as { code?: number }).code !== 409) throw e; // changed meanwhile: someone is using it
      }
    }
    return deleted;
  }
}
