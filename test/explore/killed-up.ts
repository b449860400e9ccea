/**
 * A killed `up` (a CI timeout, the OOM killer) and the recovery docs/operating.md describes, as the
 * explorer's `killed` steps run them.
 */
import type * as automation from "@pulumi/pulumi/automation";
import type { Harness, PreviewResult } from "../support/harness";
import {
  cliProcessesIn,
  connectedToPort,
  enginePortOf,
  processAgeMs,
  providerProcessesIn,
  repairTornSidecar,
} from "../support/provider-processes";
import { errorText, plannedBy } from "./engine-text";
import type { Planned, Violation } from "./invariants";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A provider process as the kill found it: how long it had run, and whether it served this package. */
export interface AtKill {
  ageMs?: number;
  /** Connected to its engine: it had run this package's code (see connectedToPort). */
  served: boolean;
}

/**
 * `pulumi up`, killed with SIGKILL (a CI timeout, the OOM killer) `afterMs` after it starts, unless
 * it is over by then: its result, or `{ killed: true }` with the provider processes as the kill
 * found them. An `up` that fails on its own throws.
 */
export async function upKilledAfter(
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
export async function recoverFromKill(
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
