import { IpamError } from "../../core/ipam-error";
import { elasticIpFor, type ElasticIpsSetting } from "../config/aws-provisioner-config";
import type { Ec2, ElasticIp, Eni } from "./ec2";
import { ec2Failure } from "./ec2-failure";
import { ec2ErrorCode } from "./ec2-retry";
import { shellCommand } from "../../core/text";
import type { Placement } from "../egress-ip-provisioner";

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
  /**
   * Disassociates the address's Elastic IP, and releases it if this package allocated it. Gone
   * already is fine. One that `keep` (what the next settings give the address: an allocation ID, or
   * `"allocate"`) would use again is left as it is.
   */
  detach(ip: string, signal?: AbortSignal, keep?: string): Promise<void>;
  /** Why the address's public side is not as it should be on `eniId` (missing, elsewhere), or undefined when it is. */
  problem(ip: string, eniId: string, signal?: AbortSignal): Promise<string | undefined>;
  /** The public IPv4 address associated with `ip` now, or undefined (none is, or the address gets none). */
  publicAddress(ip: string, signal?: AbortSignal): Promise<string | undefined>;
  /**
   * The public IPv4 address `ip` will have once attached, where it is known before: an adopted
   * allocation's, or the one this package allocated for it earlier; undefined otherwise.
   * @throws IpamError NOT_FOUND for an adopted allocation that does not exist; ADDRESS_IN_USE for one associated with another address.
   */
  planned(ip: string, signal?: AbortSignal): Promise<string | undefined>;
}

/** Where an Elastic IP is, for messages. */
const whereIs = (eip: ElasticIp) =>
  eip.associationId
    ? `associated with ${eip.privateIp ?? "?"} on ${eip.networkInterfaceId ?? "?"}`
    : "associated with nothing";

/**
 * The Elastic IP that `want` (what `elasticIps` gives `ip`: an allocation ID or "allocate") names
 * among `eips`: the adopted allocation, or the first (by allocation ID) that this package allocated
 * for `ip` and `owner` (its {@link eipOwnerTag} value).
 */
export function wantedElasticIp(
  want: string,
  ip: string,
  owner: string,
  eips: readonly ElasticIp[],
): ElasticIp | undefined {
  if (want !== "allocate") return eips.find((e) => e.allocationId === want);
  return eips
    .filter((e) => e.tags[eipOwnerTag] === owner && e.tags[eipAddressTag] === ip)
    .sort((a, b) => a.allocationId.localeCompare(b.allocationId))[0];
}

/**
 * Why `ip` on the interface `eniId` does not leave from the Elastic IP that `want` gives it, among
 * `eips` (what EC2 lists; see {@link wantedElasticIp}): gone, associated with nothing or elsewhere;
 * undefined when it is associated there.
 */
export function elasticIpProblem(
  want: string,
  ip: string,
  eniId: string,
  owner: string,
  eips: readonly ElasticIp[],
): string | undefined {
  const eip = wantedElasticIp(want, ip, owner, eips);
  if (!eip) {
    return want === "allocate"
      ? `the Elastic IP this package allocated for it (tagged ${eipOwnerTag}, ${eipAddressTag}=${ip}) is gone`
      : `the Elastic IP ${want} that elasticIps.adopt gives it does not exist`;
  }
  if (eip.networkInterfaceId === eniId && eip.privateIp === ip) return undefined;
  const where = `its Elastic IP ${eip.allocationId} (${eip.publicIp}) is ${whereIs(eip)}`;
  return takenOver(eip, ip, owner)
    ? `${where}, and recorded for ${eip.tags[eipOwnerTag]} (taken over): nothing is disassociated; give this ` +
        `address another allocation in elasticIps.adopt, or take it back from that owner first`
    : where;
}

/**
 * Whether an adopted Elastic IP is another owner's now: associated with another address and tagged
 * for another owner (who adopted it after this one). It is theirs: nothing of this owner's frees it.
 */
function takenOver(eip: ElasticIp, ip: string, owner: string): boolean {
  const recorded = eip.tags[eipOwnerTag];
  return (
    eip.associationId !== undefined && eip.privateIp !== ip && recorded !== undefined && recorded !== owner
  );
}

/**
 * The public side of `ip` on the interface `eniId` as `check` reports it (see
 * {@link Placement.publicIp} and the rest), from the region's Elastic IPs: the one associated with
 * it there, and whether it is the one the setting gives it (`owner`: the interface's owner record
 * for the address). `where` is the aws CLI's `--region` (and `--endpoint-url`) for the fix.
 */
export function elasticIpPlacement(
  setting: ElasticIpsSetting | undefined,
  eips: readonly ElasticIp[],
  eniId: string,
  ip: string,
  owner: string,
  where: string[],
): Pick<Placement, "publicIp" | "publicId" | "publicProblem" | "publicFix"> {
  const eip = eips.find((e) => e.networkInterfaceId === eniId && e.privateIp === ip);
  const want = elasticIpFor(setting, ip);
  const problem = want && elasticIpProblem(want, ip, eniId, owner, eips);
  // An adopted one associated with another address: up never takes it from there, so it is freed by hand.
  const elsewhere = problem && want !== "allocate" ? wantedElasticIp(want, ip, owner, eips) : undefined;
  const freeIt = elsewhere?.associationId && elsewhere.privateIp !== ip && !takenOver(elsewhere, ip, owner);
  return {
    ...(eip ? { publicIp: eip.publicIp, publicId: eip.allocationId } : {}),
    ...(problem ? { publicProblem: problem } : {}),
    ...(freeIt
      ? {
          publicFix: shellCommand(
            ...["aws", "ec2", "disassociate-address", ...where],
            ...["--association-id", elsewhere.associationId!],
          ),
        }
      : {}),
  };
}

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
    ec2.elasticIps(
      {
        filters: [
          { Name: `tag:${eipOwnerTag}`, Values: [owner] },
          { Name: `tag:${eipAddressTag}`, Values: [ip] },
        ],
      },
      signal,
    );
  /** The address's Elastic IP as EC2 has it now, if it exists. */
  const current = async (ip: string, want: string, signal?: AbortSignal) =>
    wantedElasticIp(
      want,
      ip,
      owner,
      want === "allocate" ? await ours(ip, signal) : await ec2.elasticIps({ allocationIds: [want] }, signal),
    );
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

  /**
   * The address's Elastic IP as EC2 has it now (undefined: none yet, to be allocated), refused where
   * an adopted allocation cannot be had.
   */
  const usable = async (ip: string, want: string, signal?: AbortSignal) => {
    const eip = await current(ip, want, signal).catch(describeFailure(`reading the Elastic IP of ${ip}`));
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
          (takenOver(eip, ip, owner)
            ? `it is recorded for ${eip.tags[eipOwnerTag]}, who took it over: give ${ip} another allocation in ` +
              `elasticIps.adopt, or have that owner give it up first`
            : `disassociate it there (aws ec2 disassociate-address --association-id ${eip.associationId}) and ` +
              `run pulumi up again, or give ${ip} another allocation in elasticIps.adopt`),
      );
    }
    return eip;
  };

  return {
    async attach(ip, eni, adopt, signal) {
      const want = wanted(ip);
      if (!want) return;
      let eip = await usable(ip, want, signal);
      // An adopted allocation that this package allocated for another owner becomes this owner's:
      // that owner's removal (which finds its Elastic IPs by this tag) leaves it alone from now on,
      // wherever the address goes. This owner never releases it (it is adopted).
      const formerOwner = eip?.tags[eipOwnerTag];
      if (eip && want !== "allocate" && formerOwner !== undefined && formerOwner !== owner) {
        await ec2.tag(eip.allocationId, { [eipOwnerTag]: owner }, signal);
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

    async detach(ip, signal, keep) {
      const want = wanted(ip);
      if (!want) return;
      const found =
        want === "allocate"
          ? await ours(ip, signal)
          : (await ec2.elasticIps({ allocationIds: [want] }, signal)).filter((e) => e.privateIp === ip);
      const keptBy = (eip: (typeof found)[number]) =>
        eip.allocationId === keep ||
        (keep === "allocate" && eip.tags[eipOwnerTag] === owner && eip.tags[eipAddressTag] === ip);
      for (const eip of found) {
        if (keptBy(eip)) continue;
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
      return elasticIpProblem(want, ip, eniId, owner, eip ? [eip] : []);
    },

    async planned(ip, signal) {
      const want = wanted(ip);
      return want ? (await usable(ip, want, signal))?.publicIp : undefined;
    },

    async publicAddress(ip, signal) {
      const want = wanted(ip);
      if (!want) return undefined;
      const eip = await current(ip, want, signal);
      return eip?.associationId && eip.privateIp === ip ? eip.publicIp : undefined;
    },
  };
}
