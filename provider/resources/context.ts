import * as pulumi from "@pulumi/pulumi";

/** The type token of a resource of this package: `pulumi-nodejs:dynamic/egress-ipam:<name>`. Public API. */
export const typeToken = (name: string) => `pulumi-nodejs:dynamic/egress-ipam:${name}`;

/** What every provider of this package needs to know about where it runs. */
export interface ProviderContext {
  /** Fully qualified stack name, `<org>/<project>/<stack>`: whose checkpoint holds the taken set. */
  stack: string;
  /** URN of the resource itself: its identity as a holder in the ledger. */
  owner: Promise<string>;
}

/**
 * The context inputs of a resource, computed program-side: dynamic providers are not told which
 * stack or resource they serve. The URN is computed as the engine computes it (name, type and
 * parent); aliases are not taken into account.
 *
 * The URN is handed over as a plain promise, not an Output: an Output of the parent's URN would make
 * the resource depend on its parent, and a dependency on a component waits for all the
 * component's children — each child would wait for its siblings forever.
 */
export function providerContext(
  name: string,
  type: string,
  opts?: pulumi.CustomResourceOptions,
): ProviderContext {
  return {
    stack: `${pulumi.getOrganization()}/${pulumi.getProject()}/${pulumi.getStack()}`,
    owner: new Promise((resolve) => pulumi.createUrn(name, typeToken(type), opts?.parent).apply(resolve)),
  };
}
