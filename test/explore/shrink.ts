/**
 * Shrinking a failing sequence: the fewest edits that still break the same promise, found by
 * dropping chunks of edits (halves, then quarters, … then single edits) and keeping a smaller
 * sequence whenever it still fails the same way (delta debugging). Each try is a whole run, so
 * shrinking stops at its deadline with the smallest sequence found so far.
 */
import type { Edit } from "./world";

/** A run of `edits`: the broken promise's name, or undefined when the run kept every promise. */
export type Trial = (edits: Edit[]) => Promise<{ invariant?: string; step?: number }>;

/** The smallest failing sequence found, and how many runs it took. */
export interface Shrunk {
  edits: Edit[];
  runs: number;
}

/**
 * Shrinks `edits`, which broke `invariant` at step `step`, within `deadline` (epoch ms).
 * Steps after the failing one are dropped first: they never ran.
 */
export async function shrink(
  edits: Edit[],
  invariant: string,
  step: number,
  trial: Trial,
  deadline: number,
): Promise<Shrunk> {
  let current = edits.slice(0, Math.min(edits.length, step + 1));
  let runs = 0;
  let chunk = Math.ceil(current.length / 2);
  while (chunk >= 1 && Date.now() < deadline) {
    let start = 0;
    let shrunkThisPass = false;
    while (start < current.length && Date.now() < deadline) {
      const candidate = [...current.slice(0, start), ...current.slice(start + chunk)];
      if (candidate.length === 0) {
        start += chunk;
        continue;
      }
      runs++;
      const result = await trial(candidate);
      if (result.invariant === invariant) {
        current = result.step === undefined ? candidate : candidate.slice(0, result.step + 1);
        shrunkThisPass = true;
      } else start += chunk;
    }
    if (!shrunkThisPass) chunk = Math.floor(chunk / 2);
    else chunk = Math.min(chunk, Math.ceil(current.length / 2));
  }
  return { edits: current, runs };
}
