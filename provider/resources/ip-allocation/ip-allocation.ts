import * as pulumi from "@pulumi/pulumi";
import { withSecretKubeconfig, type ProvisionerArgs } from "../secret-kubeconfig";
import { providerContext } from "../context";
import { poolInput, type AdoptFromArgs, type IpPool } from "../ip-pool/ip-pool";

import { thinProvider } from "../thin-provider";

/** Inputs of {@link IpAllocation}. */
export interface IpAllocationArgs {
  /** The pool to allocate from. Changing it replaces the allocation. */
  pool: IpPool;
  /** A specific address (it may be one of the pool's `reserved`). Changing it replaces the allocation. */
  ip?: pulumi.Input<string>;
  /**
   * Take `ip` over even if another resource of the stack holds it: for renaming a resource or
   * bringing an address already in use under management (dynamic resources cannot be imported).
   */
  adopt?: pulumi.Input<boolean>;
  /**
   * A provisioner whose view of addresses in use outside Pulumi (AWS: every private IP in the
   * pool's subnets) is added to the taken set when planning. {@link EgressIp} sets it.
   */
  observeWith?: pulumi.Input<ProvisionerArgs>;
  /**
   * Plan the address the namespace already has (as `observeWith`'s provisioner reads it from the
   * cluster: its NetNamespace, an EgressIP object selecting it, the egressip-ipam-operator's
   * annotation) instead of a new one, at the first plan only. {@link EgressIp} sets it with `adopt: true`.
   */
  adoptFrom?: AdoptFromArgs;
  /**
   * A webmesh node ID: the allocation is the node's host prefix (/32 or /128, see `prefix`) in a pool
   * with a node `network` and a shared `ledger`; the same node ID gets the same address from every
   * stack, and the pool's `static` assignments are honoured. Changing it replaces the allocation.
   */
  nodeId?: pulumi.Input<string>;
  /**
   * Only one family of a dual-stack pool: `"ipv4"` or `"ipv6"` (default: one address per family of
   * the pool). Refused at preview for a pool without that family. Changing it replaces the allocation.
   */
  family?: "ipv4" | "ipv6";
}

/**
 * An IP address (one per family for a dual-stack pool) from an {@link IpPool}, for any purpose.
 * The address is planned at `check`, so `pulumi preview` shows it, and it stays stable across
 * updates like pulumi-random's values; `pulumi up` reserves exactly the planned address or fails.
 */
export class IpAllocation extends pulumi.dynamic.Resource {
  /** The address, without prefix length (the first family's for a dual-stack pool). */
  declare public readonly ip: pulumi.Output<string>;
  /** One address per range set of the pool. */
  declare public readonly ips: pulumi.Output<string[]>;
  /** The address with the prefix length of its subnet, e.g. `10.0.8.10/24` (as CNI reports it). */
  declare public readonly cidr: pulumi.Output<string>;
  /** The gateway of the range the address is in. */
  declare public readonly gateway: pulumi.Output<string>;
  /** The pool's identity (its URN). */
  declare public readonly poolId: pulumi.Output<string>;
  /** For a node address (`nodeId`): the host prefix, e.g. `10.42.0.2/32`. */
  declare public readonly prefix: pulumi.Output<string | undefined>;
  /**
   * In a shared pool, after `pulumi refresh`: what is wrong with this allocation's claims in the
   * ledger (no claim, only a hold, or another stack's), or undefined when they are its own. The
   * next `pulumi up` claims a missing one again, or refuses at preview an address another stack holds.
   */
  declare public readonly claim: pulumi.Output<string | undefined>;
  /** With `adoptFrom`: where the cluster had the address taken over (`NetNamespace team-a`, …). */
  declare public readonly adoptedFrom: pulumi.Output<string | undefined>;

  constructor(name: string, args: IpAllocationArgs, opts?: pulumi.CustomResourceOptions) {
    const context = providerContext(name, "IpAllocation", opts);
    const props = {
      // Who is asking and the pool's holders before it: read by `check`, not kept in state (where
      // check stores the stack and owner as plain values).
      holder: args.pool.enqueueHolder(context, args.ip, args.observeWith, args.adoptFrom, args.family),
      pool: poolInput(args.pool),
      // Set by the program only when requested; `check` writes the planned address here.
      ip: args.ip,
      adopt: args.adopt,
      observeWith: withSecretKubeconfig(args.observeWith),
      nodeId: args.nodeId,
      adoptFrom: args.adoptFrom,
      family: args.family,
      ips: undefined,
      cidr: undefined,
      gateway: undefined,
      poolId: undefined,
      prefix: undefined,
      claim: undefined,
      adoptedFrom: undefined,
    };
    super(thinProvider("IpAllocation"), name, props, opts, "egress-ipam", "IpAllocation");
  }
}
