import type * as k8s from "@kubernetes/client-node";
import type { KubeClients } from "../../kube/kube-config";
import { isAlreadyExists, isNotFound } from "../../kube/kube-errors";
import { claimName, poolLabel, roleLabel, roles } from "./claim-names";
import { ledgerUnavailable, type LedgerPlace } from "./ledger-unavailable";

/**
 * One address of a shared pool as its ConfigMap records it. A `hold` is written at `check` (preview
 * included) and lapses at `expires`; a `claim` is written at `create` and lasts until its owner
 * deletes it.
 */
export interface Claim {
  /** The canonical address. */
  ip: string;
  state: "hold" | "claim";
  /** Stack of the owner, `<org>/<project>/<stack>`. */
  stack: string;
  /** URN of the owning resource. */
  owner: string;
  /** Position in the pool's allocation order (0 for requested addresses). */
  seq: number;
  /** Wall-clock expiry of a hold (ms since the epoch); 0 for a claim. */
  expires: number;
  /** The webmesh node ID of a node address. */
  nodeId?: string;
  /** For a node address: every `<stack> <urn>` that created a resource for it (it is shared). */
  refs?: string[];
  /** `<stack> <urn>` of the owner whose lapsed hold this object took over, if it did. */
  takenFrom?: string;
  /** When the object was created (RFC 3339), as the API server says. */
  created?: string;
  /** For preconditions: the object's resourceVersion and uid as read. */
  resourceVersion: string;
  uid: string;
}

/** What a write of a claim object says; the store adds names, labels and the address. */
export type ClaimFields = Omit<Claim, "ip" | "resourceVersion" | "uid">;

/** Whether `c` belongs to the holder `(stack, owner)`. */
export const ownedBy = (c: Pick<Claim, "stack" | "owner">, stack: string, owner: string): boolean =>
  c.stack === stack && c.owner === owner;

/** Whether `c` still keeps its address from others at wall-clock time `at`. */
export const isLive = (c: Claim, at: number): boolean => c.state === "claim" || c.expires > at;

/** "urn (stack s)", for messages. */
export const describeHolder = (c: Pick<Claim, "stack" | "owner" | "state">): string =>
  `${c.owner} of stack ${c.stack}${c.state === "hold" ? " (planned, not yet created)" : ""}`;

/**
 * The claim ConfigMaps of one shared pool: every call goes to the API server (no cache), every
 * write is a create or carries the resourceVersion read, and every failure other than the
 * 404/409 a caller handles is IpamError `LEDGER_UNAVAILABLE` naming server, namespace and permission.
 */
export class ClaimStore {
  /** Where the pool's objects live, for messages. */
  readonly place: LedgerPlace;

  /**
   * @param clients - the cluster's clients.
   * @param namespace - the namespace of the pool's objects.
   * @param pool - the pool's ledger name.
   */
  constructor(
    readonly clients: KubeClients,
    readonly namespace: string,
    readonly pool: string,
  ) {
    this.place = { server: clients.server, context: clients.context, namespace };
  }

  /** Every claim and hold of the pool, expired holds included. */
  async list(): Promise<Claim[]> {
    const selector = `${poolLabel}=${this.pool},${roleLabel}=${roles.claim}`;
    const list = await this.clients.core
      .listNamespacedConfigMap({ namespace: this.namespace, labelSelector: selector })
      .catch((err: unknown) => {
        throw ledgerUnavailable(`listing the claims of pool "${this.pool}"`, err, this.place);
      });
    return list.items.flatMap((cm) => {
      const c = parseClaim(cm);
      return c ? [c] : [];
    });
  }

  /** The claim of `ip`, or undefined when there is none. */
  async read(ip: string): Promise<Claim | undefined> {
    const name = claimName(this.pool, ip);
    try {
      return parseClaim(await this.clients.core.readNamespacedConfigMap({ name, namespace: this.namespace }));
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw ledgerUnavailable(`reading claim "${name}"`, err, this.place);
    }
  }

  /** Creates the claim of `ip`; undefined when it exists already (AlreadyExists: someone else won). */
  async create(ip: string, fields: ClaimFields): Promise<Claim | undefined> {
    const body = this.body(ip, fields);
    try {
      return parseClaim(
        await this.clients.core.createNamespacedConfigMap({ namespace: this.namespace, body }),
      );
    } catch (err) {
      if (isAlreadyExists(err)) return undefined;
      throw ledgerUnavailable(`creating claim "${body.metadata!.name}"`, err, this.place);
    }
  }

  /**
   * Overwrites `previous` with `fields`, preconditioned on the resourceVersion read with it.
   * @throws the client's 409 Conflict when the object changed since (for retryOnConflict);
   *   LEDGER_UNAVAILABLE for other failures.
   */
  async replace(previous: Claim, fields: ClaimFields): Promise<Claim> {
    const body = this.body(previous.ip, fields);
    // Never an unconditional update: a claim without a resourceVersion is not one read from the server.
    if (!previous.resourceVersion) throw new Error(`claim of ${previous.ip} has no resourceVersion`);
    body.metadata!.resourceVersion = previous.resourceVersion;
    try {
      const written = await this.clients.core.replaceNamespacedConfigMap({
        name: body.metadata!.name!,
        namespace: this.namespace,
        body,
      });
      return parseClaim(written)!;
    } catch (err) {
      if (isNotFound(err) || (err as { code?: number }).code === 409) throw conflict(err);
      throw ledgerUnavailable(`updating claim "${body.metadata!.name}"`, err, this.place);
    }
  }

  /**
   * Deletes `previous`, preconditioned on its uid and resourceVersion, so a claim that changed hands
   * since it was read is never deleted. True when deleted, false when already gone.
   * @throws the client's 409 Conflict when it changed since it was read.
   */
  async delete(previous: Claim): Promise<boolean> {
    const name = claimName(this.pool, previous.ip);
    try {
      await this.clients.core.deleteNamespacedConfigMap({
        name,
        namespace: this.namespace,
        body: { preconditions: { uid: previous.uid, resourceVersion: previous.resourceVersion } },
      });
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      if ((err as { code?: number }).code === 409) throw err;
      throw ledgerUnavailable(`deleting claim "${name}"`, err, this.place);
    }
  }

  private body(ip: string, f: ClaimFields): k8s.V1ConfigMap {
    const data: Record<string, string> = {
      address: ip,
      state: f.state,
      stack: f.stack,
      owner: f.owner,
      seq: String(f.seq),
    };
    if (f.state === "hold") data.expires = new Date(f.expires).toISOString();
    if (f.nodeId !== undefined) data.nodeId = f.nodeId;
    if (f.refs !== undefined) data.refs = JSON.stringify(f.refs);
    if (f.takenFrom !== undefined) data.takenFrom = f.takenFrom;
    return {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: {
        name: claimName(this.pool, ip),
        namespace: this.namespace,
        labels: { [poolLabel]: this.pool, [roleLabel]: roles.claim },
      },
      data,
    };
  }
}

// A 404 on an update means the object was deleted since it was read: the same as a lost race.
function conflict(err: unknown): unknown {
  const e = err as { code?: number };
  return e.code === 409
    ? err
    : Object.assign(new Error("the claim was deleted since it was read"), { code: 409 });
}

/** Reads a claim from its ConfigMap; undefined when it is not one (a foreign object with the label). */
export function parseClaim(cm: k8s.V1ConfigMap): Claim | undefined {
  const d = cm.data ?? {};
  if (!d.address || (d.state !== "hold" && d.state !== "claim") || !d.stack || !d.owner) return undefined;
  const c: Claim = {
    ip: d.address,
    state: d.state,
    stack: d.stack,
    owner: d.owner,
    seq: Number(d.seq ?? 0) || 0,
    expires: d.state === "hold" ? Date.parse(d.expires ?? "") || 0 : 0,
    resourceVersion: cm.metadata?.resourceVersion ?? "",
    uid: cm.metadata?.uid ?? "",
  };
  const created = cm.metadata?.creationTimestamp as Date | string | undefined;
  if (created) c.created = new Date(created).toISOString();
  if (d.nodeId !== undefined) c.nodeId = d.nodeId;
  if (d.takenFrom !== undefined) c.takenFrom = d.takenFrom;
  if (d.refs !== undefined) {
    try {
      const refs: unknown = JSON.parse(d.refs);
      if (Array.isArray(refs)) c.refs = refs.map(String);
    } catch {
      c.refs = [];
    }
  }
  return c;
}
