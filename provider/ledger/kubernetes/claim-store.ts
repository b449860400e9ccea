import { IpamError } from "../../core/ipam-error";
import type * as k8s from "@kubernetes/client-node" with { "resolution-mode": "import" };
import type { KubeClients } from "../../kube/kube-config";
import { isAlreadyExists, isNotFound } from "../../kube/kube-errors";
import { addressOfClaimName, claimName, poolLabel, roleLabel, roles } from "./claim-names";
import { warnOnce } from "../../core/warnings";
import { ledgerUnavailable, type LedgerPlace } from "./ledger-unavailable";
import { shown } from "../../core/text";

/**
 * One address of a shared pool as its ConfigMap records it. A `hold` is written at `check` (preview
 * included) and lapses at `expires`; a `claim` is written at `create` and lasts until its owner
 * deletes it.
 */
export interface Claim {
  /** The canonical entry: an address, or a block (`10.20.3.0/24`). */
  ip: string;
  state: "hold" | "claim";
  /** Stack of the owner, `<org>/<project>/<stack>`, as named when the claim was written. */
  stack: string;
  /**
   * The owner stack's identity (see `stackIdentity`); absent in claims written by earlier versions,
   * which are told apart by `stack` alone.
   */
  stackId?: string;
  /**
   * The resource instance that made the claim: a replacement writes its own, so the old copy's
   * delete leaves the claim alone. Absent in holds and in claims of earlier versions.
   */
  instance?: string;
  /** URN of the owning resource. */
  owner: string;
  /** Position in the pool's allocation order (0 for requested addresses). */
  seq: number;
  /** Wall-clock expiry of a hold (ms since the epoch); 0 for a claim. */
  expires: number;
  /** The webmesh node ID of a node address. */
  nodeId?: string;
  /**
   * For a node address: a reference per resource made for it (it is shared), `<stack identity>
   * <urn> <instance>`; earlier versions wrote `<stack> <urn>`.
   */
  refs?: string[];
  /** `<stack> <urn>` of the owner whose lapsed hold this object took over, if it did. */
  takenFrom?: string;
  /**
   * A hold planned from a shared pool's stored definition: that definition's mark (see
   * definition-mark.ts). The hold is claimed only while the pool's definition is still that one.
   */
  definition?: string;
  /**
   * Set on an object with the pool's labels that is no valid claim but is named as the claim of
   * `ip`: it keeps that address from everyone (its name cannot be created again), and says why.
   */
  malformed?: string;
  /** When the object was created (RFC 3339), as the API server says. */
  created?: string;
  /** For preconditions: the object's resourceVersion and uid as read. */
  resourceVersion: string;
  uid: string;
}

/** What a write of a claim object says; the store adds names, labels and the address. */
export type ClaimFields = Omit<Claim, "ip" | "resourceVersion" | "uid">;

/** The stack a ledger plans for: its identity, and its name for messages and earlier claims. */
export interface StackRef {
  stack: string;
  /** Absent where a ledger keeps the names of earlier versions (node addresses). */
  stackId?: string;
}

/**
 * Whether `c` was written for the stack `me`: by identity, or for a claim of an earlier version
 * (which has none) by the stack's name.
 */
export const ofStack = (c: Pick<Claim, "stack" | "stackId">, me: StackRef): boolean =>
  c.stackId !== undefined ? c.stackId === me.stackId : c.stack === me.stack;

/**
 * The URN of a resource of the stack `me` among the references of the node address claim `c`, or
 * undefined when none of them is of that stack.
 */
export function nodeReferrer(c: Pick<Claim, "refs">, me: StackRef): string | undefined {
  for (const ref of c.refs ?? []) {
    const space = ref.indexOf(" ");
    const stack = ref.slice(0, space);
    if (space < 0 || (stack !== me.stackId && stack !== me.stack)) continue;
    return ref.slice(space + 1).replace(/ [0-9a-f-]{36}$/, "");
  }
  return undefined;
}

/** Whether `c` belongs to the holder `owner` of the stack `me`. */
export const ownedBy = (
  c: Pick<Claim, "stack" | "stackId" | "owner">,
  me: StackRef,
  owner: string,
): boolean => c.owner === owner && ofStack(c, me);

/** How a claim's `takenFrom` names the holder `owner` of `me`. */
export const holderKey = (me: StackRef, owner: string): string => `${me.stackId ?? me.stack} ${owner}`;

/** Whether `c` took over a lapsed hold of `owner` of `me` (earlier versions wrote the stack's name). */
export const tookFrom = (c: Pick<Claim, "takenFrom">, me: StackRef, owner: string): boolean =>
  c.takenFrom !== undefined &&
  (c.takenFrom === holderKey(me, owner) || c.takenFrom === `${me.stack} ${owner}`);

/** Whether `c` still keeps its address from others at wall-clock time `at`. */
export const isLive = (c: Claim, at: number): boolean => c.state === "claim" || c.expires > at;

/**
 * "urn of stack s", for messages; a stack of the same name as `me`'s that is not `me` (another
 * backend's) is told apart by its identity.
 */
export const describeHolder = (
  c: Pick<Claim, "stack" | "stackId" | "owner" | "state" | "malformed">,
  me?: StackRef,
): string => {
  if (c.malformed !== undefined) return c.malformed;
  const twin =
    me && c.stack === me.stack && !ofStack(c, me) ? ` (another stack of that name, ${c.stackId})` : "";
  return `${c.owner} of stack ${c.stack}${twin}${c.state === "hold" ? " (planned, not yet created)" : ""}`;
};

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

  /** The label selector of the pool's claim objects. */
  get selector(): string {
    return `${poolLabel}=${this.pool},${roleLabel}=${roles.claim}`;
  }

  /** Every claim and hold of the pool, expired holds included. */
  async list(): Promise<Claim[]> {
    return (await this.listAt()).claims;
  }

  /** {@link list}, with the resourceVersion of the list (where a watch of later changes starts). */
  async listAt(): Promise<{ claims: Claim[]; resourceVersion: string }> {
    const list = await this.clients.core
      .listNamespacedConfigMap({ namespace: this.namespace, labelSelector: this.selector })
      .catch((err: unknown) => {
        throw ledgerUnavailable(`listing the claims of pool "${this.pool}"`, err, this.place);
      });
    const claims = list.items.flatMap((cm) => {
      const c = this.claimOf(cm);
      return c ? [c] : [];
    });
    return { claims, resourceVersion: list.metadata?.resourceVersion ?? "" };
  }

  /**
   * The claim an object of the pool records. An object that is none (made by hand, or by another
   * tool) is named in a warning and never fatal: when it is named as the claim of an address it
   * keeps that address from everyone (a {@link Claim.malformed} claim), otherwise it is ignored.
   */
  claimOf(cm: k8s.V1ConfigMap): Claim | undefined {
    // A block's marker (read by name, or seen as it turns into a claim) is no claim and no mistake.
    if (cm.metadata?.labels?.[roleLabel] === roles.marker) return undefined;
    const name = cm.metadata?.name ?? "";
    const c = parseClaim(cm);
    let why: string | undefined;
    if (!c) why = "it has no address, state, stack and owner of a claim";
    else {
      let expected: string | undefined;
      try {
        expected = claimName(this.pool, c.ip);
      } catch {
        why = `its address ${shown(c.ip)} is not an IP address`;
      }
      if (expected !== undefined && expected !== name) {
        why = `it says address ${c.ip}, whose claim would be named "${expected}"`;
      }
    }
    if (why === undefined) return c;
    const ip = addressOfClaimName(this.pool, name);
    const where = `ConfigMap "${name}" in namespace "${this.namespace}"`;
    warnOnce(
      `${where} has the labels of a claim of pool "${this.pool}" but is not one (${why}); ` +
        (ip === undefined
          ? "it is ignored"
          : `no stack can claim ${ip} while it exists. Delete it, or remove its egress-ipam labels, if no one uses ${ip}`),
    );
    if (ip === undefined) return undefined;
    return {
      ip,
      state: "claim",
      stack: "",
      owner: "",
      seq: 0,
      expires: 0,
      malformed: `${where}, which is not a valid claim (${why})`,
      resourceVersion: cm.metadata?.resourceVersion ?? "",
      uid: cm.metadata?.uid ?? "",
    };
  }

  /** The claim of `ip` (an address or a block), or undefined when there is none (or only a marker). */
  async read(ip: string): Promise<Claim | undefined> {
    const name = claimName(this.pool, ip);
    try {
      return this.claimOf(
        await this.clients.core.readNamespacedConfigMap({ name, namespace: this.namespace }),
      );
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
   * Overwrites `previous` (a claim, or a marker at the name of the block `previous.ip`) with
   * `fields`, preconditioned on the resourceVersion read with it.
   * @throws the client's 409 Conflict when the object changed since (for retryOnConflict);
   *   LEDGER_UNAVAILABLE for other failures.
   */
  async replace(previous: Pick<Claim, "ip" | "resourceVersion">, fields: ClaimFields): Promise<Claim> {
    const body = this.body(previous.ip, fields);
    // Never an unconditional update: a claim without a resourceVersion is not one read from the server.
    if (!previous.resourceVersion)
      throw new IpamError("INVALID_STATE", `claim of ${previous.ip} has no resourceVersion`);
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
  async delete(previous: Pick<Claim, "ip" | "uid" | "resourceVersion">): Promise<boolean> {
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
    if (f.stackId !== undefined) data.stackId = f.stackId;
    if (f.instance !== undefined) data.instance = f.instance;
    if (f.state === "hold") data.expires = new Date(f.expires).toISOString();
    if (f.nodeId !== undefined) data.nodeId = f.nodeId;
    if (f.refs !== undefined) data.refs = JSON.stringify(f.refs);
    if (f.takenFrom !== undefined) data.takenFrom = f.takenFrom;
    if (f.state === "hold" && f.definition !== undefined) data.definition = f.definition;
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
  if (d.stackId !== undefined) c.stackId = d.stackId;
  if (d.instance !== undefined) c.instance = d.instance;
  if (d.nodeId !== undefined) c.nodeId = d.nodeId;
  if (d.takenFrom !== undefined) c.takenFrom = d.takenFrom;
  if (d.state === "hold" && d.definition !== undefined) c.definition = d.definition;
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
