import * as pulumi from "@pulumi/pulumi";
import { withSecretKubeconfig, type ProvisionerArgs } from "../secret-kubeconfig";
import { providerContext } from "../context";
import { thinProvider } from "../thin-provider";

/** Inputs of {@link EgressIpAssignment}. */
export interface EgressIpAssignmentArgs {
  /** The address to place, e.g. an {@link IpAllocation}'s `ip`. */
  ip: pulumi.Input<string>;
  /** Which platform places it, and its settings (see the provisioners page). */
  provisioner: pulumi.Input<ProvisionerArgs>;
  /** The failure domain (zone) whose eligible hosts may carry it. */
  failureDomain: string;
  /** Pins the host; default the least loaded eligible host of the domain, chosen at `check`. */
  host?: pulumi.Input<string>;
  /** Only the namespace's pods with these labels (ovn, cilium, antrea; see {@link EgressIpArgs.podSelector}). */
  podSelector?: pulumi.Input<Record<string, pulumi.Input<string>>>;
  /** The namespace the address serves (required by ocp-static, ocp-dynamic, ovn, antrea and cilium). */
  namespace?: pulumi.Input<string>;
  /**
   * Take over the address when the namespace already has it from somebody else (ocp-static,
   * ocp-dynamic: its NetNamespace lists it; ovn: its EgressIP object does) — written by hand, by
   * another tool, or by another stack. Without it such an address is refused at create, naming
   * where it is; with it, this assignment owns the address, and its delete takes it off.
   */
  adopt?: pulumi.Input<boolean>;
}

/**
 * One egress address placed on a host by a provisioner. {@link EgressIp} creates one per failure
 * domain; use it directly to place an address you already hold (an {@link IpAllocation}).
 * Host change → `moveIP`; address or provisioner change → replace, except aws's `elasticIps`:
 * an update for an address whose own Elastic IP changed (attached and detached where it is), no
 * change for the others; delete → `removeIP`; refresh → `checkIP`, and an address found missing is
 * put back by the next `up`.
 */
export class EgressIpAssignment extends pulumi.dynamic.Resource {
  /** The address. */
  declare public readonly ip: pulumi.Output<string>;
  /** The host carrying it (planned at preview where the provisioner can tell). */
  declare public readonly host: pulumi.Output<string>;
  /** Its failure domain. */
  declare public readonly failureDomain: pulumi.Output<string>;
  /**
   * The public address traffic from it leaves from, where the provisioner gives it one (aws with
   * `elasticIps`: its Elastic IP); undefined otherwise. Known at preview where it is known before
   * placement (an adopted Elastic IP, or one allocated for it earlier), else after `up`; read again
   * by refresh.
   */
  declare public readonly publicIp: pulumi.Output<string | undefined>;

  constructor(name: string, args: EgressIpAssignmentArgs, opts?: pulumi.CustomResourceOptions) {
    const context = providerContext(name, "EgressIpAssignment", opts);
    const props = {
      stack: context.stack,
      owner: context.owner,
      ip: args.ip,
      provisioner: withSecretKubeconfig(args.provisioner),
      failureDomain: args.failureDomain,
      pinnedHost: args.host,
      namespace: args.namespace,
      podSelector: args.podSelector,
      adopt: args.adopt,
      host: undefined,
      placement: undefined,
      publicIp: undefined,
    };
    super(thinProvider("EgressIpAssignment"), name, props, opts, "egress-ipam", "EgressIpAssignment");
  }
}
