import { IpamError, codeOf } from "../../core/ipam-error";
import { errorMessage } from "../../core/failure";
import type { ConflictRetryPolicy } from "../../kube/conflict-retry";
import type { KubeClients } from "../../kube/kube-config";
import { editObject, type KubeObject, type ObjectRef } from "../../kube/object-edit";
import { addressList } from "./egress-view";

/** What {@link editAddressList} does with a list: the new list, or undefined to leave it. */
export type ListChange = (list: string[], object: KubeObject) => string[] | undefined;

/**
 * Changes an address list field (`HostSubnet.egressIPs`, `NetNamespace.egressIPs`,
 * `HostSubnet.egressCIDRs`) by replacing the whole object with the `resourceVersion` read: these
 * lists have no list-type, so any write replaces the whole array, and only a precondition on the
 * version read keeps another writer's address from being dropped. 409 reads again (bounded).
 * `change` may throw to refuse (it sees the fresh object every attempt).
 * @param missing - what to do when the object does not exist, for the error; undefined when an
 *   absent object is fine (a removal: nothing to remove).
 * @throws IpamError NOT_FOUND naming the object when it does not exist and `missing` is given.
 */
export async function editAddressList(
  kube: KubeClients,
  ref: ObjectRef,
  field: string,
  doing: string,
  change: ListChange,
  missing: string | undefined,
  policy?: Partial<ConflictRetryPolicy>,
  signal?: AbortSignal,
): Promise<void> {
  await editObject(
    kube,
    ref,
    doing,
    (current) => {
      if (!current) {
        if (missing === undefined) return undefined;
        throw new IpamError(
          "NOT_FOUND",
          `${doing}: ${ref.kind} ${ref.name} does not exist on ${kube.server} (context "${kube.context}"); ${missing}`,
        );
      }
      const before = addressList(current, field);
      const after = change(before, current);
      if (!after || (after.length === before.length && after.every((x, i) => x === before[i])))
        return undefined;
      const replace: KubeObject = { ...current, [field]: after };
      if (after.length === 0) delete replace[field];
      return { replace };
    },
    policy,
    signal,
  );
}

/** A {@link ListChange} adding `ip` unless present. */
export const adding =
  (ip: string, refuse?: (list: string[], object: KubeObject) => void): ListChange =>
  (list, object) => {
    refuse?.(list, object);
    return list.includes(ip) ? undefined : [...list, ip];
  };

/** A {@link ListChange} removing `ip` when present. */
export const removing =
  (ip: string): ListChange =>
  (list) =>
    list.includes(ip) ? list.filter((x) => x !== ip) : undefined;

/** One write that undoes part of a failed change, and where things are when it fails in turn. */
export interface UndoStep {
  run: () => Promise<unknown>;
  /** What is left where when this write fails (the undo writes before it having worked). */
  leftover: string;
}

/**
 * Runs `step` and, when it fails, `undo` (one write, or several in order); the error says what
 * failed, whether the undo worked, and when it did not, both errors and what is left where (the
 * `leftover` of the undo write that failed), so nothing is hidden.
 */
export async function compensated<T>(
  step: () => Promise<T>,
  undo: (() => Promise<unknown>) | UndoStep[],
  what: { step: string; undone: string; leftover?: string },
): Promise<T> {
  try {
    return await step();
  } catch (err) {
    const first = errorMessage(err);
    const undoSteps = Array.isArray(undo) ? undo : [{ run: undo, leftover: what.leftover ?? "" }];
    for (const u of undoSteps) {
      try {
        await u.run();
      } catch (undoErr) {
        const second = errorMessage(undoErr);
        throw new AggregateError(
          [err, undoErr],
          `${what.step} failed: ${first}; undoing the step before it also failed: ${second}; ` +
            `so ${u.leftover}`,
        );
      }
    }
    throw new IpamError(
      codeOf(err, "PROVISIONER_FAILED"),
      `${what.step} failed: ${first}; ${what.undone}, so nothing is left behind`,
      {
        cause: err,
      },
    );
  }
}
