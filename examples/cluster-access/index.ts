// Egress IPs written with credentials the same program makes. With the platform's own kubeconfig
// (KUBECONFIG, or the `context` config), it creates a least-privilege writer: a ServiceAccount bound
// to the ClusterRoles docs/provisioners.md#rbac gives for `ovn` (and `egress-ipam-observe`), and a
// token Secret for it that the cluster's token controller fills in. A kubeconfig built from that
// token is what the CidrAssignments and EgressIps get: they reach the cluster through it alone (it
// is kept a secret in state), all in the first `up`.
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { CidrAssignment, EgressIp, IpPool } from "pulumi-egress-ipam";

const config = new pulumi.Config();
// The API server's URL as the writer reaches it (the token Secret gives the CA and the token).
const server = config.require("server");
const egressSubnet = config.require("egressSubnet");
const zones = config.requireObject<string[]>("zones");
const tenants = config.requireObject<string[]>("tenants");
const nodeSelector = config.getObject<Record<string, string>>("nodeSelector") ?? {
  "node-role.kubernetes.io/worker": "",
};
// The platform's kubeconfig context (default: the current one): it creates the writer and the tenants.
const platform = { provider: new k8s.Provider("platform", { context: config.get("context") }) };

// The writer: a ServiceAccount in a namespace of its own, bound to exactly the documented roles.
const access = new k8s.core.v1.Namespace("egress-ipam", {}, platform);
const namespace = access.metadata.name;
const writer = new k8s.core.v1.ServiceAccount(
  "egress-ipam",
  { metadata: { namespace, name: "egress-ipam" } },
  platform,
);
const roles: Record<string, k8s.types.input.rbac.v1.PolicyRule[]> = {
  // Every kind: the eligible Nodes and the cluster's egress addresses, whoever wrote them; ovn:
  // ovnkube's Warning events, which say why it placed an address nowhere.
  observe: [
    { apiGroups: [""], resources: ["nodes", "events"], verbs: ["list"] },
    { apiGroups: ["network.openshift.io"], resources: ["hostsubnets", "netnamespaces"], verbs: ["list"] },
    { apiGroups: ["k8s.ovn.org"], resources: ["egressips"], verbs: ["list"] },
    { apiGroups: ["cloud.network.openshift.io"], resources: ["cloudprivateipconfigs"], verbs: ["list"] },
    { apiGroups: ["crd.antrea.io"], resources: ["egresses"], verbs: ["list"] },
    { apiGroups: ["cilium.io"], resources: ["ciliumegressgatewaypolicies"], verbs: ["list"] },
  ],
  // ovn: one EgressIP object per namespace, the egress-assignable label on Nodes.
  ovn: [
    { apiGroups: ["k8s.ovn.org"], resources: ["egressips"], verbs: ["get", "create", "patch", "delete"] },
    { apiGroups: [""], resources: ["nodes"], verbs: ["get", "patch"] },
    { apiGroups: [""], resources: ["namespaces"], verbs: ["get", "list"] },
  ],
};
const bindings = Object.entries(roles).map(([name, rules]) => {
  // Auto-named (egress-ipam-<name>-<suffix>): two stacks, or roles applied from the docs, never clash.
  const role = new k8s.rbac.v1.ClusterRole(`egress-ipam-${name}`, { rules }, platform);
  return new k8s.rbac.v1.ClusterRoleBinding(
    `egress-ipam-${name}`,
    {
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role.metadata.name },
      subjects: [{ kind: "ServiceAccount", name: writer.metadata.name, namespace }],
    },
    platform,
  );
});
// Made once the roles are bound, so the token never works without them; destroy removes it only
// after the egress IPs are taken off with it. pulumi-kubernetes waits until its token is filled in.
const token = new k8s.core.v1.Secret(
  "egress-ipam-token",
  {
    metadata: {
      namespace,
      name: "egress-ipam-token",
      annotations: { "kubernetes.io/service-account.name": writer.metadata.name },
    },
    type: "kubernetes.io/service-account-token",
  },
  { ...platform, dependsOn: bindings },
);
const kubeconfig = pulumi.interpolate`apiVersion: v1
kind: Config
clusters: [{ name: cluster, cluster: { server: "${server}", certificate-authority-data: "${token.data["ca.crt"]}" } }]
users: [{ name: egress-ipam, user: { token: "${token.data.apply((d) => Buffer.from(d.token ?? "", "base64").toString())}" } }]
contexts: [{ name: egress-ipam, context: { cluster: cluster, user: egress-ipam } }]
current-context: egress-ipam
`;

const pool = new IpPool("egress", {
  ranges: [{ subnet: egressSubnet, rangeStart: config.get("rangeStart"), rangeEnd: config.get("rangeEnd") }],
});
const provisioner = { kind: "ovn" as const, nodeSelector, kubeconfig };

// One egress-assignable Node per zone, labelled by the writer.
const egressNodes = zones.map(
  (zone) => new CidrAssignment(`egress-nodes-${zone}`, { pool, provisioner, failureDomain: zone }),
);
const egress = tenants.map((tenant) => {
  const ns = new k8s.core.v1.Namespace(tenant, { metadata: { name: tenant } }, platform);
  return new EgressIp(tenant, { pool, namespace: ns.metadata.name, failureDomains: zones, provisioner });
});

/** Who writes the egress IPs (the user the API server sees), and the Secret holding its token. */
export const egressWriter = pulumi.interpolate`system:serviceaccount:${namespace}:${writer.metadata.name}`;
export const tokenSecret = pulumi.interpolate`${namespace}/${token.metadata.name}`;
export const egressAssignableNodes = pulumi.all(egressNodes.map((n) => n.hosts)).apply((h) => h.flat());
export const egressIps = Object.fromEntries(tenants.map((t, i) => [t, egress[i]!.ips]));
