import type { Claim } from "./claim-store";
import type { Plan } from "../ledger";
import { shared } from "../../core/process-registry";

/** A plan request waiting for its batch. */
export interface Queued {
  list: () => Promise<Claim[]>;
  run: (claims: Claim[]) => Promise<Plan>;
  resolve: (p: Plan) => void;
  reject: (e: unknown) => void;
}

/**
 * Plans requests of one pool that arrive while another is being planned in one batch: one list
 * from the API server per batch, under the Lease and this process's lock, kept current with the
 * batch's own writes (the lock keeps other planners out; a write that still loses a race — a 409 —
 * lists again). A deployment's checks arrive together, so this saves a list per address.
 */
export function batched(
  key: string,
  locked: <T>(fn: () => Promise<T>) => Promise<T>,
  item: Omit<Queued, "resolve" | "reject">,
): Promise<Plan> {
  const q = shared("kube-plan-queue", key, () => ({ pending: [] as Queued[], draining: false }));
  return new Promise<Plan>((resolve, reject) => {
    q.pending.push({ ...item, resolve, reject });
    if (q.draining) return;
    q.draining = true;
    void (async () => {
      for (;;) {
        // Checked and cleared in one step, so a request queued meanwhile is never left behind.
        if (q.pending.length === 0) return void (q.draining = false);
        const batch = q.pending.splice(0);
        await locked(async () => {
          let claims: Claim[] | undefined;
          for (const queued of batch) {
            try {
              claims ??= await queued.list();
              queued.resolve(await queued.run(claims));
            } catch (e) {
              queued.reject(e);
              claims = undefined; // list again: the failure may have left the list stale
            }
          }
        }).catch((e: unknown) => batch.forEach((queued) => queued.reject(e)));
      }
    })();
  });
}
