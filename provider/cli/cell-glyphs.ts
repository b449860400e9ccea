import type { CellState } from "./address-map";

/** How each cell state is drawn: a plain character, an ANSI colour, an SVG fill, and its meaning. */
export const cellLook: Record<CellState, { glyph: string; sgr: string; fill: string; meaning: string }> = {
  held: { glyph: "#", sgr: "1;31", fill: "#d62728", meaning: "held" },
  planned: { glyph: "+", sgr: "1;35", fill: "#9467bd", meaning: "planned, not created" },
  reserved: { glyph: "R", sgr: "1;33", fill: "#e6b400", meaning: "reserved" },
  gateway: { glyph: "G", sgr: "1;36", fill: "#17becf", meaning: "gateway" },
  excluded: { glyph: "x", sgr: "90", fill: "#7f7f7f", meaning: "excluded" },
  free: { glyph: ".", sgr: "32", fill: "#b6e3b6", meaning: "free" },
  outside: { glyph: "-", sgr: "2", fill: "#ececec", meaning: "outside the ranges" },
};

/** The sentence that says what one cell stands for. */
export function blockText(blockSize: string): string {
  if (blockSize === "1") return "one cell per address";
  return (
    `one cell per block of ${blockSize} addresses, showing the first of held, planned, reserved, ` +
    `gateway, excluded, free that any address of the block is`
  );
}
