import { terminalSafe } from "../core/text";
import { cellStates, type MapGap, type MapRow, type SubnetMap } from "./address-map";
import { blockText, cellLook } from "./cell-glyphs";
import type { BlockHolder, Holder } from "./holder";
import type { PoolUsage } from "./pool-usage";
import type { StackQuota, StackUsage } from "./quota-usage";
import type { PoolQuotas } from "../ledger/quota-rules";
import { ruleText } from "../resources/pool/pool-spec";
import type { Style } from "./style";

const groupSize = 16;

/**
 * The terminal report of one pool: its owner (a shared pool's), the block it is made of (when it
 * is), ranges, its rule for blocks, its quotas, counts, the stacks using it (a shared pool's), the
 * map with its legend, the holders of addresses and those of blocks.
 */
export function poolText(usage: PoolUsage, style: Style): string {
  const bold = (t: string) => style.paint(t, "1");
  const out: string[] = [];
  out.push(`${bold(`pool ${terminalSafe(usage.name)}`)}  ${terminalSafe(usage.pool)}`);
  if (usage.ownedBy) {
    out.push(`  owner     stack ${terminalSafe(usage.ownedBy.stack)} (${terminalSafe(usage.ownedBy.pool)})`);
  }
  if (usage.parent) {
    out.push(`  in block  ${usage.parent.block} of pool ${terminalSafe(usage.parent.name)}`);
  }
  for (const r of usage.ranges) {
    out.push(`  range     ${r.rangeStart}-${r.rangeEnd} in ${r.subnet}, gateway ${r.gateway}`);
  }
  out.push(`  strategy  ${usage.strategy}`);
  if (usage.prefixLengths) out.push(`  blocks    ${ruleText(usage.prefixLengths)}`);
  if (usage.stacks) out.push(`  quotas    ${quotasText(usage.quotas)}`);
  const counts: [string, string][] = [
    ["size", usage.size],
    ["held", usage.held],
    ["free", usage.free],
    ["planned-not-created", usage.planned],
    ["reserved", usage.reserved],
    ["excluded", usage.excluded],
  ];
  out.push(`  ${counts.map(([k, v]) => `${k} ${bold(v)}`).join("  ")}`);
  if (usage.largest) out.push(`  objects   ${objectsText(usage.largest)}`);
  if (usage.stacks) out.push("", ...stacksText(usage.stacks));
  for (const map of usage.maps) out.push("", ...mapText(map, style));
  out.push("", `  ${legendText(style)}`);
  if (usage.holders.length > 0 || usage.blocks.length === 0) out.push("", ...holdersText(usage.holders));
  if (usage.blocks.length > 0) out.push("", ...blocksText(usage.blocks));
  if (usage.stale && usage.stale.length > 0) {
    const whose =
      usage.unchecked === undefined
        ? "claimed for this stack in the ledger, held by no resource in its state"
        : "held by no resource in their stack's state";
    out.push("", `  stale claims (${whose}): ${usage.stale.length}`);
    for (const c of usage.stale)
      out.push(`    ${c.ip}  ${terminalSafe(c.owner)}`, `      ${terminalSafe(c.fix)}`);
  }
  if (usage.lapsed && usage.lapsed.length > 0) {
    out.push(
      "",
      `  lapsed holds (planned, never claimed; plans of other stacks delete them 15 minutes after they ` +
        `lapsed, pulumi-egress-ipam collect after a minute): ${usage.lapsed.length}`,
    );
    for (const h of usage.lapsed)
      out.push(`    ${h.ip}  ${terminalSafe(h.stack)}  ${terminalSafe(h.owner)}  lapsed ${h.lapsed}`);
  }
  if (usage.unchecked && usage.unchecked.length > 0) {
    out.push(
      "",
      `  not checked for stale claims (state not readable with this backend and login): ` +
        usage.unchecked.map(terminalSafe).join(", "),
    );
  }
  return out.join("\n");
}

/**
 * `12 in the ledger, the largest quota counter egress.quota-… 40960 bytes of 1048576 (3.9 %)`: how
 * close the pool's largest object is to a ConfigMap's limit (a write past it fails).
 */
export function objectsText(l: NonNullable<PoolUsage["largest"]>): string {
  const what =
    { marker: "marker", quota: "quota counter", claim: "claim", pool: "definition" }[l.role] ?? "object";
  const share = ((l.bytes / l.limit) * 100).toFixed(1);
  return (
    `${l.objects} in the ledger, the largest ${what} ${terminalSafe(l.name)} ${l.bytes} bytes of ` +
    `${l.limit} (${share} %, ${l.keys} keys)`
  );
}

/** `default 8, "team-a/*" 16`: a pool's quotas as its owner set them, or `none`. */
export function quotasText(quotas: PoolQuotas | undefined): string {
  const rules = [
    ...(quotas?.default !== undefined ? [`default ${quotas.default}`] : []),
    ...Object.keys(quotas?.stacks ?? {})
      .sort()
      .map((p) => `"${terminalSafe(p)}" ${quotas!.stacks![p]}`),
  ];
  return rules.length > 0 ? rules.join(", ") : "none (no stack is limited)";
}

/**
 * The stacks of a shared pool as a table: each with its quota (`default 8`, `"team-a/*" 16
 * (together)`, `no quota`), what it holds and plans, and what its group has left; then, per
 * pattern, the total of the stacks it matches against its limit. Two stacks of one name (of two
 * backends) are told apart by a short identity; the owner is marked.
 */
export function stacksText(stacks: StackUsage[]): string[] {
  const label = (s: StackUsage) => {
    const twins = stacks.filter((o) => o.stack === s.stack);
    const notes = [
      ...(twins.length > 1
        ? [s.stackId === undefined ? "no identity" : shortIdentity(s.stackId, twins)]
        : []),
      ...(s.owner ? ["owner"] : []),
    ];
    return terminalSafe(notes.length > 0 ? `${s.stack} (${notes.join(", ")})` : s.stack);
  };
  const rule = (q: StackQuota | undefined) =>
    !q
      ? "no quota"
      : q.pattern === undefined
        ? `default ${q.limit}`
        : `"${terminalSafe(q.pattern)}" ${q.limit} (together)`;
  const left = (q: StackQuota | undefined) =>
    !q ? "-" : remaining(q) >= 0n ? `${remaining(q)}` : overText(q);
  const out = columns(
    ["STACK", "QUOTA", "HELD", "PLANNED", "LEFT"],
    stacks.map((s) => [label(s), rule(s.quota), s.held, s.planned, left(s.quota)]),
  );
  const patterns = new Set(stacks.flatMap((s) => (s.quota?.pattern === undefined ? [] : [s.quota.pattern])));
  for (const pattern of patterns) {
    const members = stacks.filter((s) => s.quota?.pattern === pattern);
    const q = members[0]!.quota!;
    const sum = (f: (s: StackUsage) => string) => members.reduce((n, s) => n + BigInt(f(s)), 0n);
    out.push(
      `  "${terminalSafe(pattern)}" together (${members.length} stack${members.length === 1 ? "" : "s"}): ` +
        `held ${sum((s) => s.held)}  planned ${sum((s) => s.planned)}  of ${q.limit}  ` +
        (remaining(q) >= 0n ? `left ${remaining(q)}` : overText(q)),
    );
  }
  return out;
}

/** What a quota's group may still take: negative when it holds more than its limit. */
const remaining = (q: StackQuota): bigint => BigInt(q.limit) - BigInt(q.used);

/** `over by 2`: a group whose quota was lowered below what it holds (nothing new until enough is released). */
const overText = (q: StackQuota): string => `over by ${-remaining(q)}`;

/** The first 14 characters of an identity (`stack-1a2b3c4d…`), or all of it where that is not unique among `twins`. */
function shortIdentity(id: string, twins: StackUsage[]): string {
  const short = (x: string) => (x.length > 15 ? `${x.slice(0, 14)}…` : x);
  return twins.filter((t) => t.stackId !== undefined && short(t.stackId) === short(id)).length > 1
    ? id
    : short(id);
}

/** The map of one subnet, a heading line then one line per row or gap. */
export function mapText(map: SubnetMap, style: Style): string[] {
  const rows = map.lines.filter((l): l is MapRow => l.kind === "row");
  const width = Math.max(...rows.map((r) => r.first.length), 0);
  const lines = [`  ${map.subnet}: ${blockText(map.blockSize)}`];
  for (const line of map.lines) {
    if (line.kind === "gap") {
      lines.push(`  ${gapText(line)}`);
      continue;
    }
    let cells = "";
    // One colour code per run of equal cells in a group, not one per cell.
    for (let i = 0; i < line.cells.length;) {
      const state = line.cells[i]!;
      let j = i + 1;
      while (j < line.cells.length && line.cells[j] === state && j % groupSize !== 0) j++;
      if (i > 0 && i % groupSize === 0) cells += " ";
      cells += style.paint(cellLook[state].glyph.repeat(j - i), cellLook[state].sgr);
      i = j;
    }
    lines.push(`  ${line.first.padEnd(width)}  ${cells}`);
  }
  return lines;
}

/** `... 10.64.0.64 - 10.64.127.255: 32704 free`, naming only the kinds of address the gap has. */
export function gapText(gap: MapGap, ellipsis = "..."): string {
  const parts = [
    [gap.held ?? "0", "held"],
    [gap.planned ?? "0", "planned, not created"],
    [gap.free, "free"],
    [gap.excluded, "excluded"],
    [gap.outside, "outside the ranges"],
  ].filter(([n]) => n !== "0");
  return `${ellipsis} ${gap.first} - ${gap.last}: ${parts.map(([n, what]) => `${n} ${what}`).join(", ")}`;
}

/** `legend: # held  + planned, not created  …`, each glyph in its colour. */
export function legendText(style: Style): string {
  const items = cellStates.map(
    (s) => `${style.paint(cellLook[s].glyph, cellLook[s].sgr)} ${cellLook[s].meaning}`,
  );
  return `legend: ${items.join("  ")}`;
}

/** The holders of addresses as a table (with their public addresses where any has one), or a line saying there are none. */
function holdersText(holders: Holder[]): string[] {
  if (holders.length === 0) return ["  holders: none"];
  const publicIps = holders.some((h) => h.publicIp !== undefined);
  return table(
    publicIps ? ["ADDRESS", "PUBLIC"] : ["ADDRESS"],
    holders.map((h) => ({ h, cells: publicIps ? [h.ip, h.publicIp ?? "-"] : [h.ip] })),
  );
}

/** The holders of blocks as a table: one line per block, with its size. */
export function blocksText(blocks: BlockHolder[]): string[] {
  return table(
    ["BLOCK", "SIZE"],
    blocks.map((h) => ({ h, cells: [h.cidr, h.size] })),
  );
}

/** A table of holders: the leading cells given, then state, since, the stack (when any has one) and the URN. */
function table(lead: string[], rows: { h: Holder; cells: string[] }[]): string[] {
  // A shared pool's holders come from several stacks.
  const stacks = rows.some(({ h }) => h.stack !== undefined);
  // Stack names and URNs come from state or a shared ledger: written as text, never as control codes.
  const body = rows.map(({ h, cells }) =>
    [...cells, h.state, sinceText(h), ...(stacks ? [h.stack ?? "-"] : []), h.owner].map(terminalSafe),
  );
  return columns([...lead, "STATE", "SINCE", ...(stacks ? ["STACK"] : []), "HOLDER (URN)"], body);
}

/** Rows under a heading, indented 2, in columns 2 apart, the last column unpadded. */
function columns(head: string[], body: string[][]): string[] {
  const widths = head.map((t, i) => Math.max(t.length, ...body.map((r) => r[i]!.length)));
  const fmt = (r: string[]) =>
    `  ${r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join("  ")}`;
  return [fmt(head), ...body.map(fmt)];
}

/** `#3 (update, 2025-12-01 04:50:12 UTC)`: the deployment that created the holder, and when. */
export function sinceText(h: Pick<Holder, "sinceVersion" | "sinceKind" | "sinceTime">): string {
  const when = h.sinceTime
    ? new Date(h.sinceTime)
        .toISOString()
        .replace("T", " ")
        .replace(/\.\d+Z$/, " UTC")
    : "";
  if (h.sinceVersion === undefined) return when || "-";
  return `#${h.sinceVersion} (${[h.sinceKind, when].filter(Boolean).join(", ")})`;
}
