import { formatAddress, parseAddress, tryParseAddress } from "../../allocator/address";
import { IpamError } from "../../core/ipam-error";
import { shown } from "../../core/text";

// Names of the Kubernetes objects of a shared pool. The claim of an address is named from the pool
// and the address itself, so the API server's AlreadyExists is what makes a second claim of one
// address impossible: every spelling of an address must map to exactly one name.

/** Label on every object of a shared pool: the pool's ledger name. */
export const poolLabel = "egress-ipam/pool";
/** Label telling a claim (`claim`) from the pool's definition (`pool`). */
export const roleLabel = "egress-ipam/role";
/** The role label values. */
export const roles = { claim: "claim", pool: "pool" } as const;

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
 * The name of the claim object of `ip` in pool `pool`: `<pool>.<a.b.c.d>` for IPv4 and
 * `<pool>.<32 hex digits>` for IPv6 (the full address, so `fd00::1` and `FD00:0::0001` are one name).
 * @throws IpamError INVALID_ADDRESS when `ip` is not an address.
 */
export function claimName(pool: string, ip: string): string {
  const { family, value } = parseAddress(ip, "claimed address");
  if (family === 4) {
    const octets = [24n, 16n, 8n, 0n].map((shift) => ((value >> shift) & 255n).toString());
    return `${pool}.${octets.join(".")}`;
  }
  return `${pool}.${value.toString(16).padStart(32, "0")}`;
}

/**
 * The address whose claim object is named `name` in pool `pool` (the inverse of {@link claimName}),
 * or undefined when `name` is no claim name of the pool.
 */
export function addressOfClaimName(pool: string, name: string): string | undefined {
  if (!name.startsWith(`${pool}.`)) return undefined;
  const rest = name.slice(pool.length + 1);
  const ip = /^[0-9a-f]{32}$/.test(rest) ? formatAddress(6, BigInt(`0x${rest}`)) : rest;
  const parsed = tryParseAddress(ip);
  if (!parsed) return undefined;
  const canonical = formatAddress(parsed.family, parsed.value);
  return claimName(pool, canonical) === name ? canonical : undefined;
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
