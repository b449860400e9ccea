import type * as pulumi from "@pulumi/pulumi";

/**
 * Builds the dynamic provider object that Pulumi serializes into state for a resource kind.
 *
 * Pulumi stores provider functions by value and replays them on delete and refresh, so every
 * method is a shim that loads the implementation by package name at run time. The serialized text
 * stays a few hundred bytes, and fixes in a newer `pulumi-egress-ipam` reach resources created by
 * an older one.
 *
 * @param kind - the key of the implementation in `pulumi-egress-ipam/runtime`'s provider table.
 */
export function thinProvider(kind: string): pulumi.dynamic.ResourceProvider {
  return {
    check: (olds, news) => require("pulumi-egress-ipam/runtime").providerFor(kind).check(olds, news),
    diff: (id, olds, news) => require("pulumi-egress-ipam/runtime").providerFor(kind).diff(id, olds, news),
    create: (inputs) => require("pulumi-egress-ipam/runtime").providerFor(kind).create(inputs),
    read: (id, props) => require("pulumi-egress-ipam/runtime").providerFor(kind).read(id, props),
    update: (id, olds, news) =>
      require("pulumi-egress-ipam/runtime").providerFor(kind).update(id, olds, news),
    delete: (id, props) => require("pulumi-egress-ipam/runtime").providerFor(kind).delete(id, props),
  };
}
