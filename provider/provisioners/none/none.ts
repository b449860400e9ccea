import { canonicalAddress } from "../../allocator";
import { IpamError } from "../../core/ipam-error";
import type { EgressIPProvisioner } from "../egress-ip-provisioner";
import { leastLoaded } from "../least-loaded";
import type { NoneProvisionerConfig } from "../config/provisioner-config";

/**
 * The `none` provisioner: pure IPAM. Nothing outside Pulumi state changes; hosts are labels from
 * `config.hosts` (or the failure domain's own name). With nothing to observe, no host is loaded:
 * an address goes where {@link leastLoaded} breaks the tie, by a hash of the address and the host,
 * so the host shown at preview is the one `up` records whatever order the engine checks in.
 */
export function noneProvisioner(config: NoneProvisionerConfig): EgressIPProvisioner {
  /** The hosts of a failure domain: its list in `config.hosts`, or the domain's own name. */
  const hostsOf = (failureDomain: string) => (config.hosts ? config.hosts[failureDomain] : [failureDomain]);
  const choose = (failureDomain: string, ip?: string) => {
    const hosts = hostsOf(failureDomain);
    if (!hosts || hosts.length === 0) {
      const known = Object.keys(config.hosts ?? {}).join(", ") || "none";
      throw new IpamError(
        "HOST_UNAVAILABLE",
        `no host in failure domain "${failureDomain}" (domains configured: ${known})`,
      );
    }
    return leastLoaded(
      hosts,
      () => 0,
      (h) => h,
      ip,
    );
  };

  return {
    async hostServes(host, failureDomain) {
      return hostsOf(failureDomain)?.includes(host) ?? false;
    },
    async findHostForNewIP(failureDomain) {
      return choose(failureDomain);
    },
    async findHostForIP(ip, failureDomain) {
      return choose(failureDomain, canonicalAddress(ip));
    },
    async addSpecifiedIP() {},
    async addRandomIP(host) {
      throw new IpamError(
        "INVALID_INPUT",
        `the none provisioner cannot pick an IP for host "${host}": give the EgressIp a pool, which plans the IP`,
      );
    },
    async removeIP() {},
    async moveIP() {},
    async checkIP() {},
    async assignCIDR() {},
  };
}
