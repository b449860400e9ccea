/**
 * Run-time side of the dynamic providers: what the serialized shims in state load by package name.
 * Not for use from programs; its shape may change between versions without notice.
 * @packageDocumentation
 */
import type * as pulumi from "@pulumi/pulumi";
import { echoProvider } from "../testing/echo-provider";
import { cidrAssignmentProvider } from "../resources/cidr-assignment/cidr-assignment-provider";
import { egressIpAssignmentProvider } from "../resources/egress-ip/egress-ip-assignment-provider";
import { ipAllocationProvider } from "../resources/ip-allocation/ip-allocation-provider";
import { ipPoolProvider } from "../resources/ip-pool/ip-pool-provider";

/** A dynamic provider with every method present, so the shim can delegate each one. */
export type ProviderImpl = Required<
  Pick<pulumi.dynamic.ResourceProvider, "check" | "diff" | "create" | "read" | "update" | "delete">
>;

const providers: Record<string, ProviderImpl> = {
  echo: echoProvider,
  IpPool: ipPoolProvider,
  IpAllocation: ipAllocationProvider,
  EgressIpAssignment: egressIpAssignmentProvider,
  CidrAssignment: cidrAssignmentProvider,
};

/**
 * Returns the implementation for a resource kind.
 * @throws Error when the kind is unknown, which means state was written by a newer version of
 * this package than the one installed.
 */
export function providerFor(kind: string): ProviderImpl {
  const impl = providers[kind];
  if (!impl) {
    const known = Object.keys(providers).join(", ");
    throw new Error(
      `pulumi-egress-ipam has no provider "${kind}" (known: ${known}); ` +
        `the stack was written by a newer pulumi-egress-ipam: install that version`,
    );
  }
  return impl;
}
