import type * as k8s from "@kubernetes/client-node" with { "resolution-mode": "import" };
import { isAlreadyExists, isNotFound } from "../../kube/kube-errors";
import { claimName, poolLabel, roleLabel, roles } from "./claim-names";
import type { Claim, ClaimStore } from "./claim-store";
import { ledgerUnavailable } from "./ledger-unavailable";

// The marker objects of a shared pool: a marker sits at a block's name (where a claim of the block
// would be) and lists the entries held inside the block, so that a claim of the block and a claim
// of anything inside it write one object, and the API server (AlreadyExists, resourceVersion)
// decides between them. This file reads and writes them; block-markers.ts has the protocol.

/** A marker as read: the entries registered under a block, each with the token of its registration. */
export interface Marker {
  /** The block whose name the marker has. */
  block: string;
  /**
   * Entry → token `<uid>/<nonce>`: the uid of the entry's claim object that registered, and a value
   * new at every registration (so that a registration always changes the object: the API server
   * leaves the resourceVersion of an update that changes nothing as it was).
   */
  children: Record<string, string>;
  resourceVersion: string;
  uid: string;
}

/** What is at an entry's name: its claim (a hold, a claim, or a malformed object) or a marker. */
export type PoolObject = { kind: "claim"; claim: Claim } | { kind: "marker"; marker: Marker };

/** Whether `cm` is a marker (by its role label). */
export const isMarkerObject = (cm: k8s.V1ConfigMap): boolean =>
  cm.metadata?.labels?.[roleLabel] === roles.marker;

/** The marker `cm` records. */
export function parseMarker(cm: k8s.V1ConfigMap): Marker {
  let children: Record<string, string> = {};
  try {
    const parsed: unknown = JSON.parse(cm.data?.children ?? "{}");
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) {
      children = Object.fromEntries(Object.entries(parsed).map(([k, v]) => [k, String(v)]));
    }
  } catch {
    // A marker whose list cannot be read registers nothing: the conversion of its block reads its
    // inside the same way as for a marker without children, and the entries re-register.
  }
  return {
    block: cm.data?.block ?? "",
    children,
    resourceVersion: cm.metadata?.resourceVersion ?? "",
    uid: cm.metadata?.uid ?? "",
  };
}

/**
 * Reads and writes the marker objects of one pool, with the claim store's clients and messages:
 * every write a create or carrying the resourceVersion read.
 */
export class MarkerStore {
  constructor(readonly claims: ClaimStore) {}

  /** The label selector of the pool's markers. */
  get selector(): string {
    return `${poolLabel}=${this.claims.pool},${roleLabel}=${roles.marker}`;
  }

  /** What is at `entry`'s name, or undefined when nothing is. */
  async read(entry: string): Promise<PoolObject | undefined> {
    const name = claimName(this.claims.pool, entry);
    let cm: k8s.V1ConfigMap;
    try {
      cm = await this.claims.clients.core.readNamespacedConfigMap({ name, namespace: this.claims.namespace });
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw ledgerUnavailable(`reading "${name}"`, err, this.claims.place);
    }
    if (isMarkerObject(cm)) return { kind: "marker", marker: parseMarker(cm) };
    const claim = this.claims.claimOf(cm);
    return claim && { kind: "claim", claim };
  }

  /** Every marker of the pool. */
  async list(): Promise<Marker[]> {
    const list = await this.claims.clients.core
      .listNamespacedConfigMap({ namespace: this.claims.namespace, labelSelector: this.selector })
      .catch((err: unknown) => {
        throw ledgerUnavailable(`listing the markers of pool "${this.claims.pool}"`, err, this.claims.place);
      });
    return list.items.map(parseMarker);
  }

  /** Creates the marker of `block`; undefined when its name exists already (AlreadyExists). */
  async create(block: string, children: Record<string, string>): Promise<Marker | undefined> {
    const body = this.body(block, children);
    try {
      return parseMarker(
        await this.claims.clients.core.createNamespacedConfigMap({ namespace: this.claims.namespace, body }),
      );
    } catch (err) {
      if (isAlreadyExists(err)) return undefined;
      throw ledgerUnavailable(`creating marker "${body.metadata!.name}"`, err, this.claims.place);
    }
  }

  /**
   * Writes the marker of `block` over the object at its name, read at `resourceVersion` (a marker,
   * or a lapsed hold of the block).
   * @throws an error with code 409 when the object changed or went since it was read.
   */
  async replace(block: string, resourceVersion: string, children: Record<string, string>): Promise<Marker> {
    const body = this.body(block, children);
    body.metadata!.resourceVersion = resourceVersion;
    try {
      return parseMarker(
        await this.claims.clients.core.replaceNamespacedConfigMap({
          name: body.metadata!.name!,
          namespace: this.claims.namespace,
          body,
        }),
      );
    } catch (err) {
      const code = (err as { code?: number }).code;
      if (code === 409 || isNotFound(err))
        throw Object.assign(new Error(`marker of ${block} changed`), { code: 409 });
      throw ledgerUnavailable(`updating marker "${body.metadata!.name}"`, err, this.claims.place);
    }
  }

  /**
   * Deletes `m`, preconditioned on its uid and resourceVersion (a registration since keeps it).
   * @throws an error with code 409 when it changed since it was read.
   */
  async delete(m: Marker): Promise<void> {
    const name = claimName(this.claims.pool, m.block);
    try {
      await this.claims.clients.core.deleteNamespacedConfigMap({
        name,
        namespace: this.claims.namespace,
        body: { preconditions: { uid: m.uid, resourceVersion: m.resourceVersion } },
      });
    } catch (err) {
      if (isNotFound(err)) return;
      if ((err as { code?: number }).code === 409) throw err;
      throw ledgerUnavailable(`deleting marker "${name}"`, err, this.claims.place);
    }
  }

  private body(block: string, children: Record<string, string>): k8s.V1ConfigMap {
    return {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: {
        name: claimName(this.claims.pool, block),
        namespace: this.claims.namespace,
        labels: { [poolLabel]: this.claims.pool, [roleLabel]: roles.marker },
      },
      data: { block, children: JSON.stringify(children) },
    };
  }
}
