// The wire form of a pool's holder queue: one line of JSON per holder, `[owner, ip, observer]` with
// trailing defaults left out; ip is "" when none was requested and "?" when it is not known to
// other holders, observer -1 when there is none. The owner's URN is given without the
// `urn:pulumi:<stack>::<project>::` that every holder of a stack shares. A holder's check receives every earlier holder, so the queue's total size grows with the
// square of the holders; one string per queue keeps that as small as it can be. No imports: the
// program side uses it too.

/** One holder of a pool as the program created it. */
export interface QueuedHolder {
  /** The holder's URN. */
  owner: string;
  /**
   * The requested address when the program gave a plain string; `null` when it comes from another
   * resource or a promise (then it is not known when other holders are planned).
   */
  ip?: string | null;
  /** Index of the holder's `observeWith` among the queue's observers. */
  observer?: number;
}

/** The part of a URN shared by every resource of the stack: `urn:pulumi:<stack>::<project>::`. */
export function urnPrefix(urn: string): string {
  const parts = urn.split("::");
  return parts.length < 3 ? "" : `${parts[0]}::${parts[1]}::`;
}

/** One holder's line; `prefix` is left out of its URN. */
export function encodeHolder(holder: QueuedHolder, prefix: string): string {
  const owner =
    prefix !== "" && holder.owner.startsWith(prefix) ? holder.owner.slice(prefix.length) : holder.owner;
  const line: (string | number)[] = [
    owner,
    holder.ip === null ? "?" : (holder.ip ?? ""),
    holder.observer ?? -1,
  ];
  if (line[2] === -1) line.pop();
  if (line.length === 2 && line[1] === "") line.pop();
  return JSON.stringify(line);
}

/**
 * The holders of a queue's lines, given the URN of one holder of the same stack.
 * @throws Error on a line that is not a holder.
 */
export function decodeHolders(lines: string, someOwner: string): QueuedHolder[] {
  const prefix = urnPrefix(someOwner);
  return lines.split("\n").map((line) => {
    const [owner, ip = "", observer = -1] = JSON.parse(line) as unknown[];
    if (typeof owner !== "string" || typeof ip !== "string" || typeof observer !== "number") {
      throw new Error(`not a queued holder: ${line}`);
    }
    const holder: QueuedHolder = { owner: owner.startsWith("urn:") ? owner : prefix + owner };
    if (ip !== "") holder.ip = ip === "?" ? null : ip;
    if (observer >= 0) holder.observer = observer;
    return holder;
  });
}
