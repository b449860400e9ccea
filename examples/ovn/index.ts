// Egress IPs on OVN-Kubernetes: a Namespace per tenant (with @pulumi/kubernetes), one Node per zone
// labelled k8s.ovn.org/egress-assignable (CidrAssignment), and one EgressIP object per tenant whose
// spec.egressIPs holds an address per zone from one pool over the nodes' subnet. ovnkube places the
// addresses on the labelled Nodes and reports them in the EgressIP's status.
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { CidrAssignment, EgressIp, IpPool } from "pulumi-egress-ipam";

const config = new pulumi.Config();
const egressSubnet = config.require("egressSubnet");
const zones = config.requireObject<string[]>("zones");
const tenants = config.requireObject<string[]>("tenants");
// Labels every eligible egress Node carries; the kubeconfig context (default: the current one).
const nodeSelector = config.getObject<Record<string, string>>("nodeSelector") ?? {
  "node-role.kubernetes.io/worker": "",
};
const context = config.get("context");

const pool = new IpPool("egress", {
  ranges: [{ subnet: egressSubnet, rangeStart: config.get("rangeStart"), rangeEnd: config.get("rangeEnd") }],
});
const provisioner = { kind: "ovn" as const, nodeSelector, ...(context ? { context } : {}) };

// One egress-assignable Node per zone (the least loaded eligible one).
const egressNodes = zones.map(
  (zone) => new CidrAssignment(`egress-nodes-${zone}`, { pool, provisioner, failureDomain: zone }),
);

const egress = tenants.map((tenant) => {
  const namespace = new k8s.core.v1.Namespace(tenant, { metadata: { name: tenant } });
  return new EgressIp(tenant, {
    pool,
    namespace: namespace.metadata.name,
    failureDomains: zones,
    provisioner,
  });
});

export const egressAssignableNodes = pulumi.all(egressNodes.map((n) => n.hosts)).apply((h) => h.flat());
export const egressIps = Object.fromEntries(tenants.map((t, i) => [t, egress[i]!.ips]));
