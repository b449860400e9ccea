import * as pulumi from "@pulumi/pulumi";
import { withSecretKubeconfig, type ProvisionerArgs } from "../secret-kubeconfig";
import { providerContext } from "../context";
import { poolInput, type IpPool } from "../ip-pool/ip-pool";

import { thinProvider } from "../thin-provider";

/** Inputs of {@link CidrAssignment}: give `hosts`, or a `failureDomain` for the provisioner to pick one. */
export interface CidrAssignmentArgs {
  /** The pool whose subnets the hosts may carry. */
  pool: IpPool;
  /** Where to assign: `ocp-dynamic` (HostSubnet.egressCIDRs), `ovn` (egress-assignable label); aws and none do nothing. */
  provisioner: pulumi.Input<ProvisionerArgs>;
  /** The hosts to make able to carry the pool's addresses. */
  hosts?: pulumi.Input<pulumi.Input<string>[]>;
  /** Instead of `hosts`: the host the provisioner picks in this failure domain. */
  failureDomain?: pulumi.Input<string>;
}

/**
 * Makes hosts able to carry a pool's egress addresses (`assignCIDR` per host), for provisioners
 * where the platform places addresses itself (OpenShift `ocp-dynamic`, OVN-Kubernetes).
 * Adding hosts assigns them in place; removing a host or deleting the resource takes off what this
 * assignment put there, and only what no other assignment still holds (owner records on the
 * HostSubnet or Node; see docs/provisioners.md).
 */
export class CidrAssignment extends pulumi.dynamic.Resource {
  /** The hosts assigned. */
  declare public readonly hosts: pulumi.Output<string[]>;
  /** The pool's subnets, as assigned. */
  declare public readonly cidrs: pulumi.Output<string[]>;

  constructor(name: string, args: CidrAssignmentArgs, opts?: pulumi.CustomResourceOptions) {
    const context = providerContext(name, "CidrAssignment", opts);
    const props = {
      stack: context.stack,
      owner: context.owner,
      pool: poolInput(args.pool),
      provisioner: withSecretKubeconfig(args.provisioner),
      requestedHosts: args.hosts,
      failureDomain: args.failureDomain,
      hosts: undefined,
      cidrs: undefined,
    };
    super(thinProvider("CidrAssignment"), name, props, opts, "egress-ipam", "CidrAssignment");
  }
}
