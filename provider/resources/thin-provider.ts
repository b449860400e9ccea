import type * as pulumi from "@pulumi/pulumi";

// One provider object per kind: Pulumi caches the serialized text per provider object, so sharing
// it serializes each kind once per program instead of once per resource (about 20 ms each).
const byKind = new Map<string, pulumi.dynamic.ResourceProvider>();

/**
 * The dynamic provider object that Pulumi serializes into state for a resource kind.
 *
 * Pulumi stores provider functions by value and replays them on delete and refresh, so every
 * method is a shim that loads the implementation by package name at run time. The serialized text
 * stays a few hundred bytes, and fixes in a newer `pulumi-egress-ipam` reach resources created by
 * an older one.
 *
 * @param kind - the key of the implementation in `pulumi-egress-ipam/runtime`'s provider table.
 */
export function thinProvider(kind: string): pulumi.dynamic.ResourceProvider {
  let provider = byKind.get(kind);
  if (!provider) {
    provider = {
      check: (olds, news) => require("pulumi-egress-ipam/runtime").providerFor(kind).check(olds, news),
      diff: (id, olds, news) => require("pulumi-egress-ipam/runtime").providerFor(kind).diff(id, olds, news),
      create: (inputs) => require("pulumi-egress-ipam/runtime").providerFor(kind).create(inputs),
      read: (id, props) => require("pulumi-egress-ipam/runtime").providerFor(kind).read(id, props),
      update: (id, olds, news) =>
        require("pulumi-egress-ipam/runtime").providerFor(kind).update(id, olds, news),
      delete: (id, props) => require("pulumi-egress-ipam/runtime").providerFor(kind).delete(id, props),
    };
    byKind.set(kind, provider);
  }
  return provider;
}
