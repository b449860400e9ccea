import { createHash } from "node:crypto";

/**
 * The one host-choice rule of every provisioner: the candidate with the lowest load; ties go by a
 * hash of the address and the host name when the address is known (a check plans it before its
 * host), else to the lowest host name (AWS's FindHostForNewIP is asked for a zone only, a
 * CidrAssignment places no address). The hash spreads new addresses over equally loaded hosts
 * instead of sending them all to the first name; either way the choice is a pure function of
 * what is planned, so `preview` and `up` choose the same host whatever order the engine checks
 * resources in.
 * @throws Error when `candidates` is empty (callers explain first why no host qualifies).
 */
export function leastLoaded<T>(
  candidates: readonly T[],
  loadOf: (c: T) => number,
  nameOf: (c: T) => string,
  ip?: string,
): T {
  if (candidates.length === 0) throw new Error("leastLoaded: no candidate host");
  const rank = (c: T) =>
    ip === undefined
      ? nameOf(c)
      : createHash("sha256")
          .update(`${ip}\u0000${nameOf(c)}`)
          .digest("hex");
  return candidates.reduce((a, b) => {
    const la = loadOf(a);
    const lb = loadOf(b);
    return lb < la || (lb === la && rank(b) < rank(a)) ? b : a;
  });
}
