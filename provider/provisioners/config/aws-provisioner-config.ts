import { formatAddress, tryParseAddress } from "../../allocator/address";
import { shown } from "../../core/text";

/**
 * Settings of the `aws` provisioner: hosts are EC2 instances (instance ID or private DNS name, which
 * is the OpenShift node name on AWS), failure domains are availability zones, and egress IPs are
 * secondary private IPv4 addresses or IPv6 addresses of each host's primary network interface.
 * Credentials come from the default AWS credential chain of the process running the deployment,
 * never from here.
 */
export interface AwsProvisionerConfig {
  kind: "aws";
  /** The region of the instances, e.g. `us-east-1`. */
  region: string;
  /** An EC2 endpoint URL other than the region's default (a VPC endpoint, or an emulator in tests). */
  endpoint?: string;
  /** EC2 tags every eligible host carries (e.g. `{ "kubernetes.io/cluster/<infra-id>": "owned" }`); default: every running instance. */
  hostTags?: Record<string, string>;
  /** Public egress: an Elastic IP for each private IPv4 egress address; see {@link ElasticIpsSetting}. */
  elasticIps?: ElasticIpsSetting;
}

/**
 * Which private IPv4 egress addresses get an Elastic IP, associated with the address on whichever
 * interface holds it (moved with it on failover), so that traffic from it leaves the VPC from a
 * public address that outside firewalls can allow-list. IPv6 addresses get none (they are public).
 *
 * - `"allocate"`: every address gets an Elastic IP this package allocates (tagged with its owner and
 *   address) and releases when the address is removed.
 * - `{ adopt: { "<private IPv4>": "eipalloc-…" }, allocate?: boolean }`: those addresses get those
 *   existing Elastic IPs (already allow-listed somewhere), which are only disassociated, never
 *   released; the others get one allocated with `allocate: true`, none without.
 */
export type ElasticIpsSetting = "allocate" | { adopt: Record<string, string>; allocate?: boolean };

/**
 * What the setting gives one private address: an allocation ID (adopted), `"allocate"`, or
 * undefined (no Elastic IP: none configured, not listed without `allocate`, or an IPv6 address).
 * A resource's diff can compare this per address, so that a change for one address (an adopt entry
 * added) does not replace the others.
 */
export function elasticIpFor(setting: ElasticIpsSetting | undefined, ip: string): string | undefined {
  const address = tryParseAddress(ip);
  if (setting === undefined || address?.family !== 4) return undefined;
  if (setting === "allocate") return "allocate";
  const canonical = formatAddress(4, address.value);
  const adopted = Object.entries(setting.adopt).find(([key]) => {
    const k = tryParseAddress(key);
    return k?.family === 4 && formatAddress(4, k.value) === canonical;
  });
  return adopted?.[1] ?? (setting.allocate === true ? "allocate" : undefined);
}

const allocationIdPattern = /^eipalloc-[0-9a-f]{8,17}$/;

/**
 * Problems of an `elasticIps` setting, as `check` failures (`property` relative to the provisioner
 * config): none for `undefined`.
 */
export function elasticIpsProblems(value: unknown): { property: string; reason: string }[] {
  if (value === undefined || value === "allocate") return [];
  const form = `must be "allocate" or { adopt: { "<private IPv4>": "eipalloc-…" }, allocate?: boolean }`;
  if (!value || typeof value !== "object" || Array.isArray(value)) {
    return [{ property: "elasticIps", reason: `${form} (got ${shown(value)})` }];
  }
  const v = value as Record<string, unknown>;
  const problems: { property: string; reason: string }[] = [];
  for (const key of Object.keys(v)) {
    if (key !== "adopt" && key !== "allocate") {
      problems.push({ property: `elasticIps.${key}`, reason: `unknown setting; elasticIps ${form}` });
    }
  }
  if (v.allocate !== undefined && typeof v.allocate !== "boolean") {
    problems.push({
      property: "elasticIps.allocate",
      reason: `must be true or false (got ${shown(v.allocate)})`,
    });
  }
  const adopt = v.adopt as Record<string, unknown> | undefined;
  if (!adopt || typeof adopt !== "object" || Array.isArray(adopt)) {
    problems.push({ property: "elasticIps.adopt", reason: `${form} (got ${shown(adopt)})` });
    return problems;
  }
  const seen = new Map<string, string>();
  for (const [ip, id] of Object.entries(adopt)) {
    const at = `elasticIps.adopt["${ip}"]`;
    if (tryParseAddress(ip)?.family !== 4) {
      problems.push({
        property: at,
        reason: `${shown(ip)} is not an IPv4 address: Elastic IPs are for IPv4 egress`,
      });
    }
    if (typeof id !== "string" || !allocationIdPattern.test(id)) {
      problems.push({
        property: at,
        reason: `must be an Elastic IP allocation ID such as "eipalloc-0abc1234" (got ${shown(id)})`,
      });
    } else if (seen.has(id)) {
      problems.push({
        property: at,
        reason: `${id} is given to ${seen.get(id)} too: an Elastic IP has one private address`,
      });
    } else {
      seen.set(id, ip);
    }
  }
  return problems;
}
