import * as pulumi from "@pulumi/pulumi";
import { providerContext } from "../context";
import { poolInput, type IpPool } from "../ip-pool/ip-pool";
import { thinProvider } from "../thin-provider";

/** Inputs of {@link PrefixAllocation}. Give `prefixLength`, `cidr`, or neither (the pool rule's default). */
export interface PrefixAllocationArgs {
  /** The pool to carve the block from (one family; its `prefixLengths` rule applies). Changing it replaces the block. */
  pool: IpPool;
  /**
   * The block's prefix length, e.g. 24 for a /24; default the pool's `prefixLengths.default`. A
   * new length plans a new block (a replacement); the pool's default changing later moves nothing.
   */
  prefixLength?: pulumi.Input<number>;
  /** A specific block, e.g. `10.20.3.0/24` (it may contain the pool's `reserved` addresses). Changing it replaces the block. */
  cidr?: pulumi.Input<string>;
  /** Take `cidr` over from another resource of the stack that holds exactly it: for renames (dynamic resources cannot be imported). */
  adopt?: pulumi.Input<boolean>;
}

/**
 * An aligned CIDR block carved from an {@link IpPool}: a VPC's /16 out of a /8, a /24 subnet per
 * zone, a /64 per consumer out of an IPv6 /48. Planned at `check`, so `pulumi preview` shows the
 * block, and stable afterwards; `pulumi up` reserves exactly that block or fails. Blocks and single
 * addresses of one pool never overlap. A pool whose range is a block's `cidr` hands out addresses or
 * smaller blocks from it (a child pool), planned at preview from the parent's planned block.
 */
export class PrefixAllocation extends pulumi.dynamic.Resource {
  /** The block, e.g. `10.20.3.0/24`. */
  declare public readonly cidr: pulumi.Output<string>;
  /** Its network address, e.g. `10.20.3.0`. */
  declare public readonly network: pulumi.Output<string>;
  /** Its prefix length, e.g. 24. */
  declare public readonly prefixLength: pulumi.Output<number>;
  /** First host address: network + 1 for an IPv4 block of 4 or more addresses, else the network address. */
  declare public readonly first: pulumi.Output<string>;
  /** Last host address: broadcast − 1 for an IPv4 block of 4 or more addresses, else the block's last address. */
  declare public readonly last: pulumi.Output<string>;
  /** How many addresses the block spans, as a decimal string (an IPv6 block exceeds 2^53). */
  declare public readonly size: pulumi.Output<string>;
  /** The pool's identity (its URN). */
  declare public readonly poolId: pulumi.Output<string>;
  /**
   * In a shared pool, after `pulumi refresh`: what is wrong with this block's claim in the ledger,
   * or undefined when it is its own. The next `pulumi up` claims a missing one again.
   */
  declare public readonly claim: pulumi.Output<string | undefined>;

  constructor(name: string, args: PrefixAllocationArgs, opts?: pulumi.CustomResourceOptions) {
    const context = providerContext(name, "PrefixAllocation", opts);
    // The queue line: the requested block, or `/<length>` for an automatic one; anything not known
    // to the pool's other holders (an output) is written as unknown.
    const { cidr, prefixLength } = args;
    const plain =
      (cidr === undefined || typeof cidr === "string") &&
      (prefixLength === undefined || typeof prefixLength === "number");
    const line: pulumi.Input<string> = plain ? (cidr ?? `/${prefixLength ?? ""}`) : pulumi.output(cidr ?? "");
    const props = {
      holder: args.pool.enqueueHolder(context, line, undefined),
      pool: poolInput(args.pool),
      cidr,
      prefixLength,
      adopt: args.adopt,
      network: undefined,
      first: undefined,
      last: undefined,
      size: undefined,
      poolId: undefined,
      claim: undefined,
    };
    super(thinProvider("PrefixAllocation"), name, props, opts, "egress-ipam", "PrefixAllocation");
  }
}
