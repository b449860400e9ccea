import { IpamError } from "../../core/ipam-error";
import { elasticIpFor, type ElasticIpsSetting } from "./aws-provisioner-config";
import type { Ec2, ElasticIp, Eni } from "./ec2";
import { ec2Failure } from "./ec2-failure";
import { ec2ErrorCode } from "./ec2-retry";

/** The tag on an Elastic IP this package allocated: whose it is (the owner tag value of the assignment). */
export const eipOwnerTag = "egress-ipam/owner";
/** The tag on an Elastic IP this package allocated: the private address it is for. */
export const eipAddressTag = "egress-ipam/private-ip";

/**
 * The Elastic IPs of one assignment's private IPv4 egress addresses, as `elasticIps` says (see
 * {@link ElasticIpsSetting}). Which Elastic IP an address has is read from EC2 every time, never
 * remembered: an adopted one by its allocation ID, an allocated one by its tags (this owner, this
 * address). Without the setting, or for an address it gives none (IPv6), every method is a no-op
 * that calls nothing, so the permissions it needs are asked only of those who use it.
 */
export interface PublicAddresses {
  /**
   * Associates the address's Elastic IP with it on `eni`, allocating one first where this package
   * allocates, or taking over another owner's allocation associated with it when `adopt` (the
   * public address stays with a handed-over address). Reassociates from wherever it is (a move).
   * @throws IpamError NOT_FOUND for an adopted allocation that does not exist; ADDRESS_IN_USE for one associated with another address.
   */
  attach(ip: string, eni: Eni, adopt: boolean, signal?: AbortSignal): Promise<void>;
  /** Disassociates the address's Elastic IP, and releases it if this package allocated it. Gone already is fine. */
  detach(ip: string, signal?: AbortSignal): Promise<void>;
  /** Why the address's public side is not as it should be on `eniId` (missing, elsewhere), or undefined when it is. */
  problem(ip: string, eniId: string, signal?: AbortSignal): Promise<string | undefined>;
  /** The public IPv4 address associated with `ip` now, or undefined (none is, or the address gets none). */
  publicAddress(ip: string, signal?: AbortSignal): Promise<string | undefined>;
}

/** Where an Elastic IP is, for messages. */
const whereIs = (eip: ElasticIp) =>
  eip.associationId
    ? `associated with ${eip.privateIp ?? "?"} on ${eip.networkInterfaceId ?? "?"}`
    : "associated with nothing";

/**
 * The {@link PublicAddresses} of an owner (its {@link eipOwnerTag} value) under the setting.
 */
export function publicAddresses(
  ec2: Ec2,
  setting: ElasticIpsSetting | undefined,
  owner: string,
  region: string,
): PublicAddresses {
  /** What `ip` should have: an adopted allocation ID, "allocate", or nothing. */
  const wanted = (ip: string): string | undefined => elasticIpFor(setting, ip);
  const ours = (ip: string, signal?: AbortSignal) =>
    ec2
      .elasticIps(
        {
          filters: [
            { Name: `tag:${eipOwnerTag}`, Values: [owner] },
            { Name: `tag:${eipAddressTag}`, Values: [ip] },
          ],
        },
        signal,
      )
      .then((list) => list.sort((a, b) => a.allocationId.localeCompare(b.allocationId)));
  /** The address's Elastic IP as EC2 has it now, if it exists. */
  const current = async (ip: string, want: string, signal?: AbortSignal) =>
    want === "allocate"
      ? (await ours(ip, signal))[0]
      : (await ec2.elasticIps({ allocationIds: [want] }, signal))[0];
  const describeFailure = (doing: string) => (err: unknown) => {
    throw err instanceof IpamError
      ? err
      : ec2Failure(doing, err, "the credentials need ec2:DescribeAddresses");
  };

  const allocate = (ip: string, signal?: AbortSignal) =>
    ec2.allocateElasticIp({ [eipOwnerTag]: owner, [eipAddressTag]: ip }, signal).catch((err) => {
      throw ec2Failure(
        `allocating an Elastic IP for ${ip} in ${region}`,
        err,
        ec2ErrorCode(err) === "AddressLimitExceeded"
          ? `the region's Elastic IP quota is reached: release unused Elastic IPs, ask AWS for a higher quota, ` +
              `or give existing ones with elasticIps.adopt`
          : `the credentials need ec2:AllocateAddress and ec2:CreateTags on elastic-ip`,
      );
    });

  return {
    async attach(ip, eni, adopt, signal) {
      const want = wanted(ip);
      if (!want) return;
      let eip = await current(ip, want, signal).catch(describeFailure(`reading the Elastic IP of ${ip}`));
      if (!eip && want !== "allocate") {
        throw new IpamError(
          "NOT_FOUND",
          `the Elastic IP ${want} that elasticIps.adopt gives ${ip} does not exist in ${region}; give the ` +
            `allocation ID of an existing Elastic IP (aws ec2 describe-addresses), or remove ${ip} from elasticIps.adopt`,
        );
      }
      if (eip && want !== "allocate" && eip.associationId && eip.privateIp !== ip) {
        throw new IpamError(
          "ADDRESS_IN_USE",
          `cannot give ${ip} the Elastic IP ${want} (${eip.publicIp}): it is ${whereIs(eip)}, not with ${ip}; ` +
            `disassociate it there (aws ec2 disassociate-address --association-id ${eip.associationId}) and run ` +
            `pulumi up again, or give ${ip} another allocation in elasticIps.adopt`,
        );
      }
      if (!eip && adopt) {
        // A handed-over address keeps its public address: another owner's allocation on it becomes this one's.
        const onIt = (
          await ec2.elasticIps({ filters: [{ Name: "network-interface-id", Values: [eni.id] }] }, signal)
        ).find((e) => e.privateIp === ip && e.tags[eipOwnerTag] !== undefined);
        if (onIt) {
          await ec2.tag(onIt.allocationId, { [eipOwnerTag]: owner }, signal);
          eip = onIt;
        }
      }
      eip ??= await allocate(ip, signal);
      if (eip.networkInterfaceId === eni.id && eip.privateIp === ip) return;
      await ec2.associateElasticIp(eip.allocationId, eni.id, ip, signal).catch((err) => {
        throw ec2Failure(
          `associating the Elastic IP ${eip.allocationId} (${eip.publicIp}) with ${ip} on ${eni.id}`,
          err,
          `the credentials need ec2:AssociateAddress`,
        );
      });
    },

    async detach(ip, signal) {
      const want = wanted(ip);
      if (!want) return;
      const found =
        want === "allocate"
          ? await ours(ip, signal)
          : (await ec2.elasticIps({ allocationIds: [want] }, signal)).filter((e) => e.privateIp === ip);
      for (const eip of found) {
        const doing = `disassociating the Elastic IP ${eip.allocationId} (${eip.publicIp}) from ${ip}`;
        if (eip.associationId) {
          await ec2.disassociateElasticIp(eip.associationId, signal).catch((err) => {
            throw ec2Failure(doing, err, `the credentials need ec2:DisassociateAddress`);
          });
        }
        // Only what this package allocated (its tags say so) is released; an adopted one stays the user's.
        if (want !== "allocate" || eip.tags[eipOwnerTag] !== owner) continue;
        await ec2.releaseElasticIp(eip.allocationId, signal).catch((err) => {
          throw ec2Failure(
            `releasing the Elastic IP ${eip.allocationId} (${eip.publicIp}) that this package allocated for ${ip}`,
            err,
            `the credentials need ec2:ReleaseAddress; release it by hand (aws ec2 release-address --allocation-id ` +
              `${eip.allocationId}) if it is not wanted any more`,
          );
        });
      }
    },

    async problem(ip, eniId, signal) {
      const want = wanted(ip);
      if (!want) return undefined;
      const eip = await current(ip, want, signal);
      if (!eip) {
        return want === "allocate"
          ? `the Elastic IP this package allocated for it (tagged ${eipOwnerTag}, ${eipAddressTag}=${ip}) is gone`
          : `the Elastic IP ${want} that elasticIps.adopt gives it does not exist`;
      }
      if (eip.networkInterfaceId === eniId && eip.privateIp === ip) return undefined;
      return `its Elastic IP ${eip.allocationId} (${eip.publicIp}) is ${whereIs(eip)}`;
    },

    async publicAddress(ip, signal) {
      const want = wanted(ip);
      if (!want) return undefined;
      const eip = await current(ip, want, signal);
      return eip?.associationId && eip.privateIp === ip ? eip.publicIp : undefined;
    },
  };
}
