import { IpamError } from "../../core/ipam-error";
import { canonicalAddress } from "../../allocator";
import { clusterView } from "../../kube/cluster-identity";
import { editObject, type KubeObject } from "../../kube/object-edit";
import type { EgressIPProvisioner } from "../egress-ip-provisioner";
import type { AdoptPresent, InstanceSettings } from "../egress-ip-provisioner";
import { compensated } from "./address-lists";
import {
  ciliumLocations,
  ciliumObjectName,
  ciliumPlacements,
  isManaged,
  policyRef,
  policySpec,
} from "./cilium-policy";
import {
  addressesWithin,
  readCiliumPolicy,
  readEgressView,
  viewAddresses,
  type CiliumGateway,
  type EgressView,
} from "./egress-view";
import type { CiliumProvisionerConfig } from "./kube-provisioner-config";
import { refuseSplitScope } from "./cilium-scope";
import { plannerFor } from "./node-planner";
import type { KubeNode } from "./nodes";
import { nodeCloud } from "./node-cloud";
import { managedBy } from "./ovn";

export { ciliumObjectName } from "./cilium-policy";
import {
  ownersAnnotation,
  ownersValue,
  readOwners,
  refuseTakenOver,
  refuseUnowned,
  withoutAddressOwner,
  type Owners,
} from "./owners";

/**
 * The `cilium` provisioner (Cilium egress gateway): the addresses of a namespace are the gateways of
 * one cluster-scoped CiliumEgressGatewayPolicy (cilium.io/v2) named `egress-ipam-<namespace>`,
 * selecting the namespace's Pods (`io.kubernetes.pod.namespace`), sending `destinations` minus
 * `excluded` out through one gateway per address: `egressIP` the address, `nodeSelector` the chosen
 * Node by `kubernetes.io/hostname` (so Cilium's own choice among several matching Nodes never
 * applies). `egressGateways` lists every gateway (Cilium spreads the namespace's Pods over them) and
 * `egressGateway` repeats the first (required by the schema; what a Cilium without
 * `egressGateways` uses). The Node is chosen here, as for `ocp-static`: the least loaded eligible
 * Node of the domain; one that goes NotReady or leaves the domain is replaced on the next `up`.
 * With `cloud`, the address is first a secondary IP of the Node's EC2 instance, undone when the
 * policy write fails, and moved with the gateway.
 */
export function ciliumProvisioner(config: CiliumProvisionerConfig & InstanceSettings): EgressIPProvisioner {
  const planner = plannerFor(config);
  const { kube, nodes } = planner;
  const namespace = config.namespace;
  const owner = config.owner;
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

  const choose = async (zone: string, ip: string | undefined, signal?: AbortSignal) => {
    const view = await planner.egressView();
    return planner.choose({ zone, ip, namespace, unusable, locations: ciliumLocations(view) }, signal);
  };

  const specFor = (name: string, gateways: CiliumGateway[]) => policySpec(name, gateways, config);

  /**
   * Edits the namespace's policy: `change` gets its gateways and owner record and returns both, or
   * undefined for no change; the policy is created with its first gateway and deleted with its last.
   */
  const editPolicy = (
    name: string,
    doing: string,
    takeOver: boolean,
    change: (
      gateways: CiliumGateway[],
      owners: Owners,
    ) => { gateways: CiliumGateway[]; owners: Owners } | undefined,
    signal?: AbortSignal,
  ) => {
    const objectName = ciliumObjectName(name);
    return editObject(
      kube,
      policyRef(objectName),
      doing,
      (current: KubeObject | undefined) => {
        if (current && !isManaged(current.metadata?.labels ?? {}) && !takeOver) {
          throw new IpamError(
            "UNMANAGED_OBJECT",
            `${doing}: CiliumEgressGatewayPolicy ${objectName} exists and is not managed by pulumi-egress-ipam; ` +
              `rename or delete it, then run pulumi up again`,
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
        const record = ownersValue(after.owners);
        const spec = specFor(name, after.gateways);
        if (!current) {
          const { excludedCIDRs, ...rest } = spec;
          return {
            create: {
              metadata: {
                name: objectName,
                labels: managedBy,
                ...(record === null ? {} : { annotations: { [ownersAnnotation]: record } }),
              },
              spec: excludedCIDRs ? spec : rest,
            } as KubeObject,
          };
        }
        return {
          mergePatch: { metadata: { labels: managedBy, annotations: { [ownersAnnotation]: record } }, spec },
        };
      },
      undefined,
      signal,
    );
  };

  /**
   * Pins `ip` to `host` in the namespace's policy (adding its gateway, or moving it), owned by this
   * assignment: a gateway of another owner's is refused unless `adopt` lets it (see refuseUnowned).
   */
  const pin = (
    ip: string,
    host: string,
    doing: string,
    adopt: AdoptPresent | undefined,
    signal?: AbortSignal,
  ) => {
    const name = ns(doing);
    return editPolicy(
      name,
      doing,
      false,
      (gateways, owners) => {
        if (gateways.some((g) => g.ip === ip) && owner) {
          refuseUnowned(owners, ip, owner, adopt, `CiliumEgressGatewayPolicy ${ciliumObjectName(name)}`);
        }
        const next = gateways.some((g) => g.ip === ip)
          ? gateways.map((g) => (g.ip === ip ? { ip, node: host } : g))
          : [...gateways, { ip, node: host }];
        return { gateways: next, owners: owner ? { ...owners, [ip]: [owner] } : owners };
      },
      signal,
    ).then(() => name);
  };

  /** Refuses an address another policy (ours for another namespace, or foreign) already uses. */
  const refuseForeign = (ip: string, name: string, view: EgressView) => {
    const other = view.ciliumPolicies.find(
      (p) => p.name !== ciliumObjectName(name) && p.gateways.some((g) => g.ip === ip),
    );
    if (other) {
      throw new IpamError(
        "ADDRESS_IN_USE",
        `cannot give ${ip} to namespace ${name}: CiliumEgressGatewayPolicy ${other.name} already uses it as an ` +
          `egressIP; take it off there, or exclude ${ip} from the pool`,
      );
    }
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
      refuseForeign(ip, name, await readEgressView(kube));
      const write = () => pin(ip, host, `pinning ${ip} to gateway ${host}`, config.adoptPresent, signal);
      if (!cloud) await write();
      else {
        const instance = await instanceOf(host);
        await cloud.addSpecifiedIP(ip, instance, signal);
        await compensated(write, () => cloud.removeIP(ip, instance), {
          step: `writing CiliumEgressGatewayPolicy ${ciliumObjectName(name)} after making ${ip} a secondary IP of instance ${instance}`,
          undone: `the secondary IP ${ip} was taken off instance ${instance} again`,
          leftover:
            `${ip} is still a secondary IP of instance ${instance} (node ${host}) and in no policy: run pulumi up ` +
            `again to finish, or remove it with aws ec2 unassign-private-ip-addresses`,
        });
      }
      planner.record(ip, host, name);
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
        await editPolicy(
          namespace,
          `removing ${ip} from CiliumEgressGatewayPolicy ${ciliumObjectName(namespace)}`,
          false,
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
      const write = () => pin(ip, newHost, `moving ${ip} to gateway ${newHost}`, adopt, signal);
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
      planner.record(ip, newHost, name);
    },

    async checkIP(rawIp, host, signal) {
      const ip = canonicalAddress(rawIp);
      const name = ns(`checking ${ip}`);
      const objectName = ciliumObjectName(name);
      const view = await readEgressView(kube);
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
      const want = specFor(name, policy!.gateways);
      const spec = (raw.spec ?? {}) as Record<string, unknown>;
      const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
      if (
        !same(spec.selectors, want.selectors) ||
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

    refuseShared: (holder) =>
      refuseSplitScope(kube, ns(`checking the destinations of ${holder}`), config, holder, owner),

    placements: async (cidrs) => ciliumPlacements(await readEgressView(kube), cidrs, kube.context),
    placementOwners: "named",
  };
}
