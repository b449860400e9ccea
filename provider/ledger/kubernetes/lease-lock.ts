import { randomBytes } from "node:crypto";
import * as os from "node:os";
import type * as k8s from "@kubernetes/client-node";
import { IpamError } from "../../core/ipam-error";
import type { KubeClients } from "../../kube/kube-config";
import { isAlreadyExists, isConflict, isNotFound } from "../../kube/kube-errors";
import { ledgerUnavailable } from "./ledger-unavailable";
import type { LockConfig, Locker } from "../locker";
import { shared } from "../../core/process-registry";
import { leaseChanges } from "./lease-changes";

/** Options of {@link leaseLocker}. */
export interface LeaseLockOptions {
  /** The clients of the cluster holding the Lease. */
  clients: KubeClients;
  /** `id` is the Lease's name, `namespace` its namespace; durations in milliseconds. */
  config: LockConfig;
  /** The holder identity written to the Lease; default {@link processIdentity}. */
  identity?: string;
  /** Pause between attempts while another process holds the Lease (default lockDuration/4, ≤ 1 s). */
  retryPeriod?: number;
}

/** This process's holder identity: `<host>/<pid>/<random>`, unique per process. */
export function processIdentity(): string {
  return shared(
    "lease-identity",
    "",
    () => `${os.hostname()}/${process.pid}/${randomBytes(4).toString("hex")}`,
  );
}

/** A Lease time (metav1.MicroTime: RFC 3339 with microseconds). */
const microTime = (ms: number): k8s.V1MicroTime =>
  new (require("@kubernetes/client-node") as typeof k8s).V1MicroTime(ms);
/** Annotation by which a process waiting for a held Lease asks for it next: `<identity> <epoch ms>`. */
export const waitingAnnotation = "egress-ipam/waiting";

/** The waiting mark of a Lease, if any. */
function waiterOf(lease: k8s.V1Lease): { who: string; at: number } | undefined {
  const mark = lease.metadata?.annotations?.[waitingAnnotation];
  const i = mark?.lastIndexOf(" ") ?? -1;
  return mark && i > 0 ? { who: mark.slice(0, i), at: Number(mark.slice(i + 1)) || 0 } : undefined;
}

/** A monotonic clock for every judgement of elapsed time: wall clocks of two hosts never agree. */
const now = () => performance.now();

/** One Lease as this process sees it; shared by every Locker of that Lease in the process. */
class LeaseState {
  /** Incremented whenever the Lease is taken or lost, so references of an earlier tenure do nothing. */
  generation = 0;
  held = false;
  refs = 0;
  /** Start (monotonic) of the last write that confirmed our tenure: nobody can take over before it + duration. */
  confirmedAt = 0;
  /** The other holder's resourceVersion and when this process first saw it (client-go's observedTime). */
  observed?: { version: string; at: number };
  renewTimer?: NodeJS.Timeout;
  /** The Lease as this process last wrote it while holding it (its release needs no read). */
  written?: k8s.V1Lease;
  /** Lease writes of this process, one at a time. */
  private chain: Promise<unknown> = Promise.resolve();

  serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.chain.then(fn, fn);
    this.chain = run.catch(() => undefined);
    return run;
  }
}

/**
 * A distributed, reference-counted lock on a `coordination.k8s.io/v1` Lease, with webmesh's
 * LockConfig semantics and without its flaws:
 *
 * - the holder identity is unique per process ({@link processIdentity}); every Locker of the same
 *   Lease in the process shares one tenure and one reference count: `acquire` while the process
 *   holds the Lease increments it, `release` decrements it and the last one clears the holder;
 * - a Lease this process creates carries its acquire and renew times, and a Lease held by another
 *   is taken over only after its `leaseDurationSeconds` have passed, measured by this process's own
 *   clock from when it first saw the current resourceVersion (as client-go's leaderelection does),
 *   never from the times written in it (another host's clock);
 * - the Lease is renewed every lockDuration/3 while held; a re-entrant `acquire` whose last
 *   confirmed renewal is older than that renews first, and takes the Lease anew if it was lost;
 * - `acquire` gives up after `lockAcquireTimeout` with `LOCK_TIMEOUT` naming the holder and since when;
 * - a process waiting for a held Lease marks it ({@link waitingAnnotation}); a process that finds
 *   the Lease free but marked by another waits once before taking it, so a process with a steady
 *   stream of work does not starve the others.
 *
 * Every write is a create or an update carrying the resourceVersion read. The lock only keeps
 * contention low and plans deterministic: it is never the only guard against a duplicate claim.
 * @param holder - who is asking in this process (unused in the Lease; kept for symmetry with the
 *   in-process lock's messages).
 */
export function leaseLocker(opts: LeaseLockOptions, holder = "an operation"): Locker {
  const { clients, config } = opts;
  const identity = opts.identity ?? processIdentity();
  const retryPeriod = opts.retryPeriod ?? Math.min(1000, config.lockDuration / 4);
  const durationSeconds = Math.max(1, Math.ceil(config.lockDuration / 1000));
  const where = { server: clients.server, context: clients.context, namespace: config.namespace };
  const key = `${clients.server}\u0000${config.namespace}\u0000${config.id}\u0000${identity}`;
  const s = shared("lease", key, () => new LeaseState());
  const changes = leaseChanges(clients, config.namespace, config.id);
  const api = clients.coordination;
  const ref = { name: config.id, namespace: config.namespace };
  let mine: number | undefined;
  let count = 0;
  void holder;

  const fail = (doing: string) => (err: unknown) => {
    throw ledgerUnavailable(`${doing} Lease "${config.id}"`, err, where);
  };
  const read = () =>
    api.readNamespacedLease(ref).then(
      (l) => l,
      (err: unknown) => (isNotFound(err) ? undefined : fail("reading")(err)),
    );
  /**
   * Writes `spec` over `lease` (precondition: its resourceVersion), setting or clearing this
   * process's waiting mark when `waiting` is given; the Lease as written, undefined on 409.
   */
  const write = async (
    lease: k8s.V1Lease,
    spec: k8s.V1LeaseSpec,
    waiting?: "mark" | "clear",
  ): Promise<k8s.V1Lease | undefined> => {
    const annotations = { ...lease.metadata?.annotations };
    if (waiting === "mark") annotations[waitingAnnotation] = `${identity} ${Date.now()}`;
    if (waiting === "clear" && waiterOf(lease)?.who === identity) delete annotations[waitingAnnotation];
    const body = { ...lease, metadata: { ...lease.metadata, annotations }, spec };
    return api.replaceNamespacedLease({ ...ref, body }).then(
      (written) => written,
      (err: unknown) => (isConflict(err) ? undefined : fail("updating")(err)),
    );
  };
  /** The spec of a tenure starting now (a fresh Lease carries its times: nobody may steal it). */
  const ours = (previous?: k8s.V1LeaseSpec): k8s.V1LeaseSpec => {
    const t = microTime(Date.now());
    const transitions =
      (previous?.leaseTransitions ?? 0) + (previous && previous.holderIdentity !== identity ? 1 : 0);
    return {
      holderIdentity: identity,
      leaseDurationSeconds: durationSeconds,
      acquireTime: t,
      renewTime: t,
      leaseTransitions: transitions,
    };
  };

  const confirmed = (start: number, written?: k8s.V1Lease) => {
    s.written = written;
    if (!s.held) {
      s.held = true;
      s.generation++;
      s.refs = 0;
      clearInterval(s.renewTimer);
      s.renewTimer = setInterval(() => void s.serial(renew).catch(() => undefined), config.lockDuration / 3);
      s.renewTimer.unref();
    }
    s.confirmedAt = start;
    s.observed = undefined;
  };
  const lost = () => {
    s.written = undefined;
    s.held = false;
    s.generation++;
    s.refs = 0;
    clearInterval(s.renewTimer);
  };

  /** Renews our tenure; false (and the tenure is over) when another holder has the Lease. */
  const renew = async (): Promise<boolean> => {
    if (!s.held) return false;
    const start = now();
    const lease = await read();
    if (lease?.spec?.holderIdentity !== identity) {
      lost();
      return false;
    }
    const spec = { ...lease.spec, renewTime: microTime(Date.now()) };
    const written = await write(lease, spec);
    if (written) confirmed(start, written);
    else if (now() - s.confirmedAt >= config.lockDuration) lost();
    return s.held;
  };

  /** Takes the Lease, waiting for its holder to release it or for its duration to pass. */
  const take = async (deadline: number, signal?: AbortSignal): Promise<void> => {
    let deferred = false;
    /** The change mark before the last wait: a change after it woke us, and shows the Lease. */
    let waited: number | undefined;
    for (let attempt = 0; ; attempt++) {
      signal?.throwIfAborted();
      // Held by this process: count on it only while its last confirmation is fresh (a process
      // that was paused past the duration finds out here that it lost the Lease).
      if (s.held && (now() - s.confirmedAt < config.lockDuration / 3 || (await renew()))) return;
      if (attempt > 0 && now() >= deadline) throw timeout(config, (await read())?.spec ?? {});
      const start = now();
      // Woken by a change (the holder's release): the Lease as the watch showed it, else as read.
      const shown = waited === undefined ? undefined : changes.shownSince(waited);
      waited = undefined;
      const since = changes.mark();
      const lease = shown ?? (await read());
      const seen = now();
      if (lease === undefined) {
        const body = { metadata: { ...ref }, spec: ours() };
        const created = await api.createNamespacedLease({ namespace: config.namespace, body }).then(
          (l) => l,
          (err: unknown) => (isAlreadyExists(err) ? undefined : fail("creating")(err)),
        );
        if (created) return confirmed(start, created);
        continue;
      }
      const spec = lease.spec ?? {};
      const version = lease.metadata?.resourceVersion ?? "";
      const waiter = waiterOf(lease);
      const otherWaits =
        waiter !== undefined && waiter.who !== identity && Date.now() - waiter.at < config.lockDuration;
      if (!spec.holderIdentity || spec.holderIdentity === identity) {
        // Free: but another process has been waiting for it, so let it go first (once per acquire),
        // or a process with a steady stream of work would keep re-taking it and starve the others.
        if (otherWaits && !deferred) {
          deferred = true;
          await changes.next(since, 2 * retryPeriod);
          waited = since;
          continue;
        }
        const taken = await write(lease, ours(spec), "clear");
        if (taken) return confirmed(start, taken);
        continue;
      }
      if (s.observed?.version !== version) s.observed = { version, at: seen };
      const duration = (spec.leaseDurationSeconds ?? durationSeconds) * 1000;
      if (now() - s.observed.at >= duration) {
        const taken = await write(lease, ours(spec), "clear");
        if (taken) return confirmed(start, taken);
        continue;
      }
      if (!otherWaits && (waiter?.who !== identity || Date.now() - waiter.at > config.lockDuration / 2)) {
        // Mark this process as waiting; our own mark does not restart the holder's expiry clock.
        const marked = await write(lease, spec, "mark");
        if (marked) s.observed = { version: marked.metadata?.resourceVersion ?? "", at: s.observed.at };
      }
      if (now() >= deadline) throw timeout(config, spec);
      const wait = Math.min(deadline - now(), retryPeriod * (0.5 + Math.random()));
      // Woken by the Lease's next change (its release), or after the retry period.
      await changes.next(since, Math.max(1, wait));
      waited = since;
    }
  };

  return {
    async acquire(signal) {
      signal?.throwIfAborted();
      const deadline = now() + config.lockAcquireTimeout;
      for (;;) {
        if (count > 0 && mine === s.generation && s.held) {
          // Re-entrant: make sure the tenure is still ours before counting on it.
          if (now() - s.confirmedAt < config.lockDuration / 3 || (await s.serial(renew))) {
            count++;
            return;
          }
        }
        await s.serial(() => take(deadline, signal));
        if (!s.held) continue;
        if (mine !== s.generation) count = 0;
        mine = s.generation;
        count++;
        s.refs++;
        return;
      }
    },

    async release() {
      if (count === 0) return;
      count--;
      if (count > 0 || mine !== s.generation) return;
      s.refs--;
      if (s.refs > 0) return;
      await s.serial(async () => {
        if (s.refs > 0 || !s.held || mine !== s.generation) return;
        const written = s.written;
        lost();
        // Clear the holder so the next contender takes it at once: over the Lease as this process
        // last wrote it, else (changed since: a waiter's mark) as read; a 409 then means it moved on.
        const clear = async (lease: k8s.V1Lease | undefined) => {
          if (lease?.spec?.holderIdentity !== identity) return true;
          const spec = { ...lease.spec, holderIdentity: undefined, renewTime: microTime(Date.now()) };
          return (await write(lease, spec as k8s.V1LeaseSpec).catch(() => true)) !== undefined;
        };
        if (!written || !(await clear(written))) await clear(await read().catch(() => undefined));
      });
    },
  };
}

function timeout(config: LockConfig, spec: k8s.V1LeaseSpec): IpamError {
  const by = spec.holderIdentity
    ? `held by ${spec.holderIdentity}`
    : "contended (it changed hands while this process tried)";
  const since = spec.acquireTime ? ` since ${new Date(spec.acquireTime).toISOString()}` : "";
  const renewed = spec.renewTime ? `, last renewed ${new Date(spec.renewTime).toISOString()}` : "";
  return new IpamError(
    "LOCK_TIMEOUT",
    `timed out after ${config.lockAcquireTimeout} ms waiting for Lease "${config.id}" in namespace ` +
      `"${config.namespace}": ${by}${since}${renewed} ` +
      `(lease duration ${spec.leaseDurationSeconds ?? "?"} s); retry, or raise lockAcquireTimeout ` +
      `if the holder is legitimately slow`,
  );
}
