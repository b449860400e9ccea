import { IpamError } from "../../core/ipam-error";
import type { AdoptPresent, EgressIPProvisioner } from "../egress-ip-provisioner";
import { elasticIpsProblems, type AwsProvisionerConfig } from "../config/aws-provisioner-config";
import { ownerTagKey, ownerTagValue } from "./owner-tag";
import { AwsPlatform, type AwsProvisionerOptions } from "./aws-platform";
import { awsSharedMethods } from "./aws-shared-methods";
import { OwnerScopedWrites, type OwnedMethods } from "./owner-scoped-writes";

export { ownerTagKey, ownerTagValue };
export type { AwsProvisionerOptions };

/** The `aws` provisioner, and views of it that record and check an owner (see {@link AwsProvisioner.forOwner}). */
export interface AwsProvisioner extends EgressIPProvisioner {
  /**
   * The same provisioner (one inventory, one load count) acting for one assignment: the interface
   * it puts an address on is tagged {@link ownerTagKey} = {@link ownerTagValue}; an address already
   * on the target without this owner's tag is refused (somebody else's: a VPC CNI warm IP, another
   * tool, another stack), unless `adopt`, which moves the record to this owner. Whatever `adopt`
   * says, a move never reassigns an address another owner's tag claims, nor one found on the target
   * without this owner's tag; a removal takes the address off only where the record, read
   * immediately before, names no other owner; `checkIP` fails for an address another owner's tag
   * claims. An untagged address on the host (placed by an earlier version) is this owner's for a
   * move, a removal and `checkIP`, but not for putting it back: an untagged EC2 address proves no
   * ownership (a VPC CNI warm IP), so `adopt: "unrecorded"` (an update) takes over nothing, as
   * `false`. The provisioner itself (no owner) writes and checks no tags.
   */
  forOwner(owner: string, adopt?: AdoptPresent): EgressIPProvisioner;
}

/** The owner-scoped methods of `writes`, as a plain object beside the shared ones. */
function ownedMethods(writes: OwnerScopedWrites): Pick<EgressIPProvisioner, OwnedMethods> {
  return {
    addSpecifiedIP: (ip, host, signal) => writes.addSpecifiedIP(ip, host, signal),
    removeIP: (ip, host, signal) => writes.removeIP(ip, host, signal),
    moveIP: (ip, oldHost, newHost, signal) => writes.moveIP(ip, oldHost, newHost, signal),
    checkIP: (ip, host, signal) => writes.checkIP(ip, host, signal),
    publicAddress: (ip, signal) => writes.publicAddress(ip, signal),
    plannedPublicAddress: (ip, signal) => writes.plannedPublicAddress(ip, signal),
    attachPublicAddress: (ip, host, signal) => writes.attachPublicAddress(ip, host, signal),
    detachPublicAddress: (ip, signal, keep) => writes.detachPublicAddress(ip, signal, keep),
  };
}

/**
 * The `aws` provisioner: egress IPs are secondary private IPv4 addresses, or IPv6 addresses, of the
 * primary network interface of EC2 instances (hosts: instance IDs or private DNS names; failure
 * domains: availability zones). Uses the AWS SDK v3 with the default credential chain; every call is
 * retried on throttling and, where a resource must exist, on eventual consistency.
 */
export function awsProvisioner(
  config: AwsProvisionerConfig & { owner?: string; adoptPresent?: AdoptPresent },
  options: AwsProvisionerOptions = {},
): AwsProvisioner {
  const problems = elasticIpsProblems(config.elasticIps);
  if (problems.length > 0) {
    throw new IpamError(
      "INVALID_CONFIG",
      `invalid aws provisioner config: ${problems.map((p) => `${p.property}: ${p.reason}`).join("; ")}`,
    );
  }
  const platform = AwsPlatform.of(config, options);
  const common = awsSharedMethods(platform);
  const owned = (owner: string | undefined, adopt?: AdoptPresent) =>
    ownedMethods(new OwnerScopedWrites(platform, owner, adopt));
  return {
    ...common,
    ...owned(config.owner, config.adoptPresent),
    forOwner: (owner, adopt) => ({ ...common, ...owned(owner, adopt) }),
  };
}
