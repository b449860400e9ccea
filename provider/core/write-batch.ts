import { forget, shared } from "./process-registry";

// Changes to one object, made by many operations of one process at once (a deployment's parallel
// checks), written together: while a write of the object is in flight, the changes that arrive
// wait, and the next write carries all of them. One read-modify-write (one compare-and-swap) per
// batch instead of one per change, so the writers of one process never conflict with each other,
// and a conflict with another process is retried once for the whole batch. The quota counters
// (quota-counter.ts) and the block markers (block-markers.ts) both write through it.

/**
 * How long a batch keeps retrying when its object changed under it (409): every conflict is another
 * process's write landing, so a batch waits its turn (doubling backoff) rather than failing all its
 * callers after 8 attempts; only an object that changes under it for this long fails them
 * (CONFLICT). Passed as `budgetMs` to the Kubernetes layer's retryOnConflict.
 */
export const batchRetryBudgetMs = 30_000;

/** One change waiting in a {@link WriteQueue}, with how to answer its caller. */
export interface Queued<I, R> {
  item: I;
  done: (result: R) => void;
  fail: (e: unknown) => void;
}

/** The changes of one object waiting in this process, and what its writer keeps between batches. */
export interface WriteQueue<I, R, C> {
  pending: Queued<I, R>[];
  draining: boolean;
  /** The object as the last batch read or wrote it, for a writer that saves reads with it. */
  cache?: C;
}

/** How {@link writeBatched} takes the next batch and writes it. */
export interface BatchWriter<I, R, C> {
  /**
   * The items of `pending` (in order) that go into the next write; default all of them (none taken:
   * the first). What is left waits for the write after it.
   */
  select?: (pending: readonly I[]) => I[];
  /** Writes `batch` in one read-modify-write; the answer of each item, in order. Throwing fails all. */
  write: (batch: I[], queue: WriteQueue<I, R, C>) => Promise<R[]>;
}

/**
 * Queues `item` for the object `key` (of kind `kind`, e.g. `marker`) in this process and resolves
 * with its answer once a batch carrying it was written. The first caller of an idle queue starts a
 * write at once (a lone change waits for nothing); the callers that arrive meanwhile share the
 * next one. Process-wide (see process-registry.ts): every copy of the package loaded in the
 * process queues on the same object.
 */
export function writeBatched<I, R, C = never>(
  kind: string,
  key: string,
  item: I,
  writer: BatchWriter<I, R, C>,
): Promise<R> {
  const q = shared<WriteQueue<I, R, C>>(`write-batch:${kind}`, key, () => ({ pending: [], draining: false }));
  return new Promise<R>((done, fail) => {
    q.pending.push({ item, done, fail });
    if (q.draining) return;
    q.draining = true;
    void drain(q, writer).then(() => {
      // Idle and nothing kept: the next change makes a new queue (a process may touch many objects).
      if (!q.draining && q.cache === undefined) forget(`write-batch:${kind}`, key);
    });
  });
}

async function drain<I, R, C>(q: WriteQueue<I, R, C>, writer: BatchWriter<I, R, C>): Promise<void> {
  // Checked and cleared in one step, so a change queued meanwhile is never left behind.
  while (q.pending.length > 0) {
    const items = q.pending.map((p) => p.item);
    const chosen = new Set(writer.select ? writer.select(items) : items);
    if (chosen.size === 0) chosen.add(items[0]!); // a select that takes nothing would never end
    const batch = q.pending.filter((p) => chosen.has(p.item));
    q.pending = q.pending.filter((p) => !chosen.has(p.item));
    try {
      const results = await writer.write(
        batch.map((b) => b.item),
        q,
      );
      batch.forEach((b, i) => b.done(results[i]!));
    } catch (e) {
      batch.forEach((b) => b.fail(e));
    }
  }
  q.draining = false;
}
