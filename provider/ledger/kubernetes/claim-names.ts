import { formatAddress, parseAddress, tryParseAddress } from "../../allocator/address";
import { parsePrefix } from "../../allocator/prefix";
import { IpamError } from "../../core/ipam-error";
import { shown } from "../../core/text";
import { canonicalEntry, isBlock } from "../held-entry";

// Names of the Kubernetes objects of a shared pool. The claim of an entry (an address or a block) is
// named from the pool and the entry itself, so the API server's AlreadyExists is what makes a second
// claim of one entry impossible: every spelling of an entry must map to exactly one name. A block's
// name is also where the markers of the entries inside it live (see block-markers.ts).

/** Label on every object of a shared pool: the pool's ledger name. */
export const poolLabel = "egress-ipam/pool";
/** Label telling a claim (`claim`) from the pool's definition (`pool`). */
export const roleLabel = "egress-ipam/role";
/**
 * The role label values: a `marker` is the object at a block's name that lists the entries held
 * inside the block; a `quota` counts the entries of one quota group (quota-counter.ts). Neither is
 * a claim, and claim listings (which select `claim`) leave them out.
 */
export const roles = { claim: "claim", pool: "pool", marker: "marker", quota: "quota" } as const;

const dnsLabel = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/**
 * Why `name` cannot name a shared pool, or undefined when it can: a DNS label (lowercase letters,
 * digits and `-`, at most 40 characters so that every claim name stays a valid object name).
 */
export function ledgerNameProblem(name: unknown): string | undefined {
  if (typeof name !== "string" || !dnsLabel.test(name) || name.length > 40) {
    return (
      `${shown(name)} is not a pool ledger name: use lowercase letters, digits and "-" ` +
      `(at most 40, starting and ending with a letter or digit), e.g. "egress-prod"`
    );
  }
  return undefined;
}

/** Why `namespace` is not a Kubernetes namespace name, or undefined when it is one. */
export function namespaceProblem(namespace: unknown): string | undefined {
  if (typeof namespace !== "string" || !dnsLabel.test(namespace) || namespace.length > 63) {
    return `${shown(namespace)} is not a Kubernetes namespace name (a DNS label such as "ipam")`;
  }
  return undefined;
}

/**
 * The name of the claim object of `entry` in pool `pool`: for an address `<pool>.<a.b.c.d>` (IPv4) or
 * `<pool>.<32 hex digits>` (IPv6, the full address, so `fd00::1` and `FD00:0::0001` are one name); for
 * a block, the name of its network address followed by `-<prefix length>` (`<pool>.10.20.3.0-24`).
 * @throws IpamError INVALID_ADDRESS when `entry` is neither; HOST_BITS_SET for a CIDR that is not
 *   its own network address (`10.20.3.1/24`), which has no name.
 */
export function claimName(pool: string, entry: string): string {
  if (isBlock(entry)) {
    const p = parsePrefix(entry, "claimed block");
    if (p.address !== p.network) hostBits(entry);
    return `${pool}.${addressPart(p.family, p.network)}-${p.prefixLength}`;
  }
  const { family, value } = parseAddress(entry, "claimed address");
  return `${pool}.${addressPart(family, value)}`;
}

function addressPart(family: 4 | 6, value: bigint): string {
  if (family === 4) return [24n, 16n, 8n, 0n].map((shift) => ((value >> shift) & 255n).toString()).join(".");
  return value.toString(16).padStart(32, "0");
}

function hostBits(entry: string): never {
  throw new IpamError("HOST_BITS_SET", `claimed block ${shown(entry)} is not a network address`);
}

/**
 * The entry (canonical address or block) whose claim object is named `name` in pool `pool` (the
 * inverse of {@link claimName}), or undefined when `name` is no claim name of the pool.
 */
export function addressOfClaimName(pool: string, name: string): string | undefined {
  if (!name.startsWith(`${pool}.`)) return undefined;
  const [, rest = "", length] = /^(.*?)(?:-(\d{1,3}))?$/.exec(name.slice(pool.length + 1)) ?? [];
  const ip = /^[0-9a-f]{32}$/.test(rest) ? formatAddress(6, BigInt(`0x${rest}`)) : rest;
  const parsed = tryParseAddress(ip);
  if (!parsed) return undefined;
  const address = formatAddress(parsed.family, parsed.value);
  const entry = length === undefined ? address : `${address}/${length}`;
  try {
    return claimName(pool, entry) === name ? canonicalEntry(entry) : undefined;
  } catch {
    return undefined;
  }
}

/** The Lease that serializes planning in pool `pool`. */
export const leaseName = (pool: string): string => `egress-ipam.${pool}`;

/** The ConfigMap holding the definition of pool `pool`. */
export const poolObjectName = (pool: string): string => `${pool}.pool`;

/**
 * Parses a duration such as `10s`, `1.5s`, `500ms` or `2m` into milliseconds.
 * @throws IpamError INVALID_CONFIG naming the text and `what` when it is not a positive duration.
 */
export function parseDuration(text: unknown, what: string): number {
  const m = typeof text === "string" ? /^(\d+(?:\.\d+)?)(ms|s|m)$/.exec(text.trim()) : null;
  const unit = m ? ({ ms: 1, s: 1000, m: 60_000 } as const)[m[2] as "ms" | "s" | "m"] : 0;
  const ms = m ? Number(m[1]) * unit : NaN;
  if (!(ms > 0)) {
    throw new IpamError(
      "INVALID_CONFIG",
      `${what} ${shown(text)} is not a duration: write it like "10s", "500ms" or "2m"`,
    );
  }
  return Math.round(ms);
}
