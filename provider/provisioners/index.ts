/**
 * Egress IP provisioners: the seed `EgressIPProvisioner` interface, `createProvisioner(config)`
 * keyed by `config.kind`, and the `none` provisioner (pure IPAM).
 * @packageDocumentation
 */
export type { EgressIPProvisioner } from "./egress-ip-provisioner";
export {
  provisionerConfigProblems,
  provisionerKinds,
  type NoneProvisionerConfig,
  type OtherProvisionerConfig,
  type ProvisionerConfig,
} from "./provisioner-config";
export { createProvisioner, registerProvisioner } from "./create-provisioner";
export { noneProvisioner } from "./none";
