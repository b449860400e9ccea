import { IpamError } from "../../core/ipam-error";
import { shellCommand } from "../../core/text";
import { addressFamily, canonicalAddress } from "../../allocator";
import { parseAddressBlock, type AddressBlock } from "../../allocator/exclusions";
import { prefixContains } from "../../allocator/prefix";
import type { Eni } from "./ec2";
import { hostLabel } from "./hosts";
import { prefixUseWithin } from "./prefixes";
import { ec2Failure } from "./ec2-failure";
import type { EgressIPProvisioner } from "../egress-ip-provisioner";
import { elasticIpPlacement } from "./elastic-ips";
import { ownerTagKey } from "./owner-tag";
import type { AwsPlatform } from "./aws-platform";
import type { OwnedMethods } from "./owner-scoped-writes";

/**
 * The methods of the `aws` provisioner that act for no owner, the same in every view of it (see
 * `AwsProvisioner.forOwner`): choosing hosts, letting EC2 pick an address, and reading what the
 * subnets hold.
 */
export function awsSharedMethods(platform: AwsPlatform): Omit<EgressIPProvisioner, OwnedMethods> {
  const { ec2, hosts, plan, region, config } = platform;
  return {
    findHostForNewIP: (failureDomain, signal) => hosts.choose(failureDomain, signal),

    findHostForIP: (ip, failureDomain, signal) => plan.choose(canonicalAddress(ip), failureDomain, signal),

    hostServes: (host, failureDomain, signal) => hosts.serves(host, failureDomain, signal),

    async addRandomIP(host, signal) {
      const { instance, eni } = await platform.target(host, signal);
      const before = new Set(eni.addresses.map((a) => a.ip));
      const listed = await ec2.assign(eni.id, { count: 1 }, signal).catch(async (err) => {
        const doing = `assigning a new address to ${eni.id} of host ${hostLabel(instance)}`;
        throw await platform.assignFailure(doing, err, instance, eni);
      });
      const fresh = listed.length === 1 ? listed : listed.filter((ip) => !before.has(ip));
      if (fresh.length !== 1) {
        throw new IpamError(
          "PROVISIONER_FAILED",
          `asked EC2 for one new address on ${eni.id} of host ${hostLabel(instance)} and got ${fresh.length} ` +
            `(${fresh.join(", ") || "none"}); check the interface and unassign what is not wanted`,
        );
      }
      hosts.placed(instance.id);
      return canonicalAddress(fresh[0]!);
    },

    async assignCIDR() {},

    async usedAddresses(cidrs, signal) {
      // Every address of every interface, IPv4 and IPv6, and what delegated prefixes hold (an IPv6
      // prefix as one block), in address order.
      const used = new Map<string, AddressBlock>();
      for (const eni of await platform.interfacesWithin(cidrs, signal)) {
        const inside = eni.addresses
          .map((a) => a.ip)
          .filter((ip) => cidrs.some((c) => prefixContains(c, ip)));
        for (const text of [...inside, ...prefixUseWithin(eni, cidrs)])
          used.set(text, parseAddressBlock(text));
      }
      const order = ([, a]: [string, AddressBlock], [, b]: [string, AddressBlock]) =>
        a.family - b.family || (a.first < b.first ? -1 : a.first > b.first ? 1 : 0);
      return [...used].sort(order).map(([text]) => text);
    },

    async placements(cidrs, signal) {
      const enis = await platform.interfacesWithin(cidrs, signal);
      const where = ["--region", region, ...(config.endpoint ? ["--endpoint-url", config.endpoint] : [])];
      // With elasticIps, each address's Elastic IP: every one of the region in one call (a few, by quota).
      const eips =
        config.elasticIps === undefined
          ? undefined
          : await ec2.elasticIps({ filters: [] }, signal).catch((err) => {
              throw ec2Failure(
                `reading the Elastic IPs of ${region}`,
                err,
                `the credentials need ec2:DescribeAddresses`,
              );
            });
      // An allocated one is tagged with the owner the interface's record names.
      const publicSide = (eni: Eni, ip: string) =>
        eips
          ? elasticIpPlacement(config.elasticIps, eips, eni.id, ip, eni.tags?.[ownerTagKey(ip)] ?? "", where)
          : {};
      // A host may be named by its private DNS name in state (the OpenShift node name on AWS).
      const ids = [...new Set(enis.flatMap((n) => (n.instanceId ? [n.instanceId] : [])))];
      const dnsNames = new Map<string, string>();
      for (let i = 0; i < ids.length; i += 200) {
        const filter = [{ Name: "instance-id", Values: ids.slice(i, i + 200) }];
        for (const instance of await ec2.instances(filter, signal)) {
          if (instance.privateDnsName) dnsNames.set(instance.id, instance.privateDnsName);
        }
      }
      return enis.flatMap((eni) =>
        eni.addresses
          .filter((a) => !a.primary && cidrs.some((c) => prefixContains(c, a.ip)))
          .map((a) => ({
            ip: canonicalAddress(a.ip),
            host: eni.instanceId ?? eni.id,
            aliases: eni.instanceId && dnsNames.has(eni.instanceId) ? [dnsNames.get(eni.instanceId)!] : [],
            removeCommand:
              addressFamily(a.ip) === 6
                ? shellCommand(
                    ...["aws", "ec2", "unassign-ipv6-addresses", ...where],
                    ...["--network-interface-id", eni.id, "--ipv6-addresses", a.ip],
                  )
                : shellCommand(
                    ...["aws", "ec2", "unassign-private-ip-addresses", ...where],
                    ...["--network-interface-id", eni.id, "--private-ip-addresses", a.ip],
                  ),
            // The owner record: which assignment's tag (a VPC CNI pod or warm IP has none).
            ...(eni.tags?.[ownerTagKey(a.ip)] ? { owners: [eni.tags[ownerTagKey(a.ip)]!] } : {}),
            ...publicSide(eni, canonicalAddress(a.ip)),
          })),
      );
    },
    placementOwners: "hashed",
  };
}
