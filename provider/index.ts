/**
 * pulumi-egress-ipam: IP address pools and egress IPs as Pulumi dynamic resources.
 * @packageDocumentation
 */
export {
  IpPool,
  type IpPoolArgs,
  type IpPoolRange,
  type PoolAllocation,
  type PoolRef,
  type SharedIpPoolArgs,
} from "./resources/ip-pool/ip-pool";
export type { PoolQuotas } from "./ledger/quota-rules";
export { IpAllocation, type IpAllocationArgs } from "./resources/ip-allocation/ip-allocation";
export { PrefixAllocation, type PrefixAllocationArgs } from "./resources/prefix-allocation/prefix-allocation";
export { EgressIp, type EgressIpArgs } from "./resources/egress-ip/egress-ip";
export { EgressIpAssignment, type EgressIpAssignmentArgs } from "./resources/egress-ip/egress-ip-assignment";
export { CidrAssignment, type CidrAssignmentArgs } from "./resources/cidr-assignment/cidr-assignment";
export type {
  AwsProvisionerConfig,
  NoneProvisionerConfig,
  ProvisionerConfig,
} from "./provisioners/config/provisioner-config";
export type { ProvisionerArgs } from "./resources/secret-kubeconfig";
export { typeToken } from "./resources/context";
export { IpamError, isIpamError, type IpamErrorCode } from "./allocator";
export type { PrefixLengthRule, RangeArgs } from "./resources/pool/pool-spec";
