import * as pulumi from "@pulumi/pulumi";
import type * as provider from "@pulumi/pulumi/provider";
import { egressIpChildren, type EgressIpArgs } from "../resources/egress-ip/egress-ip";
import { pluginTypePrefix } from "../core/resource-types";
import { plainConstructInputs, type PlainSpec } from "./plain-inputs";

const token = (kind: string) => `${pluginTypePrefix}${kind}`;

/** A resource of the plugin, registered or (with `opts.urn`) referred to. */
class PluginResource extends pulumi.CustomResource {
  constructor(type: string, name: string, props: pulumi.Inputs, opts?: pulumi.CustomResourceOptions) {
    super(type, name, props, opts);
  }
}

/** The component, with its outputs registered by the construct. */
class EgressIpComponent extends pulumi.ComponentResource {
  publish(outputs: pulumi.Inputs): void {
    this.registerOutputs(outputs);
  }
}

/** An allocation or placement the construct registers, with the outputs an EgressIp reads. */
type Child = PluginResource &
  Record<"ip" | "host", pulumi.Output<string>> &
  Record<"ips", pulumi.Output<string[]>> &
  Record<"publicIp", pulumi.Output<string | undefined>>;

/**
 * References to this package's resources in a construct's inputs (the pools, `after`) as
 * resources of the plugin's types, so the children the construct registers send them on as references.
 */
export function registerPluginTypes(version: string): void {
  pulumi.runtime.registerResourceModule("egress-ipam", "index", {
    version,
    construct: (name, type, urn) =>
      type === token("EgressIp")
        ? new pulumi.ComponentResource(type, name, {}, { urn })
        : new PluginResource(type, name, {}, { urn }),
  });
}

/** The URN of a resource, awaited (known at preview too). */
const urnOf = (r: pulumi.Resource): Promise<string> => new Promise((resolve) => r.urn.apply(resolve));

/**
 * The EgressIp component for programs in other languages, made of the plugin's own IpAllocation and
 * EgressIpAssignment resources: the same children and outputs as a TypeScript program's
 * (egressIpChildren). Its allocations of each pool form one chain (holder-order): each follows the
 * one before it in this EgressIp, and the first follows the last of the EgressIp given as `after`, or
 * the resource given as `after` when that is not an EgressIp (an IpAllocation, say).
 */
export class EgressIpConstructs {
  /** The last allocation of each pool (by URN) in each EgressIp constructed so far (by URN), after's included. */
  private readonly chains = new Map<string, Map<string, pulumi.CustomResource>>();

  async construct(
    name: string,
    type: string,
    inputs: pulumi.Inputs,
    options: pulumi.ComponentResourceOptions,
    plain: Record<string, PlainSpec> = {},
  ): Promise<provider.ConstructResult> {
    // Before the component registers: an input it cannot be made of leaves nothing behind.
    const given = await plainConstructInputs("EgressIp", name, inputs as Record<string, unknown>, plain);
    const component = new EgressIpComponent(type, name, {}, options);
    const { after, pool, ...rest } = given;
    const pools = pulumi.Resource.isInstance(pool) ? [pool] : Object.values((pool ?? {}) as object);
    const poolUrns = new Map<unknown, string>();
    for (const p of pools) if (pulumi.Resource.isInstance(p)) poolUrns.set(p, await urnOf(p));
    const before = pulumi.Resource.isInstance(after) ? this.chains.get(await urnOf(after)) : undefined;
    const chain = new Map(before ?? []);
    // After a holder (an IpAllocation, say): the first allocation of each pool follows it.
    const first = pulumi.CustomResource.isInstance(after) ? after : undefined;
    const args = { ...rest, pool } as Omit<EgressIpArgs, "pool"> & {
      pool: pulumi.Resource | Record<string, pulumi.Resource>;
    };
    const parts = egressIpChildren(component, name, args, {
      isPool: (p): p is pulumi.Resource => pulumi.Resource.isInstance(p),
      allocation: (n, a, o) => {
        const poolUrn = poolUrns.get(a.pool);
        const previous = (poolUrn === undefined ? undefined : chain.get(poolUrn)) ?? first;
        const props = { ...a, ...(previous ? { after: previous } : {}), ips: undefined };
        const r = new PluginResource(token("IpAllocation"), n, props, o) as Child;
        if (poolUrn !== undefined) chain.set(poolUrn, r);
        return { ip: r.ip, ips: r.ips };
      },
      assignment: (n, a, o) =>
        new PluginResource(token("EgressIpAssignment"), n, { ...a, publicIp: undefined }, o) as Child,
    });
    this.chains.set(await urnOf(component), chain);
    const state = {
      ips: parts.ips,
      hosts: parts.hosts,
      publicIps: parts.publicIps,
      addresses: parts.addresses,
    };
    component.publish(state);
    return { urn: component.urn, state };
  }
}
