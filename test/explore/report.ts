/**
 * A failing sequence as a person reads and reruns it: the program of the world before the failing
 * step and after it, every step with its outcome, and a case file the suite replays.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { programText } from "./program";
import type { RunResult } from "./runner";
import { applyEdit, emptyWorld, kindOfWorld, type Edit, type PlatformKind, type World } from "./world";

/** A regression case: the edits to replay and the promise they once broke. */
export interface ExploreCase {
  /** What the case is about, and how the explorer found it. */
  title: string;
  /** The promise the sequence broke when it was found. */
  broke: string;
  /** A cloud world (moto). */
  cloud?: boolean;
  /** A shared world (a ledger on the test cluster, and a tenant stack). */
  shared?: boolean;
  /** A YAML world (the program through the plugin). */
  yaml?: boolean;
  /** A platform world's provisioner kind (EgressIps over the test cluster's Nodes). */
  platform?: PlatformKind;
  edits: Edit[];
}

/** The worlds the engine accepted before each step of `result`'s edits, replayed on the model. */
function worldsAlong(result: RunResult): World[] {
  const worlds: World[] = [];
  let w = emptyWorld(kindOfWorld(result.world), result.world.platform);
  for (const [i, edit] of result.edits.entries()) {
    worlds.push(w);
    const outcome = result.steps[i]?.outcome;
    if (outcome === "applied") w = applyEdit(w, edit) ?? w;
  }
  worlds.push(w);
  return worlds;
}

/** A readable account of a failed run: the steps, the broken promise, and the program before and at the failing step. */
export function describeFailure(result: RunResult): string {
  const v = result.violation!;
  const worlds = worldsAlong(result);
  const failing = result.edits[v.step];
  const lines = [
    `broke "${v.invariant}" at step ${v.step}${v.step === result.edits.length ? " (the final destroy)" : ""}: ${v.message}`,
    "",
    "steps:",
    ...result.edits.map(
      (e, i) =>
        `  ${i}. ${JSON.stringify(e)} → ${result.steps[i]?.outcome ?? "(failed here)"}${result.steps[i]?.code ? ` ${result.steps[i]!.code}` : ""}`,
    ),
    "",
    "the program before the failing step (index.ts):",
    programText(worlds[Math.min(v.step, worlds.length - 1)]!),
  ];
  const after = failing ? applyEdit(worlds[v.step]!, failing) : undefined;
  if (after) lines.push("and at the failing step:", programText(after));
  return lines.join("\n");
}

/** Writes `result` as a case file into `dir` (made when missing); returns its path. */
export function writeCase(dir: string, name: string, result: RunResult): string {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}.json`);
  const c: ExploreCase = {
    title: `found by the explorer (${name}): ${result.violation!.message.slice(0, 200)}`,
    broke: result.violation!.invariant,
    ...(result.world.cloud ? { cloud: true } : {}),
    ...(result.world.shared ? { shared: true } : {}),
    ...(result.world.yaml ? { yaml: true } : {}),
    ...(result.world.platform ? { platform: result.world.platform } : {}),
    edits: result.edits,
  };
  fs.writeFileSync(file, JSON.stringify(c, null, 2) + "\n");
  return file;
}
