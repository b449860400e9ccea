import * as fs from "node:fs";
import { cellStates, type SubnetMap } from "./address-map";
import { cellLook } from "./cell-glyphs";
import { CliError } from "./cli-error";
import { poolUsages, type PoolUsage, type SharedView } from "./pool-usage";
import { treeDepths } from "./pool-tree";
import { poolsSvg } from "./report-svg";
import { poolText } from "./report-text";
import type { StackSnapshot } from "./stack-snapshot";
import type { Style } from "./style";

/** Options of `report`. */
export interface ReportOptions {
  /** Also write the map as an SVG file here. */
  svg?: string;
  json?: boolean;
}

/** What a report covers: a stack's pools, or one shared pool's ledger. */
export interface ReportScope {
  kind: "stack" | "ledger";
  /** `<org>/<project>/<stack>`, or `kubernetes:<namespace>/<name>`. */
  name: string;
}

/**
 * The pools of a stack with their usage: all of them, or the one `pool` names (logical name or URN).
 * @throws CliError naming the pool and listing the stack's pools when `pool` matches none.
 */
export function stackUsages(
  snapshot: StackSnapshot,
  pool?: string,
  shared?: ReadonlyMap<string, SharedView>,
): PoolUsage[] {
  const select = (name: string, urn: string) => pool === undefined || pool === name || pool === urn;
  const usages = poolUsages(snapshot, select, undefined, shared);
  if (pool !== undefined && usages.length === 0) {
    const names = poolUsages(snapshot)
      .map((u) => u.name)
      .sort((a, b) => a.localeCompare(b));
    throw new CliError(
      `stack "${snapshot.stack}" has no pool named "${pool}"; ` +
        (names.length > 0 ? `its pools: ${names.join(", ")}` : "it has no IpPool at all"),
    );
  }
  return usages;
}

/**
 * The report of some pools (in tree order, see `linkPools`): the text (or JSON document) to print,
 * after writing the SVG when asked for. In the text, a pool made of a block of a pool shown before
 * it is indented under that pool, one level (4 spaces) per block it lies in.
 * @throws CliError naming the file when the SVG cannot be written.
 */
export function report(
  scope: ReportScope,
  usages: PoolUsage[],
  options: ReportOptions,
  style: Style,
): string {
  const title = `${scope.kind} ${scope.name}`;
  if (options.svg !== undefined) {
    try {
      fs.writeFileSync(options.svg, poolsSvg(title, usages));
    } catch (e) {
      const why = (e as NodeJS.ErrnoException).code ?? String(e);
      throw new CliError(
        `cannot write the SVG map to "${options.svg}" (${why}); give a path in a writable directory`,
      );
    }
  }
  if (options.json) return JSON.stringify(reportJson(scope, usages, options.svg), null, 2);
  if (usages.length === 0) return `${title} has no IpPool`;
  const depths = treeDepths(usages);
  const parts = usages.map((u, i) => {
    const pad = " ".repeat(4 * depths[i]!);
    return poolText(u, style)
      .split("\n")
      .map((l) => (l === "" ? l : pad + l))
      .join("\n");
  });
  if (options.svg !== undefined) parts.push(`map written to ${options.svg}`);
  return parts.join("\n\n");
}

/** The JSON document of `report --json`: counts as decimal strings, map rows as glyph strings. */
function reportJson(scope: ReportScope, usages: PoolUsage[], svg: string | undefined) {
  const legend = Object.fromEntries(cellStates.map((s) => [cellLook[s].glyph, s]));
  const map = (m: SubnetMap) => ({
    ...m,
    lines: m.lines.map((l) =>
      l.kind === "row" ? { ...l, cells: l.cells.map((c) => cellLook[c].glyph).join("") } : l,
    ),
  });
  return {
    [scope.kind]: scope.name,
    legend,
    pools: usages.map((u) => ({ ...u, maps: u.maps.map(map) })),
    ...(svg !== undefined ? { svg } : {}),
  };
}
