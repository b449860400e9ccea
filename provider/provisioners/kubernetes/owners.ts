import { IpamError } from "../../core/ipam-error";
import type { Edit, KubeObject } from "../../kube/object-edit";
import type { AdoptPresent } from "../egress-ip-provisioner";
import { takenAddress } from "../taken-address";

/**
 * The annotation that records who put an item on a shared object: on a HostSubnet, which
 * CidrAssignments put each of its `egressCIDRs` there; on a Node, which put the
 * `k8s.ovn.org/egress-assignable` label. JSON: item → owners, e.g.
 * `{"10.0.9.0/24": ["stack-… urn:pulumi:…", "(there before)"]}`.
 */
export const ownersAnnotation = "egress-ipam/owners";

/** The owner of an item that was on the object before any assignment of this package put it there. */
export const thereBefore = "(there before)";

/** Who put each item on an object. */
export type Owners = Record<string, string[]>;

/**
 * The owners recorded on an object. An annotation that is not the JSON this package writes (edited
 * by hand) makes every item present `(there before)`: nothing is taken off on the word of a record
 * that cannot be read.
 */
export function readOwners(object: KubeObject | undefined, present: string[]): Owners {
  const raw = object?.metadata?.annotations?.[ownersAnnotation];
  if (raw === undefined) return {};
  try {
    const parsed: unknown = JSON.parse(raw);
    if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) throw new Error("not an object");
    const owners: Owners = {};
    for (const [item, list] of Object.entries(parsed)) {
      if (!Array.isArray(list) || !list.every((o) => typeof o === "string")) throw new Error("not lists");
      owners[item] = list as string[];
    }
    return owners;
  } catch {
    return Object.fromEntries(present.map((item) => [item, [thereBefore]]));
  }
}

/**
 * The owners after `owner` put `item` on the object. An item already present with nobody recorded
 * (an administrator's, another tool's) is recorded `(there before)`, so it stays when every owner
 * has gone; `adopt` instead takes such an item over (an assignment written by an earlier version,
 * which recorded nobody).
 */
export function withOwner(
  owners: Owners,
  item: string,
  owner: string,
  present: boolean,
  adopt = false,
): Owners {
  const list = owners[item] ?? (present && !adopt ? [thereBefore] : []);
  return { ...owners, [item]: list.includes(owner) ? list : [...list, owner] };
}

/**
 * The owners after `owner` let go of `item`, and whether the item is to be taken off the object:
 * only when somebody recorded it and no owner is left. Without an `owner` (an assignment written by
 * an earlier version, which recorded nobody), the item goes when nobody is recorded for it, as it
 * did then.
 */
export function withoutOwner(
  owners: Owners,
  item: string,
  owner: string | undefined,
): { owners: Owners; takeOff: boolean } {
  const list = owners[item];
  if (!list) return { owners, takeOff: owner === undefined };
  const left = list.filter((o) => o !== owner);
  const { [item]: _gone, ...rest } = owners;
  if (left.length === 0) return { owners: rest, takeOff: true };
  return { owners: { ...rest, [item]: left }, takeOff: false };
}

/**
 * The owners after `owner` let go of the egress address `ip`, and whether the address is to be
 * taken off the object. An address is one owner's at a time: `adopt` hands it over, rewriting its
 * record to the adopter (see {@link refuseUnowned}). So it goes only when its record names nobody
 * else: one recorded for another owner (an adopter — another stack, or this stack's renamed
 * resource) is theirs now and stays, as does one whose record cannot be read (`(there before)`).
 * Unlike {@link withoutOwner}'s items, an address nobody is recorded for (written by an earlier
 * version, which recorded nobody) goes, as it did then.
 */
export function withoutAddressOwner(
  owners: Owners,
  ip: string,
  owner: string | undefined,
): { owners: Owners; takeOff: boolean } {
  return owners[ip] ? withoutOwner(owners, ip, owner) : { owners, takeOff: true };
}

/**
 * Whether each of `items` is recorded for somebody, and every record names one of `mine` (a
 * placement request's `holderOwners`): the object holds this holder's items alone.
 */
export function recordedForOnly(
  owners: Owners,
  items: readonly string[],
  mine: ReadonlySet<string>,
): boolean {
  return (
    items.length > 0 &&
    items.every((item) => (owners[item] ?? []).length > 0 && owners[item]!.every((o) => mine.has(o)))
  );
}

/** The annotation value for `owners` (null, to delete the annotation, when nobody is recorded). */
export function ownersValue(owners: Owners): string | null {
  return Object.keys(owners).length === 0 ? null : JSON.stringify(owners);
}

/**
 * The replace of `current` with the owner record `owners` and the top-level `fields` (undefined:
 * remove the field), or undefined when neither changes anything.
 */
export function withOwners(current: KubeObject, owners: Owners, fields: Record<string, unknown>): Edit {
  const annotations: Record<string, string> = { ...current.metadata?.annotations };
  const value = ownersValue(owners);
  if (value === null) delete annotations[ownersAnnotation];
  else annotations[ownersAnnotation] = value;
  const replace: KubeObject = { ...current, metadata: { ...current.metadata, annotations } };
  for (const [field, v] of Object.entries(fields)) {
    if (v === undefined) delete replace[field];
    else replace[field] = v;
  }
  const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
  const changed =
    !same(current.metadata?.annotations?.[ownersAnnotation], annotations[ownersAnnotation]) ||
    Object.keys(fields).some((f) => !same(current[f], replace[f]));
  return changed ? { replace } : undefined;
}

/**
 * The other owners `ip`'s record names when it does not name `owner` ([] when it does, or names
 * nobody). `(there before)` is left out: on an address it only stands for a record that cannot be
 * read (see {@link readOwners}), which says nothing about who has it.
 */
function othersRecorded(owners: Owners, ip: string, owner: string): string[] {
  const list = owners[ip] ?? [];
  return list.includes(owner) ? [] : list.filter((o) => o !== thereBefore);
}

/** What happened to an address `others` adopted, in messages. */
const takenOverBy = (others: string[]) => `was taken over by ${others.join(", ")} (adopt)`;

/**
 * Refuses an address that `what` (e.g. "NetNamespace team-a") already lists when it does not count
 * as this owner's under `adopt` (see {@link AdoptPresent}): with `true` everything present does;
 * otherwise what is recorded for this owner (the retry of an interrupted create), and with
 * `"unrecorded"` (an update: put back, move) also what no readable record names. Anything else
 * somebody else put there (by hand, another tool, another stack, an adopter), and this
 * assignment's delete would take it from them.
 */
export function refuseUnowned(
  owners: Owners,
  ip: string,
  owner: string,
  adopt: AdoptPresent | undefined,
  what: string,
): void {
  const list = owners[ip] ?? [];
  if (adopt === true || list.includes(owner)) return;
  if (adopt === "unrecorded") {
    const others = othersRecorded(owners, ip, owner);
    if (others.length === 0) return;
    throw new IpamError(
      "TAKEN_OVER",
      `${what} lists ${ip} recorded for ${others.join(", ")}: ${ip} ${takenOverBy(others)}, and it is not this ` +
        `assignment's to put back or move; remove this assignment from the program (its delete leaves the ` +
        `address to its owner), or have that owner release it and run pulumi up again`,
    );
  }
  const by = list.length > 0 ? `recorded for ${list.join(", ")}` : `not recorded as written by this package`;
  throw takenAddress(ip, `${what} already lists ${ip} (${by}): the address is somebody else's`, true);
}

/**
 * For `checkIP`: throws (drift, for refresh to record) when `what` lists `ip` with an owner record
 * that names others and not `owner`: another stack or a renamed resource adopted it. Without an
 * `owner` (an assignment of an earlier version) nothing is checked.
 */
export function refuseTakenOver(owners: Owners, ip: string, owner: string | undefined, what: string): void {
  const others = owner === undefined ? [] : othersRecorded(owners, ip, owner);
  if (others.length === 0) return;
  throw new IpamError(
    "TAKEN_OVER",
    `egress IP ${ip} in ${what} ${takenOverBy(others)}: this assignment no longer ` +
      `holds it; remove it from the program (its delete leaves the address to its owner), or have that owner ` +
      `release it and run pulumi up to put it back`,
  );
}
