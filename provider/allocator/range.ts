import { type AddressFamily, familyBits, familyName, formatAddress, parseAddress } from "./address";
import { IpamError } from "../core/ipam-error";
import { formatPrefix, hostBitsError, parsePrefix } from "./prefix";

/** The host-local form of a range, as users and CNI configs write it. Only `subnet` is required. */
export interface RangeInit {
  /** The network, e.g. `10.0.0.0/24`; must be a network address. */
  subnet: string;
  /** First allocatable address, inclusive. Default: network + 1. */
  rangeStart?: string;
  /** Last allocatable address, inclusive. Default: broadcast − 1 (IPv4) or the last address (IPv6). */
  rangeEnd?: string;
  /** Gateway, never handed out. Default: network + 1. */
  gateway?: string;
}

/** A range with every value parsed and every default filled in. Internal. */
export interface ResolvedRange {
  readonly family: AddressFamily;
  readonly prefixLength: number;
  readonly network: bigint;
  readonly start: bigint;
  readonly end: bigint;
  readonly gateway: bigint;
  readonly text: Required<RangeInit>;
}

const resolved = new WeakMap<Range, ResolvedRange>();
let fieldsOf: (range: Range) => Partial<RangeInit>;

/**
 * One contiguous block of allocatable addresses inside a subnet, with host-local's defaults and
 * checks. Fields may be set freely; {@link Range.canonicalize} validates them and rewrites them in
 * canonical form. `contains`, `overlaps` and `toString` validate too but leave the fields as written.
 */
export class Range {
  #init: Partial<RangeInit>;

  /** @param init - the range as written; nothing is checked until it is used. */
  constructor(init: RangeInit) {
    const { subnet, rangeStart, rangeEnd, gateway } = init;
    this.#init = { subnet, rangeStart, rangeEnd, gateway };
  }

  /** The subnet, canonical (`10.0.0.0/24`, `2001:db8::/64`) after {@link Range.canonicalize}. */
  get subnet(): string {
    return this.#init.subnet as string;
  }
  set subnet(value: string) {
    this.#set({ subnet: value });
  }
  /** First address, inclusive; filled in and canonical after {@link Range.canonicalize}. */
  get rangeStart(): string | undefined {
    return this.#init.rangeStart;
  }
  set rangeStart(value: string | undefined) {
    this.#set({ rangeStart: value });
  }
  /** Last address, inclusive; filled in and canonical after {@link Range.canonicalize}. */
  get rangeEnd(): string | undefined {
    return this.#init.rangeEnd;
  }
  set rangeEnd(value: string | undefined) {
    this.#set({ rangeEnd: value });
  }
  /** The gateway; filled in and canonical after {@link Range.canonicalize}. */
  get gateway(): string | undefined {
    return this.#init.gateway;
  }
  set gateway(value: string | undefined) {
    this.#set({ gateway: value });
  }

  /**
   * Validates the range and fills in defaults exactly as host-local does: gateway = network + 1;
   * rangeStart = network + 1 (the allocator skips the gateway); rangeEnd = broadcast − 1 for IPv4, the
   * last address for IPv6. Afterwards every field is a canonical string. Idempotent.
   *
   * @throws IpamError INVALID_RANGE (no subnet; a bound or gateway of the other family; a bound outside
   *   the subnet; rangeStart after rangeEnd), INVALID_ADDRESS (unparsable value), NETWORK_TOO_SMALL
   *   (IPv4 /31, /32; IPv6 /127, /128), HOST_BITS_SET (the message names the real network address).
   */
  canonicalize(): this {
    this.#init = { ...resolveRange(this).text };
    return this;
  }

  /**
   * Whether `ip` lies between rangeStart and rangeEnd (the gateway counts as contained).
   * @throws IpamError INVALID_ADDRESS for a non-address, or any {@link Range.canonicalize} error.
   */
  contains(ip: string): boolean {
    const r = resolveRange(this);
    const { family, value } = parseAddress(ip);
    return family === r.family && value >= r.start && value <= r.end;
  }

  /** Whether the two ranges share an address (never across families). @throws as canonicalize. */
  overlaps(other: Range): boolean {
    const a = resolveRange(this);
    const b = resolveRange(other);
    return a.family === b.family && a.start <= b.end && b.start <= a.end;
  }

  /** `"rangeStart-rangeEnd"` in canonical form, or the subnet as written when the range is invalid. */
  toString(): string {
    try {
      const { text } = resolveRange(this);
      return `${text.rangeStart}-${text.rangeEnd}`;
    } catch {
      return String(this.#init.subnet);
    }
  }

  /** The fields that are set, as a plain object (what `JSON.stringify` writes). */
  toJSON(): Partial<RangeInit> {
    const out: Partial<RangeInit> = {};
    for (const key of ["subnet", "rangeStart", "rangeEnd", "gateway"] as const) {
      if (this.#init[key] !== undefined) out[key] = this.#init[key];
    }
    return out;
  }

  #set(change: Partial<RangeInit>): void {
    this.#init = { ...this.#init, ...change };
    resolved.delete(this);
  }

  static {
    fieldsOf = (range) => range.#init;
  }
}

/**
 * Internal: the parsed, defaulted form of `range`, without touching its fields; cached until a field
 * changes. @throws as {@link Range.canonicalize}.
 */
export function resolveRange(range: Range): ResolvedRange {
  let r = resolved.get(range);
  if (r === undefined) {
    r = resolveInit(fieldsOf(range));
    resolved.set(range, r);
  }
  return r;
}

function resolveInit(init: Partial<RangeInit>): ResolvedRange {
  const subnetText = init.subnet;
  if (subnetText === undefined || subnetText === null || subnetText === "") {
    throw new IpamError("INVALID_RANGE", "range has no subnet");
  }
  const p = parsePrefix(subnetText, "subnet");
  const { family, prefixLength, network, last } = p;
  const subnet = formatPrefix(family, network, prefixLength);
  // A range needs at least one address besides the network address and the gateway.
  if (prefixLength > familyBits(family) - 2) {
    throw new IpamError("NETWORK_TOO_SMALL", `network ${subnet} is too small to allocate from`);
  }
  if (p.address !== network) throw hostBitsError("subnet", subnetText, p);

  const field = (name: "gateway" | "rangeStart" | "rangeEnd", fallback: bigint, inside: boolean): bigint => {
    const text = init[name];
    if (text === undefined || text === null) return fallback;
    const a = parseAddress(text, name);
    if (a.family !== family) {
      throw new IpamError(
        "INVALID_RANGE",
        `${name} ${text} is ${familyName(a.family)} but subnet ${subnet} is not`,
      );
    }
    if (inside && (a.value < network || a.value > last)) {
      throw new IpamError("INVALID_RANGE", `${name} ${text} is not in subnet ${subnet}`);
    }
    return a.value;
  };
  // As in host-local, the gateway may lie outside the subnet; only its family is checked.
  const gateway = field("gateway", network + 1n, false);
  const start = field("rangeStart", network + 1n, true);
  const end = field("rangeEnd", family === 4 ? last - 1n : last, true);
  if (start > end) {
    throw new IpamError(
      "INVALID_RANGE",
      `rangeStart ${formatAddress(family, start)} is after rangeEnd ${formatAddress(family, end)} in subnet ${subnet}`,
    );
  }
  const text = {
    subnet,
    rangeStart: formatAddress(family, start),
    rangeEnd: formatAddress(family, end),
    gateway: formatAddress(family, gateway),
  };
  return { family, prefixLength, network, start, end, gateway, text };
}
