import { randomBytes } from "node:crypto";
import { IpamError } from "../../core/ipam-error";
import { batchRetryBudgetMs, writeBatched } from "../../core/write-batch";
import { retryOnConflict } from "../../kube/conflict-retry";
import { describeEntry } from "../held-entry";
import { isLive, type Claim } from "./claim-store";
import type { MarkerStore } from "./marker-store";
import { dataBytes, objectLimit } from "./object-sizes";

// The writes of one marker object in this process, batched (write-batch.ts): the registrations and
// removals that arrive while a write of the marker is in flight go into its next write, one
// read-modify-write carrying the resourceVersion read. What each change means, and why the order
// of writes keeps blocks and the entries inside them apart, is in block-markers.ts; a batch is the
// same changes applied one after the other to what was read, so it decides as they would in turn.

/** A change to one marker: register `entry` (its claim object `uid`), or remove that registration. */
export type MarkerChange =
  | { kind: "register"; entry: string; uid: string; fresh: boolean }
  | { kind: "remove"; entry: string; uid: string };

/** Where a batch's marker is and whom its writes tell (the first change's, for the whole batch). */
interface Queued {
  change: MarkerChange;
  store: MarkerStore;
  forget: (entry: string) => void;
  now: () => number;
}

/**
 * An entry cannot be held because a claim or hold of another entry overlaps it: a block around it
 * (`around`), or an entry inside it listed in the marker at its own name.
 */
export class MarkerConflict extends Error {
  constructor(
    readonly entry: string,
    readonly holder: Claim,
    readonly around: boolean,
  ) {
    super(`${describeEntry(entry)} overlaps ${describeEntry(holder.ip)}, which is held`);
  }
}

/** A value new at every registration, so that every registration changes its marker. */
const nonce = (): string => randomBytes(6).toString("hex");
/** The uid part of a token. */
export const uidOf = (token: string): string => token.slice(0, token.indexOf("/"));

/**
 * Applies `change` to the marker of `block` with the other changes of this process that arrive
 * meanwhile. Resolves undefined when it took effect (or had none to take), or with why it was
 * refused: a MarkerConflict naming a live claim or hold of the block (a registration), or IpamError
 * LEDGER_FULL when the marker would outgrow the object limit (a registration of a new entry).
 * @throws LEDGER_UNAVAILABLE; CONFLICT after {@link batchRetryBudgetMs} of lost writes.
 */
export function changeMarker(
  store: MarkerStore,
  block: string,
  change: MarkerChange,
  forget: (entry: string) => void,
  now: () => number,
): Promise<Error | undefined> {
  const { clients, namespace, pool } = store.claims;
  const key = `${clients.server}\u0000${namespace}\u0000${pool}\u0000${block}`;
  return writeBatched<Queued, Error | undefined>(
    "marker",
    key,
    { change, store, forget, now },
    {
      write: (batch) => writeMarker(block, batch),
    },
  );
}

/** One read-modify-write of the marker of `block` carrying every change of `batch`; the answer of each. */
function writeMarker(block: string, batch: Queued[]): Promise<(Error | undefined)[]> {
  const { store, forget, now } = batch[0]!;
  const changes = batch.map((b) => b.change);
  const what = `writing the marker of ${block} (${changes.length} change${changes.length > 1 ? "s" : ""})`;
  return retryOnConflict(
    what,
    async () => {
      const at = await store.read(block);
      if (at?.kind === "claim" && isLive(at.claim, now())) {
        // The block is held: no entry registers inside it; removals have nothing to remove.
        return changes.map((c) =>
          c.kind === "register" ? new MarkerConflict(c.entry, at.claim, true) : undefined,
        );
      }
      const listed = at?.kind === "marker" ? at.marker.children : {};
      const { children, results, changed } = applyChanges(block, listed, changes, store.claims.pool);
      if (!changed) return results;
      if (!at) {
        if (await store.create(block, children)) return results;
        throw Object.assign(new Error(`${block} was created meanwhile`), { code: 409 });
      }
      if (at.kind === "claim") {
        // A lapsed hold of the block: anyone may take it over; its owner's next write finds a marker.
        await store.replace(block, at.claim.resourceVersion, children);
        forget(block);
      } else if (Object.keys(children).length === 0) {
        // A registration since changed the resourceVersion: the delete fails and the marker stays.
        await store.delete(at.marker);
      } else await store.replace(block, at.marker.resourceVersion, children);
      return results;
    },
    { budgetMs: batchRetryBudgetMs },
  );
}

/**
 * `listed` with `changes` applied in order: a registration that is not `fresh` and finds its uid
 * listed changes nothing; one that would take the marker past the object limit is refused.
 */
export function applyChanges(
  block: string,
  listed: Readonly<Record<string, string>>,
  changes: readonly MarkerChange[],
  pool: string,
): { children: Record<string, string>; results: (Error | undefined)[]; changed: boolean } {
  const children = { ...listed };
  const limit = objectLimit();
  let bytes = markerBytes(block, children);
  let changed = false;
  let size = Object.keys(children).length;
  const results = changes.map((c): Error | undefined => {
    const token = children[c.entry];
    const held = token !== undefined && uidOf(token) === c.uid;
    if (c.kind === "remove") {
      if (!held) return undefined;
      delete children[c.entry];
      bytes -= entryBytes(c.entry, token, --size);
      changed = true;
      return undefined;
    }
    if (held && !c.fresh) return undefined;
    const next = `${c.uid}/${nonce()}`;
    const others = token === undefined ? size : size - 1;
    const after =
      bytes -
      (token === undefined ? 0 : entryBytes(c.entry, token, others)) +
      entryBytes(c.entry, next, others);
    if (token === undefined && after > limit) return markerFull(pool, block, c.entry, size, bytes, limit);
    if (token === undefined) size++;
    children[c.entry] = next;
    bytes = after;
    changed = true;
    return undefined;
  });
  return { children, results, changed };
}

/** The data bytes of the marker of `block` listing `children`, as {@link dataBytes} counts them. */
export const markerBytes = (block: string, children: Record<string, string>): number =>
  dataBytes({ block, children: JSON.stringify(children) });

/** What listing `entry` with `token` beside `others` entries adds to a marker's JSON (`,"entry":"token"`). */
const entryBytes = (entry: string, token: string, others: number): number =>
  Buffer.byteLength(JSON.stringify(entry)) + Buffer.byteLength(JSON.stringify(token)) + (others > 0 ? 2 : 1);

function markerFull(
  pool: string,
  block: string,
  entry: string,
  size: number,
  bytes: number,
  limit: number,
): IpamError {
  return new IpamError(
    "LEDGER_FULL",
    `${describeEntry(entry)} cannot be held in shared pool "${pool}": the marker of ${block} lists ` +
      `${size} entries inside it (${bytes} bytes), and one more would take it past ` +
      `${limit} bytes, the most one ledger object may hold; release entries inside ${block}, or ask the ` +
      `pool's owner for a prefixLengths rule whose min is a smaller block (a longer prefix than /${block.split("/")[1]})`,
  );
}
