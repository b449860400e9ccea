// Whether a pool as it is now would still plan what a holder planned earlier: a shared pool's hold
// outlives the definition it was planned under (a preview, then the owner's change, then `up`), and
// is renewed into a claim only when the pool still hands it out (see PlanRequest.refuses).
import { checkBlock } from "../../allocator";
import { errorMessage } from "../../core/failure";
import { isBlock } from "../../ledger/held-entry";
import { blockLength, blockRangeSet } from "./pool-blocks";
import { checkRequestable, type ResolvedPool } from "./pool-spec";

/**
 * Why `pool` would not plan address `ip` automatically now: outside its ranges, a gateway,
 * excluded, reserved, or in `inUse` (seen in use outside Pulumi); undefined when it would.
 */
export async function addressRefusal(
  pool: ResolvedPool,
  ip: string,
  inUse: readonly string[],
): Promise<string | undefined> {
  const refused = (extra: readonly string[]) =>
    checkRequestable(pool, ip, extra).then(
      () => undefined,
      (e: unknown) => errorMessage(e).replace(/^requested IP /, ""),
    );
  const outside = await refused([]);
  if (outside !== undefined) return outside;
  if (inUse.includes(ip)) return `${ip} is in use outside Pulumi (its provisioner sees it)`;
  if ((await refused(pool.reserved)) !== undefined)
    return `${ip} is reserved in the pool (handed out only when requested)`;
  return undefined;
}

/**
 * Why `pool` would not plan block `cidr` automatically now: a length its `prefixLengths` rule does
 * not allow, outside one range, holding a gateway, an excluded or a reserved address; undefined when
 * it would.
 */
export function blockRefusal(pool: ResolvedPool, cidr: string): string | undefined {
  try {
    blockLength(pool, undefined, cidr);
    checkBlock({ rangeSet: blockRangeSet(pool), cidr, exclude: [...pool.exclude, ...pool.reserved] });
    return undefined;
  } catch (e) {
    return errorMessage(e);
  }
}

/**
 * The `refuses` of a plan request from `pool` (see PlanRequest.refuses): addresses and blocks as
 * above, each reason followed by who changed the pool (`ownedBy`, a shared pool's owner) when known.
 */
export function holdRefusal(pool: ResolvedPool, inUse: readonly string[] = [], ownedBy?: string) {
  const changedBy = ownedBy === undefined ? "" : `; the pool's owner, ${ownedBy}, changed it since`;
  return async (entry: string): Promise<string | undefined> => {
    const reason = isBlock(entry) ? blockRefusal(pool, entry) : await addressRefusal(pool, entry, inUse);
    return reason === undefined ? undefined : `${reason}${changedBy}`;
  };
}
