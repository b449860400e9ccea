import type * as pulumi from "@pulumi/pulumi";

// Each kind's shim module (see ../shims/shim). `require` returns the same object every time, and
// Pulumi caches the serialized text per provider object: each kind is serialized once per program.
const shims: Record<string, () => pulumi.dynamic.ResourceProvider> = {
  IpPool: () => require("../shims/ip-pool"),
  IpAllocation: () => require("../shims/ip-allocation"),
  PrefixAllocation: () => require("../shims/prefix-allocation"),
  EgressIpAssignment: () => require("../shims/egress-ip-assignment"),
  CidrAssignment: () => require("../shims/cidr-assignment"),
  echo: () => require("../shims/echo"),
  "noop-allocation": () => require("../shims/noop-allocation"),
};

/**
 * The dynamic provider object that Pulumi serializes into state for a resource kind: a shim whose
 * methods load the implementation by package name at run time, so the text in state stays small
 * and fixes in a newer `pulumi-egress-ipam` reach resources created by an older one.
 *
 * @param kind - the key of the implementation in `pulumi-egress-ipam/runtime`'s provider table.
 */
export function thinProvider(kind: string): pulumi.dynamic.ResourceProvider {
  const load = shims[kind];
  if (!load) throw new Error(`pulumi-egress-ipam has no provider shim "${kind}"`);
  return load();
}
