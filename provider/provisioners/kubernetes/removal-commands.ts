import { shellCommand } from "../../core/text";
import { canonicalAddress } from "../../allocator";
import { tryParseAddress } from "../../allocator/address";
import type { KubeObject } from "../../kube/object-edit";

/** An address list inside a cluster-scoped object, as `check` reports and removes from it. */
export interface AddressListAt {
  /** kubectl's name of the resource: `hostsubnet.network.openshift.io`, `egressip.k8s.ovn.org`, … */
  resource: string;
  /** The object as read. */
  object: KubeObject;
  /** JSON pointer of the list: `/egressIPs`, `/spec/egressIPs`. */
  path: string;
}

/** The raw list at `at.path` (entries as written, not canonical). */
export function rawList(at: AddressListAt): unknown[] {
  let v: unknown = at.object;
  for (const key of at.path.split("/").slice(1)) v = (v as Record<string, unknown> | undefined)?.[key];
  return Array.isArray(v) ? v : [];
}

/** A list entry as a canonical address; undefined when it is not one. */
const canonicalEntry = (x: unknown): string | undefined =>
  typeof x === "string" && tryParseAddress(x) ? canonicalAddress(x) : undefined;

/** The canonical addresses of the list, in order (entries that are not addresses left out). */
export function listedAddresses(at: AddressListAt): string[] {
  return rawList(at).flatMap((x) => canonicalEntry(x) ?? []);
}

/**
 * A kubectl command that takes `ip` out of the list: a JSON patch that first tests the entry is
 * still the one read (so it fails instead of removing another address when the list changed since),
 * then removes it. Undefined when the list does not have `ip`.
 */
export function removalCommand(at: AddressListAt, ip: string, context: string): string | undefined {
  const list = rawList(at);
  const i = list.findIndex((x) => canonicalEntry(x) === ip);
  if (i < 0) return undefined;
  const entry = `${at.path}/${i}`;
  const patch = JSON.stringify([
    { op: "test", path: entry, value: list[i] },
    { op: "remove", path: entry },
  ]);
  const name = at.object.metadata?.name ?? "";
  return shellCommand(
    "kubectl",
    "--context",
    context,
    "patch",
    at.resource,
    name,
    "--type=json",
    "-p",
    patch,
  );
}
