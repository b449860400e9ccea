// Egress IPs on Antrea: a Namespace per tenant (with @pulumi/kubernetes) and, per tenant and zone,
// one Egress object (crd.antrea.io/v1beta1) with an address from one pool. Antrea puts each address
// on a Node of the ExternalIPPool (whose ipRanges must hold the pool's subnet), fails it over, and
// reports the Node in status.egressNode, which refresh records.
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { EgressIp, IpPool } from "pulumi-egress-ipam";

const config = new pulumi.Config();
const egressSubnet = config.require("egressSubnet");
const zones = config.requireObject<string[]>("zones");
const tenants = config.requireObject<string[]>("tenants");
const externalIPPool = config.get("externalIPPool") ?? "egress-pool";
// Labels of the Nodes expected to carry addresses (match the ExternalIPPool's nodeSelector).
const nodeSelector = config.getObject<Record<string, string>>("nodeSelector") ?? {};
const context = config.get("context");

const pool = new IpPool("egress", {
  ranges: [{ subnet: egressSubnet, rangeStart: config.get("rangeStart"), rangeEnd: config.get("rangeEnd") }],
});
const provisioner = {
  kind: "antrea" as const,
  externalIPPool,
  nodeSelector,
  ...(context ? { context } : {}),
};

const egress = tenants.map((tenant) => {
  const namespace = new k8s.core.v1.Namespace(tenant, { metadata: { name: tenant } });
  return new EgressIp(tenant, {
    pool,
    namespace: namespace.metadata.name,
    failureDomains: zones,
    provisioner,
  });
});

// What to allow-list per tenant, and the Node expected (then recorded) to carry each address.
export const egressIps = Object.fromEntries(tenants.map((t, i) => [t, egress[i]!.ips]));
export const egressHosts = Object.fromEntries(tenants.map((t, i) => [t, egress[i]!.hosts]));
