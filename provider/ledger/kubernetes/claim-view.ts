import type * as k8s from "@kubernetes/client-node" with { "resolution-mode": "import" };
import { shared } from "../../core/process-registry";
import { addressOfClaimName } from "./claim-names";
import type { Claim, ClaimStore } from "./claim-store";
import { warnOnce } from "../../core/warnings";

/** A resourceVersion as a number (etcd's revision), for ordering; undefined when it is not one. */
const revision = (rv: string | undefined): bigint | undefined =>
  rv !== undefined && /^\d+$/.test(rv) ? BigInt(rv) : undefined;

/** Whether resourceVersion `a` is known to be older than `b` (unknown order: not older). */
function older(a: string | undefined, b: string | undefined): boolean {
  const [x, y] = [revision(a), revision(b)];
  return x !== undefined && y !== undefined && x < y;
}

/** One event of a watch, as the client hands it over. */
type WatchEvent = (phase: string, object: k8s.V1ConfigMap) => void;

/** Starts a watch of `path`; resolves with what stops it. */
type Watcher = (
  path: string,
  query: Record<string, string | boolean>,
  onEvent: WatchEvent,
  onEnd: (err: unknown) => void,
) => Promise<AbortController>;

/** The HTTP status a watch ended with (the client sets `statusCode` when it refuses to start). */
const watchStatus = (err: unknown): number | undefined => {
  const e = err as { statusCode?: unknown; code?: unknown } | undefined;
  const code = e?.statusCode ?? e?.code;
  return typeof code === "number" ? code : undefined;
};

/**
 * This process's view of a shared pool's claims: listed at first use, then kept current by a watch
 * of the pool's objects and by this process's own writes, so planning reads memory instead of
 * listing the pool (whose cost grows with its claims) on every check.
 *
 * The view may be a moment behind the API server (a hold another process just wrote). That never
 * risks a duplicate: every write is a create or carries the resourceVersion read, so a stale view
 * costs a lost race (AlreadyExists or 409), after which the caller reads that one object
 * ({@link ClaimView.record}) and plans again. Any end of the watch (an error, a compaction's 410,
 * the server closing it) drops the view, and the next use lists again; so does `idleMs` without use,
 * which also ends the watch, so an idle process holds no connection. A use never sees less than the
 * list it waited for: a watch that ends while it starts leaves that use the claims it listed. A
 * watch the API server refuses (401, 403: the identity may list but not watch) is not tried again in
 * this process: every use lists, and a warning names the permission.
 */
export class ClaimView {
  private byIp = new Map<string, Claim>();
  private loading: Promise<Claim[]> | undefined;
  private watch: AbortController | undefined;
  private idle: NodeJS.Timeout | undefined;
  /** Incremented when the view is dropped, so events of an earlier watch change nothing. */
  private generation = 0;
  /** Set when the API server refused the watch: every use lists instead. */
  private refused = false;

  /**
   * @param store - the pool's claim objects.
   * @param watcher - starts a watch (default: the client's, on the store's cluster).
   * @param idleMs - how long an unused view keeps its watch.
   */
  constructor(
    private readonly store: ClaimStore,
    private readonly watcher: Watcher = clientWatcher(store),
    private readonly idleMs = 15_000,
  ) {}

  /** The pool's claims as this process knows them now (expired holds included). */
  async claims(): Promise<Claim[]> {
    if (this.refused) return this.store.list();
    this.touch();
    this.loading ??= this.load();
    const generation = this.generation;
    const listed = await this.loading;
    // Dropped meanwhile (the watch ended as it started): what was listed is still the newest read.
    return generation === this.generation ? [...this.byIp.values()] : listed;
  }

  /** The claim of `ip` as the view has it now, without listing the pool (undefined before the first use). */
  known(ip: string): Claim | undefined {
    return this.byIp.get(ip);
  }

  /**
   * Records what this process wrote or read of `ip`: `claim` as the API server returned it, or
   * undefined when there is none (deleted). An older version than the view has is ignored.
   */
  record(ip: string, claim: Claim | undefined): void {
    const known = this.byIp.get(ip);
    if (claim === undefined) this.byIp.delete(ip);
    else if (!known || !older(claim.resourceVersion, known.resourceVersion)) this.byIp.set(ip, claim);
  }

  /** Ends the watch and forgets the claims: the next use lists again. */
  drop(): void {
    this.generation++;
    this.loading = undefined;
    this.byIp = new Map();
    this.watch?.abort();
    this.watch = undefined;
    clearTimeout(this.idle);
  }

  private touch(): void {
    clearTimeout(this.idle);
    this.idle = setTimeout(() => this.drop(), this.idleMs);
    this.idle.unref();
  }

  private async load(): Promise<Claim[]> {
    const generation = this.generation;
    try {
      const { claims, resourceVersion } = await this.store.listAt();
      if (generation !== this.generation) return claims;
      this.byIp = new Map(claims.map((c) => [c.ip, c]));
      const path = `/api/v1/namespaces/${this.store.namespace}/configmaps`;
      const query = { labelSelector: this.store.selector, resourceVersion, allowWatchBookmarks: true };
      const current = () => generation === this.generation;
      this.watch = await this.watcher(
        path,
        query,
        (phase, object) => current() && this.apply(phase, object),
        (err) => current() && this.ended(err),
      );
      if (!current()) this.watch.abort();
      return claims;
    } catch (e) {
      if (generation === this.generation) this.drop();
      throw e;
    }
  }

  /** The watch ended: drop the view; one the API server refused is not tried again. */
  private ended(err: unknown): void {
    const status = watchStatus(err);
    if (status === 401 || status === 403) {
      this.refused = true;
      warnOnce(
        `the API server refused to watch the claims of pool "${this.store.pool}" (configmaps in namespace ` +
          `"${this.store.namespace}", ${status} ${(err as Error).message}): every plan lists the pool instead, ` +
          `which costs more as it grows; grant the verb watch on configmaps in that namespace (see the Role in ` +
          `pulumi-egress-ipam's docs/shared-pools.md)`,
      );
    }
    this.drop();
  }

  private apply(phase: string, object: k8s.V1ConfigMap): void {
    if (phase === "ERROR") return this.drop();
    const name = object?.metadata?.name ?? "";
    const ip = addressOfClaimName(this.store.pool, name);
    if (phase === "DELETED") {
      const known = ip === undefined ? undefined : this.byIp.get(ip);
      if (known && !older(object.metadata?.resourceVersion, known.resourceVersion)) this.byIp.delete(ip!);
      return;
    }
    if (phase !== "ADDED" && phase !== "MODIFIED") return; // BOOKMARK: nothing changed
    const claim = this.store.claimOf(object);
    if (claim) this.record(claim.ip, claim);
  }
}

/** The client's watch on the store's cluster. */
function clientWatcher(store: ClaimStore): Watcher {
  return (path, query, onEvent, onEnd) => {
    const { Watch } = require("@kubernetes/client-node") as typeof k8s;
    return new Watch(store.clients.config).watch(path, query, onEvent, onEnd);
  };
}

/** The view of `store`'s pool in this process: one per server, namespace and pool. */
export function claimView(store: ClaimStore): ClaimView {
  const key = `${store.clients.server}\u0000${store.namespace}\u0000${store.pool}`;
  return shared("claim-view", key, () => new ClaimView(store));
}
