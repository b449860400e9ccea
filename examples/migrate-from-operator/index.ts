// The program `pulumi-egress-ipam import` writes for a cluster of the egressip-ipam-operator, with
// its values moved to stack config so that it can be copied: a pool per CIDR of the EgressIPAM and,
// per namespace, an EgressIp with adopt: true, one address per zone. Its first preview plans the
// addresses the operator gave, on the Nodes that carry them; `up` moves none of them. Setting
// `kind` to ovn (step2, once the cluster runs OVN-Kubernetes) moves them to the namespaces' EgressIP
// objects, same addresses, and labels the Nodes that carry them k8s.ovn.org/egress-assignable
// (ovnkube places an EgressIP's addresses only on labelled Nodes).
import * as pulumi from "@pulumi/pulumi";
import { CidrAssignment, EgressIp, IpPool } from "pulumi-egress-ipam";

const config = new pulumi.Config();
const zones = config.requireObject<string[]>("zones");
const cidrs = config.requireObject<string[]>("cidrs");
const reserved = config.getObject<string[]>("reserved") ?? [];
const tenants = config.requireObject<string[]>("tenants");
const kind = config.get("kind") ?? "ocp-static";
// The EgressIPAM's topologyLabel and nodeSelector.matchLabels.
const zoneLabel = config.get("zoneLabel");
const nodeSelector = config.getObject<Record<string, string>>("nodeSelector");
if (kind !== "ocp-static" && kind !== "ovn") throw new Error(`kind must be ocp-static or ovn, not "${kind}"`);
if (cidrs.length !== zones.length)
  throw new Error(`give one CIDR per zone: ${zones.length} zones, ${cidrs.length} CIDRs`);

// The operator hands out every address but the network and broadcast ones: the gateway goes on the
// network address, which keeps the first host address in the pool.
const pools = Object.fromEntries(
  zones.map((zone, i) => [
    zone,
    new IpPool(`egress-${zone}`, {
      ranges: [{ subnet: cidrs[i]!, gateway: cidrs[i]!.split("/")[0]! }],
      exclude: reserved,
    }),
  ]),
);
const provisioner = {
  kind: kind as "ocp-static" | "ovn",
  ...(zoneLabel ? { zoneLabel } : {}),
  ...(nodeSelector ? { nodeSelector } : {}),
};

const egress = tenants.map(
  (tenant) =>
    new EgressIp(tenant, { namespace: tenant, pool: pools, failureDomains: zones, provisioner, adopt: true }),
);

// ovn: the Nodes of each zone that carry its addresses, labelled egress-assignable (and unlabelled
// again on destroy, unless something else labelled them), so that ovnkube can place them there.
// List more Nodes in `hosts` for ovnkube to fail over to.
if (kind === "ovn") {
  zones.forEach(
    (zone, i) =>
      new CidrAssignment(`egress-nodes-${zone}`, {
        pool: pools[zone]!,
        provisioner,
        hosts: pulumi.all(egress.map((e) => e.hosts)).apply((hosts) => [...new Set(hosts.map((h) => h[i]!))]),
      }),
  );
}

// Unchanged from what the operator gave: the addresses on the outside allow-lists.
export const egressIps = Object.fromEntries(tenants.map((t, i) => [t, egress[i]!.ips]));
export const egressHosts = Object.fromEntries(tenants.map((t, i) => [t, egress[i]!.hosts]));
