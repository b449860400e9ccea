import type * as pulumi from "@pulumi/pulumi";

/**
 * The dynamic provider of one resource kind as Pulumi stores it in state: every method loads the
 * implementation by package name at run time (`pulumi-egress-ipam/runtime`) and delegates, so
 * fixes in a newer `pulumi-egress-ipam` reach resources created by an older one.
 *
 * Each kind's shim is the whole export of its own module in this folder, and a module of an
 * installed package is what Pulumi's closure serializer writes as a `require` of its name: the
 * provider text in state is then one `require("pulumi-egress-ipam/shims/<kind>")` (about 230
 * bytes) instead of six serialized functions (2 KB). It is stored twice in every resource (inputs
 * and outputs) and the engine rewrites the whole checkpoint after every step, so its size is paid
 * by every resource at every step. Those module paths are in every stack's state from then on:
 * never rename or remove one (`pulumi-egress-ipam/runtime` stays for state written before them).
 *
 * @param kind - the key of the implementation in `pulumi-egress-ipam/runtime`'s provider table.
 */
export function shim(kind: string): pulumi.dynamic.ResourceProvider {
  const impl = () => require("pulumi-egress-ipam/runtime").providerFor(kind);
  return {
    check: (olds, news) => impl().check(olds, news),
    diff: (id, olds, news) => impl().diff(id, olds, news),
    create: (inputs) => impl().create(inputs),
    read: (id, props) => impl().read(id, props),
    update: (id, olds, news) => impl().update(id, olds, news),
    delete: (id, props) => impl().delete(id, props),
  };
}
