import { errorMessage } from "../../core/failure";
import { canonicalAddress } from "../../allocator";
import { tryParseAddress } from "../../allocator/address";
import type { KubeClients } from "../../kube/kube-config";
import type { KubeObject } from "../../kube/object-edit";
import type { PlatformStatus } from "../egress-ip-provisioner";
import type { OvnEgressIp } from "./egress-view";

// What the platform itself says about an address, as opposed to what this package wrote: ovnkube's
// EgressIP `status.items` and its Warning events, Antrea's Egress `status`. Three answers, because
// "no status" is not "not placed": a cluster whose controller has not acted on an object yet (or
// a test cluster with none running) has written nothing, and refresh right after `up` must find
// nothing (no drift). Only a platform that reported, and not this address, is drift.

/** The Warning events a platform recorded about one object, newest first, as `Reason: message`. */
export interface PlatformWarnings {
  /** Per object name. */
  byName: Map<string, { at: number; text: string }[]>;
  /** Why events could not be read (a 403 without the events permission), when they could not. */
  unreadable?: string;
}

/**
 * Lists the Warning events about objects of `kind` (cluster-scoped: the events live in any
 * namespace, ovnkube's in `default`), of the one named `name` when given. Never throws: events only
 * explain, and one that cannot be read leaves a status `unreported`, never `placed`.
 */
export async function platformWarnings(
  kube: KubeClients,
  kind: string,
  name?: string,
): Promise<PlatformWarnings> {
  const fieldSelector = [
    `involvedObject.kind=${kind}`,
    "type=Warning",
    ...(name ? [`involvedObject.name=${name}`] : []),
  ].join(",");
  try {
    const list = await kube.core.listEventForAllNamespaces({ fieldSelector });
    const byName = new Map<string, { at: number; text: string }[]>();
    for (const e of list.items) {
      const object = e.involvedObject.name ?? "";
      const when = e.lastTimestamp ?? e.eventTime ?? e.firstTimestamp ?? e.metadata.creationTimestamp;
      const at = when ? new Date(when as Date | string).getTime() : 0;
      const text = `${e.reason ?? "Warning"}: ${(e.message ?? "").trim()}`;
      byName.set(object, [...(byName.get(object) ?? []), { at, text }]);
    }
    for (const list of byName.values()) list.sort((a, b) => b.at - a.at);
    return { byName };
  } catch (e) {
    return { byName: new Map(), unreadable: errorMessage(e).split("\n")[0]! };
  }
}

/** The warnings about `object` since it was created (an older one is about an earlier object of its name), at most three, once each. */
function warningsAbout(object: KubeObject | undefined, warnings: PlatformWarnings): string[] {
  const name = object?.metadata?.name ?? "";
  const created = object?.metadata?.creationTimestamp as Date | string | undefined;
  const since = created ? new Date(created).getTime() : 0;
  const texts = (warnings.byName.get(name) ?? []).filter((w) => w.at >= since).map((w) => w.text);
  return [...new Set(texts)].slice(0, 3);
}

/** `; Warning events: …` or nothing. */
function warningText(texts: string[]): string {
  return texts.length > 0 ? `; Warning events: ${texts.join("; ")}` : "";
}

/**
 * What ovnkube says about `ip` of the EgressIP `egressIp` (read from `object`): `placed` on the node
 * its `status.items` names; `unplaced` when it wrote a status without it, or recorded a Warning
 * event about the object (NoMatchingNodeFound: no Node may carry it, and no status is written);
 * `unreported` when neither.
 */
export function ovnPlatformStatus(
  egressIp: OvnEgressIp,
  object: KubeObject | undefined,
  ip: string,
  warnings: PlatformWarnings,
): PlatformStatus {
  const item = egressIp.status?.find((s) => s.egressIP === ip);
  if (item) return { state: "placed", node: item.node };
  const texts = warningsAbout(object, warnings);
  if (egressIp.status) {
    const items = egressIp.status.map((s) => `${s.egressIP} on ${s.node}`).join(", ") || "none";
    return { state: "unplaced", why: `status.items: ${items}${warningText(texts)}` };
  }
  if (texts.length > 0) return { state: "unplaced", why: `no status.items${warningText(texts)}` };
  return {
    state: "unreported",
    why:
      `EgressIP ${egressIp.name} has no status.items: ovnkube has not reported on it yet (or is not running)` +
      (warnings.unreadable ? `; its events could not be read (${warnings.unreadable})` : ""),
  };
}

/**
 * What Antrea says about `ip` of the Egress `object`: `placed` on `status.egressNode`; `unplaced`
 * when it wrote a status without a node (its conditions that are not True say why: IPAllocated by
 * antrea-controller, IPAssigned by an agent) or with another egressIP in effect; `unreported` when
 * it wrote no status.
 */
export function antreaPlatformStatus(object: KubeObject, ip: string): PlatformStatus {
  const status = (object.status ?? {}) as {
    egressNode?: unknown;
    egressIP?: unknown;
    conditions?: { type?: unknown; status?: unknown; reason?: unknown; message?: unknown }[];
  };
  const inEffect =
    typeof status.egressIP === "string" && tryParseAddress(status.egressIP)
      ? canonicalAddress(status.egressIP)
      : undefined;
  if (typeof status.egressNode === "string" && status.egressNode !== "" && (!inEffect || inEffect === ip))
    return { state: "placed", node: status.egressNode };
  const failing = (Array.isArray(status.conditions) ? status.conditions : [])
    .filter((c) => c && c.status !== "True")
    .map(
      (c) =>
        `${String(c.type ?? "")} ${String(c.status ?? "")}: ${String(c.reason ?? "")}` +
        (c.message ? ` (${String(c.message)})` : ""),
    );
  if (Object.keys(status).length === 0) {
    return {
      state: "unreported",
      why: `Egress ${object.metadata?.name ?? ""} has no status: Antrea has not reported on it yet (or is not running)`,
    };
  }
  const parts = [
    ...(inEffect && inEffect !== ip ? [`status.egressIP is ${inEffect}`] : []),
    ...(status.egressNode ? [] : ["status.egressNode is empty"]),
    ...failing,
  ];
  return { state: "unplaced", why: parts.join("; ") };
}
