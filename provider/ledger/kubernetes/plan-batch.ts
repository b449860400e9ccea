import { shared } from "../../core/process-registry";

/** What one request of a batch came to: its value, or the error it failed with. */
export interface Outcome<T> {
  value?: T;
  error?: unknown;
}

/** A request waiting for its batch. */
interface Queued<R, T> {
  request: R;
  /** Requests of one group are run together, by the `runAll` of the first of them. */
  group: string;
  runAll: (requests: R[]) => Promise<Outcome<T>[]>;
  resolve: (value: T) => void;
  reject: (e: unknown) => void;
}

/**
 * Runs requests of one pool that arrive while another batch is being run as one batch, in arrival
 * order, under the Lease and this process's lock: `runAll` plans the requests of one `group` (one
 * stack) together (one view of the pool, their writes at once). A deployment's checks arrive
 * together, so they share one Lease hold.
 */
export function batched<R, T>(
  key: string,
  locked: <X>(fn: () => Promise<X>) => Promise<X>,
  item: Omit<Queued<R, T>, "resolve" | "reject">,
): Promise<T> {
  const q = shared("kube-plan-queue", key, () => ({ pending: [] as Queued<R, T>[], draining: false }));
  return new Promise<T>((resolve, reject) => {
    q.pending.push({ ...item, resolve, reject });
    if (q.draining) return;
    q.draining = true;
    void (async () => {
      for (;;) {
        // Checked and cleared in one step, so a request queued meanwhile is never left behind.
        if (q.pending.length === 0) return void (q.draining = false);
        const batch = q.pending.splice(0);
        await locked(async () => {
          for (const group of new Set(batch.map((b) => b.group))) {
            const members = batch.filter((b) => b.group === group);
            const failed = (e: unknown): Outcome<T>[] => members.map(() => ({ error: e }));
            const outcomes = await members[0]!.runAll(members.map((b) => b.request)).catch(failed);
            members.forEach((b, i) => {
              const o = outcomes[i];
              if (!o) b.reject(new Error("no outcome for a batched request"));
              else if (o.error !== undefined) b.reject(o.error);
              else b.resolve(o.value as T);
            });
          }
        }).catch((e: unknown) => batch.forEach((b) => b.reject(e)));
      }
    })();
  });
}
