// Egress IPs on EKS with Cilium's egress gateway: a Namespace per tenant (with @pulumi/kubernetes)
// and one address per availability zone, from a pool over that zone's subnet. Each address becomes
// a secondary private IP of a gateway Node's instance, then a gateway of the tenant's
// CiliumEgressGatewayPolicy pinned to that Node; a gateway Node that fails is replaced on the next up.
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { EgressIp, IpPool } from "pulumi-egress-ipam";

const config = new pulumi.Config();
const region = config.require("region");
const zones = config.requireObject<string[]>("zones");
const subnets = config.requireObject<string[]>("subnets");
const tenants = config.requireObject<string[]>("tenants");
// Labels of the gateway Nodes (e.g. a dedicated node group); default every Node.
const nodeSelector = config.getObject<Record<string, string>>("nodeSelector") ?? {};
// Destinations that keep the normal path (peered VPCs, on-premises ranges).
const excluded = config.getObject<string[]>("excluded") ?? [];
// An EC2 endpoint other than the region's (a VPC endpoint); the kubeconfig context.
const endpoint = config.get("awsEndpoint");
const context = config.get("context");
if (subnets.length !== zones.length)
  throw new Error(`give one subnet per zone: ${zones.length} zones, ${subnets.length} subnets`);

// AWS keeps the first four and the last address of every subnet.
const pools = Object.fromEntries(
  zones.map((zone, i) => [
    zone,
    new IpPool(`egress-${zone}`, { ranges: [{ subnet: subnets[i]! }], cloudReserved: "aws" }),
  ]),
);
const provisioner = {
  kind: "cilium" as const,
  nodeSelector,
  excluded,
  cloud: { kind: "aws" as const, region, ...(endpoint ? { endpoint } : {}) },
  ...(context ? { context } : {}),
};

const egress = tenants.map((tenant) => {
  const namespace = new k8s.core.v1.Namespace(tenant, { metadata: { name: tenant } });
  return new EgressIp(tenant, {
    pool: pools,
    namespace: namespace.metadata.name,
    failureDomains: zones,
    provisioner,
  });
});

// What to allow-list per tenant, and the gateway Node of each address.
export const egressIps = Object.fromEntries(tenants.map((t, i) => [t, egress[i]!.ips]));
export const gateways = Object.fromEntries(tenants.map((t, i) => [t, egress[i]!.hosts]));
