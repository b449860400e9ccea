/**
 * Egress IP provisioners: the seed `EgressIPProvisioner` interface, `createProvisioner(config)`
 * keyed by `config.kind`, the `none` provisioner (pure IPAM) and the `aws` provisioner (EC2 secondary
 * private IPs; the AWS SDK is loaded when the first one is built).
 * @packageDocumentation
 */
export type { EgressIPProvisioner } from "./egress-ip-provisioner";
export {
  provisionerConfigProblems,
  provisionerKinds,
  type AwsProvisionerConfig,
  type NoneProvisionerConfig,
  type OtherProvisionerConfig,
  type ProvisionerConfig,
} from "./provisioner-config";
export { createProvisioner, registerProvisioner } from "./create-provisioner";
export { noneProvisioner } from "./none";
export { awsProvisioner, type AwsProvisionerOptions } from "./aws-provisioner";
export type { RetryPolicy } from "./aws-retry";
