import { IpamError } from "../../../core/ipam-error";
import { canonicalAddress } from "../../../allocator";
import { parseAddress } from "../../../allocator/address";
import { clusterView } from "../../../kube/cluster-identity";
import { editObject, listObjects, type KubeObject, type ObjectRef } from "../../../kube/object-edit";
import type { EgressIPProvisioner, Placement } from "../../egress-ip-provisioner";
import type { AdoptPresent, InstanceSettings } from "../../egress-ip-provisioner";
import {
  addressesWithin,
  api,
  readAntreaEgress,
  readEgressView,
  viewAddresses,
  type EgressView,
} from "../egress-view";
import type { AntreaProvisionerConfig } from "../../config/kube-provisioner-config";
import { plannerFor, type AddressGroup, type AddressLocations } from "../node-planner";
import {
  ownersAnnotation,
  ownersValue,
  readOwners,
  refuseTakenOver,
  refuseUnowned,
  withoutAddressOwner,
} from "../owners";
import { adoptedForAnnotation, namespaceNameLabel } from "../namespace-marks";
import { isManaged, managedBy } from "../managed-by";
import { shellCommand } from "../../../core/text";
import { antreaPlatformStatus } from "../platform-status";
import {
  adoptedEgress,
  antreaAddresses,
  readAntreaEgressFacts,
  type AntreaEgressFacts,
} from "./antrea-namespaces";
import { namespaceAddressesOf, namespaceFactsOf } from "../namespace-addresses";
import { refuseUnadoptable, takeoverTarget } from "./antrea-adopt";
import {
  claimedServings,
  namespaceEgresses,
  refuseAntreaSharing,
  refuseHandMadeEgress,
} from "./antrea-selections";
import { claimSelection } from "../pod-selection";
import { takenAddress } from "../../taken-address";
import { oncePerRequest } from "../../placement-request";

/**
 * The name of the Egress object holding one address of a namespace: `egress-ipam-<namespace>-<ip>`,
 * an IPv6 address written in full with `.` for `:` (as CloudPrivateIPConfig names are). The address
 * part never holds a `-` and a namespace never a `.`, so two namespace–address pairs never share a
 * name (with `-` for `:`, `x` + `1:2001::5` and `x-1` + `2001::5` would).
 */
export function antreaObjectName(namespace: string, ip: string): string {
  const { family, value } = parseAddress(ip);
  const text =
    family === 4
      ? canonicalAddress(ip)
      : Array.from({ length: 8 }, (_, i) =>
          ((value >> BigInt(112 - 16 * i)) & 0xffffn).toString(16).padStart(4, "0"),
        ).join(".");
  return `egress-ipam-${namespace}-${text}`;
}

/**
 * The `appliedTo` of a namespace's Egress objects: every Pod of the namespace, or those with the
 * EgressIp's `podSelector` labels (sorted, as the API server gives a map back).
 */
const appliedTo = (namespace: string, podSelector?: Record<string, string>) => ({
  namespaceSelector: { matchLabels: { [namespaceNameLabel]: namespace } },
  ...(podSelector
    ? {
        podSelector: {
          matchLabels: Object.fromEntries(
            Object.entries(podSelector).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
          ),
        },
      }
    : {}),
});
const egressRef = (name: string): ObjectRef => ({ apiVersion: api.antrea, kind: "Egress", name });
/** The namespace whose Pods (all, or some by label) an Egress object serves when it selects one by name. */
const servedNamespace = (e: ReturnType<typeof readAntreaEgress>) =>
  e.namespaceSelector?.matchLabels?.[namespaceNameLabel];

/** Where Antrea put the addresses (`status.egressNode`), and the namespace each Egress serves (its group). */
export function antreaLocations(view: EgressView): AddressLocations {
  const nodeOf = new Map<string, string>();
  const groupOf = new Map<string, string>();
  for (const e of view.antreaEgresses) {
    if (!e.ip) continue;
    if (e.node) nodeOf.set(e.ip, e.node);
    const ns = servedNamespace(e) ?? (isManaged(e.labels) ? e.annotations[adoptedForAnnotation] : undefined);
    if (ns) groupOf.set(e.ip, ns);
  }
  return { nodeOf, groupOf };
}

/**
 * The `antrea` provisioner: each address of a namespace is one cluster-scoped `Egress` object
 * (crd.antrea.io/v1beta1) named `egress-ipam-<namespace>-<address>`, with `egressIP` the address,
 * `appliedTo` the namespace (by `kubernetes.io/metadata.name`; with the EgressIp's `podSelector`,
 * only its pods) and, when set, `externalIPPool`.
 * Antrea puts the address on a Node and reports it in `status.egressNode`; the host planned is
 * where it is expected (the least loaded eligible Node of the domain), and refresh records where
 * Antrea put it. Writes are merge patches of `metadata` and `spec` carrying the `resourceVersion`
 * read, so Antrea's `status` is never overwritten. With `adopt: true`, an Egress written by hand
 * that serves the namespace becomes the one of its address as it is (see antrea-adopt.ts).
 */
export function antreaProvisioner(config: AntreaProvisionerConfig & InstanceSettings): EgressIPProvisioner {
  const planner = plannerFor(config);
  const { kube, nodes } = planner;
  const namespace = config.namespace;
  const owner = config.owner;
  const podSelector = config.podSelector;

  const ns = (doing: string): string => {
    if (!namespace) {
      throw new IpamError(
        "INVALID_INPUT",
        `${doing}: the antrea provisioner writes Egress objects that select the namespace, and no namespace ` +
          `was given: set the EgressIp's namespace`,
      );
    }
    return namespace;
  };

  const choose = async (zone: string, ip: string | undefined, signal?: AbortSignal) => {
    const view = await planner.egressView();
    const where = ip ? antreaLocations(view).nodeOf.get(ip) : undefined;
    if (where && (await nodes.serves(where, zone, signal))) return where;
    const group: AddressGroup | undefined = namespace
      ? {
          key: namespace,
          name: `namespace ${namespace}`,
          rule:
            `each of a namespace's Egress addresses is planned on a Node of its own, spreading its traffic: ` +
            `give failure domain "${zone}" another Node, or place fewer of ${namespace}'s addresses there`,
        }
      : undefined;
    return planner.choose({ zone, ip, group, locations: antreaLocations(view) }, signal);
  };

  const listEgresses = async () => (await listObjects(kube, api.antrea, "Egress")).map(readAntreaEgressFacts);
  /** The Egresses as the refusals of one request see them: listed once for both. */
  const egressesOf = oncePerRequest(listEgresses);
  /** The Egress holding `ip` of the namespace: one adopted for it, else {@link antreaObjectName}. */
  const nameFor = (egresses: AntreaEgressFacts[], name: string, ip: string) =>
    adoptedEgress(egresses, name, ip) ?? antreaObjectName(name, ip);

  /**
   * Creates or updates the address's Egress object, this assignment recorded as its owner: one that
   * lists the address for another owner is refused unless `adopt` lets it (see refuseUnowned); one
   * not managed by this package only with `adopt: true`, which takes over the Egress written by hand
   * that has the address as it is (labelled ours and annotated with the namespace; its name and
   * appliedTo stay, see takeoverTarget).
   */
  const put = async (ip: string, doing: string, adopt: AdoptPresent | undefined, signal?: AbortSignal) => {
    const name = ns(doing);
    const egresses = await listEgresses();
    const own = nameFor(egresses, name, ip);
    // A pod selector's Egresses are its own: adopt takes over what serves the whole namespace.
    const adopting = adopt === true && !podSelector;
    const target = await takeoverTarget(kube, egresses, name, ip, own, adopting, config.externalIPPool);
    const objectName = target.name;
    const other = egresses.find((e) => e.ips.includes(ip) && e.name !== objectName);
    if (other) {
      throw takenAddress(ip, `${doing}: Egress ${other.name} already has egressIP ${ip}`);
    }
    const spec = {
      appliedTo: appliedTo(name, podSelector),
      egressIP: ip,
      ...(config.externalIPPool ? { externalIPPool: config.externalIPPool } : {}),
    };
    await editObject(
      kube,
      egressRef(objectName),
      doing,
      (current: KubeObject | undefined) => {
        const record = (owners: Record<string, string[]>) =>
          ownersValue(owner ? { ...owners, [ip]: [owner] } : owners);
        if (!current) {
          if (target.takeOver) {
            throw new IpamError(
              "NOT_FOUND",
              `${doing}: Egress ${objectName}, which had ${ip}, was deleted while it was being adopted; run pulumi up again`,
            );
          }
          const value = record({});
          return {
            create: {
              metadata: {
                name: objectName,
                labels: managedBy,
                ...(value === null ? {} : { annotations: { [ownersAnnotation]: value } }),
              },
              spec,
            } as KubeObject,
          };
        }
        if (!isManaged(current.metadata?.labels ?? {}) && adopt !== true) {
          throw new IpamError(
            "UNMANAGED_OBJECT",
            `${doing}: Egress ${objectName} exists and is not managed by pulumi-egress-ipam; rename or delete it, ` +
              `or set adopt: true on the EgressIp to take it over, then run pulumi up again`,
          );
        }
        const owners = readOwners(current, [ip]);
        if (owner) refuseUnowned(owners, ip, owner, adopt, `Egress ${objectName}`);
        const value = record(owners);
        const was = (current.spec ?? {}) as Record<string, unknown>;
        const annotations = current.metadata?.annotations ?? {};
        // An Egress taken over keeps its name and appliedTo (one that serves the namespace alone),
        // and says which namespace it serves (even under our own name: its appliedTo is not ours).
        const adopted = target.takeOver || annotations[adoptedForAnnotation] === name;
        const marked = target.takeOver;
        const specChanges: Record<string, unknown> = {
          ...(adopted || sortedJson(was.appliedTo) === sortedJson(spec.appliedTo)
            ? {}
            : { appliedTo: replacing(was.appliedTo, spec.appliedTo) }),
          ...(was.egressIP === ip ? {} : { egressIP: ip }),
          ...(was.externalIPPool === config.externalIPPool
            ? {}
            : { externalIPPool: config.externalIPPool ?? null }),
        };
        const same =
          Object.keys(specChanges).length === 0 &&
          (annotations[ownersAnnotation] ?? null) === value &&
          (!marked || annotations[adoptedForAnnotation] === name) &&
          isManaged(current.metadata?.labels ?? {});
        if (same) return undefined;
        return {
          mergePatch: {
            metadata: {
              labels: managedBy,
              annotations: { [ownersAnnotation]: value, ...(marked ? { [adoptedForAnnotation]: name } : {}) },
            },
            ...(Object.keys(specChanges).length === 0 ? {} : { spec: specChanges }),
          },
        };
      },
      undefined,
      signal,
    );
    return name;
  };

  return {
    findHostForNewIP: (zone, signal) => choose(zone, undefined, signal),
    findHostForIP: (ip, zone, signal) => choose(zone, canonicalAddress(ip), signal),
    hostServes: (host, zone, signal) => nodes.serves(host, zone, signal),
    cluster: () => clusterView(kube),

    async addSpecifiedIP(rawIp, host, signal) {
      const ip = canonicalAddress(rawIp);
      const doing = `writing Egress for ${ip} of namespace ${namespace}`;
      planner.record(ip, host, await put(ip, doing, config.adoptPresent, signal));
    },

    async addRandomIP(host) {
      throw new IpamError(
        "INVALID_INPUT",
        `the antrea provisioner cannot pick an address for node ${host}: give the EgressIp a pool, which plans it`,
      );
    },

    async removeIP(rawIp, _host, signal) {
      const ip = canonicalAddress(rawIp);
      const name = ns(`removing ${ip}`);
      const objectName = nameFor(await listEgresses(), name, ip);
      let tookOff = true;
      await editObject(
        kube,
        egressRef(objectName),
        `deleting Egress ${objectName}`,
        (current) => {
          tookOff = true;
          if (!current || !isManaged(current.metadata?.labels ?? {})) return undefined;
          // An address adopted since is the adopter's: its Egress stays (see withoutAddressOwner).
          const owners = readOwners(current, [ip]);
          const next = withoutAddressOwner(owners, ip, owner);
          tookOff = next.takeOff;
          if (next.takeOff) return { delete: true };
          const value = ownersValue(next.owners);
          return value === ownersValue(owners)
            ? undefined
            : { mergePatch: { metadata: { annotations: { [ownersAnnotation]: value } } } };
        },
        undefined,
        signal,
      );
      if (tookOff) planner.record(ip, undefined);
    },

    async moveIP(rawIp, _oldHost, newHost, signal) {
      // Antrea moves addresses itself; the object only has to be there. A move is an update:
      // never of another owner's address.
      const ip = canonicalAddress(rawIp);
      const doing = `keeping the Egress of ${ip}`;
      planner.record(ip, newHost, await put(ip, doing, config.adoptPresent ?? "unrecorded", signal));
    },

    async checkIP(rawIp, host) {
      const ip = canonicalAddress(rawIp);
      const name = ns(`checking ${ip}`);
      const objects = await listObjects(kube, api.antrea, "Egress");
      const objectName = nameFor(objects.map(readAntreaEgressFacts), name, ip);
      const object = objects.find((o) => o.metadata?.name === objectName);
      const egress = object ? readAntreaEgress(object) : undefined;
      const spec = (object?.spec ?? {}) as Record<string, unknown>;
      // An Egress taken over by adopt keeps the appliedTo it had (one that serves the namespace alone).
      const adopted = object?.metadata?.annotations?.[adoptedForAnnotation] === name;
      const drift = !egress
        ? "no such object"
        : egress.ip !== ip
          ? `its egressIP is ${JSON.stringify(spec.egressIP)}`
          : !adopted && sortedJson(spec.appliedTo) !== sortedJson(appliedTo(name, podSelector))
            ? "its appliedTo was changed"
            : spec.externalIPPool !== config.externalIPPool
              ? `its externalIPPool is ${JSON.stringify(spec.externalIPPool ?? null)}, not ${JSON.stringify(config.externalIPPool ?? null)}`
              : undefined;
      if (drift) {
        throw new IpamError(
          "DRIFT",
          `egress IP ${ip}: Egress ${objectName} is not as written (${drift}); run pulumi up to put it back`,
        );
      }
      refuseTakenOver(readOwners(object, [ip]), ip, owner, `Egress ${objectName}`);
      // No status at all: Antrea has not reported yet, which is not drift (see platform-status.ts).
      const status = antreaPlatformStatus(object!, ip);
      if (status.state === "unreported") return;
      if (status.state === "unplaced") {
        throw new IpamError(
          "DRIFT",
          `Antrea has not put egress IP ${ip} on any node (Egress ${objectName}: ${status.why}); ` +
            (config.externalIPPool
              ? `check that ExternalIPPool ${config.externalIPPool} holds ${ip} and selects Nodes of its failure domain`
              : `without externalIPPool the address must be configured on a Node's interface`),
        );
      }
      if (status.node !== host) {
        throw new IpamError(
          "DRIFT",
          `Antrea put egress IP ${ip} on node ${status.node}, not ${host}; run pulumi up to record it`,
        );
      }
    },

    // Which Nodes may carry the addresses is the ExternalIPPool's nodeSelector: nothing to assign.
    assignCIDR: async () => {},

    async usedAddresses(cidrs) {
      return addressesWithin(viewAddresses(await readEgressView(kube)), cidrs);
    },

    placements: (cidrs) => antreaPlacements(config, cidrs),
    placementOwners: "named",

    namespaceAddresses: (name, signal) =>
      namespaceAddressesOf(planner, name, undefined, signal, async (_view, facts) =>
        antreaAddresses(await listEgresses(), facts),
      ),

    // An Egress written by hand applying to every Pod of the namespace, unless adopt takes it over;
    // with adopt, one that cannot be taken over as it is.
    async adoptable(request) {
      const name = ns(`checking what ${request.holder} serves`);
      const egresses = await egressesOf(request);
      const facts = await namespaceFactsOf(planner, name);
      if (!facts) return;
      const adopting = config.adoptPresent === true;
      refuseHandMadeEgress(egresses, facts, podSelector, adopting, request.holder);
      if (adopting) await refuseUnadoptable(kube, egresses, facts, config.externalIPPool, request.holder);
    },

    // What the namespace's Egresses cannot share: Pods another Egress or EgressIp may serve with
    // another selection or the other family (of this deployment first: both may be new).
    async conflicts(request) {
      const { holder, ip, family } = request;
      const name = ns(`checking what ${holder} serves`);
      const claims = claimSelection(kube.server, name, { holder, podSelector, family });
      refuseAntreaSharing(request, name, podSelector, claimedServings(claims));
      const servings = namespaceEgresses(await egressesOf(request), name, ip);
      const mine = servings.some((s) => s.records) ? await request.holderOwners() : new Set<string>();
      refuseAntreaSharing(request, name, podSelector, servings, mine);
    },
  };
}

/**
 * Where `check` sees Antrea's addresses: each Egress's `egressIP` on its `status.egressNode`, with
 * the owner record of an Egress this package manages.
 */
async function antreaPlacements(config: AntreaProvisionerConfig, cidrs: string[]): Promise<Placement[]> {
  const { kube } = plannerFor(config);
  const objects = await listObjects(kube, api.antrea, "Egress");
  const egresses = objects.map(readAntreaEgress);
  const inside = new Set(
    addressesWithin(
      egresses.flatMap((e) => (e.ip ? [e.ip] : [])),
      cidrs,
    ),
  );
  return egresses.flatMap((e, i): Placement[] => {
    if (!e.ip || !inside.has(e.ip)) return [];
    const raw = objects[i]!;
    const removeCommand = shellCommand(
      "kubectl",
      "--context",
      kube.context,
      "delete",
      "egress.crd.antrea.io",
      e.name,
    );
    const owners = isManaged(e.labels)
      ? readOwners({ metadata: { annotations: e.annotations } }, [e.ip])[e.ip]
      : undefined;
    return [
      {
        ip: e.ip,
        ...(e.node ? { host: e.node } : { host: "(not placed yet)", awaitingHost: true }),
        platformPlaced: true,
        platform: antreaPlatformStatus(raw, e.ip),
        removeCommand,
        ...(owners ? { owners } : {}),
      },
    ];
  });
}

/** JSON with every object's keys sorted: the API server gives maps back in its own key order. */
function sortedJson(value: unknown): string {
  return JSON.stringify(value ?? null, (_key, v: unknown) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

/**
 * The JSON merge patch that makes `current` equal `desired`: a merge patch merges maps, so a key
 * that `current` has and `desired` lacks (a label added by hand to a selector) is set to null.
 */
function replacing(current: unknown, desired: unknown): unknown {
  const isMap = (v: unknown): v is Record<string, unknown> =>
    !!v && typeof v === "object" && !Array.isArray(v);
  if (!isMap(current) || !isMap(desired)) return desired;
  const patch: Record<string, unknown> = {};
  for (const key of Object.keys(current)) if (!(key in desired)) patch[key] = null;
  for (const [key, value] of Object.entries(desired)) patch[key] = replacing(current[key], value);
  return patch;
}
