// The bound on a shared pool's `prefixLengths` rule: its width decides how many markers every
// address of the pool writes (see docs/shared-pools.md, "Blocks in a shared pool").
import { maxRuleWidth } from "../../ledger/kubernetes/marker-range";
import { familyOfSet, type ResolvedPool } from "./pool-spec";

/**
 * What is wrong with the width of a shared pool's rule, one text per family whose addresses would
 * register at more than {@link maxRuleWidth} + 1 lengths (from `min` to `max`, or to the family's
 * own address length when `max` is longer). None for a rule without both ends: it keeps no markers.
 */
export function sharedRuleProblems(pool: ResolvedPool): string[] {
  const rule = pool.prefixLengths;
  if (rule?.min === undefined || rule.max === undefined) return [];
  const out: string[] = [];
  for (const set of pool.rangeSets) {
    const family = familyOfSet(set);
    const bits = family === "ipv6" ? 128 : 32;
    const last = Math.min(rule.max, bits);
    const width = last - rule.min;
    if (width <= maxRuleWidth) continue;
    const name = family === "ipv6" ? "IPv6" : "IPv4";
    const min = Math.max(rule.min, last - maxRuleWidth);
    out.push(
      `the rule's ${name} /${rule.min} to /${last}: ${width + 1} prefix lengths, width ${width}: a shared pool's ` +
        `rule may be at most ${maxRuleWidth} wide (max - min), since every address registers in the marker of ` +
        `the block around it at each length from min to max (${width + 1} writes at preview and ${width + 1} at ` +
        `release, besides its own claim): narrow it, e.g. prefixLengths: { min: ${min}, max: ${last} } (min the ` +
        `largest block the pool hands out)`,
    );
  }
  return out;
}
