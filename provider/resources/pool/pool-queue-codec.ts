// The wire form of a pool's holder queue: one line of JSON per holder, `[owner, ip, observer, adopt]`
// with trailing defaults left out; ip is "" when none was requested and "?" when it is not known to
// other holders, observer -1 when there is none. The owner's URN is written without the
// `urn:pulumi:<stack>::<project>::` that every holder of a stack shares, and as `:<name>` when its
// type is the previous holder's. The lines travel in a file (pool-queue-file), or, inline, every
// earlier line in every holder's input, whose total grows with the square of the holders; one short
// line per holder keeps either as small as it can be. No imports: the program side uses it too.

/** One holder of a pool as the program created it. */
export interface QueuedHolder {
  /** The holder's URN. */
  owner: string;
  /**
   * The requested address when the program gave a plain string; `null` when it comes from another
   * resource or a promise (then it is not known when other holders are planned). A block holder
   * writes its requested CIDR, or `/<length>` (`/`: the pool rule's default) for an automatic block.
   */
  ip?: string | null;
  /** Index of the holder's `observeWith` among the queue's observers. */
  observer?: number;
  /**
   * The namespace (and failure domain) whose present address the holder adopts (an EgressIp with
   * `adopt`): planned as that address, found through its observer, or automatically when it has none.
   */
  adopt?: {
    namespace: string;
    failureDomain?: string;
    domains?: string[];
    onlyPool?: boolean;
    families?: ("ipv4" | "ipv6")[];
  };
  /** The one family the holder takes from a multi-family pool (an IpAllocation's `family`). */
  family?: AddressFamilyName;
}

/** A family as holders name it. */
export type AddressFamilyName = "ipv4" | "ipv6";

/** The part of a URN shared by every resource of the stack: `urn:pulumi:<stack>::<project>::`. */
export function urnPrefix(urn: string): string {
  const parts = urn.split("::");
  return parts.length < 3 ? "" : `${parts[0]}::${parts[1]}::`;
}

/** The qualified type of a URN (with its parents' types): what lies between the prefix and the name. */
function typeOf(urn: string, prefix: string): string | undefined {
  if (prefix === "" || !urn.startsWith(prefix)) return undefined;
  const end = urn.indexOf("::", prefix.length);
  return end < 0 ? undefined : urn.slice(prefix.length, end);
}

/**
 * One holder's line; `prefix` is left out of its URN. `previous` is the URN of the holder queued
 * just before it (none for the first): when both have the same type, only the name is written.
 */
export function encodeHolder(holder: QueuedHolder, prefix: string, previous?: string): string {
  let owner = holder.owner;
  const type = typeOf(owner, prefix);
  if (type !== undefined) {
    const sameType = previous !== undefined && typeOf(previous, prefix) === type;
    owner = sameType ? `:${owner.slice(prefix.length + type.length + 2)}` : owner.slice(prefix.length);
  }
  const line: unknown[] = [owner, holder.ip === null ? "?" : (holder.ip ?? ""), holder.observer ?? -1];
  if (holder.family) line.push(holder.adopt ?? 0, holder.family);
  else if (holder.adopt) line.push(holder.adopt);
  else {
    if (line[2] === -1) line.pop();
    if (line.length === 2 && line[1] === "") line.pop();
  }
  return JSON.stringify(line);
}

/**
 * The holders of a queue's lines, given the URN of one holder of the same stack, and of the holder
 * before the first line when the lines continue a queue read earlier.
 * @throws IpamError INVALID_STATE on a line that is not a holder, or a `:<name>` line with no typed line before it.
 */
export function decodeHolders(lines: string, someOwner: string, previousOwner?: string): QueuedHolder[] {
  const prefix = urnPrefix(someOwner);
  let previousType = previousOwner === undefined ? undefined : typeOf(previousOwner, prefix);
  return lines.split("\n").map((line) => {
    const [written, ip = "", observer = -1, adopt, family] = JSON.parse(line) as unknown[];
    const adopting = adopt === 0 ? undefined : (adopt as QueuedHolder["adopt"] | undefined);
    if (
      typeof written !== "string" ||
      typeof ip !== "string" ||
      typeof observer !== "number" ||
      (adopting !== undefined && typeof adopting?.namespace !== "string") ||
      (family !== undefined && family !== "ipv4" && family !== "ipv6")
    ) {
      throw new IpamError("INVALID_STATE", `not a queued holder: ${line}`);
    }
    let owner: string;
    if (written.startsWith("urn:")) owner = written;
    else if (!written.startsWith(":")) owner = prefix + written;
    else if (previousType !== undefined) owner = `${prefix}${previousType}::${written.slice(1)}`;
    else throw new IpamError("INVALID_STATE", `queued holder ${line} names no type and follows no holder`);
    previousType = typeOf(owner, prefix);
    const holder: QueuedHolder = { owner };
    if (ip !== "") holder.ip = ip === "?" ? null : ip;
    if (observer >= 0) holder.observer = observer;
    if (adopting) holder.adopt = adopting;
    if (family !== undefined) holder.family = family as AddressFamilyName;
    return holder;
  });
}
import { IpamError } from "../../core/ipam-error";
