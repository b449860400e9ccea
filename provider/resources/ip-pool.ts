import * as pulumi from "@pulumi/pulumi";
import type { RangeArgs } from "../runtime/pool-spec";
import { providerContext } from "./context";
import { thinProvider } from "./thin-provider";

/** A range in CNI host-local form; defaults as host-local fills them. */
export interface IpPoolRange {
  /** The subnet, e.g. `10.0.8.0/24`; must be a network address. */
  subnet: pulumi.Input<string>;
  /** First address handed out (default: network+1). */
  rangeStart?: pulumi.Input<string>;
  /** Last address handed out (default: broadcast−1 for IPv4, the last address for IPv6). */
  rangeEnd?: pulumi.Input<string>;
  /** Never handed out (default: network+1). */
  gateway?: pulumi.Input<string>;
}

/** Inputs of {@link IpPool}. Give `ranges` or `cniConfig`. */
export interface IpPoolArgs {
  /** One range set: ranges of one family that must not overlap. Adding ranges is an in-place update. */
  ranges?: pulumi.Input<pulumi.Input<IpPoolRange>[]>;
  /** A CNI host-local config (JSON text); each of its range sets is one family of the pool. */
  cniConfig?: pulumi.Input<string>;
  /** CIDRs or addresses never handed out and refused when requested. */
  exclude?: pulumi.Input<pulumi.Input<string>[]>;
  /** Addresses never handed out automatically, but accepted when an allocation requests them. */
  reserved?: pulumi.Input<pulumi.Input<string>[]>;
  /** `round-robin` (default; CNI host-local) or `lowest-free`. */
  strategy?: pulumi.Input<"round-robin" | "lowest-free">;
  /** Exclude the addresses a cloud reserves in every subnet: `aws` (network+1..+3 and the last). */
  cloudReserved?: pulumi.Input<"aws">;
}

const holderWaitWarningMs = 60_000;

/** One allocation of a pool, as `pulumi refresh` reports it. */
export interface PoolAllocation {
  ip: string;
  /** URN of the resource holding it. */
  owner: string;
}

/** What an allocation needs to know about its pool at `check` time (known at preview). */
export interface PoolRef {
  /** The pool's URN: its identity in the ledger. */
  id: string;
  ranges?: RangeArgs[];
  cniConfig?: string;
  exclude?: string[];
  reserved?: string[];
  strategy?: "round-robin" | "lowest-free";
  cloudReserved?: "aws";
}

/**
 * A pool of IP addresses with CNI host-local semantics. Every problem in its inputs is reported at
 * preview, per property. Allocations live in the state of the resources that hold them; the pool
 * refuses a change that would leave a held address outside it, and refuses deletion while it has
 * holders, naming them.
 */
export class IpPool extends pulumi.dynamic.Resource {
  /** Canonical ranges, one list per range set (two for a dual-stack CNI config). */
  declare public readonly rangeSets: pulumi.Output<RangeArgs[][]>;
  /** Addresses the pool hands out automatically, as a decimal string (an IPv6 pool exceeds 2^53). */
  declare public readonly size: pulumi.Output<string>;
  /** Current allocations, after `pulumi refresh`. */
  declare public readonly allocations: pulumi.Output<PoolAllocation[] | undefined>;
  /** Free addresses, after `pulumi refresh`, as a decimal string. */
  declare public readonly free: pulumi.Output<string | undefined>;
  /** What allocations from this pool pass to their provider; known at preview for literal inputs. */
  public readonly ref: pulumi.Output<PoolRef>;
  private readonly poolName: string;
  private holders = 0;
  private lastHolder: Promise<unknown> = Promise.resolve();
  private lastHolderName = "";

  /**
   * A place in this pool's registration queue, for resources that take addresses from it.
   *
   * The engine checks resources one at a time in the order their registrations arrive, and
   * concurrent registrations arrive in a different order on every run; planned addresses would then
   * differ between `preview` and `up`. So each holder registers only after the previous holder of
   * the pool has been registered: `order` resolves to the holder's position once it is its turn
   * (pass it as an input), and `registered` hands the turn on. There is no dependency between
   * holders, so deletes and dependents stay parallel. A holder whose inputs wait on a later holder
   * of the same pool would wait forever; such a program must use two pools, and a warning after a
   * minute of waiting says so.
   * @param holder - how messages name the holder, e.g. `IpAllocation "web"`.
   */
  holderTurn(holder: string): { order: Promise<number>; registered(urn: pulumi.Output<string>): void } {
    const position = this.holders++;
    const previous = this.lastHolder;
    const waitingFor = this.lastHolderName;
    let handOn!: () => void;
    this.lastHolder = new Promise<void>((resolve) => (handOn = resolve));
    this.lastHolderName = holder;
    // A long wait is legitimate (the previous holder's inputs may come from a slow resource), but a
    // cycle never ends: say what is being waited for, once.
    const warn = setTimeout(
      () =>
        pulumi.log.warn(
          `${holder} has waited ${holderWaitWarningMs / 1000} s for ${waitingFor}, the previous holder of pool ` +
            `"${this.poolName}", to register; if ${waitingFor} takes an input from ${holder}, ` +
            `they wait for each other: take those addresses from two pools`,
        ),
      holderWaitWarningMs,
    );
    warn.unref();
    return {
      order: previous.then(() => (clearTimeout(warn), position)),
      registered: (urn) => void urn.apply(() => handOn()),
    };
  }

  constructor(name: string, args: IpPoolArgs, opts?: pulumi.CustomResourceOptions) {
    const context = providerContext(name, "IpPool", opts);
    const spec = {
      ranges: args.ranges,
      cniConfig: args.cniConfig,
      exclude: args.exclude,
      reserved: args.reserved,
      strategy: args.strategy,
      cloudReserved: args.cloudReserved,
    };
    const props = {
      ...spec,
      stack: context.stack,
      poolId: context.owner,
      rangeSets: undefined,
      size: undefined,
      allocations: undefined,
      free: undefined,
    };
    super(thinProvider("IpPool"), name, props, opts, "egress-ipam", "IpPool");
    this.poolName = name;
    // The same identity the pool's provider uses; derived through this.urn so that resources taking
    // the ref depend on the pool (and are deleted before it).
    const id = pulumi.all([this.urn, pulumi.output(context.owner)]).apply(([, poolId]) => poolId);
    this.ref = pulumi.output({ ...spec, id }) as pulumi.Output<PoolRef>;
  }
}
