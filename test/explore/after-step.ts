/**
 * What must hold after every step of a sequence, beyond the invariants of its results: the engine
 * and the CLI find nothing to do (promises 4 and 5).
 */
import { runCli } from "../support/cli";
import { changesOf, type Harness, type PreviewResult } from "../support/harness";

type PreviewEvent = PreviewResult["events"][number];
import type { Cloud } from "./cloud";
import type { Violation } from "./invariants";

/**
 * Promise 4 as `check` keeps it: none of the fixes it prints names anything planted (somebody
 * else's address, its interface, their Elastic IPs, the pods' interfaces addresses were handed to);
 * and after an `up` it finds nothing (exit 0).
 */
export async function checkSays(h: Harness, cloud: Cloud, afterUp: boolean): Promise<Violation | undefined> {
  const run = await runCli(["check", "--stack", h.fqStackName], h.env);
  const printed = `${run.stdout}${run.stderr}`;
  // The pods' interfaces addresses were handed to are somebody else's too (issue 54, item 1).
  const foreign = [
    cloud.foreign.address,
    cloud.foreign.eniId,
    ...cloud.foreign.eips,
    ...cloud.foreign.handed.map((h) => h.eniId),
  ];
  const fixes = printed.split("\n").filter((line) => /\b(aws ec2|fix:)/.test(line));
  const named = fixes.filter((line) =>
    foreign.some((f) => new RegExp(`\\b${f.replace(/\./g, "\\.")}\\b`).test(line)),
  );
  if (named.length > 0)
    return {
      invariant: "check",
      message: `check prints a fix for somebody else's: ${named.join(" | ")}\n${printed}`,
    };
  // `none` has no hosts to list: its addresses are "not checked" (exit 3), and nothing else may be.
  const othersUnchecked = /provisioner (?!none:)\S+: not checked/.test(printed);
  const onlyNone = run.code === 3 && /provisioner none: not checked/.test(printed) && !othersUnchecked;
  if (afterUp && run.code !== 0 && !onlyNone)
    return { invariant: "check", message: `check after up exits ${run.code}:\n${printed.slice(0, 1500)}` };
  return undefined;
}

/** Promise 5 after an `up` or a refresh: a second preview and a refresh preview change nothing. */
export async function quietAfter(h: Harness, ownerDecides = false): Promise<Violation | undefined> {
  const again = changesBesides(await h.preview(), ownerDecides);
  if (Object.keys(again).length > 0)
    return { invariant: "quiet", message: `the preview after up plans ${JSON.stringify(again)}` };
  const events: PreviewEvent[] = [];
  const refreshed = await h.previewRefresh(ownerDecides ? { onEvent: (e) => events.push(e) } : {});
  const refresh = changesBesides(
    { changeSummary: refreshed.changeSummary as Record<string, number>, events },
    ownerDecides,
  );
  if (Object.keys(refresh).length > 0)
    return { invariant: "quiet", message: `a refresh after up would change ${JSON.stringify(refresh)}` };
  return undefined;
}

/**
 * What a preview plans, by operation: its summary; or, `ownerDecides`, its steps less the updates of
 * `IpPool.shared` references, which show what the pool's owner decided since (docs/shared-pools.md:
 * a change of the definition "shows as an update of the reference, which writes nothing").
 */
function changesBesides(
  preview: { changeSummary: Record<string, number>; events: PreviewEvent[] },
  ownerDecides: boolean,
): Record<string, number> {
  if (!ownerDecides) return changesOf(preview.changeSummary);
  const out: Record<string, number> = {};
  for (const e of preview.events) {
    const m = e.resourcePreEvent?.metadata;
    if (!m || m.op === "same" || m.op === "read" || m.type === "pulumi:pulumi:Stack") continue;
    // A refresh step of every resource: a change only where it found a difference.
    if (m.op === "refresh" && (m.diffs ?? []).length === 0) continue;
    const reference = m.type.endsWith(":IpPool") && (m.new ?? m.old)?.inputs?.shared === true;
    if ((m.op === "update" || m.op === "refresh") && reference) continue;
    const op = m.op === "refresh" ? "update" : m.op;
    out[op] = (out[op] ?? 0) + 1;
  }
  return out;
}
