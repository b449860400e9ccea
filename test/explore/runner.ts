/**
 * Runs a sequence of edits against the real engine, one fresh stack per sequence, and checks the
 * promises after every step (invariants.ts). A step is one edit: the program of the world after it
 * is previewed, then brought up; `refresh` runs a refresh instead. A refused preview leaves the
 * world as it was (a refusal must be coded, and the program must be one the product may refuse).
 * The sequence ends with `destroy`, which must leave nothing.
 */
import type * as automation from "@pulumi/pulumi/automation";
import { changesOf, Harness, type StateResource } from "../support/harness";
import { Rng } from "./rng";
import { generateEdit } from "./generate";
import {
  coded,
  mustAccept,
  previewIsUp,
  slotValues,
  stable,
  unique,
  type Planned,
  type Violation,
} from "./invariants";
import { programOf } from "./program";
import { applyEdit, emptyWorld, type Edit, type World } from "./world";

type Pkg = typeof import("../../provider/index");

/** What happened at one step. */
export interface StepRecord {
  edit: Edit;
  outcome: "applied" | "refused" | "skipped" | "refreshed";
  /** The refusal's code, for a refused step. */
  code?: string;
  ms: number;
}

/** The outcome of a sequence. */
export interface RunResult {
  /** The edits run, in order: replaying them gives the same sequence. */
  edits: Edit[];
  steps: StepRecord[];
  /** The first broken promise, and the step (index into `edits`; `edits.length` for the final destroy). */
  violation?: Violation & { step: number };
  /** The last world the engine accepted. */
  world: World;
}

/** How to run: replay `edits`, or generate `length` edits from `seed`. */
export type RunPlan = { edits: Edit[] } | { seed: number; length: number };

/**
 * What an engine command's failure says: the first coded error it printed (the CLI's output also
 * holds its progress lines), else the whole text.
 */
const errorText = (e: unknown) => {
  const text = e instanceof Error ? e.message : String(e);
  const coded = /error: (\[[A-Z][A-Z_]*[A-Z]\] [^\n]*)/.exec(text)?.[1];
  return coded ?? text;
};

/** The code of a refusal, from the engine's error text. */
const codeIn = (text: string) => /\[([A-Z][A-Z_]*[A-Z])\] /.exec(text)?.[1];

/**
 * Runs one sequence on a fresh stack of `pkg` (the package as the consumer project installed it).
 * `log` hears a line per step.
 */
export async function runSequence(plan: RunPlan, log: (line: string) => void = () => {}): Promise<RunResult> {
  const h = Harness.create("explore");
  const pkg = h.pkg<Pkg>("pulumi-egress-ipam");
  const rng = "seed" in plan ? new Rng(plan.seed) : undefined;
  const total = "seed" in plan ? plan.length : plan.edits.length;
  const edits: Edit[] = [];
  const steps: StepRecord[] = [];
  let world = emptyWorld();
  let values = new Map<string, { value: string; host?: string }>();
  let programmed = false;
  const fail = (step: number, v: Violation): RunResult => ({
    edits,
    steps,
    violation: { ...v, step },
    world,
  });
  try {
    for (let i = 0; i < total; i++) {
      const edit = rng ? generateEdit(rng, world) : (plan as { edits: Edit[] }).edits[i]!;
      edits.push(edit);
      const started = Date.now();
      const next = applyEdit(world, edit);
      const record = (outcome: StepRecord["outcome"], code?: string) => {
        steps.push({ edit, outcome, ...(code ? { code } : {}), ms: Date.now() - started });
        log(
          `step ${i}: ${JSON.stringify(edit)} → ${outcome}${code ? ` ${code}` : ""} (${Date.now() - started} ms)`,
        );
      };
      if (!next) {
        record("skipped");
        continue;
      }
      if (edit.op === "refresh") {
        if (world.holders.length === 0 && world.pools.length === 0) {
          record("skipped");
          continue;
        }
        try {
          const refreshed = await h.refresh();
          const changed = changesOf(refreshed.summary.resourceChanges);
          if (Object.keys(changed).length > 0)
            return fail(i, {
              invariant: "quiet",
              message: `refresh after up changed ${JSON.stringify(changed)}`,
            });
        } catch (e) {
          return fail(i, { invariant: "quiet", message: `refresh failed: ${errorText(e)}` });
        }
        const quiet = await quietAfter(h);
        if (quiet) return fail(i, quiet);
        record("refreshed");
        continue;
      }
      await h.program(programOf(next, pkg));
      programmed = true;
      let preview;
      try {
        preview = await h.preview();
      } catch (e) {
        const text = errorText(e);
        const uncoded = coded(codeIn(text) ? [text.slice(text.indexOf("["))] : [text]);
        if (/errors printed without their code/.test(text) || uncoded.length > 0)
          return fail(i, uncoded[0] ?? { invariant: "coded", message: text.slice(0, 800) });
        if (mustAccept(next))
          return fail(i, {
            invariant: "accepts-valid",
            message: `preview refused a valid program: ${text.slice(0, 800)}`,
          });
        record("refused", codeIn(text));
        continue;
      }
      const planned: Record<string, Planned> = {};
      for (const e of preview.events) {
        const m = e.resourcePreEvent?.metadata;
        if (m) planned[m.urn] = { op: m.op, ...(m.new?.inputs ? { inputs: m.new.inputs } : {}) };
      }
      let up: automation.UpResult;
      try {
        up = await h.up();
      } catch (e) {
        return fail(i, {
          invariant: "preview-is-up",
          message: `preview passed, up failed: ${errorText(e).slice(0, 1200)}`,
        });
      }
      const previewed = changesOf(preview.changeSummary);
      const done = changesOf(up.summary.resourceChanges as Record<string, number>);
      if (JSON.stringify(sorted(previewed)) !== JSON.stringify(sorted(done)))
        return fail(i, {
          invariant: "preview-is-up",
          message: `preview planned ${JSON.stringify(sorted(previewed))}, up did ${JSON.stringify(sorted(done))}`,
        });
      const state = await h.resources();
      const outputs = Object.fromEntries(Object.entries(up.outputs).map(([k, v]) => [k, v.value]));
      const nextValues = slotValues(next, outputs);
      const broken = [
        ...previewIsUp(planned, state),
        ...unique(state),
        ...stable(world, values, next, nextValues),
      ];
      if (broken.length > 0) return fail(i, broken[0]!);
      const quiet = await quietAfter(h);
      if (quiet) return fail(i, quiet);
      world = next;
      values = nextValues;
      record("applied");
    }
    if (!programmed) {
      log("destroy: no stack was made");
      return { edits, steps, world };
    }
    try {
      await h.destroy();
    } catch (e) {
      return fail(total, { invariant: "destroy", message: `destroy failed: ${errorText(e).slice(0, 1200)}` });
    }
    const left = (await h.resources()).filter((r: StateResource) => r.type !== "pulumi:pulumi:Stack");
    if (left.length > 0)
      return fail(total, {
        invariant: "destroy",
        message: `destroy left ${left.map((r) => r.urn).join(", ")}`,
      });
    log(`destroy: nothing left`);
    return { edits, steps, world };
  } finally {
    h.dispose();
  }
}

/** Promise 5 after an `up` or a refresh: a second preview and a refresh preview change nothing. */
async function quietAfter(h: Harness): Promise<Violation | undefined> {
  const again = changesOf((await h.preview()).changeSummary);
  if (Object.keys(again).length > 0)
    return { invariant: "quiet", message: `the preview after up plans ${JSON.stringify(again)}` };
  const refresh = changesOf((await h.previewRefresh()).changeSummary as Record<string, number>);
  if (Object.keys(refresh).length > 0)
    return { invariant: "quiet", message: `a refresh after up would change ${JSON.stringify(refresh)}` };
  return undefined;
}

const sorted = (o: Record<string, number>) =>
  Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b)));
