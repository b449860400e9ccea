/**
 * The pure allocator of pulumi-egress-ipam: CNI host-local ranges and range sets, the round-robin and
 * lowest-free strategies over an ordered interval structure, an in-memory store, the CNI config
 * loader and webmesh-style node prefixes. No I/O, no clock; addresses are canonical strings at every
 * boundary and bigints inside.
 *
 * @packageDocumentation
 */
export { IpamError, isIpamError, type IpamErrorCode } from "../core/ipam-error";
export { addressFamily, canonicalAddress, familyOfText, type AddressFamily } from "./address";
export { canonicalCidr, prefixContains } from "./prefix";
export { IntervalSet, type ReadonlyIntervalSet } from "./interval-set";
export { AddressSet, type ReadonlyAddressSet } from "./address-set";
export { Range, type RangeInit } from "./range";
export { RangeSet } from "./range-set";
export type { Store, SyncStore } from "./store";
export { MemoryStore, type MemoryStoreSeed } from "./memory-store";
export type { AllocationStrategy, TakenAddresses } from "./pool-layout";
export { IpAllocator, type Allocation, type IpAllocatorOptions } from "./ip-allocator";
export { nextFree, type NextFreeOptions } from "./next-free";
export { checkBlock, nextFreeBlock, type NextFreeBlockOptions } from "./next-free-block";
export { freeCount, poolCapacity } from "./pool-capacity";
export { cloudReservedAddresses, type CloudProvider } from "./cloud-reserved";
export { loadIpamConfig, type IpamConfig, type IpamRoute, type LoadedIpamConfig } from "./ipam-config";
export { NodeAllocator, type NodeAllocatorOptions } from "./node-allocator";
