import { IpamError } from "../core/ipam-error";
import type { EgressIPProvisioner } from "./egress-ip-provisioner";
import type { NoneProvisionerConfig } from "./provisioner-config";

/**
 * The `none` provisioner: pure IPAM. Nothing outside Pulumi state changes; hosts are labels from
 * `config.hosts` (or the failure domain's own name), and "least loaded" counts the IPs this
 * process placed on each label.
 */
export function noneProvisioner(config: NoneProvisionerConfig): EgressIPProvisioner {
  const load = new Map<string, number>();
  const bump = (host: string, by: number) => load.set(host, Math.max(0, (load.get(host) ?? 0) + by));

  /** The hosts of a failure domain: its list in `config.hosts`, or the domain's own name. */
  const hostsOf = (failureDomain: string) => (config.hosts ? config.hosts[failureDomain] : [failureDomain]);

  return {
    async hostServes(host, failureDomain) {
      return hostsOf(failureDomain)?.includes(host) ?? false;
    },
    async findHostForNewIP(failureDomain) {
      const hosts = hostsOf(failureDomain);
      if (!hosts || hosts.length === 0) {
        const known = Object.keys(config.hosts ?? {}).join(", ") || "none";
        throw new IpamError(
          "HOST_UNAVAILABLE",
          `no host in failure domain "${failureDomain}" (domains configured: ${known})`,
        );
      }
      return hosts.reduce((best, h) => ((load.get(h) ?? 0) < (load.get(best) ?? 0) ? h : best));
    },
    async addSpecifiedIP(_ip, host) {
      bump(host, 1);
    },
    async addRandomIP(host) {
      throw new IpamError(
        "INVALID_INPUT",
        `the none provisioner cannot pick an IP for host "${host}": give the EgressIp a pool, which plans the IP`,
      );
    },
    async removeIP(_ip, host) {
      bump(host, -1);
    },
    async moveIP(_ip, oldHost, newHost) {
      bump(oldHost, -1);
      bump(newHost, 1);
    },
    async checkIP() {},
    async assignCIDR() {},
  };
}
