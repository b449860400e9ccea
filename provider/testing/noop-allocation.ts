import * as pulumi from "@pulumi/pulumi";
import { providerContext } from "../resources/context";
import { thinProvider } from "../resources/thin-provider";

/** Inputs of {@link NoopAllocation}. */
export interface NoopAllocationArgs {
  /** The resource standing in for the pool (an {@link Echo}): its URN is kept as `poolId`, and it is a dependency. */
  pool: pulumi.Resource;
  /** Which address to show: the `seq`-th of 10.64.0.0/16 (1-based); a new value is an in-place update. */
  seq: pulumi.Input<number>;
}

/**
 * A resource that keeps what an `IpAllocation` of a stack-local pool keeps, in the same
 * properties and shapes (`stack`, `owner`, `poolId`, `ip`, `ips`, `cidr`, `gateway`, `seq`, in its
 * checked inputs and its outputs, and a dependency on its pool), but plans nothing: the address is
 * a function of `seq`. The engine's floor for a resource that shows what an allocation shows, for
 * the engine benchmark (N of these beside N allocations of one pool).
 */
export class NoopAllocation extends pulumi.dynamic.Resource {
  /** The `seq`-th address of 10.64.0.0/16. */
  declare public readonly ip: pulumi.Output<string>;
  /** `[ip]`. */
  declare public readonly ips: pulumi.Output<string[]>;
  /** `ip` with the /16 prefix. */
  declare public readonly cidr: pulumi.Output<string>;
  /** 10.64.0.1. */
  declare public readonly gateway: pulumi.Output<string>;
  /** The URN of the `pool` resource. */
  declare public readonly poolId: pulumi.Output<string>;

  constructor(name: string, args: NoopAllocationArgs, opts?: pulumi.CustomResourceOptions) {
    const context = providerContext(name, "NoopAllocation", opts);
    const props = {
      holder: { stack: context.stack, owner: context.owner },
      pool: args.pool.urn,
      seq: args.seq,
      ip: undefined,
      ips: undefined,
      cidr: undefined,
      gateway: undefined,
      poolId: undefined,
    };
    super(thinProvider("noop-allocation"), name, props, opts, "egress-ipam", "NoopAllocation");
  }
}
