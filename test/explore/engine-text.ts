/** What the explorer reads from the engine's answers: refusals' text and codes, a preview's plan. */
import type { PreviewResult } from "../support/harness";
import type { Planned } from "./invariants";

/**
 * What an engine command's failure says: the first coded error it printed (the CLI's output also
 * holds its progress lines), else the whole text.
 */
export const errorText = (e: unknown): string => {
  const text = e instanceof Error ? e.message : String(e);
  const coded = /error: (\[[A-Z][A-Z_]*[A-Z]\] [^\n]*)/.exec(text)?.[1];
  return coded ?? text;
};

/** The code of a refusal, from the engine's error text. */
export const codeIn = (text: string): string | undefined => /\[([A-Z][A-Z_]*[A-Z])\] /.exec(text)?.[1];

/** What a preview planned for each resource: its operation and the inputs it showed. */
export function plannedBy(preview: PreviewResult): Record<string, Planned> {
  const planned: Record<string, Planned> = {};
  for (const e of preview.events) {
    const m = e.resourcePreEvent?.metadata;
    if (m) planned[m.urn] = { op: m.op, ...(m.new?.inputs ? { inputs: m.new.inputs } : {}) };
  }
  return planned;
}

/** Counts by operation, in a fixed order, to compare two summaries. */
export const sorted = (o: Record<string, number>): Record<string, number> =>
  Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b)));
