import { IpamError } from "../../../core/ipam-error";
import { canonicalAddress } from "../../../allocator";
import { addressFamily } from "../../../allocator/address";
import { clusterView } from "../../../kube/cluster-identity";
import { kubeFailure } from "../../../kube/kube-errors";
import { editObject, listObjects, type KubeObject } from "../../../kube/object-edit";
import type { AdoptPresent, EgressIPProvisioner, InstanceSettings } from "../../egress-ip-provisioner";
import { compensated } from "../address-lists";
import { namespacePolicyName, policyWrite, refuseUnadoptable, takeoverTarget } from "./cilium-adopt";
import {
  ciliumAddresses,
  needsNodes,
  readCiliumPolicyFacts,
  type CiliumPolicyFacts,
} from "./cilium-namespaces";
import {
  ciliumLocations,
  ciliumObjectName,
  ciliumPlacements,
  isManaged,
  policyRef,
  policySpec,
  type PolicySelection,
} from "./cilium-policy";
import { refuseSplitScope } from "./cilium-scope";
import { everyDestination, sameScope, scopeOf } from "./cilium-destinations";
import { refuseHandMadePolicy, refuseSelectionOverlap } from "./cilium-selections";
import { refuseOverlapInDeployment } from "../pod-selection";
import {
  addressesWithin,
  api,
  readCiliumPolicy,
  readEgressView,
  viewAddresses,
  type CiliumGateway,
} from "../egress-view";
import type { CiliumProvisionerConfig } from "../../config/kube-provisioner-config";
import { namespaceAddressesOf, namespaceFactsOf } from "../namespace-addresses";
import { nodeCloud } from "../node-cloud";
import { plannerFor, type AddressGroup } from "../node-planner";
import type { KubeNode } from "../nodes";
import { adoptedForAnnotation } from "../namespace-marks";
import {
  ownersValue,
  readOwners,
  refuseTakenOver,
  refuseUnowned,
  withoutAddressOwner,
  type Owners,
} from "../owners";
import { takenAddress } from "../../taken-address";
import { oncePerRequest } from "../../placement-request";

export { ciliumObjectName } from "./cilium-policy";

/**
 * The `cilium` provisioner (Cilium egress gateway): the addresses of a namespace are the gateways of
 * one cluster-scoped CiliumEgressGatewayPolicy (cilium.io/v2) per family and pod selection, named
 * `egress-ipam-<namespace>` (IPv4, every pod; `.<hash>` for a `podSelector`, `.ipv6` for IPv6),
 * selecting the namespace's Pods (`io.kubernetes.pod.namespace`, and the selector's labels), sending
 * `destinations` minus `excluded` of its family out through one gateway per address: `egressIP` the address, `nodeSelector` the chosen
 * Node by `kubernetes.io/hostname` (so Cilium's own choice among several matching Nodes never
 * applies). `egressGateways` lists every gateway (Cilium spreads the namespace's Pods over them) and
 * `egressGateway` repeats the first (required by the schema; what a Cilium without
 * `egressGateways` uses). The Node is chosen here, as for `ocp-static`: the least loaded eligible
 * Node of the domain; one that goes NotReady or leaves the domain is replaced on the next `up`.
 * With `cloud`, the address is first a secondary IP of the Node's EC2 instance, undone when the
 * policy write fails, and moved with the gateway. With `adopt: true`, a policy written by hand that
 * serves the namespace becomes its policy as it is (see cilium-adopt.ts).
 */
export function ciliumProvisioner(config: CiliumProvisionerConfig & InstanceSettings): EgressIPProvisioner {
  const planner = plannerFor(config);
  const { kube, nodes } = planner;
  const namespace = config.namespace;
  const owner = config.owner;
  const podSelector = config.podSelector;
  /** The policy an address goes in: of its family, for this EgressIp's pods. */
  const selectionOf = (ip: string): PolicySelection => ({
    family: addressFamily(ip),
    ...(podSelector ? { podSelector } : {}),
  });
  const onCloud = nodeCloud(config.cloud, kube, owner, config.adoptPresent);
  const cloud = onCloud?.cloud;
  const instanceOf = (host: string) => onCloud!.instanceOf(host);

  const ns = (doing: string): string => {
    if (!namespace) {
      throw new IpamError(
        "INVALID_INPUT",
        `${doing}: the cilium provisioner writes a CiliumEgressGatewayPolicy that selects the namespace, and no ` +
          `namespace was given: set the EgressIp's namespace`,
      );
    }
    return namespace;
  };

  const unusable = (node: KubeNode) => onCloud?.unusable(node) ?? "";

  /** The policy an address goes in, as planning keys it (see ciliumLocations). */
  const groupKey = (ip: string) => namespace && ciliumObjectName(namespace, selectionOf(ip));
  const group = (zone: string, ip: string | undefined): AddressGroup | undefined => {
    const key = ip && groupKey(ip);
    if (!key) return undefined;
    return {
      key,
      name: `CiliumEgressGatewayPolicy ${key}`,
      rule:
        `each gateway of a policy is a Node of its own: give failure domain "${zone}" another gateway Node ` +
        `(one the provisioner's nodeSelector matches), or place fewer of ${key}'s addresses there`,
    };
  };

  const choose = async (zone: string, ip: string | undefined, signal?: AbortSignal) => {
    const view = await planner.egressView();
    return planner.choose(
      { zone, ip, group: group(zone, ip), unusable, locations: ciliumLocations(view) },
      signal,
    );
  };

  const specFor = (name: string, gateways: CiliumGateway[], family: 4 | 6) =>
    policySpec(name, gateways, scopeOf(config, family), podSelector);

  /** Every Node with its labels (a gateway's nodeSelector may match any of them). */
  const allNodes = async () => {
    const list = await kube.core.listNode().catch((err: unknown) => {
      throw kubeFailure("listing Nodes (which a gateway's nodeSelector matches)", err, kube);
    });
    return list.items.map((n) => ({ name: n.metadata?.name ?? "", labels: n.metadata?.labels ?? {} }));
  };
  const listPolicies = async (): Promise<CiliumPolicyFacts[]> =>
    (await listObjects(kube, api.cilium, "CiliumEgressGatewayPolicy")).map(readCiliumPolicyFacts);
  /** The policies as the refusals of one request see them: listed once for all three. */
  const policiesOf = oncePerRequest(listPolicies);

  /**
   * Edits the namespace's policy of `selection`, `target` (its own, one adopted for it, or with
   * `takeOver` one written by hand that adopt takes over): `change` gets its gateways and owner
   * record and returns both, or undefined for no change; the policy is created with its first
   * gateway and deleted with its last. A policy taken over is labelled ours and annotated with the
   * namespace; from then on it keeps its selectors and every gateway entry that still says the same
   * (see adoptedSpec).
   */
  const editPolicy = (
    name: string,
    target: { name: string; takeOver: boolean },
    selection: PolicySelection,
    doing: string,
    change: (
      gateways: CiliumGateway[],
      owners: Owners,
    ) => { gateways: CiliumGateway[]; owners: Owners } | undefined,
    signal?: AbortSignal,
  ) => {
    const objectName = target.name;
    return editObject(
      kube,
      policyRef(objectName),
      doing,
      (current: KubeObject | undefined) => {
        const managed = isManaged(current?.metadata?.labels ?? {});
        if (current && !managed && !target.takeOver) {
          throw new IpamError(
            "UNMANAGED_OBJECT",
            `${doing}: CiliumEgressGatewayPolicy ${objectName} exists and is not managed by pulumi-egress-ipam; ` +
              `rename or delete it, or set adopt: true on the EgressIp to take it over, then run pulumi up again`,
          );
        }
        const before = current ? readCiliumPolicy(current).gateways.filter((g) => g.ip) : [];
        const after = change(
          before,
          readOwners(
            current,
            before.map((g) => g.ip),
          ),
        );
        if (!after) return undefined;
        if (after.gateways.length === 0) return current ? { delete: true } : undefined;
        return policyWrite(
          current,
          target,
          name,
          after.gateways,
          ownersValue(after.owners),
          config,
          doing,
          selection,
        );
      },
      undefined,
      signal,
    );
  };

  /**
   * Pins `ip` to `host` in the namespace's policy `target` (adding its gateway, or moving it),
   * owned by this assignment: a gateway of another owner's is refused unless `adopt` lets it (see
   * refuseUnowned).
   */
  const pin = (
    ip: string,
    host: string,
    target: { name: string; takeOver: boolean },
    doing: string,
    adopt: AdoptPresent | undefined,
    signal?: AbortSignal,
  ) => {
    const name = ns(doing);
    return editPolicy(
      name,
      target,
      selectionOf(ip),
      doing,
      (gateways, owners) => {
        if (gateways.some((g) => g.ip === ip) && owner) {
          refuseUnowned(owners, ip, owner, adopt, `CiliumEgressGatewayPolicy ${target.name}`);
        }
        const next = gateways.some((g) => g.ip === ip)
          ? gateways.map((g) => (g.ip === ip ? { ip, node: host } : g))
          : [...gateways, { ip, node: host }];
        return { gateways: next, owners: owner ? { ...owners, [ip]: [owner] } : owners };
      },
      signal,
    ).then(() => name);
  };

  /**
   * The policy that is to hold `ip` of `name` (see takeoverTarget); refuses an address another
   * policy (ours for another namespace, selection or family, or foreign) already uses.
   */
  const targetFor = async (ip: string, name: string, adopt: AdoptPresent | undefined) => {
    const policies = await listPolicies();
    const target = await takeoverTarget(kube, policies, name, ip, adopt === true, config, podSelector);
    const other = policies.find((p) => p.name !== target.name && p.gateways.some((g) => g.ip === ip));
    return { target, other };
  };

  return {
    findHostForNewIP: (zone, signal) => choose(zone, undefined, signal),
    findHostForIP: (ip, zone, signal) => choose(zone, canonicalAddress(ip), signal),
    cluster: () => clusterView(kube),

    async hostServes(host, zone, signal) {
      if (!(await nodes.serves(host, zone, signal))) return false;
      return unusable((await nodes.find(host, signal))!) === "";
    },

    async addSpecifiedIP(rawIp, host, signal) {
      const ip = canonicalAddress(rawIp);
      const name = ns(`putting ${ip} on gateway ${host}`);
      const { target, other } = await targetFor(ip, name, config.adoptPresent);
      if (other) {
        throw takenAddress(
          ip,
          `cannot give ${ip} to namespace ${name}: CiliumEgressGatewayPolicy ${other.name} already uses it as an egressIP`,
        );
      }
      const write = () =>
        pin(ip, host, target, `pinning ${ip} to gateway ${host}`, config.adoptPresent, signal);
      if (!cloud) await write();
      else {
        const instance = await instanceOf(host);
        await cloud.addSpecifiedIP(ip, instance, signal);
        await compensated(write, () => cloud.removeIP(ip, instance), {
          step: `writing CiliumEgressGatewayPolicy ${target.name} after making ${ip} a secondary IP of instance ${instance}`,
          undone: `the secondary IP ${ip} was taken off instance ${instance} again`,
          leftover:
            `${ip} is still a secondary IP of instance ${instance} (node ${host}) and in no policy: run pulumi up ` +
            `again to finish, or remove it with aws ec2 unassign-private-ip-addresses`,
        });
      }
      planner.record(ip, host, groupKey(ip));
    },

    async addRandomIP(host) {
      throw new IpamError(
        "INVALID_INPUT",
        `the cilium provisioner cannot pick an address for node ${host}: give the EgressIp a pool, which plans it`,
      );
    },

    async removeIP(rawIp, host, signal) {
      const ip = canonicalAddress(rawIp);
      let tookOff = true;
      if (namespace) {
        const selection = selectionOf(ip);
        const target = {
          name: namespacePolicyName(await listPolicies(), namespace, selection),
          takeOver: false,
        };
        await editPolicy(
          namespace,
          target,
          selection,
          `removing ${ip} from CiliumEgressGatewayPolicy ${target.name}`,
          (gateways, owners) => {
            tookOff = true;
            if (!gateways.some((g) => g.ip === ip) && !(ip in owners)) return undefined;
            // An address adopted since is the adopter's: its gateway (and secondary IP) stays.
            const next = withoutAddressOwner(owners, ip, owner);
            tookOff = next.takeOff;
            if (!next.takeOff) {
              return ownersValue(next.owners) === ownersValue(owners)
                ? undefined
                : { gateways, owners: next.owners };
            }
            return { gateways: gateways.filter((g) => g.ip !== ip), owners: next.owners };
          },
          signal,
        );
      }
      if (!tookOff) return;
      if (cloud) await cloud.removeIP(ip, await instanceOf(host), signal);
      planner.record(ip, undefined);
    },

    async moveIP(rawIp, oldHost, newHost, signal) {
      const ip = canonicalAddress(rawIp);
      const name = ns(`moving ${ip} to gateway ${newHost}`);
      // A move is an update: never of another owner's address.
      const adopt = config.adoptPresent ?? "unrecorded";
      const { target } = await targetFor(ip, name, adopt);
      const write = () => pin(ip, newHost, target, `moving ${ip} to gateway ${newHost}`, adopt, signal);
      if (!cloud) await write();
      else {
        // The instance first: the policy never names a gateway that lacks the address for long.
        const [from, to] = await Promise.all([instanceOf(oldHost), instanceOf(newHost)]);
        await cloud.moveIP(ip, from, to, signal);
        await compensated(write, () => cloud.moveIP(ip, to, from), {
          step: `moving the gateway of ${ip} to ${newHost} after moving the secondary IP to instance ${to}`,
          undone: `the secondary IP ${ip} was moved back to instance ${from} (gateway ${oldHost})`,
          leftover: `${ip} is a secondary IP of instance ${to} while the policy pins it to ${oldHost}: run pulumi up again`,
        });
      }
      planner.record(ip, newHost, groupKey(ip));
    },

    async checkIP(rawIp, host, signal) {
      const ip = canonicalAddress(rawIp);
      const name = ns(`checking ${ip}`);
      const view = await readEgressView(kube);
      const objectName = namespacePolicyName(view.ciliumPolicies, name, selectionOf(ip));
      const policy = view.ciliumPolicies.find((p) => p.name === objectName);
      const gateway = policy?.gateways.find((g) => g.ip === ip);
      if (!gateway) {
        throw new IpamError(
          "DRIFT",
          `egress IP ${ip} is not a gateway of CiliumEgressGatewayPolicy ${objectName}${policy ? "" : " (no such policy)"}; ` +
            `run pulumi up to put it back`,
        );
      }
      const raw = (await kube.objects.read({
        ...policyRef(objectName),
        metadata: { name: objectName },
      })) as KubeObject;
      const record = readOwners(
        raw,
        policy!.gateways.map((g) => g.ip),
      );
      refuseTakenOver(record, ip, owner, `CiliumEgressGatewayPolicy ${objectName}`);
      if (gateway.node !== host) {
        throw new IpamError(
          "DRIFT",
          `CiliumEgressGatewayPolicy ${objectName} pins ${ip} to ${gateway.node ? `node ${gateway.node}` : "no single node"}, ` +
            `not ${host}; run pulumi up to put it back`,
        );
      }
      const family = addressFamily(ip);
      const want = specFor(name, policy!.gateways, family);
      const spec = (raw.spec ?? {}) as Record<string, unknown>;
      const same = (a: unknown, b: unknown) => sortedJson(a ?? null) === sortedJson(b ?? null);
      // A policy taken over by adopt keeps its own selectors (ones that serve the namespace alone).
      const adopted = raw.metadata?.annotations?.[adoptedForAnnotation] === name;
      const strings = (v: unknown) =>
        Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [];
      const written = { destinations: strings(spec.destinationCIDRs), excluded: strings(spec.excludedCIDRs) };
      if (
        adopted
          ? !sameScope(written, scopeOf(config, family))
          : !same(spec.selectors, want.selectors) ||
            !same(spec.destinationCIDRs, want.destinationCIDRs) ||
            !same(spec.excludedCIDRs, want.excludedCIDRs)
      ) {
        throw new IpamError(
          "DRIFT",
          `CiliumEgressGatewayPolicy ${objectName} was changed (its selectors or destinations are not as written); ` +
            `run pulumi up to put it back`,
        );
      }
      if (cloud) await cloud.checkIP(ip, await instanceOf(host), signal);
    },

    async assignCIDR() {},

    async usedAddresses(cidrs, signal) {
      const seen = viewAddresses(await readEgressView(kube));
      const inCloud = cloud?.usedAddresses ? await cloud.usedAddresses(cidrs, signal) : [];
      return addressesWithin([...seen, ...inCloud], cidrs);
    },

    // An address of a family the destinations hold no CIDR of: its policy would send nothing.
    async validate({ holder, ip, family }) {
      ns(`checking the destinations of ${holder}`);
      if (scopeOf(config, family).destinations.length === 0) {
        throw new IpamError(
          "INVALID_INPUT",
          `${holder} places ${ip}, an IPv${family} address, and the provisioner's destinations ` +
            `(${(config.destinations ?? []).join(", ")}) hold no IPv${family} CIDR: Cilium sends a family's traffic ` +
            `through an egressIP of that family, so its policy would send nothing; add IPv${family} destinations ` +
            `(e.g. "${everyDestination[family]}") or place IPv${family === 4 ? 6 : 4} only (families: ` +
            `"ipv${family === 4 ? 6 : 4}")`,
        );
      }
    },

    // A policy made by hand sending out every pod of the namespace for the same family, unless
    // adopt takes it over; with adopt, one that cannot be taken over as it is.
    async adoptable(request) {
      const { holder, family } = request;
      const name = ns(`checking the destinations of ${holder}`);
      const policies = await policiesOf(request);
      const facts = await namespaceFactsOf(planner, name);
      if (!facts) return;
      if (config.adoptPresent === true) await refuseUnadoptable(kube, policies, facts, config, holder);
      refuseHandMadePolicy(policies, facts, family, podSelector, config.adoptPresent === true, holder);
    },

    // A scope other than its other EgressIps', pods another policy may send out for the same
    // family (in the cluster, or asked by another EgressIp of the deployment).
    async conflicts(request) {
      const { holder, family } = request;
      const name = ns(`checking the destinations of ${holder}`);
      const policies = await policiesOf(request);
      const own = namespacePolicyName(policies, name, { family, ...(podSelector ? { podSelector } : {}) });
      await refuseSplitScope(kube, name, config, holder, owner, own, family);
      await refuseSelectionOverlap(policies, name, own, family, podSelector, request);
      refuseOverlapInDeployment(kube.server, name, { holder, podSelector, family }, true);
    },

    namespaceAddresses: (name, signal) =>
      namespaceAddressesOf(planner, name, undefined, signal, async (_view, facts) => {
        const policies = await listPolicies();
        return ciliumAddresses(policies, facts, needsNodes(policies, facts) ? await allNodes() : []);
      }),

    placements: async (cidrs) => ciliumPlacements(await readEgressView(kube), cidrs, kube.context),
    placementOwners: "named",
    ...(onCloud ? { cloudPlacements: onCloud.placements } : {}),
  };
}

/** JSON with every object's keys sorted: the API server gives maps back in its own key order. */
function sortedJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}
