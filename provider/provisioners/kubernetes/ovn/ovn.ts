import { IpamError } from "../../../core/ipam-error";
import { canonicalAddress } from "../../../allocator";
import { editObject, readObject, type KubeObject, type ObjectRef } from "../../../kube/object-edit";
import type { EgressIPProvisioner } from "../../egress-ip-provisioner";
import {
  addressesWithin,
  api,
  readEgressView,
  readOvnEgressIp,
  selectorMatches,
  type OvnEgressIp,
  viewAddresses,
  type EgressView,
} from "../egress-view";
import { egressIpPlacements } from "../placements";
import { ovnPlatformStatus, platformWarnings } from "../platform-status";
import { plannerFor, type AddressGroup, type AddressLocations, type NodePlanner } from "../node-planner";
import type { OvnProvisionerConfig } from "../../config/kube-provisioner-config";
import type { AdoptPresent, InstanceSettings } from "../../egress-ip-provisioner";
import {
  ownersAnnotation,
  ownersValue,
  readOwners,
  refuseTakenOver,
  refuseUnowned,
  withOwner,
  withoutAddressOwner,
  withoutOwner,
  recordedForOnly,
  type Owners,
} from "../owners";
import { clusterView } from "../../../kube/cluster-identity";
import { kubeFailure } from "../../../kube/kube-errors";
import { namespaceAddressesOf, namespaceFactsOf } from "../namespace-addresses";
import { isManaged as hasManagedLabel, managedBy } from "../managed-by";
import {
  describeSelection,
  overlapAdvice,
  podSelectorsOverlap,
  refuseHandMade,
  refuseOverlapInDeployment,
  selectionHash,
  selectionName,
} from "../pod-selection";
import { takenAddress } from "../../taken-address";
import { adoptedForAnnotation, namespaceNameLabel } from "../namespace-marks";

/** The Node label that makes OVN-Kubernetes consider a Node for egress IPs. */
export const egressAssignableLabel = "k8s.ovn.org/egress-assignable";

/** The name of the EgressIP object that holds a namespace's addresses. */
export const ovnObjectName = (namespace: string): string => `egress-ipam-${namespace}`;

const isManaged = (e: { labels: Record<string, string> }) => hasManagedLabel(e.labels);

/**
 * The name of the EgressIP object of a namespace's pods that `podSelector` selects:
 * `egress-ipam-<namespace>-<10 hex of the selector>`, one object per selector.
 */
export const podObjectName = (namespace: string, podSelector: Record<string, string>): string =>
  `${ovnObjectName(namespace)}-${selectionHash(podSelector)}`;

export { podSelectorsOverlap } from "../pod-selection";

/**
 * Whether an EgressIP object selects `namespace`: by the namespace's labels where they can be read
 * (however the object's selector writes them), else by the name label Kubernetes gives it.
 */
async function namespaceSelection(
  planner: NodePlanner,
  namespace: string,
): Promise<(e: OvnEgressIp) => boolean> {
  const facts = await namespaceFactsOf(planner, namespace);
  return (e) =>
    facts ? selectorMatches(e.namespaceSelector, facts.labels) : e.selects[namespaceNameLabel] === namespace;
}

/** The name of the EgressIP object serving a namespace: one adopted for it, else {@link ovnObjectName}. */
export function namespaceObjectName(view: EgressView, namespace: string): string {
  const adopted = view.egressIps.find(
    (e) => isManaged(e) && e.annotations[adoptedForAnnotation] === namespace,
  );
  return adopted?.name ?? ovnObjectName(namespace);
}

const egressIpRef = (name: string): ObjectRef => ({ apiVersion: api.ovn, kind: "EgressIP", name });

/**
 * Where ovnkube put addresses (status.items), and the EgressIP object each address is in (one
 * adopted for a namespace keyed as {@link ovnObjectName} of it, the name planning asks by).
 */
export function ovnLocations(view: EgressView): AddressLocations {
  const nodeOf = new Map<string, string>();
  const groupOf = new Map<string, string>();
  for (const e of view.egressIps) {
    for (const s of e.status ?? []) nodeOf.set(s.egressIP, s.node);
    const adoptedFor = isManaged(e) ? e.annotations[adoptedForAnnotation] : undefined;
    const key = adoptedFor ? ovnObjectName(adoptedFor) : e.name;
    for (const ip of e.ips) groupOf.set(ip, key);
  }
  return { nodeOf, groupOf };
}

/**
 * The `ovn` provisioner (OVN-Kubernetes): the addresses of a namespace are the `spec.egressIPs` of
 * one cluster-scoped EgressIP object (k8s.ovn.org/v1) named `egress-ipam-<namespace>`, selecting
 * the namespace by `kubernetes.io/metadata.name`. ovnkube places them on egress-assignable Nodes
 * and reports where in `status.items`; the host this provisioner plans is where it expects them
 * (the least loaded Node with room in its egress subnet), and refresh records where ovnkube put
 * them. Writes touch the spec only: a JSON merge patch of `spec` carrying the `resourceVersion`
 * read, so `status.items` (no status subresource here) is never overwritten.
 */
export function ovnProvisioner(config: OvnProvisionerConfig & InstanceSettings): EgressIPProvisioner {
  const planner: NodePlanner = plannerFor(config);
  const { kube, nodes } = planner;
  const namespace = config.namespace;
  const owner = config.owner;
  const podSelector = config.podSelector;
  /** The object this assignment's addresses go in: the selected pods' own, else the namespace's. */
  const objectFor = (view: EgressView, name: string): string =>
    podSelector ? podObjectName(name, podSelector) : namespaceObjectName(view, name);

  const ns = (doing: string): string => {
    if (!namespace) {
      throw new IpamError(
        "INVALID_INPUT",
        `${doing}: the ovn provisioner writes the namespace's EgressIP object, and no namespace was given: ` +
          `set the EgressIp's namespace`,
      );
    }
    return namespace;
  };

  /** This assignment's EgressIP object as planning keys it (see ovnLocations). */
  const groupKey = () =>
    namespace && (podSelector ? podObjectName(namespace, podSelector) : ovnObjectName(namespace));
  const group = (zone: string): AddressGroup | undefined => {
    const key = groupKey();
    if (!key) return undefined;
    return {
      key,
      name: `EgressIP ${key}`,
      rule:
        `ovnkube places no two addresses of one EgressIP object on one Node: label another Node of ` +
        `failure domain "${zone}" ${egressAssignableLabel} (list it in a CidrAssignment's hosts), or place ` +
        `fewer of ${key}'s addresses there (one family instead of "dual")`,
    };
  };

  const choose = async (zone: string, ip: string | undefined, signal?: AbortSignal) => {
    const view = await planner.egressView();
    const where = ip ? ovnLocations(view).nodeOf.get(ip) : undefined;
    // Where ovnkube already put the address, when that Node still serves the domain.
    if (where && (await nodes.serves(where, zone, signal))) return where;
    return planner.choose({ zone, ip, group: group(zone), locations: ovnLocations(view) }, signal);
  };

  /**
   * The object that is to hold the namespace's addresses: its own (see {@link namespaceObjectName}),
   * or with `adopt`, when there is none yet, the one unmanaged EgressIP object that lists `ip` and
   * selects this namespace alone (its name, selectors and other fields stay; it is labelled ours).
   */
  const targetFor = async (
    ip: string,
    name: string,
    view: EgressView,
    adopting: boolean,
  ): Promise<{ name: string; takeOver: boolean }> => {
    const own = objectFor(view, name);
    if (!adopting || podSelector || view.egressIps.some((e) => e.name === own))
      return { name: own, takeOver: false };
    const namespaces = (
      await kube.core.listNamespace().catch((err: unknown) => {
        throw kubeFailure("listing Namespaces (which an unmanaged EgressIP object selects)", err, kube);
      })
    ).items;
    const selectedBy = (e: OvnEgressIp) =>
      namespaces
        .filter((n) => selectorMatches(e.namespaceSelector, n.metadata?.labels ?? {}))
        .map((n) => n.metadata?.name ?? "");
    const alone = (e: OvnEgressIp) => {
      const selected = selectedBy(e);
      return selected.length === 1 && selected[0] === name;
    };
    // The object listing the address; else (another address of the namespace, adopted beside it)
    // the one that serves this namespace alone.
    const holder =
      view.egressIps.find((e) => !isManaged(e) && e.ips.includes(ip)) ??
      view.egressIps.find((e) => !isManaged(e) && e.ips.length > 0 && alone(e));
    if (!holder) return { name: own, takeOver: false };
    if (!alone(holder)) {
      const selected = selectedBy(holder);
      throw new IpamError(
        "ADDRESS_IN_USE",
        `cannot adopt ${ip} for namespace ${name}: EgressIP ${holder.name} has it and selects ` +
          `${selected.length === 0 ? "no namespace" : `namespaces ${selected.slice(0, 5).join(", ")}${selected.length > 5 ? ", …" : ""}`}; ` +
          `adopt takes over an object that serves this namespace alone: give each namespace its own EgressIP object first`,
      );
    }
    return { name: holder.name, takeOver: true };
  };

  /** Refuses an address another EgressIP object or OpenShift SDN object has. */
  const refuseForeign = (ip: string, target: string, name: string, view: EgressView) => {
    const other = view.egressIps.find((e) => e.name !== target && e.ips.includes(ip));
    if (other) {
      throw takenAddress(
        ip,
        `cannot give ${ip} to namespace ${name}: EgressIP ${other.name} already has it in spec.egressIPs`,
      );
    }
  };

  /**
   * Edits spec.egressIPs of the namespace's object and its owner record (`egress-ipam/owners`:
   * address → the assignment that put it there): created, patched (spec and the record only), or
   * deleted when empty. `change` gets the addresses and the record, and returns both or undefined.
   */
  const editSpec = (
    name: string,
    target: { name: string; takeOver: boolean },
    doing: string,
    change: (ips: string[], owners: Owners) => { ips: string[]; owners: Owners } | undefined,
    signal?: AbortSignal,
  ) =>
    editObject(
      kube,
      egressIpRef(target.name),
      doing,
      (current: KubeObject | undefined) => {
        const managed =
          current?.metadata?.labels?.["app.kubernetes.io/managed-by"] ===
          managedBy["app.kubernetes.io/managed-by"];
        if (current && !managed && !target.takeOver) {
          throw new IpamError(
            "UNMANAGED_OBJECT",
            `${doing}: EgressIP ${target.name} exists and is not managed by pulumi-egress-ipam; ` +
              `rename or delete it, or set adopt: true on the EgressIp to take it over, then run pulumi up again`,
          );
        }
        const before = current ? readOvnEgressIp(current).ips : [];
        const after = change(before, readOwners(current, before));
        if (!after) return undefined;
        if (after.ips.length === 0) return current ? { delete: true } : undefined;
        const record = ownersValue(after.owners);
        if (!current) {
          return {
            create: {
              metadata: {
                name: target.name,
                labels: managedBy,
                ...(record === null ? {} : { annotations: { [ownersAnnotation]: record } }),
              },
              spec: {
                egressIPs: after.ips,
                namespaceSelector: { matchLabels: { [namespaceNameLabel]: name } },
                ...(podSelector ? { podSelector: { matchLabels: podSelector } } : {}),
              },
            } as KubeObject,
          };
        }
        // An object taken over is labelled ours and says which namespace it serves.
        const takenOver = !managed && target.takeOver;
        return {
          mergePatch: {
            metadata: {
              ...(takenOver ? { labels: managedBy } : {}),
              annotations: {
                [ownersAnnotation]: record,
                ...(takenOver && target.name !== ovnObjectName(name) ? { [adoptedForAnnotation]: name } : {}),
              },
            },
            spec: { egressIPs: after.ips },
          },
        };
      },
      undefined,
      signal,
    );

  /**
   * Puts `ip` in the namespace's object with this assignment as its owner. An address listed
   * already is refused unless it counts as this one's under `adopt` (see refuseUnowned); an
   * unmanaged object is taken over only with `adopt: true`.
   */
  const add = async (ip: string, doing: string, adopt: AdoptPresent | undefined, signal?: AbortSignal) => {
    const name = ns(doing);
    const view = await readEgressView(kube);
    const target = await targetFor(ip, name, view, adopt === true);
    refuseForeign(ip, target.name, name, view);
    await editSpec(
      name,
      target,
      doing,
      (ips, owners) => {
        if (ips.includes(ip) && owner) {
          refuseUnowned(owners, ip, owner, adopt, `EgressIP ${target.name} (spec.egressIPs)`);
        }
        const recorded = owner ? { ...owners, [ip]: [owner] } : owners;
        if (ips.includes(ip) && ownersValue(recorded) === ownersValue(owners)) return undefined;
        return { ips: ips.includes(ip) ? ips : [...ips, ip], owners: recorded };
      },
      signal,
    );
  };

  /**
   * Sets the egress-assignable label on a Node, or takes it off, keeping the owner record (see
   * {@link ownersAnnotation}): the label goes only when no other CidrAssignment that set it is left
   * and it was not there before. A merge patch carrying the resourceVersion read.
   */
  const label = (host: string, change: "add" | "remove", signal?: AbortSignal) =>
    editObject(
      kube,
      { apiVersion: "v1", kind: "Node", name: host },
      `${change === "remove" ? "removing" : "setting"} label ${egressAssignableLabel} on Node ${host}`,
      (node) => {
        if (!node) {
          if (change === "remove") return undefined;
          throw new IpamError(
            "NOT_FOUND",
            `Node ${host} does not exist on ${kube.server} (context "${kube.context}")`,
          );
        }
        const has = egressAssignableLabel in (node.metadata?.labels ?? {});
        let owners = readOwners(node, has ? [egressAssignableLabel] : []);
        let set = has;
        if (change === "add") {
          if (owner)
            owners = withOwner(owners, egressAssignableLabel, owner, has, config.adoptPresent === true);
          set = true;
        } else {
          const next = withoutOwner(owners, egressAssignableLabel, owner);
          owners = next.owners;
          if (next.takeOff) set = false;
        }
        const record = ownersValue(owners);
        const recorded = node.metadata?.annotations?.[ownersAnnotation] ?? null;
        if (set === has && record === recorded) return undefined;
        return {
          mergePatch: {
            metadata: {
              ...(set === has ? {} : { labels: { [egressAssignableLabel]: set ? "" : null } }),
              ...(record === recorded ? {} : { annotations: { [ownersAnnotation]: record } }),
            },
          },
        };
      },
      undefined,
      signal,
    ).then(() => nodes.invalidate());

  return {
    findHostForNewIP: (zone, signal) => choose(zone, undefined, signal),
    findHostForIP: (ip, zone, signal) => choose(zone, canonicalAddress(ip), signal),
    hostServes: (host, zone, signal) => nodes.serves(host, zone, signal),
    cluster: () => clusterView(planner.kube),

    async addSpecifiedIP(rawIp, host, signal) {
      const ip = canonicalAddress(rawIp);
      await add(ip, `adding ${ip} to the EgressIP of namespace ${namespace}`, config.adoptPresent, signal);
      planner.record(ip, host, groupKey());
    },

    async addRandomIP(host) {
      throw new IpamError(
        "INVALID_INPUT",
        `the ovn provisioner cannot pick an address for node ${host}: give the EgressIp a pool, which plans it`,
      );
    },

    async removeIP(rawIp, _host, signal) {
      const ip = canonicalAddress(rawIp);
      const name = ns(`removing ${ip} from the EgressIP of its namespace`);
      const target = { name: objectFor(await readEgressView(kube), name), takeOver: false };
      let tookOff = true;
      await editSpec(
        name,
        target,
        `removing ${ip} from EgressIP ${target.name}`,
        (ips, owners) => {
          tookOff = true;
          if (!ips.includes(ip) && !(ip in owners)) return undefined;
          // An address adopted since is the adopter's: it stays (see withoutAddressOwner).
          const next = withoutAddressOwner(owners, ip, owner);
          tookOff = next.takeOff;
          if (!next.takeOff) {
            return ownersValue(next.owners) === ownersValue(owners)
              ? undefined
              : { ips, owners: next.owners };
          }
          return { ips: ips.filter((x) => x !== ip), owners: next.owners };
        },
        signal,
      );
      if (tookOff) planner.record(ip, undefined);
    },

    async moveIP(rawIp, _oldHost, newHost, signal) {
      // ovnkube moves addresses itself; the spec only has to keep the address. A move is an
      // update: never of another owner's address.
      const ip = canonicalAddress(rawIp);
      const doing = `keeping ${ip} in the EgressIP of namespace ${namespace}`;
      await add(ip, doing, config.adoptPresent ?? "unrecorded", signal);
      planner.record(ip, newHost, groupKey());
    },

    async checkIP(rawIp, host) {
      const ip = canonicalAddress(rawIp);
      const name = ns(`checking ${ip}`);
      const view = await readEgressView(kube);
      const objectName = objectFor(view, name);
      const object = view.egressIps.find((e) => e.name === objectName);
      if (!object?.ips.includes(ip)) {
        throw new IpamError(
          "DRIFT",
          `egress IP ${ip} is not in spec.egressIPs of EgressIP ${objectName}${object ? "" : " (no such object)"}; ` +
            `run pulumi up to put it back`,
        );
      }
      const raw = await readObject(kube, egressIpRef(objectName));
      refuseTakenOver(readOwners(raw, object.ips), ip, owner, `EgressIP ${objectName}`);
      // Events are read only for an address the status does not place (they only explain).
      const placed = object.status?.find((s) => s.egressIP === ip);
      const status = placed
        ? { state: "placed" as const, node: placed.node }
        : ovnPlatformStatus(object, raw, ip, await platformWarnings(kube, "EgressIP", objectName));
      // No status at all: ovnkube has not reported yet, which is not drift (see platform-status.ts).
      if (status.state === "unreported") return;
      if (status.state === "unplaced") {
        throw new IpamError(
          "DRIFT",
          `OVN-Kubernetes has not assigned egress IP ${ip} to any node (${status.why}); ` +
            `check that Nodes of its failure domain are labelled ${egressAssignableLabel} and that ${ip} is in their subnet`,
        );
      }
      if (status.node !== host) {
        throw new IpamError(
          "DRIFT",
          `OVN-Kubernetes assigned egress IP ${ip} to node ${status.node}, not ${host}; run pulumi up to record it`,
        );
      }
    },

    assignCIDR: (host, signal) => label(host, "add", signal),
    unassignCIDR: (host, signal) => label(host, "remove", signal),

    async usedAddresses(cidrs) {
      return addressesWithin(viewAddresses(await readEgressView(kube)), cidrs);
    },

    placements: (cidrs) => egressIpPlacements(kube, cidrs),
    placementOwners: "named",
    namespaceAddresses: (name, signal) => namespaceAddressesOf(planner, name, undefined, signal),

    // Two EgressIP objects that can select one pod give it two egress addresses, and ovnkube picks
    // one: an object made by hand that serves every pod of the namespace is refused at preview,
    // naming it, unless adopt takes it over.
    async adoptable({ holder }) {
      if (!namespace || (config.adoptPresent === true && !podSelector)) return;
      const view = await planner.egressView();
      const selectsNamespace = await namespaceSelection(planner, namespace);
      const handMade = view.egressIps.find(
        (e) => !isManaged(e) && e.ips.length > 0 && !e.podSelector && selectsNamespace(e),
      );
      if (handMade) refuseHandMade(holder, namespace, `EgressIP ${handMade.name}`, podSelector);
    },

    // So is an object selecting this namespace (by its labels, however written) other than this
    // assignment's own whose pods may overlap, naming who put its addresses there, and another
    // EgressIp of this deployment asking for such pods (both new at a first preview, neither in the
    // cluster yet).
    async conflicts({ holder, family, holderOwners }) {
      if (!namespace) return;
      const view = await planner.egressView();
      const own = objectFor(view, namespace);
      const mine = podSelector ? { matchLabels: podSelector } : undefined;
      const selectsNamespace = await namespaceSelection(planner, namespace);
      // Two namespace-wide objects are as before (one of this package: its owner records decide; one
      // made by hand: refused by adoptable, or taken over by adopt). One holding this holder's
      // addresses alone is the selection this update moves them out of.
      const others = view.egressIps.filter(
        (e) =>
          e.name !== own &&
          (mine !== undefined || e.podSelector !== undefined) &&
          selectsNamespace(e) &&
          podSelectorsOverlap(mine, e.podSelector),
      );
      for (const seen of others) {
        // As it is now: the view may be from before this update moved some of its addresses out.
        const raw = await readObject(kube, egressIpRef(seen.name));
        const other = raw ? readOvnEgressIp(raw) : undefined;
        if (!raw || !other) continue;
        const records = readOwners(raw, other.ips);
        if (isManaged(other) && recordedForOnly(records, other.ips, await holderOwners())) continue;
        const owners = [...new Set(Object.values(records).flat())];
        const selects = other.podSelector
          ? `pods ${JSON.stringify(other.podSelector)}`
          : describeSelection(undefined);
        throw new IpamError(
          "SCOPE_CONFLICT",
          `${holder}: EgressIP ${other.name} already serves ${selects} of namespace ${namespace}` +
            `${owners.length > 0 ? ` (its addresses are ${owners.join(", ")}'s)` : ""}, and this EgressIp's ` +
            `${selectionName(podSelector)} can select the same pods, which would get two egress addresses: ` +
            overlapAdvice,
        );
      }
      refuseOverlapInDeployment(kube.server, namespace, { holder, podSelector, family });
    },
  };
}
