// The quotas of a shared pool: how many addresses the stacks using it may hold, as its owner sets
// them. Pure: which group a stack counts in, what an entry costs, whether a rule is well formed, and
// the refusal's words. Enforcement is the Kubernetes ledger's (quota-counter.ts).
import { IpamError } from "../core/ipam-error";
import { shown } from "../core/text";
import { entrySpan } from "./held-entry";

/**
 * A pool's quotas, as its owner gives them: `default` addresses per stack, and limits for named
 * stacks (`"project/stack"` or `"org/project/stack"`; a segment may be `*`, and every stack a
 * pattern matches counts together against its limit).
 */
export interface PoolQuotas {
  /** The most addresses each stack not named in `stacks` may hold; no limit when absent. */
  default?: number;
  /** Limits by stack name pattern, e.g. `{ "network/prod": 64, "team-a/*": 16 }`. */
  stacks?: Record<string, number>;
}

/** The group a stack is counted in, and the limit of that group. */
export interface QuotaGroup {
  /** Identifies the group: `stack <stackId>` (a stack under the default) or `stacks <pattern>`. */
  key: string;
  /** The group's limit, in addresses. */
  limit: number;
  /** How messages name the rule: `the default quota` or `quota "team-a/*"`. */
  rule: string;
}

const patternSegment = /^(\*|[A-Za-z0-9._-]+)$/;

/**
 * Every problem of a quota rule, each as `[property, reason]` under `quotas`.
 */
export function quotaProblems(value: unknown): [string, string][] {
  if (value === undefined || value === null) return [];
  if (typeof value !== "object" || Array.isArray(value))
    return [
      [
        "quotas",
        `${shown(value)} is not a quota rule: give { default?: 8, stacks?: { "project/stack": 64 } }`,
      ],
    ];
  const out: [string, string][] = [];
  const q = value as Record<string, unknown>;
  for (const key of Object.keys(q)) {
    if (key !== "default" && key !== "stacks")
      out.push([`quotas.${key}`, `unknown quota setting; use default and stacks`]);
  }
  const limitProblem = (v: unknown) =>
    typeof v === "number" && Number.isSafeInteger(v) && v >= 0
      ? undefined
      : `${shown(v)} is not a number of addresses: give a whole number, 0 or more`;
  if (q.default !== undefined) {
    const p = limitProblem(q.default);
    if (p) out.push(["quotas.default", p]);
  }
  if (q.stacks !== undefined) {
    if (typeof q.stacks !== "object" || q.stacks === null || Array.isArray(q.stacks)) {
      out.push(["quotas.stacks", `give limits by stack name, e.g. { "network/prod": 64 }`]);
    } else {
      for (const [pattern, limit] of Object.entries(q.stacks)) {
        const at = `quotas.stacks[${JSON.stringify(pattern)}]`;
        const segments = pattern.split("/");
        if (segments.length < 2 || segments.length > 3 || !segments.every((s) => patternSegment.test(s)))
          out.push([
            at,
            `${shown(pattern)} is not a stack name: write "project/stack" or "org/project/stack" (a segment may be *)`,
          ]);
        const p = limitProblem(limit);
        if (p) out.push([at, p]);
      }
    }
  }
  return out;
}

/** The canonical JSON of a quota rule (keys sorted), or undefined for none. */
export function canonicalQuotas(q: PoolQuotas | undefined): string | undefined {
  if (!q || (q.default === undefined && Object.keys(q.stacks ?? {}).length === 0)) return undefined;
  const stacks = Object.entries(q.stacks ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify({
    ...(q.default === undefined ? {} : { default: q.default }),
    ...(stacks.length > 0 ? { stacks: Object.fromEntries(stacks) } : {}),
  });
}

/** Whether `pattern` (2 or 3 segments, `*` any) names stack `fqName` (`org/project/stack`). */
export function patternMatches(pattern: string, fqName: string): boolean {
  const want = pattern.split("/");
  const have = fqName.split("/").slice(-want.length);
  return have.length === want.length && want.every((w, i) => w === "*" || w === have[i]);
}

/**
 * The group stack `fqName` (identity `stackId`) counts in under `q`, or undefined when no limit
 * applies to it. A named pattern wins over the default; among patterns, the most specific (fewest
 * `*`, then most segments, then the first in sorted order).
 */
export function quotaGroupOf(
  q: PoolQuotas | undefined,
  fqName: string,
  stackId?: string,
): QuotaGroup | undefined {
  const stars = (p: string) => p.split("/").filter((s) => s === "*").length;
  const named = Object.keys(q?.stacks ?? {})
    .filter((p) => patternMatches(p, fqName))
    .sort((a, b) => stars(a) - stars(b) || b.split("/").length - a.split("/").length || (a < b ? -1 : 1))[0];
  if (named !== undefined)
    return { key: `stacks ${named}`, limit: q!.stacks![named]!, rule: `quota "${named}"` };
  if (q?.default === undefined) return undefined;
  return { key: `stack ${stackId ?? fqName}`, limit: q.default, rule: "the default quota" };
}

/** What an entry counts against a quota: 1 for an address, its number of addresses for a block. */
export function entryCost(entry: string): bigint {
  const { start, end } = entrySpan(entry);
  return end - start + 1n;
}

/**
 * The refusal of a plan over quota.
 * @param who - the stack being refused (`org/project/stack`).
 * @param held - what its group holds already, in addresses.
 * @param asked - what the refused entry would add.
 * @param setBy - who set the quota (the pool's owner: `stack <name> (<urn>)`).
 */
export function quotaExceeded(
  what: string,
  who: string,
  group: QuotaGroup,
  held: bigint,
  asked: bigint,
  setBy: string,
): IpamError {
  const together = group.key.startsWith("stacks ") ? ` (the stacks it matches count together)` : "";
  const unit = (n: bigint) => `${n} address${n === 1n ? "" : "es"}`;
  return new IpamError(
    "QUOTA_EXCEEDED",
    `stack ${who} is at ${group.rule} of ${what}: ${unit(BigInt(group.limit))}${together}, set by ${setBy}; ` +
      `it holds ${unit(held)} and this would add ${unit(asked)}. Release addresses of the pool, or ask its ` +
      `owner to raise the quota`,
  );
}
