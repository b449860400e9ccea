// Egress IPs on OpenShift SDN: a Namespace per tenant (with @pulumi/kubernetes) and one egress
// address per zone for each, from one pool over the nodes' subnet.
// - mode "static" (ocp-static): each address goes on the least loaded eligible Node's
//   HostSubnet.egressIPs and on the tenant's NetNamespace.egressIPs (OpenShift's manual mode).
// - mode "dynamic" (ocp-dynamic): the pool's CIDR goes on HostSubnet.egressCIDRs of one Node per
//   zone (CidrAssignment), the addresses only on NetNamespace.egressIPs; the SDN master places them.
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { CidrAssignment, EgressIp, IpPool } from "pulumi-egress-ipam";

const config = new pulumi.Config();
const egressSubnet = config.require("egressSubnet");
const zones = config.requireObject<string[]>("zones");
const tenants = config.requireObject<string[]>("tenants");
const mode = config.get("mode") ?? "static";
// Labels every eligible egress Node carries; the kubeconfig context (default: the current one).
const nodeSelector = config.getObject<Record<string, string>>("nodeSelector") ?? {
  "node-role.kubernetes.io/worker": "",
};
const context = config.get("context");
if (mode !== "static" && mode !== "dynamic") throw new Error(`mode must be static or dynamic, not "${mode}"`);

const pool = new IpPool("egress", {
  ranges: [{ subnet: egressSubnet, rangeStart: config.get("rangeStart"), rangeEnd: config.get("rangeEnd") }],
});
const provisioner = {
  kind: mode === "static" ? ("ocp-static" as const) : ("ocp-dynamic" as const),
  nodeSelector,
  ...(context ? { context } : {}),
};
if (mode === "dynamic") {
  for (const zone of zones)
    new CidrAssignment(`egress-nodes-${zone}`, { pool, provisioner, failureDomain: zone });
}

const egress = tenants.map((tenant) => {
  const namespace = new k8s.core.v1.Namespace(tenant, { metadata: { name: tenant } });
  return new EgressIp(tenant, {
    pool,
    namespace: namespace.metadata.name,
    failureDomains: zones,
    provisioner,
  });
});

// What to allow-list per tenant, and the Node carrying each address ("(automatic)" in dynamic mode).
export const egressIps = Object.fromEntries(tenants.map((t, i) => [t, egress[i]!.ips]));
export const egressHosts = Object.fromEntries(tenants.map((t, i) => [t, egress[i]!.hosts]));
