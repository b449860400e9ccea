import { randomBytes } from "node:crypto";
import { retryOnConflict } from "../../kube/conflict-retry";
import { warnOnce } from "../../core/warnings";
import { describeEntry } from "../held-entry";
import { isLive, type ClaimStore } from "./claim-store";
import { ancestorsOf, type LengthRange } from "./marker-range";
import { MarkerStore } from "./marker-store";

// Registering the entries a pool already has when its marker range grows (a rule is set on a pool
// with claims, or widened): entries written before the new range was stored never registered at
// its new lengths. The definition update stores the grown range first, then this lists the pool
// and registers every claim object (holds, lapsed ones included: their owners may renew them), and
// only then marks the range ready, the lengths at which blocks may be claimed. An entry written
// after the grown range was stored read it after its own write, and registers itself.

/**
 * Registers every claim object of `store`'s pool in the markers of the blocks around it at the
 * lengths of `range`, one write per marker (all its entries at once), a few markers at a time. An
 * entry already registered by its own object is left as it is. A live claim of a block where a
 * marker belongs (an overlap that exists already) is warned about, never fatal.
 * @returns how many markers were written.
 */
export async function backfillMarkers(store: ClaimStore, range: LengthRange, parallel = 8): Promise<number> {
  const markers = new MarkerStore(store);
  const byBlock = new Map<string, Map<string, string>>();
  for (const c of await store.list()) {
    for (const block of ancestorsOf(c.ip, range)) {
      if (!byBlock.has(block)) byBlock.set(block, new Map());
      byBlock.get(block)!.set(c.ip, c.uid);
    }
  }
  const queue = [...byBlock];
  let written = 0;
  const lane = async (): Promise<void> => {
    for (let next = queue.shift(); next; next = queue.shift()) {
      const [block, children] = next;
      if (await registerAll(markers, block, children)) written++;
    }
  };
  await Promise.all(Array.from({ length: parallel }, lane));
  return written;
}

/** Registers `children` (entry → uid of its object) in the marker of `block`; true when it wrote. */
function registerAll(markers: MarkerStore, block: string, children: Map<string, string>): Promise<boolean> {
  const token = (uid: string) => `${uid}/${randomBytes(6).toString("hex")}`;
  return retryOnConflict(`registering the entries inside ${block}`, async () => {
    const at = await markers.read(block);
    const listed = at?.kind === "marker" ? at.marker.children : {};
    const added = [...children].filter(([entry, uid]) => listed[entry]?.split("/")[0] !== uid);
    if (added.length === 0) return false;
    const all = { ...listed, ...Object.fromEntries(added.map(([entry, uid]) => [entry, token(uid)])) };
    if (!at) {
      if (await markers.create(block, all)) return true;
      throw Object.assign(new Error(`${block} was created meanwhile`), { code: 409 });
    }
    if (at.kind === "claim" && isLive(at.claim, Date.now())) {
      warnOnce(
        `${describeEntry(block)} in pool "${markers.claims.pool}" is held while entries inside it are held too ` +
          `(${added.map(([e]) => e).join(", ")}), which this version would not let happen: release one of them`,
      );
      return false;
    }
    const rv = at.kind === "claim" ? at.claim.resourceVersion : at.marker.resourceVersion;
    await markers.replace(block, rv, all);
    return true;
  });
}
