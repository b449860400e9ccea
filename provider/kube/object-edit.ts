import type * as k8s from "@kubernetes/client-node" with { "resolution-mode": "import" };
import { retryOnConflict, type ConflictRetryPolicy } from "./conflict-retry";
import { isNotFound, kubeFailure } from "./kube-errors";
import type { KubeClients } from "./kube-config";
import { shared } from "../core/process-registry";

/** A cluster-scoped object by API version, kind and name. */
export interface ObjectRef {
  apiVersion: string;
  kind: string;
  name: string;
}

/** A Kubernetes object as the generic client returns it: plain JSON. */
export type KubeObject = k8s.KubernetesObject & Record<string, unknown>;

/**
 * What to write after reading an object, each carrying the `resourceVersion` read as a precondition:
 * - `replace`: the whole object (for kinds without a status another writer owns);
 * - `mergePatch`: a JSON merge patch (`metadata.resourceVersion` is added), to write some fields only;
 * - `create`: the object did not exist (a concurrent create turns into a retry);
 * - `delete`: delete, if still the version read;
 * - `undefined`: nothing to change.
 */
export type Edit =
  | { replace: KubeObject }
  | { mergePatch: Record<string, unknown> }
  | { create: KubeObject }
  | { delete: true }
  | undefined;

/** `application/merge-patch+json`. */
const mergePatchType = "application/merge-patch+json";

/** Our field manager name, as `kubectl get --show-managed-fields` shows it. */
export const fieldManager = "pulumi-egress-ipam";

/** Reads an object, or undefined when it does not exist. */
export async function readObject(kube: KubeClients, ref: ObjectRef): Promise<KubeObject | undefined> {
  try {
    return (await kube.objects.read({
      apiVersion: ref.apiVersion,
      kind: ref.kind,
      metadata: { name: ref.name },
    })) as KubeObject;
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw kubeFailure(`reading ${ref.kind} ${ref.name}`, err, kube);
  }
}

/** Lists every object of a cluster-scoped kind (an empty list when the kind is not served there). */
export async function listObjects(
  kube: KubeClients,
  apiVersion: string,
  kind: string,
): Promise<KubeObject[]> {
  try {
    return (await kube.objects.list(apiVersion, kind)).items as KubeObject[];
  } catch (err) {
    if (isNotFound(err) || /Unrecognized API version and kind/.test(String(err))) return [];
    throw kubeFailure(`listing ${kind} objects (${apiVersion})`, err, kube);
  }
}

/**
 * Read-modify-write of one object that never loses another writer's change: reads it, asks
 * `change` what to write, and writes it with the `resourceVersion` read as a precondition. A 409
 * (someone wrote in between) reads again and asks `change` again, with the bounded jittered backoff
 * of {@link retryOnConflict}. `change` may throw to refuse; that error is passed through.
 *
 * Edits of one object from this process take turns (a deployment writes one HostSubnet from many
 * resources at once): they would only make each other retry, and enough of them would exhaust the
 * retry budget. The 409 retries are for writers outside the process.
 * @returns the object as written (or as read when nothing changed; undefined when absent or deleted).
 */
export function editObject(
  kube: KubeClients,
  ref: ObjectRef,
  doing: string,
  change: (current: KubeObject | undefined) => Edit | Promise<Edit>,
  policy: Partial<ConflictRetryPolicy> = {},
  signal?: AbortSignal,
): Promise<KubeObject | undefined> {
  const turns = shared("kube-object-turns", "", () => new Map<string, Promise<unknown>>());
  const key = `${kube.server}\u0000${ref.apiVersion}\u0000${ref.kind}\u0000${ref.name}`;
  const result = (turns.get(key) ?? Promise.resolve()).then(() =>
    editNow(kube, ref, doing, change, policy, signal),
  );
  const settled = result.catch(() => undefined);
  turns.set(key, settled);
  void settled.then(() => {
    if (turns.get(key) === settled) turns.delete(key);
  });
  return result;
}

async function editNow(
  kube: KubeClients,
  ref: ObjectRef,
  doing: string,
  change: (current: KubeObject | undefined) => Edit | Promise<Edit>,
  policy: Partial<ConflictRetryPolicy> = {},
  signal?: AbortSignal,
): Promise<KubeObject | undefined> {
  const { objects } = kube;
  return retryOnConflict(
    `${doing} (${ref.kind} ${ref.name})`,
    async () => {
      signal?.throwIfAborted();
      const current = await readObject(kube, ref);
      const edit = await change(current);
      if (!edit) return current;
      const header = { apiVersion: ref.apiVersion, kind: ref.kind };
      const version = current?.metadata?.resourceVersion;
      try {
        if ("create" in edit) {
          return (await objects.create(
            { ...edit.create, ...header, metadata: { ...edit.create.metadata, name: ref.name } },
            undefined,
            undefined,
            fieldManager,
          )) as KubeObject;
        }
        if ("replace" in edit) {
          const metadata = { ...edit.replace.metadata, name: ref.name, resourceVersion: version };
          return (await objects.replace(
            { ...edit.replace, ...header, metadata },
            undefined,
            undefined,
            fieldManager,
          )) as KubeObject;
        }
        if ("mergePatch" in edit) {
          const patchMeta = (edit.mergePatch.metadata ?? {}) as Record<string, unknown>;
          const body = {
            ...edit.mergePatch,
            ...header,
            metadata: { ...patchMeta, name: ref.name, resourceVersion: version },
          };
          return (await objects.patch(
            body,
            undefined,
            undefined,
            fieldManager,
            undefined,
            mergePatchType,
          )) as KubeObject;
        }
        await objects.delete(
          { ...header, metadata: { name: ref.name } },
          undefined,
          undefined,
          undefined,
          undefined,
          undefined,
          { preconditions: { resourceVersion: version } },
        );
        return undefined;
      } catch (err) {
        // A 409 goes back to retryOnConflict; a delete of what is already gone is done.
        if (kubeStatusCode(err) === 409) throw err;
        if ("delete" in edit && isNotFound(err)) return undefined;
        throw kubeFailure(`${doing} (${ref.kind} ${ref.name})`, err, kube);
      }
    },
    policy,
    signal,
  );
}

const kubeStatusCode = (err: unknown): number => {
  const code = (err as { code?: unknown })?.code;
  return typeof code === "number" ? code : 0;
};
