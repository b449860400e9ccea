/**
 * An exploration session: sequences from consecutive seeds until the time is up, each failing one
 * shrunk and written as a case file, and the figures of what was explored.
 */
import { startKubeCluster, stopKubeCluster } from "../support/kube-cluster";
import { startCloud, type CloudServers } from "./cloud";
import { describeFailure, writeCase } from "./report";
import { runSequence, worldKindOf, type RunResult } from "./runner";
import { shrink } from "./shrink";
import { platformKinds, type PlatformKind } from "./world";

/** Settings of a session. */
export interface SessionOptions {
  /** The first seed; the session runs seed, seed + 1, … */
  seed: number;
  /** Edits per sequence. */
  length: number;
  /** Which sequences run in a cloud world (moto): none, every other seed (the even ones), or all. */
  cloud: "none" | "mixed" | "all";
  /**
   * Which sequences run in a shared world (pools on a ledger of the test cluster, and a tenant
   * stack): none, every fourth seed (those of remainder 1, none of them a cloud world's), or all
   * that are not cloud worlds. The test cluster is started unless one runs (EGRESS_IPAM_KUBECONFIG).
   */
  shared?: "none" | "mixed" | "all";
  /**
   * Which sequences run in a YAML world (the program as Pulumi YAML through the plugin): none,
   * every eighth seed (those of remainder 3), or all that are neither cloud nor shared worlds.
   */
  yaml?: "none" | "mixed" | "all";
  /**
   * Which sequences run in a platform world (EgressIps on a Kubernetes provisioner over Nodes of
   * the test cluster, beside somebody else's object): none, every eighth seed (those of remainder
   * 7), or all that are neither cloud, shared nor YAML worlds. The kind cycles with the seed
   * ({@link platformOf}).
   */
  platform?: "none" | "mixed" | "all";
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
  const cluster =
    ((o.shared ?? "none") !== "none" || (o.platform ?? "none") !== "none") &&
    !process.env.EGRESS_IPAM_KUBECONFIG
      ? startKubeCluster()
      : undefined;
  if (cluster) process.env.EGRESS_IPAM_KUBECONFIG = cluster.kubeconfig;
  try {
    await exploreSeeds(o, started, figures, servers);
  } finally {
    await servers?.stop();
    if (cluster?.started) stopKubeCluster();
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
    const shared = !cloud && (o.shared === "all" || (o.shared === "mixed" && seed % 4 === 1));
    const yaml = !cloud && !shared && (o.yaml === "all" || (o.yaml === "mixed" && seed % 8 === 3));
    const onPlatform =
      !cloud && !shared && !yaml && (o.platform === "all" || (o.platform === "mixed" && seed % 8 === 7));
    const platform = onPlatform ? platformOf(seed) : undefined;
    const kind = worldKindOf({ cloud, shared, yaml, platform });
    o.log(`== seed ${seed}${kind === "local" ? "" : ` (${platform ?? kind} world)`}`);
    const result = await runSequence(
      { seed, length: o.length, cloud, shared, yaml, platform, kills: o.kills },
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
        const r = await runSequence({ edits, cloud, shared, yaml, platform }, () => {}, servers);
        return r.violation ? { invariant: r.violation.invariant, step: r.violation.step } : {};
      },
      Date.now() + o.shrinkMs,
    );
    const final = await runSequence(
      { edits: shrunk.edits, cloud, shared, yaml, platform },
      () => {},
      servers,
    );
    const shown: RunResult = final.violation ? final : result;
    const file = writeCase(o.foundDir, `seed-${seed}`, shown);
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

/** A platform world's kind for `seed`: consecutive seeds, and the mixed ones (7, 15, 23, …), cycle through them. */
export const platformOf = (seed: number): PlatformKind =>
  platformKinds[(seed + Math.floor(seed / 8)) % platformKinds.length]!;

function count(f: SessionFigures, r: RunResult): void {
  for (const s of r.steps) {
    f.steps++;
    const key = `${s.edit.op} ${s.outcome}`;
    f.outcomes[key] = (f.outcomes[key] ?? 0) + 1;
    if (s.code) f.codes[s.code] = (f.codes[s.code] ?? 0) + 1;
  }
}
