// A fixed slice of the explorer (docs/exploring.md) in every test run: generated sequences of edits
// from fixed seeds, run with the real engine and checked against the promises after every step.
// `npm run explore` runs the same from any seed for as long as it is given.
import { expect, it } from "vitest";
import { explore } from "../explore/session";
import { tempDir } from "../support/harness";

it("keeps every promise over the fixed seeds' sequences", async () => {
  const log: string[] = [];
  const figures = await explore({
    seed: 1,
    length: 8,
    cloud: "mixed",
    maxSequences: 2,
    budgetMs: 8 * 60_000,
    shrinkMs: 0,
    foundDir: tempDir("explore-found-"),
    log: (line) => log.push(line),
  });
  expect(figures.failures, log.join("\n")).toEqual([]);
  expect(figures.sequences).toBe(2);
  // The slice explores, not only creates: some steps edit what earlier ones made.
  const edits = Object.keys(figures.outcomes).filter((k) => k.endsWith("applied") && !k.startsWith("add"));
  expect(edits.length, JSON.stringify(figures.outcomes)).toBeGreaterThan(0);
}, 900_000);
