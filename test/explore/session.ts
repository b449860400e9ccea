/**
 * An exploration session: sequences from consecutive seeds until the time is up, each failing one
 * shrunk and written as a case file, and the figures of what was explored.
 */
import { startCloud, type CloudServers } from "./cloud";
import { describeFailure, writeCase } from "./report";
import { runSequence, type RunResult } from "./runner";
import { shrink } from "./shrink";

/** Settings of a session. */
export interface SessionOptions {
  /** The first seed; the session runs seed, seed + 1, … */
  seed: number;
  /** Edits per sequence. */
  length: number;
  /** Which sequences run in a cloud world (moto): none, every other seed (the even ones), or all. */
  cloud: "none" | "mixed" | "all";
  /** Whether some edits have their `up` killed partway (see generateEdit). */
  kills?: boolean;
  /** Stop starting sequences after this many milliseconds. */
  budgetMs: number;
  /** At most this many sequences (default: as many as the budget allows). */
  maxSequences?: number;
  /** How long to shrink each failure, at most. */
  shrinkMs: number;
  /** Where failing sequences are written as case files. */
  foundDir: string;
  log: (line: string) => void;
}

/** What a session explored and found. */
export interface SessionFigures {
  sequences: number;
  steps: number;
  /** Steps by edit and outcome, e.g. `addEgress applied: 12`. */
  outcomes: Record<string, number>;
  /** Refusal codes seen. */
  codes: Record<string, number>;
  failures: {
    seed: number;
    invariant: string;
    message: string;
    file: string;
    shrunkTo: number;
    shrinkRuns: number;
  }[];
}

/** Runs a session; resolves with its figures (failures included, never thrown). */
export async function explore(o: SessionOptions): Promise<SessionFigures> {
  const started = Date.now();
  const figures: SessionFigures = { sequences: 0, steps: 0, outcomes: {}, codes: {}, failures: [] };
  const servers = o.cloud === "none" ? undefined : await startCloud();
  try {
    await exploreSeeds(o, started, figures, servers);
  } finally {
    await servers?.stop();
  }
  return figures;
}

async function exploreSeeds(
  o: SessionOptions,
  started: number,
  figures: SessionFigures,
  servers: CloudServers | undefined,
): Promise<void> {
  for (let seed = o.seed; Date.now() - started < o.budgetMs; seed++) {
    if (o.maxSequences !== undefined && figures.sequences >= o.maxSequences) break;
    const cloud = o.cloud === "all" || (o.cloud === "mixed" && seed % 2 === 0);
    o.log(`== seed ${seed}${cloud ? " (cloud world)" : ""}`);
    const result = await runSequence(
      { seed, length: o.length, cloud, kills: o.kills },
      (line) => o.log(`  ${line}`),
      servers,
    );
    figures.sequences++;
    count(figures, result);
    if (!result.violation) continue;
    o.log(`seed ${seed} broke "${result.violation.invariant}": ${result.violation.message}`);
    const shrunk = await shrink(
      result.edits,
      result.violation.invariant,
      result.violation.step,
      async (edits) => {
        const r = await runSequence({ edits, cloud }, () => {}, servers);
        return r.violation ? { invariant: r.violation.invariant, step: r.violation.step } : {};
      },
      Date.now() + o.shrinkMs,
    );
    const final = await runSequence({ edits: shrunk.edits, cloud }, () => {}, servers);
    const shown: RunResult = final.violation ? final : result;
    const file = writeCase(o.foundDir, `seed-${seed}`, shown, cloud);
    o.log(
      `shrunk to ${shown.edits.length} edits in ${shrunk.runs} runs; case written to ${file}\n${describeFailure(shown)}`,
    );
    figures.failures.push({
      seed,
      invariant: shown.violation!.invariant,
      message: shown.violation!.message,
      file,
      shrunkTo: shown.edits.length,
      shrinkRuns: shrunk.runs,
    });
  }
}

function count(f: SessionFigures, r: RunResult): void {
  for (const s of r.steps) {
    f.steps++;
    const key = `${s.edit.op} ${s.outcome}`;
    f.outcomes[key] = (f.outcomes[key] ?? 0) + 1;
    if (s.code) f.codes[s.code] = (f.codes[s.code] ?? 0) + 1;
  }
}
