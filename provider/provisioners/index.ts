/**
 * Egress IP provisioners: the seed `EgressIPProvisioner` interface, `createProvisioner(config)`
 * keyed by `config.kind`, the `none` provisioner (pure IPAM), the `aws` provisioner (EC2 secondary
 * private IPs; the AWS SDK is loaded when the first one is built), and the Kubernetes ones:
 * `ocp-static` and `ocp-dynamic` (OpenShift SDN), `ovn` (OVN-Kubernetes EgressIP objects),
 * `antrea` (Antrea Egress objects) and `cilium` (CiliumEgressGatewayPolicy objects); the
 * Kubernetes client is loaded when the first one talks to the cluster.
 * @packageDocumentation
 */
export type { EgressIPProvisioner, Placement, PlatformStatus } from "./egress-ip-provisioner";
export {
  provisionerConfigProblems,
  provisionerKinds,
  type AwsProvisionerConfig,
  type NoneProvisionerConfig,
  type ProvisionerConfig,
  withInstanceSettings,
  type InstanceSettings,
  type ScopedProvisionerConfig,
} from "./config/provisioner-config";
export {
  kubeKinds,
  defaultZoneLabel,
  type KubeProvisionerConfig,
  type KubeProvisionerSettings,
  type OcpDynamicProvisionerConfig,
  type OcpStaticProvisionerConfig,
  type OvnProvisionerConfig,
  type AntreaProvisionerConfig,
  type CiliumProvisionerConfig,
} from "./config/kube-provisioner-config";
export { createProvisioner } from "./factory/create-provisioner";
export { noneProvisioner } from "./none/none";
export { awsProvisioner, type AwsProvisionerOptions } from "./aws/aws-provisioner";
export type { RetryPolicy } from "./aws/ec2-retry";
export { ocpStaticProvisioner } from "./kubernetes/ocp-static/ocp-static";
export { ocpDynamicProvisioner, automaticHost } from "./kubernetes/ocp-dynamic/ocp-dynamic";
export { ovnProvisioner, ovnObjectName, egressAssignableLabel } from "./kubernetes/ovn/ovn";
export { antreaProvisioner, antreaObjectName } from "./kubernetes/antrea/antrea";
export { ciliumProvisioner, ciliumObjectName } from "./kubernetes/cilium/cilium";
