/**
 * Runs a sequence of edits against the real engine, one fresh stack per sequence, and checks the
 * promises after every step (invariants.ts). A step is one edit: the program of the world after it
 * is previewed, then brought up; `refresh` runs a refresh instead. A refused preview leaves the
 * world as it was (a refusal must be coded, and the program must be one the product may refuse).
 * The sequence ends with `destroy`, which must leave nothing.
 */
import type * as automation from "@pulumi/pulumi/automation";
import { changesOf, Harness, type PreviewResult, type StateResource } from "../support/harness";
import { freshNamespace, testKubeconfig } from "../support/kube";
import { motoCredentials } from "../support/moto";
import { checkSays, quietAfter } from "./after-step";
import { foreignState, freshCloud, leftovers, region, zoneOf, type Cloud, type CloudServers } from "./cloud";
import { applyCloudFault, isCloudFault, ownElasticIps } from "./cloud-steps";
import { codeIn, errorText, plannedBy, sorted } from "./engine-text";
import { generateEdit } from "./generate";
import {
  addressFields,
  coded,
  mustAccept,
  previewIsUp,
  revealed,
  slotValues,
  stable,
  unique,
  type Planned,
  type SlotValue,
  type Violation,
} from "./invariants";
import { recoverFromKill, upKilledAfter } from "./killed-up";
import { pluginProject, writeProjectFile } from "../support/plugin-project";
import { programOf, tenantProgramOf, type CloudContext, type SharedContext } from "./program";
import { yamlProgramOf, yamlProject } from "./program-yaml";
import { ledgerLeftovers } from "./ledger";
import {
  ensureNamespaces,
  freshPlatform,
  nodeDown,
  platformForeign,
  platformLeftovers,
  removePlatform,
  type Platform,
} from "./platform";
import { Rng } from "./rng";
import { applyEdit, emptyWorld, type Edit, type PlatformKind, type World, type WorldKind } from "./world";

/** The package as the program's project loads it, and that project's `pulumi.secret`. */
type Pkg = typeof import("../../provider/index") & { secret: (value: string) => unknown };

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
 * How to run: replay `edits`, or generate `length` edits from `seed`; `cloud` for a cloud world,
 * `shared` for a shared one (the test cluster's, whose kubeconfig is EGRESS_IPAM_KUBECONFIG);
 * `kills` to generate edits whose `up` is killed (see generateEdit).
 */
export type RunPlan = ({ edits: Edit[] } | { seed: number; length: number }) & {
  cloud?: boolean;
  shared?: boolean;
  /** A YAML world: the program as Pulumi YAML through the plugin (program-yaml.ts). */
  yaml?: boolean;
  /** A platform world: EgressIps on this Kubernetes provisioner over the test cluster's Nodes (platform.ts). */
  platform?: PlatformKind;
  kills?: boolean;
};

/** The kind of world a plan explores. */
export const worldKindOf = (plan: Pick<RunPlan, "cloud" | "shared" | "yaml" | "platform">): WorldKind =>
  plan.cloud ? "cloud" : plan.shared ? "shared" : plan.yaml ? "yaml" : plan.platform ? "platform" : "local";

/** A sequence as it runs: its stack, its cloud, and the last world the engine accepted. */
interface Sequence {
  h: Harness;
  pkg: Pkg;
  cloud?: Cloud;
  context?: CloudContext;
  /** A shared world's ledger, and its second stack, the tenant. */
  shared?: SharedContext;
  tenant?: Harness;
  /** A platform world's Nodes, namespaces and somebody else's object. */
  platform?: Platform;
  /** Each stack's outputs after its last up (the tenant's `t<id>` beside the program's `h<id>`). */
  outputs: Map<Harness, Record<string, unknown>>;
  world: World;
  /** The address (and host, public address) of every slot of `world`. */
  values: Map<string, SlotValue>;
  /** Somebody else's things as planted (see foreignState). */
  foreignBefore?: string;
  /** The stacks given a program (so there is something to destroy), in the order they were. */
  programmed: Set<Harness>;
  /** Hears a line per step. */
  log: (line: string) => void;
}

/** How a step ended: an outcome to record, or a broken promise. */
type StepEnd =
  | { outcome: StepRecord["outcome"]; code?: string; /** a refusal's text, for the log */ said?: string }
  | { violation: Violation };

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
  const kind = worldKindOf(plan);
  const env =
    kind === "cloud"
      ? motoCredentials
      : kind === "shared" || kind === "platform"
        ? { KUBECONFIG: testKubeconfig() }
        : undefined;
  const h =
    kind === "yaml"
      ? pluginProject(consumerDir(), yamlProject, {
          "Pulumi.yaml": yamlProgramOf(emptyWorld("yaml"), "test"),
        })
      : Harness.create("explore", env ? { env } : {});
  const cloud = plan.cloud ? await freshCloud(servers!) : undefined;
  const platform = kind === "platform" ? await freshPlatform(plan.platform!) : undefined;
  const s: Sequence = {
    h,
    pkg: {
      ...h.pkg<typeof import("../../provider/index")>("pulumi-egress-ipam"),
      secret: h.pkg<typeof import("@pulumi/pulumi")>("@pulumi/pulumi").secret,
    },
    ...(cloud ? { cloud, context: { region, endpoint: cloud.endpoint, zoneOf, adopted: new Map() } } : {}),
    ...(kind === "shared"
      ? {
          shared: { namespace: await freshNamespace("explore") },
          tenant: Harness.create("explore-tenant", { env: env! }),
        }
      : {}),
    ...(platform ? { platform } : {}),
    outputs: new Map(),
    world: emptyWorld(kind, plan.platform),
    values: new Map(),
    ...(cloud ? { foreignBefore: await foreignState(cloud) } : {}),
    ...(platform ? { foreignBefore: await platformForeign(platform) } : {}),
    programmed: new Set(),
    log,
  };
  const rng = "seed" in plan ? new Rng(plan.seed) : undefined;
  const total = "seed" in plan ? plan.length : plan.edits.length;
  const edits: Edit[] = [];
  const steps: StepRecord[] = [];
  const fail = (step: number, v: Violation): RunResult => ({
    edits,
    steps,
    violation: { ...v, step },
    world: s.world,
  });
  try {
    for (let i = 0; i < total; i++) {
      const edit = rng
        ? generateEdit(rng, s.world, { kills: plan.kills })
        : (plan as { edits: Edit[] }).edits[i]!;
      edits.push(edit);
      const started = Date.now();
      const next = applyEdit(s.world, edit);
      const end: StepEnd = !next
        ? { outcome: "skipped" }
        : edit.op === "refresh"
          ? await refreshStep(s)
          : await programStep(s, i, edit, next);
      if ("violation" in end) return fail(i, end.violation);
      const ms = Date.now() - started;
      steps.push({ edit, outcome: end.outcome, ...(end.code ? { code: end.code } : {}), ms });
      log(`step ${i}: ${JSON.stringify(edit)} → ${end.outcome}${end.code ? ` ${end.code}` : ""} (${ms} ms)`);
      if (end.said) log(`  ${end.said.split("\n")[0]}`);
    }
    const destroyed = await finalDestroy(s);
    if (destroyed) return fail(total, destroyed);
    return { edits, steps, world: s.world };
  } finally {
    h.dispose();
    s.tenant?.dispose();
    if (platform) await removePlatform(platform);
  }
}

/** A planted thing changed since it was planted. */
async function foreignChanged(s: Sequence): Promise<Violation | undefined> {
  if (!s.cloud && !s.platform) return undefined;
  const now = s.cloud ? await foreignState(s.cloud) : await platformForeign(s.platform!);
  return now === s.foreignBefore
    ? undefined
    : { invariant: "foreign", message: `somebody else's changed: was ${s.foreignBefore}, is ${now}` };
}

/** The stacks of the sequence that have a program, the tenant's after the program's. */
const stacksOf = (s: Sequence): Harness[] =>
  [s.h, ...(s.tenant ? [s.tenant] : [])].filter((h) => s.programmed.has(h));

/** Gives stack `h` the program of `w`: the tenant's, the YAML file of a YAML world, or the inline program. */
async function setProgram(s: Sequence, h: Harness, w: World): Promise<void> {
  if (h === s.tenant) await h.program(tenantProgramOf(w, s.pkg, s.shared!));
  else if (w.yaml) {
    writeProjectFile(h, "Pulumi.yaml", yamlProgramOf(w, h.stackName));
    await h.project();
  } else await h.program(programOf(w, s.pkg, s.context, s.shared, s.platform));
}

/** The consumer project the harnesses run in (the global setup's). */
const consumerDir = () => {
  const dir = process.env.EGRESS_IPAM_CONSUMER;
  if (!dir) throw new Error("EGRESS_IPAM_CONSUMER is not set: run the explorer through vitest");
  return dir;
};

/** How messages name a stack of the sequence. */
const stackRole = (s: Sequence, h: Harness) => (h === s.tenant ? "tenant stack" : "stack");

/** The edits of the tenant stack (a shared world), which run there. */
const isTenantEdit = (edit: Edit): boolean => edit.op === "tenantAdd" || edit.op === "tenantRemove";

/** A refresh of each stack, which after an up must change nothing. */
async function refreshStep(s: Sequence): Promise<StepEnd> {
  if (s.world.holders.length === 0 && s.world.pools.length === 0) return { outcome: "skipped" };
  for (const h of stacksOf(s)) {
    try {
      const changed = changesOf((await h.refresh()).summary.resourceChanges);
      if (Object.keys(changed).length > 0)
        return {
          violation: {
            invariant: "quiet",
            message: `refresh of the ${stackRole(s, h)} after up changed ${JSON.stringify(changed)}`,
          },
        };
    } catch (e) {
      return {
        violation: {
          invariant: "quiet",
          message: `refresh of the ${stackRole(s, h)} failed: ${errorText(e)}`,
        },
      };
    }
  }
  const quiet = (await allQuiet(s)) ?? (await foreignChanged(s));
  return quiet ? { violation: quiet } : { outcome: "refreshed" };
}

/**
 * Promise 5 for every stack of the sequence (see quietAfter). The tenant's, when the step was not
 * its own `up`, may show its references updated with what the pool's owner decided since.
 */
async function allQuiet(s: Sequence, ranOn?: Harness): Promise<Violation | undefined> {
  for (const h of stacksOf(s)) {
    const quiet = await quietAfter(h, h === s.tenant && ranOn !== h);
    if (quiet) return s.tenant ? { ...quiet, message: `the ${stackRole(s, h)}: ${quiet.message}` } : quiet;
  }
  return undefined;
}

/** What every stack holds: its checkpoint's resources. */
async function heldByAll(s: Sequence): Promise<StateResource[]> {
  const all: StateResource[] = [];
  for (const h of stacksOf(s)) all.push(...revealed(await h.resources()));
  return all;
}

/**
 * The program of `next` previewed and brought up on its stack (the tenant's for a tenant edit;
 * first, for a fault, what it does in the cloud), with every promise checked on the way: a
 * refusal is coded and of a program the product may refuse; what preview shows, up does (across a
 * killed up too); addresses are unique (across the stacks of a shared pool) and stay where the
 * edit does not move them; then nothing is left to do on any stack.
 */
async function programStep(s: Sequence, i: number, edit: Edit, next: World): Promise<StepEnd> {
  const { cloud, context } = s;
  const inner = edit.op === "killed" ? edit.edit : edit;
  const h = isTenantEdit(inner) ? s.tenant! : s.h;
  if (cloud && isCloudFault(edit)) {
    const fault = await applyCloudFault(h, cloud, edit, s.values);
    if (fault.handedOver) s.foreignBefore = await foreignState(cloud);
    if (fault.violation) return { violation: fault.violation };
  }
  // A person's or a failure's change of a platform world's cluster, before the program's step.
  if (s.platform && edit.op === "nodeDown") await nodeDown(s.platform, edit.host);
  if (s.platform) await ensureNamespaces(s.platform, next);
  const adoptedBefore = context && new Map(context.adopted);
  if (context && edit.op === "elasticIps" && edit.elasticIps === "adoptOwn")
    context.adopted.set(edit.holder, await ownElasticIps(h, s.values, edit.holder));
  await setProgram(s, h, next);
  let preview: PreviewResult;
  try {
    preview = await h.preview();
  } catch (e) {
    const text = errorText(e);
    const uncoded = coded(codeIn(text) ? [text.slice(text.indexOf("["))] : [text]);
    if (/errors printed without their code/.test(text) || uncoded.length > 0)
      return { violation: uncoded[0] ?? { invariant: "coded", message: text.slice(0, 800) } };
    if (mustAccept(next))
      return {
        violation: {
          invariant: "accepts-valid",
          message: `preview refused a valid program: ${text.slice(0, 800)}`,
        },
      };
    if (context) context.adopted = adoptedBefore!;
    // The stack's program stays the one it had (a shared world's tenant program may be its first).
    await setProgram(s, h, s.world);
    const code = codeIn(text);
    const said = code ? text.slice(text.indexOf(`[${code}]`), text.indexOf(`[${code}]`) + 300) : undefined;
    return { outcome: "refused", ...(code ? { code, said } : {}) };
  }
  s.programmed.add(h);
  let planned: Record<string, Planned> = plannedBy(preview);
  const firstPlan = planned;
  let up: automation.UpResult;
  let killed = false;
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
        for (const note of notes) s.log(`step ${i}: ${note}`);
        if ("invariant" in recovered) return { violation: recovered };
        ({ preview, planned, up } = recovered);
      }
    } else up = await h.up();
  } catch (e) {
    return {
      violation: {
        invariant: "preview-is-up",
        message: `preview passed, up failed: ${errorText(e).slice(0, 1200)}`,
      },
    };
  }
  const previewed = sorted(changesOf(preview.changeSummary));
  const done = sorted(changesOf(up.summary.resourceChanges as Record<string, number>));
  if (JSON.stringify(previewed) !== JSON.stringify(done))
    return {
      violation: {
        invariant: "preview-is-up",
        message: `preview planned ${JSON.stringify(previewed)}, up did ${JSON.stringify(done)}`,
      },
    };
  const state = revealed(await h.resources());
  s.outputs.set(h, Object.fromEntries(Object.entries(up.outputs).map(([k, v]) => [k, v.value])));
  const outputs = Object.assign({}, ...s.outputs.values()) as Record<string, unknown>;
  const nextValues = slotValues(next, outputs, cloud ? { zoneOf, nameOf: cloud.nameOf } : s.platform);
  const broken = [
    ...previewIsUp(planned, state),
    // Across a kill: the addresses and blocks the first preview showed are those the step ends with.
    ...(killed ? previewIsUp(firstPlan, state, addressFields) : []),
    // A shared world's pools are one set of addresses across its stacks (each pool a subnet of its own).
    ...(s.shared ? unique(await heldByAll(s), false) : unique(state)),
    ...stable(s.world, s.values, next, nextValues),
    ...(s.platform ? notForeign(nextValues, s.platform.foreignIp) : []),
  ];
  if (broken.length > 0) return { violation: broken[0]! };
  const quiet =
    (await allQuiet(s, h)) ?? (await foreignChanged(s)) ?? (cloud && (await checkSays(h, cloud, true)));
  if (quiet) return { violation: quiet };
  s.world = next;
  s.values = nextValues;
  return { outcome: killed ? "killed" : "applied" };
}

/**
 * The sequence's `destroy` of each stack (the tenant's first), which must leave nothing of the
 * stack: in its state, in EC2, on the ledger; nor change somebody else's.
 */
async function finalDestroy(s: Sequence): Promise<Violation | undefined> {
  if (s.programmed.size === 0) {
    s.log("destroy: no stack was made");
    return undefined;
  }
  for (const h of stacksOf(s).reverse()) {
    try {
      await h.destroy();
    } catch (e) {
      const message = `destroy of the ${stackRole(s, h)} failed: ${errorText(e).slice(0, 1200)}`;
      return { invariant: "destroy", message };
    }
    const left = (await h.resources()).filter((r: StateResource) => r.type !== "pulumi:pulumi:Stack");
    if (left.length > 0)
      return { invariant: "destroy", message: `destroy left ${left.map((r) => r.urn).join(", ")}` };
  }
  if (s.cloud) {
    const adopted = new Set([...s.context!.adopted.values()].flatMap((m) => Object.values(m)));
    const inEc2 = await leftovers(s.cloud, adopted);
    if (inEc2.length > 0)
      return { invariant: "destroy", message: `destroy left in EC2: ${inEc2.join(", ")}` };
    const changed = await foreignChanged(s);
    if (changed) return changed;
  }
  if (s.platform) {
    const onCluster = await platformLeftovers(s.platform);
    if (onCluster.length > 0)
      return { invariant: "destroy", message: `destroy left on the cluster: ${onCluster.join(", ")}` };
    const changed = await foreignChanged(s);
    if (changed) return changed;
  }
  if (s.shared) {
    const onLedger = await ledgerLeftovers(s.shared.namespace);
    if (onLedger.length > 0)
      return { invariant: "destroy", message: `destroy left on the ledger: ${onLedger.join(", ")}` };
  }
  s.log(`destroy: nothing left`);
  return undefined;
}

/** Promise 3 with somebody else's: no EgressIp of a platform world holds the planted object's address. */
function notForeign(values: Map<string, SlotValue>, foreignIp: string): Violation[] {
  return [...values].flatMap(([key, v]) =>
    key.includes("/") && v.value === foreignIp
      ? [
          {
            invariant: "unique" as const,
            message: `${key} holds ${foreignIp}, which somebody else's object has`,
          },
        ]
      : [],
  );
}
