import { errorMessage } from "../../core/failure";
import { warnOnce } from "../../core/warnings";
import type { Ec2, Ec2Instance, Eni } from "./ec2";
import { ec2ErrorCode } from "./ec2-retry";
import { ec2Failure } from "./ec2-failure";
import { ownerTagKey } from "./owner-tag";

/**
 * The owner record of one assignment on EC2 network interfaces: the tag {@link ownerTagKey} =
 * `ownerTagValue`, read, written and taken off. Without an owner (the provisioner itself),
 * nothing is written and every address reads as nobody else's.
 */
export class OwnerRecords {
  /** `tagged`: the record's value for this owner (`ownerTagValue` of the owner), or undefined without one. */
  constructor(
    private readonly ec2: Ec2,
    readonly tagged: string | undefined,
  ) {}

  /** What `eni`'s record says of `ip`: the owner tag's value, or undefined when it has none. */
  recordOf(eni: Eni, ip: string): string | undefined {
    return eni.tags?.[ownerTagKey(ip)];
  }
  /** Why `eni`'s tag says the address is not this owner's ("" when it is, or nobody's tag is there). */
  claimedByOther(eni: Eni, ip: string) {
    const value = this.recordOf(eni, ip);
    return this.tagged !== undefined && value !== undefined && value !== this.tagged ? value : "";
  }
  /** Whose `ip` on `eni` is, as its record says, for messages about an address that is not ours. */
  whose(eni: Eni, ip: string) {
    const value = this.recordOf(eni, ip);
    return value
      ? `recorded for another assignment (tag ${ownerTagKey(ip)}=${value})`
      : `not put there by this package (no ${ownerTagKey(ip)} tag)`;
  }
  /**
   * Whether `holder`, an interface of another host than the one state names, has `ip` with this
   * owner's own record: an interrupted move of its own (the record goes first, then EC2
   * reassigns the address) left it there, before state learnt the host. It is this owner's to take.
   */
  leftByOwnMove(holder: Eni, ip: string) {
    return this.tagged !== undefined && this.recordOf(holder, ip) === this.tagged;
  }
  /** The host's interfaces as they are now: with their tags when there is an owner to read. */
  interfacesNow(instance: Ec2Instance, signal?: AbortSignal) {
    return this.tagged === undefined
      ? Promise.resolve(instance.interfaces)
      : this.ec2.interfacesOf(instance.id, signal);
  }
  /** Records this owner for `ip` on the interface `eniId` (nothing without an owner). */
  tag(eniId: string, ip: string, signal?: AbortSignal) {
    return this.tagged === undefined
      ? Promise.resolve()
      : this.ec2.tag(eniId, { [ownerTagKey(ip)]: this.tagged }, signal).catch((err) => {
          throw ec2Failure(
            `tagging ${eniId} with ${ownerTagKey(ip)} (the record that this assignment put ${ip} there)`,
            err,
            `the credentials need ec2:CreateTags on network interfaces; an interface takes at most 50 tags`,
          );
        });
  }
  /**
   * Takes this owner's record of `ip` off the interfaces `eniIds`. A record left behind is harmless
   * (a later placement there overwrites it; an address found with it is still refused to others),
   * so failing to remove one warns rather than fails.
   */
  async untag(eniIds: string[], ip: string) {
    if (this.tagged === undefined) return;
    for (const id of eniIds) {
      await this.ec2.untag(id, [ownerTagKey(ip)]).catch((err) => {
        if (ec2ErrorCode(err) === "InvalidNetworkInterfaceID.NotFound") return;
        warnOnce(
          `could not remove the tag ${ownerTagKey(ip)} from ${id}: ${errorMessage(err)}; ` +
            `the credentials need ec2:DeleteTags on network interfaces (the tag can also be removed by hand)`,
        );
      });
    }
  }
}
