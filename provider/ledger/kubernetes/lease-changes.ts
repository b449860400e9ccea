import type * as k8s from "@kubernetes/client-node" with { "resolution-mode": "import" };
import type { KubeClients } from "../../kube/kube-config";
import { shared } from "../../core/process-registry";
import { warnOnce } from "../../core/warnings";

/** Starts a watch that calls `onEvent` at every event and `onEnd` when it stops. */
type ChangeWatcher = (
  onEvent: (phase: string, lease: k8s.V1Lease) => void,
  onEnd: () => void,
) => Promise<AbortController>;

/**
 * Tells a process waiting for a Lease when the Lease changes (released, taken, marked), and how it
 * looks now, so a waiter tries again at once, without reading it, instead of after its retry
 * period: one watch of that one Lease per process, open while someone waits and `idleMs` after. It
 * only ever shortens a wait: a watch that cannot start, breaks or misses a change leaves the waiter
 * to its timeout, as without it; a Lease it shows that is already out of date makes the waiter's
 * write fail (it carries the resourceVersion shown), and the waiter reads it.
 */
export class LeaseChanges {
  /** Incremented at every change seen. */
  private changes = 0;
  /** The Lease as the newest change showed it, and that change's number. */
  private latest: { lease: k8s.V1Lease; change: number } | undefined;
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

  /** The Lease as a change after `since` showed it, if there was one (else it must be read). */
  shownSince(since: number): k8s.V1Lease | undefined {
    return this.latest && this.latest.change > since ? this.latest.lease : undefined;
  }

  private changed(phase: string, lease: k8s.V1Lease): void {
    this.changes++;
    const shown = phase === "ADDED" || phase === "MODIFIED";
    this.latest = shown ? { lease, change: this.changes } : undefined;
    for (const wake of [...this.waiters]) wake();
  }

  private ensureWatch(): void {
    clearTimeout(this.idle);
    this.idle = setTimeout(() => this.stop(), this.idleMs);
    this.idle.unref();
    if (this.watch) return;
    const started: Promise<AbortController | undefined> = this.watcher(
      (phase, lease) => this.changed(phase, lease),
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
    this.latest = undefined;
    void watch?.then((c) => c?.abort());
  }
}

/** The changes of Lease `name` in `namespace` as this process sees them (one watch per Lease). */
export function leaseChanges(clients: KubeClients, namespace: string, name: string): LeaseChanges {
  const key = `${clients.server}\u0000${namespace}\u0000${name}`;
  return shared("lease-changes", key, () => {
    const path = `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases`;
    return new LeaseChanges((onEvent, onEnd) => {
      const { Watch } = require("@kubernetes/client-node") as typeof k8s;
      const query = { fieldSelector: `metadata.name=${name}` };
      return new Watch(clients.config).watch(path, query, onEvent, (err: unknown) => {
        const status = (err as { statusCode?: unknown } | undefined)?.statusCode;
        if (status === 401 || status === 403) {
          warnOnce(
            `the API server refused to watch Lease "${name}" (leases in namespace "${namespace}", ${status} ` +
              `${(err as Error).message}): a stack waiting for the pool's lock finds it free only at its next ` +
              `retry; grant the verb watch on leases in that namespace (see the Role in pulumi-egress-ipam's ` +
              `docs/shared-pools.md)`,
          );
        }
        onEnd();
      });
    });
  });
}
