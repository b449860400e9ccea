import { createHash } from "node:crypto";
import { IpamError } from "../../core/ipam-error";
import { shared } from "../../core/process-registry";
import type { LabelSelector } from "./egress-view";

// Which pods of a namespace an EgressIp serves: all of them, or those its `podSelector` labels
// select. Two selections of one namespace that can take the same pod would give it two egress
// addresses, and the platform keeps one (ovnkube and Antrea pick one object, two Cilium policies
// for the same destinations compete); this file says when two selections may overlap, and keeps
// what each EgressIp of the deployment asked for, so that two new ones of one stack are refused
// at their first preview, when the cluster has neither yet.

/** The pods of a namespace an EgressIp serves: every pod (undefined), or those with these labels. */
export type PodSelection = Record<string, string> | undefined;

/** A label map's canonical JSON (keys sorted). */
const canonicalLabels = (labels: Record<string, string>): string =>
  JSON.stringify(Object.fromEntries(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))));

/** 10 hex digits of a hash of the selector, which names the objects of one selection. */
export const selectionHash = (podSelector: Record<string, string>): string =>
  createHash("sha256").update(canonicalLabels(podSelector)).digest("hex").slice(0, 10);

/** Whether two selections are the same (the same labels and values, or both every pod). */
export const sameSelection = (a: PodSelection, b: PodSelection): boolean =>
  (a === undefined) === (b === undefined) && (a === undefined || canonicalLabels(a) === canonicalLabels(b!));

/**
 * Whether two pod selectors of one namespace can select one pod: always, unless both give a value
 * for some label and the values differ (no selector: every pod; a selector with matchExpressions
 * is taken to overlap).
 */
export function podSelectorsOverlap(a: LabelSelector | undefined, b: LabelSelector | undefined): boolean {
  if (!a || !b) return true;
  if (a.matchExpressions?.length || b.matchExpressions?.length) return true;
  const bl = b.matchLabels ?? {};
  return Object.entries(a.matchLabels ?? {}).every(([k, v]) => !(k in bl) || bl[k] === v);
}

/** {@link podSelectorsOverlap} of two selections. */
export const selectionsOverlap = (a: PodSelection, b: PodSelection): boolean =>
  podSelectorsOverlap(a && { matchLabels: a }, b && { matchLabels: b });

/** `pods {"app":"web"}` or `every pod`, for messages. */
export const describeSelection = (s: PodSelection): string => (s ? `pods ${JSON.stringify(s)}` : "every pod");

/** What one assignment of this deployment asked of a namespace. */
export interface SelectionClaim {
  /** Its resource, as messages name it (`EgressIp team-a`). */
  holder: string;
  podSelector: PodSelection;
  /** Its address's family. */
  family: 4 | 6;
}

/**
 * Records `claim` for `namespace` on the API server `server`, and returns the claims made for it
 * before in this process. A dynamic provider runs one process per deployment, so these are the
 * deployment's: what its earlier checks asked, whether or not the cluster has it yet.
 */
export function claimSelection(server: string, namespace: string, claim: SelectionClaim): SelectionClaim[] {
  const claims = shared("selection-claims", `${server} ${namespace}`, () => [] as SelectionClaim[]);
  const before = [...claims];
  if (!claims.some((c) => JSON.stringify(c) === JSON.stringify(claim))) claims.push(claim);
  return before;
}

/**
 * Refuses `claim` when another EgressIp of this deployment asked for a different selection of
 * `namespace` that can take the same pods (with `sameFamily`, only one of the same family: the
 * platform keeps the families apart). Two namespace-wide selections, or two identical ones, share
 * the namespace's objects as before and are not refused here.
 * @throws IpamError SCOPE_CONFLICT naming both EgressIps, both selections and what to do.
 */
export function refuseOverlapInDeployment(
  server: string,
  namespace: string,
  claim: SelectionClaim,
  sameFamily = false,
): void {
  const other = claimSelection(server, namespace, claim).find(
    (c) =>
      c.holder !== claim.holder &&
      (!sameFamily || c.family === claim.family) &&
      !sameSelection(c.podSelector, claim.podSelector) &&
      selectionsOverlap(c.podSelector, claim.podSelector),
  );
  if (!other) return;
  throw new IpamError(
    "SCOPE_CONFLICT",
    `${claim.holder}: ${other.holder} of this stack serves ${describeSelection(other.podSelector)} of namespace ` +
      `${namespace}, and this EgressIp's ${selectionName(claim.podSelector)} can select the same pods, which ` +
      `would get two egress addresses: ${overlapAdvice}`,
  );
}

/** `podSelector {"app":"web"}` or `namespace-wide selection`, for messages. */
export const selectionName = (s: PodSelection): string =>
  s ? `podSelector ${JSON.stringify(s)}` : "namespace-wide selection";

/** What to do about two overlapping selections. */
export const overlapAdvice = "give the EgressIps pod selectors that differ in some label's value";

/**
 * Refuses `holder`'s selection of `namespace` beside `object` (`EgressIP team-a-egress`), one not
 * made by this package that serves every pod of the namespace: the platform sends a pod out through
 * one of the two, so the address this EgressIp places may never be used. Without a pod selector
 * the way on is `adopt: true`, which takes the object over; with one, adopt takes nothing over, so
 * the object must go or select less. Never refused: an object of this package (its owner records
 * decide) or one `adopt` is taking over.
 * @throws IpamError SCOPE_CONFLICT naming the object and what to do.
 */
export function refuseHandMade(
  holder: string,
  namespace: string,
  object: string,
  podSelector: PodSelection,
): never {
  const fix = podSelector
    ? `delete ${object} or narrow what it selects (adopt takes an object over only for an EgressIp without podSelector)`
    : `set adopt: true on the EgressIp to take it over (its addresses become this EgressIp's), or delete ${object} ` +
      `or narrow what it selects`;
  throw new IpamError(
    "SCOPE_CONFLICT",
    `${holder}: ${object}, not made by pulumi-egress-ipam, already serves every pod of namespace ${namespace}, and ` +
      `this EgressIp's ${selectionName(podSelector)} would serve ${podSelector ? "some of them" : "them"} too: the ` +
      `platform sends a pod out through one of the two, so this EgressIp's address may never be used; ${fix}`,
  );
}
