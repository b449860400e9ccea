import { formatAddress, parseAddress } from "../allocator/address";
import { entrySpan } from "../ledger/held-entry";
import { cellStates, type MapRow } from "./address-map";
import { blockText, cellLook } from "./cell-glyphs";
import type { BlockHolder } from "./holder";
import type { PoolUsage } from "./pool-usage";
import { gapText } from "./report-text";

const cell = 10;
const pitch = 12;
const groupGap = 6;
const line = 16;
const charWidth = 6.6;

/** Escapes text for XML character data and attribute values. */
export function xmlEscape(text: string): string {
  return text.replace(
    /[<>&"']/g,
    (c) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;", '"': "&quot;", "'": "&apos;" })[c]!,
  );
}

/** Finds the block holding an address, by binary search over blocks sorted by entry. */
function blockFinder(blocks: readonly BlockHolder[]): (ip: string) => BlockHolder | undefined {
  const spans = blocks.map((b) => ({ b, ...entrySpan(b.cidr) }));
  return (ip) => {
    const { family, value } = parseAddress(ip);
    let lo = 0;
    let hi = spans.length - 1;
    let found: (typeof spans)[number] | undefined;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const s = spans[mid]!;
      if (s.family < family || (s.family === family && s.start <= value)) {
        found = s;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found && found.family === family && found.end >= value ? found.b : undefined;
  };
}

/**
 * The maps of the pools of `scope` (`stack <name>` or `ledger <id>`) as one standalone SVG document (the same cells as the terminal map),
 * for a wiki page. Every cell is a `<rect>` with `class="cell <state>"`, `data-state`,
 * `data-first` (its first address) and `data-count` (addresses in the cell), and a `<title>`
 * tooltip naming the holder of a single held address (or of the block it is in). A pool made of a
 * block names it under the pool's name. Fills are attributes, so the picture keeps
 * its colours where a wiki strips `<style>`.
 */
export function poolsSvg(scope: string, usages: PoolUsage[]): string {
  const body: string[] = [];
  let y = line;
  let width = 0;
  const text = (x: number, t: string, cls: string, extra = "") => {
    body.push(`<text class="${cls}" x="${x}" y="${y}"${extra}>${xmlEscape(t)}</text>`);
    width = Math.max(width, x + t.length * charWidth);
  };
  text(0, `IP pools of ${scope}`, "title", ' font-weight="bold"');
  for (const u of usages) {
    y += line * 1.5;
    body.push(`<g class="pool" data-pool="${xmlEscape(u.pool)}">`);
    text(0, `pool ${u.name}`, "pool-name", ' font-weight="bold"');
    if (u.parent) {
      y += line;
      text(0, `in block ${u.parent.block} of pool ${u.parent.name}`, "parent");
    }
    y += line;
    text(
      0,
      `size ${u.size}, held ${u.held}, free ${u.free}, planned-not-created ${u.planned}, ` +
        `reserved ${u.reserved}, excluded ${u.excluded}`,
      "counts",
    );
    const owners = new Map(u.holders.map((h) => [h.ip, `${h.ip} ${h.state} by ${h.owner}`]));
    const blockOf = blockFinder(u.blocks);
    const ownerOf = (ip: string) => {
      const b = owners.has(ip) ? undefined : blockOf(ip);
      return b ? `${ip} in block ${b.cidr}, ${b.state} by ${b.owner}` : owners.get(ip);
    };
    for (const map of u.maps) {
      y += line * 1.25;
      text(0, `${map.subnet}: ${blockText(map.blockSize)}`, "subnet");
      const labels = map.lines.filter((l): l is MapRow => l.kind === "row").map((r) => r.first.length);
      const left = Math.ceil(Math.max(0, ...labels) * charWidth) + 8;
      for (const l of map.lines) {
        y += pitch + 2;
        if (l.kind === "gap") {
          text(0, gapText(l, "…"), "gap", ' font-style="italic"');
          continue;
        }
        text(0, l.first, "row-label");
        const base = parseAddress(l.first).value;
        l.cells.forEach((state, i) => {
          const x = left + i * pitch + Math.floor(i / 16) * groupGap;
          const first = formatAddress(map.family, base + BigInt(i) * BigInt(map.blockSize));
          const single = map.blockSize === "1";
          const title = single ? (ownerOf(first) ?? `${first} ${cellLook[state].meaning}`) : undefined;
          body.push(
            `<rect class="cell ${state}" data-state="${state}" data-first="${first}" data-count="${map.blockSize}" ` +
              `x="${x}" y="${y - cell}" width="${cell}" height="${cell}" fill="${cellLook[state].fill}">` +
              `${title ? `<title>${xmlEscape(title)}</title>` : ""}</rect>`,
          );
          width = Math.max(width, x + cell);
        });
      }
    }
    body.push("</g>");
  }
  y += line * 1.5;
  body.push('<g class="legend">');
  let x = 0;
  for (const s of cellStates) {
    body.push(
      `<rect class="legend-cell ${s}" x="${x}" y="${y - cell}" width="${cell}" height="${cell}" fill="${cellLook[s].fill}"/>`,
    );
    const t = cellLook[s].meaning;
    body.push(`<text x="${x + cell + 4}" y="${y}">${xmlEscape(t)}</text>`);
    x += cell + 4 + Math.ceil(t.length * charWidth) + 14;
  }
  width = Math.max(width, x);
  body.push("</g>");
  const w = Math.ceil(width) + 8;
  const h = Math.ceil(y) + 8;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}" ` +
      `font-family="ui-monospace, Menlo, Consolas, monospace" font-size="11">`,
    `<title>${xmlEscape(`IP pools of ${scope}`)}</title>`,
    `<rect width="100%" height="100%" fill="#ffffff"/>`,
    `<g transform="translate(4 0)">`,
    ...body,
    "</g>",
    "</svg>",
    "",
  ].join("\n");
}
