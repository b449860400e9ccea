import type * as k8s from "@kubernetes/client-node" with { "resolution-mode": "import" };
import type { KubeClients } from "../../kube/kube-config";
import { shared } from "../../core/process-registry";

/** Starts a watch that calls `onChange` at every event and `onEnd` when it stops. */
type ChangeWatcher = (onChange: () => void, onEnd: () => void) => Promise<AbortController>;

/**
 * Tells a process waiting for a Lease when the Lease changes (released, taken, marked), so a waiter
 * tries again at once instead of after its retry period: one watch of that one Lease per process,
 * open while someone waits and `idleMs` after. It only ever shortens a wait: a watch that cannot
 * start, breaks or misses a change leaves the waiter to its timeout, as without it.
 */
export class LeaseChanges {
  /** Incremented at every change seen. */
  private changes = 0;
  private readonly waiters = new Set<() => void>();
  private watch: Promise<AbortController | undefined> | undefined;
  private idle: NodeJS.Timeout | undefined;

  constructor(
    private readonly watcher: ChangeWatcher,
    private readonly idleMs = 15_000,
  ) {}

  /** A mark to pass to {@link next}: take it before reading the Lease. */
  mark(): number {
    this.ensureWatch();
    return this.changes;
  }

  /** Resolves at the first change after `since` (at once when there was one already), or after `ms`. */
  next(since: number, ms: number): Promise<void> {
    this.ensureWatch();
    if (this.changes > since) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.waiters.add(done);
    });
  }

  private changed(): void {
    this.changes++;
    for (const wake of [...this.waiters]) wake();
  }

  private ensureWatch(): void {
    clearTimeout(this.idle);
    this.idle = setTimeout(() => this.stop(), this.idleMs);
    this.idle.unref();
    if (this.watch) return;
    const started: Promise<AbortController | undefined> = this.watcher(
      () => this.changed(),
      () => {
        if (this.watch === started) this.watch = undefined;
      },
    ).catch(() => {
      if (this.watch === started) this.watch = undefined;
      return undefined;
    });
    this.watch = started;
  }

  private stop(): void {
    const watch = this.watch;
    this.watch = undefined;
    void watch?.then((c) => c?.abort());
  }
}

/** The changes of Lease `name` in `namespace` as this process sees them (one watch per Lease). */
export function leaseChanges(clients: KubeClients, namespace: string, name: string): LeaseChanges {
  const key = `${clients.server}\u0000${namespace}\u0000${name}`;
  return shared("lease-changes", key, () => {
    const path = `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases`;
    return new LeaseChanges((onChange, onEnd) => {
      const { Watch } = require("@kubernetes/client-node") as typeof k8s;
      const query = { fieldSelector: `metadata.name=${name}` };
      return new Watch(clients.config).watch(path, query, onChange, onEnd);
    });
  });
}
