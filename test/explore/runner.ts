/**
 * Runs a sequence of edits against the real engine, one fresh stack per sequence, and checks the
 * promises after every step (invariants.ts). A step is one edit: the program of the world after it
 * is previewed, then brought up; `refresh` runs a refresh instead. A refused preview leaves the
 * world as it was (a refusal must be coded, and the program must be one the product may refuse).
 * The sequence ends with `destroy`, which must leave nothing.
 */
import type * as automation from "@pulumi/pulumi/automation";
import { changesOf, Harness, type PreviewResult, type StateResource } from "../support/harness";
import { Rng } from "./rng";
import { generateEdit } from "./generate";
import {
  addressFields,
  coded,
  mustAccept,
  previewIsUp,
  slotValues,
  stable,
  unique,
  type Planned,
  type SlotValue,
  type Violation,
} from "./invariants";
import { programOf, type CloudContext } from "./program";
import {
  foreignState,
  freshCloud,
  leftovers,
  region,
  terminate,
  unassign,
  handOver,
  zoneOf,
  type CloudServers,
} from "./cloud";
import { motoCredentials } from "../support/moto";
import { runCli } from "../support/cli";
import {
  cliProcessesIn,
  connectedToPort,
  enginePortOf,
  processAgeMs,
  providerProcessesIn,
  repairTornSidecar,
} from "../support/provider-processes";
import type { Cloud } from "./cloud";
import { applyEdit, emptyWorld, type Edit, type World } from "./world";

type Pkg = typeof import("../../provider/index");

/** What happened at one step. */
export interface StepRecord {
  edit: Edit;
  outcome: "applied" | "refused" | "skipped" | "refreshed" | "killed";
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

/**
 * How to run: replay `edits`, or generate `length` edits from `seed`; `cloud` for a cloud world;
 * `kills` to generate edits whose `up` is killed (see generateEdit).
 */
export type RunPlan = ({ edits: Edit[] } | { seed: number; length: number }) & {
  cloud?: boolean;
  kills?: boolean;
};

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
export async function runSequence(
  plan: RunPlan,
  log: (line: string) => void = () => {},
  servers?: CloudServers,
): Promise<RunResult> {
  if (plan.cloud && !servers) throw new Error("a cloud world needs the cloud servers (startCloud)");
  const h = Harness.create("explore", plan.cloud ? { env: motoCredentials } : {});
  const pkg = h.pkg<Pkg>("pulumi-egress-ipam");
  const cloud = plan.cloud ? await freshCloud(servers!) : undefined;
  const context: CloudContext | undefined = cloud && {
    region,
    endpoint: cloud.endpoint,
    zoneOf,
    adopted: new Map(),
  };
  let foreignBefore = cloud && (await foreignState(cloud));
  /** A planted thing changed since it was planted. */
  const foreignChanged = async (): Promise<Violation | undefined> => {
    if (!cloud) return undefined;
    const now = await foreignState(cloud);
    return now === foreignBefore
      ? undefined
      : { invariant: "foreign", message: `somebody else's changed: was ${foreignBefore}, is ${now}` };
  };
  const rng = "seed" in plan ? new Rng(plan.seed) : undefined;
  const total = "seed" in plan ? plan.length : plan.edits.length;
  const edits: Edit[] = [];
  const steps: StepRecord[] = [];
  let world = emptyWorld(Boolean(plan.cloud));
  let values = new Map<string, SlotValue>();
  let programmed = false;
  const fail = (step: number, v: Violation): RunResult => ({
    edits,
    steps,
    violation: { ...v, step },
    world,
  });
  try {
    for (let i = 0; i < total; i++) {
      const edit = rng
        ? generateEdit(rng, world, { kills: plan.kills })
        : (plan as { edits: Edit[] }).edits[i]!;
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
        const quiet = (await quietAfter(h)) ?? (await foreignChanged());
        if (quiet) return fail(i, quiet);
        record("refreshed");
        continue;
      }
      // What people and failures do happens in the cloud, then the next up repairs it: a removed
      // address is found by refresh, a terminated host's addresses move at plain up.
      if (cloud && edit.op === "unassign") {
        const own = [...values].find(([key]) => key.startsWith(`h${edit.holder}/`))?.[1];
        if (own) await unassign(cloud, own.value);
        try {
          await h.refresh();
        } catch (e) {
          return fail(i, {
            invariant: "quiet",
            message: `refresh after an address was taken off failed: ${errorText(e)}`,
          });
        }
      }
      if (cloud && edit.op === "terminate") await terminate(cloud, edit.host);
      if (cloud && edit.op === "handOver") {
        const own = [...values].find(([key]) => key.startsWith(`h${edit.holder}/`));
        if (own?.[1].host) {
          const domain = own[0].split("/")[1]!;
          const subnet = cloud.subnetOf[domain]!;
          await handOver(cloud, own[1].value, own[1].host, subnet);
          foreignBefore = await foreignState(cloud);
        }
      }
      if (cloud && (edit.op === "terminate" || edit.op === "unassign" || edit.op === "handOver")) {
        const said = await checkSays(h, cloud, false);
        if (said) return fail(i, said);
      }
      const adoptedBefore = context && new Map(context.adopted);
      if (context && edit.op === "elasticIps" && edit.elasticIps === "adoptOwn")
        context.adopted.set(edit.holder, await ownElasticIps(h, values, edit.holder));
      await h.program(programOf(next, pkg, context));
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
        if (context) context.adopted = adoptedBefore!;
        record("refused", codeIn(text));
        continue;
      }
      let planned = plannedBy(preview);
      let up: automation.UpResult;
      let killed = false;
      const firstPlan = planned;
      try {
        if (edit.op === "killed") {
          const run = await upKilledAfter(h, edit.afterMs);
          if ("result" in run) up = run.result;
          else {
            // docs/operating.md, after a killed up: the provider exits within seconds; `pulumi
            // cancel` (and, on a file backend, the torn attributes file deleted); the next up
            // finishes the work. What its preview shows, it does.
            killed = true;
            const notes: string[] = [];
            const recovered = await recoverFromKill(h, run.providers, notes);
            for (const note of notes) log(`step ${i}: ${note}`);
            if ("invariant" in recovered) return fail(i, recovered);
            preview = recovered.preview;
            planned = recovered.planned;
            up = recovered.up;
          }
        } else up = await h.up();
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
      const nextValues = slotValues(next, outputs, cloud && { zoneOf, nameOf: cloud.nameOf });
      const broken = [
        ...previewIsUp(planned, state),
        // Across a kill: the addresses and blocks the first preview showed are those the step ends with.
        ...(killed ? previewIsUp(firstPlan, state, addressFields) : []),
        ...unique(state),
        ...stable(world, values, next, nextValues),
      ];
      if (broken.length > 0) return fail(i, broken[0]!);
      const quiet =
        (await quietAfter(h)) ?? (await foreignChanged()) ?? (cloud && (await checkSays(h, cloud, true)));
      if (quiet) return fail(i, quiet);
      world = next;
      values = nextValues;
      record(killed ? "killed" : "applied");
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
    if (cloud) {
      const adopted = new Set([...context!.adopted.values()].flatMap((m) => Object.values(m)));
      const left = await leftovers(cloud, adopted);
      if (left.length > 0)
        return fail(total, { invariant: "destroy", message: `destroy left in EC2: ${left.join(", ")}` });
      const changed = await foreignChanged();
      if (changed) return fail(total, changed);
    }
    log(`destroy: nothing left`);
    return { edits, steps, world };
  } finally {
    h.dispose();
  }
}

/** What a preview planned for each resource: its operation and the inputs it showed. */
function plannedBy(preview: PreviewResult): Record<string, Planned> {
  const planned: Record<string, Planned> = {};
  for (const e of preview.events) {
    const m = e.resourcePreEvent?.metadata;
    if (m) planned[m.urn] = { op: m.op, ...(m.new?.inputs ? { inputs: m.new.inputs } : {}) };
  }
  return planned;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A provider process as the kill found it: how long it had run, and whether it served this package. */
interface AtKill {
  ageMs?: number;
  /** Connected to its engine: it had run this package's code (see connectedToPort). */
  served: boolean;
}

/**
 * `pulumi up`, killed with SIGKILL (a CI timeout, the OOM killer) `afterMs` after it starts, unless
 * it is over by then: its result, or `{ killed: true }` with the provider processes as the kill
 * found them. An `up` that fails on its own throws.
 */
async function upKilledAfter(
  h: Harness,
  afterMs: number,
): Promise<{ result: automation.UpResult } | { killed: true; providers: Map<number, AtKill> }> {
  let over = false;
  const run = h.up().then(
    (result) => ((over = true), { result }),
    (error: unknown) => ((over = true), { error }),
  );
  await Promise.race([run, sleep(afterMs)]);
  const pids = over ? [] : cliProcessesIn(h.workDir, "up");
  const providers = new Map<number, AtKill>(
    providerProcessesIn(h.workDir).map((pid) => {
      const port = enginePortOf(pid);
      return [pid, { ageMs: processAgeMs(pid), served: port !== undefined && connectedToPort(pid, port) }];
    }),
  );
  for (const pid of pids) process.kill(pid, "SIGKILL");
  const out = await run;
  if ("result" in out) return out;
  if (pids.length > 0) return { killed: true, providers };
  throw out.error;
}

/**
 * What docs/operating.md says to do after a killed `up`, checked as it goes: no provider process
 * that served this package left after 20 s, `pulumi cancel` (the lock), the torn attributes file of
 * a file backend deleted, then a preview and an up that finish the work. A provider process killed
 * before it served this package (Pulumi's own dynamic-provider host, which does not watch its
 * engine) is stopped by its PID and told in `notes`, not counted against the promise.
 */
async function recoverFromKill(
  h: Harness,
  atKill: Map<number, AtKill>,
  notes: string[],
): Promise<
  Violation | { preview: PreviewResult; planned: Record<string, Planned>; up: automation.UpResult }
> {
  const started = Date.now();
  while (providerProcessesIn(h.workDir).length > 0) {
    if (Date.now() - started > 20_000) {
      const left = providerProcessesIn(h.workDir);
      for (const pid of left) process.kill(pid, "SIGKILL");
      const told = (pid: number) => {
        const p = atKill.get(pid);
        return `${pid} (${p ? `${p.ageMs} ms old at the kill, ${p.served ? "serving" : "not yet serving"} this package` : "started after the kill"})`;
      };
      const served = left.filter((pid) => atKill.get(pid)?.served);
      if (served.length > 0)
        return {
          invariant: "killed",
          message: `provider processes ${served.map(told).join(", ")} still ran 20 s after up was killed`,
        };
      notes.push(
        `Pulumi's own provider host ${left.map(told).join(", ")} outlived the killed up: stopped by PID`,
      );
      break;
    }
    await sleep(200);
  }
  repairTornSidecar(h.checkpointFile);
  await h.cancel().catch(() => undefined); // no lock left is fine
  let preview: PreviewResult;
  try {
    preview = await h.preview();
  } catch (e) {
    return {
      invariant: "killed",
      message: `after a killed up, preview fails: ${errorText(e).slice(0, 1200)}`,
    };
  }
  try {
    return { preview, planned: plannedBy(preview), up: await h.up() };
  } catch (e) {
    return { invariant: "killed", message: `after a killed up, up fails: ${errorText(e).slice(0, 1200)}` };
  }
}

/** The Elastic IP (allocation ID) each IPv4 address of an aws EgressIp has now, from the checkpoint. */
async function ownElasticIps(
  h: Harness,
  values: Map<string, SlotValue>,
  holder: number,
): Promise<Record<string, string>> {
  const ips = [...values].filter(([key]) => key.startsWith(`h${holder}/`)).map(([, v]) => v.value);
  const out: Record<string, string> = {};
  for (const r of await h.resources()) {
    const ip = r.outputs?.ip;
    const id = r.outputs?.publicId;
    if (
      r.type.endsWith("EgressIpAssignment") &&
      typeof ip === "string" &&
      typeof id === "string" &&
      ips.includes(ip)
    )
      out[ip] = id;
  }
  return out;
}

/**
 * Promise 4 as `check` keeps it: none of the fixes it prints names anything planted (somebody
 * else's address, its interface, their Elastic IPs, the pods' interfaces addresses were handed to);
 * and after an `up` it finds nothing (exit 0).
 */
async function checkSays(h: Harness, cloud: Cloud, afterUp: boolean): Promise<Violation | undefined> {
  const run = await runCli(["check", "--stack", h.fqStackName], h.env);
  const printed = `${run.stdout}${run.stderr}`;
  // The pods' interfaces addresses were handed to are somebody else's too (issue 54, item 1).
  const foreign = [
    cloud.foreign.address,
    cloud.foreign.eniId,
    ...cloud.foreign.eips,
    ...cloud.foreign.handed.map((h) => h.eniId),
  ];
  const fixes = printed.split("\n").filter((line) => /\b(aws ec2|fix:)/.test(line));
  const named = fixes.filter((line) =>
    foreign.some((f) => new RegExp(`\\b${f.replace(/\./g, "\\.")}\\b`).test(line)),
  );
  if (named.length > 0)
    return {
      invariant: "check",
      message: `check prints a fix for somebody else's: ${named.join(" | ")}\n${printed}`,
    };
  // `none` has no hosts to list: its addresses are "not checked" (exit 3), and nothing else may be.
  const othersUnchecked = /provisioner (?!none:)\S+: not checked/.test(printed);
  const onlyNone = run.code === 3 && /provisioner none: not checked/.test(printed) && !othersUnchecked;
  if (afterUp && run.code !== 0 && !onlyNone)
    return { invariant: "check", message: `check after up exits ${run.code}:\n${printed.slice(0, 1500)}` };
  return undefined;
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
