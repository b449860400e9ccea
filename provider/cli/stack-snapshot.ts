import { execFile } from "node:child_process";
import type { CheckpointResource } from "../ledger/stack/stack-checkpoint";
import { CliError, exitCodes } from "./cli-error";
import { shown } from "../core/text";

/** A resource of the checkpoint with the timestamps the engine records (Pulumi ≥ 3.100). */
export interface SnapshotResource extends CheckpointResource {
  /** When the engine created it (RFC 3339), if the checkpoint says. */
  created?: string;
  /** When the engine last changed it (RFC 3339), if the checkpoint says. */
  modified?: string;
}

/** One deployment of the stack, from `pulumi stack history`. */
export interface Deployment {
  /** The stack's version after it: 1 for the first update. */
  version: number;
  kind: string;
  /** Start and end, in milliseconds since the epoch. */
  start: number;
  end: number;
}

/** What the CLI reads about a stack: its checkpoint and its deployments. */
export interface StackSnapshot {
  /** The stack as given, `<org>/<project>/<stack>`. */
  stack: string;
  /** Live resources, including those pending deletion or replacement. */
  resources: SnapshotResource[];
  /** Resources of interrupted creates (`pending_operations` of kind `creating`): planned, not created. */
  pendingCreates: SnapshotResource[];
  /** The stack's deployments, oldest first; empty when the backend keeps no history. */
  deployments: Deployment[];
}

/** How to run the Pulumi CLI. */
export interface PulumiCli {
  /** The executable; default `$PULUMI_EGRESS_IPAM_CLI`, else `pulumi` on PATH. */
  cli?: string;
  env?: NodeJS.ProcessEnv;
}

const run = (pulumi: PulumiCli, args: string[]): Promise<{ out: string; err?: string; missing?: boolean }> =>
  new Promise((resolve) => {
    const cli = pulumi.cli ?? "pulumi";
    const env = { ...(pulumi.env ?? process.env), PULUMI_SKIP_UPDATE_CHECK: "true" };
    execFile(cli, args, { env, maxBuffer: 1 << 30, encoding: "utf8" }, (e, out, stderr) => {
      if (!e) return resolve({ out });
      const missing = (e as NodeJS.ErrnoException).code === "ENOENT";
      resolve({ out, err: lastErrorLine(stderr) || e.message, missing });
    });
  });

/** The most telling line of Pulumi's stderr: its last `error:` line, else its last line. */
function lastErrorLine(stderr: string): string {
  const lines = stderr
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);
  const error = lines.findLast((l) => l.startsWith("error:"));
  return (error ?? lines.at(-1) ?? "").replace(/^error:\s*/, "");
}

/**
 * Reads a stack with `pulumi stack export` (and `pulumi stack history`, for the deployment that
 * placed each address). The backend and credentials come from the environment, as for `pulumi`.
 * @throws CliError naming the stack and what to do when the CLI is missing, the stack does not
 * exist, or the export is not a checkpoint.
 */
export async function readStack(stack: string, pulumi: PulumiCli = {}): Promise<StackSnapshot> {
  const cli =
    pulumi.cli ?? pulumi.env?.PULUMI_EGRESS_IPAM_CLI ?? process.env.PULUMI_EGRESS_IPAM_CLI ?? "pulumi";
  const at = { ...pulumi, cli };
  const [exported, history] = await Promise.all([
    run(at, ["stack", "export", "--stack", stack]),
    run(at, ["stack", "history", "--json", "--stack", stack]),
  ]);
  if (exported.missing) {
    throw new CliError(
      `the Pulumi CLI "${cli}" was not found: put pulumi on PATH or set PULUMI_EGRESS_IPAM_CLI`,
      exitCodes.usage,
      "INVALID_CONFIG",
    );
  }
  if (exported.err !== undefined) {
    throw new CliError(
      `cannot read stack ${shown(stack)}: ${exported.err}; check the name (<org>/<project>/<stack>, ` +
        `see \`pulumi stack ls --all\`) and that PULUMI_BACKEND_URL points at its backend`,
      exitCodes.usage,
      "LEDGER_UNAVAILABLE",
    );
  }
  let text = exported.out;
  if (keepsSecretKubeconfig(text)) {
    // A provisioner or ledger given its kubeconfig as a value reaches its cluster only through
    // it: read it as the provider does, from the stack, in this process only (never printed).
    const revealed = await run(at, ["stack", "export", "--show-secrets", "--stack", stack]);
    if (revealed.err !== undefined) {
      throw new CliError(
        `stack ${shown(stack)} keeps a kubeconfig given as a value as a secret, and reading it failed ` +
          `(pulumi stack export --show-secrets: ${revealed.err}); give this command the secrets access ` +
          `pulumi up has (PULUMI_CONFIG_PASSPHRASE, or the secrets provider's credentials)`,
      );
    }
    text = revealed.out;
  }
  return { stack, ...parseExport(text, stack), deployments: parseHistory(history.out) };
}

// How `pulumi stack export` writes a secret: an object whose signature key has the secret's value,
// with `ciphertext` (or, with --show-secrets, `plaintext`: the value as JSON).
const signatureKey = "4dabf18193072939515e22adb298388d";
const secretSignature = "1b47061264138c4ac30d75fd1eb44270";

/** Whether an export keeps a `kubeconfig` setting as a secret (encrypted). */
export function keepsSecretKubeconfig(text: string): boolean {
  return new RegExp(`"kubeconfig":\\s*\\{\\s*"${signatureKey}":\\s*"${secretSignature}"`).test(text);
}

/** A JSON reviver that gives a revealed secret's value in place of its envelope. */
function revealed(_key: string, value: unknown): unknown {
  const v = value as Record<string, unknown> | null;
  if (typeof v !== "object" || v === null || v[signatureKey] !== secretSignature) return value;
  return typeof v.plaintext === "string" ? JSON.parse(v.plaintext) : value;
}

/**
 * The resources of a `pulumi stack export` document.
 * @throws CliError naming the stack when the text is not a stack export.
 */
export function parseExport(
  text: string,
  stack: string,
): Pick<StackSnapshot, "resources" | "pendingCreates"> {
  const bad = (why: string) =>
    new CliError(
      `the checkpoint of stack "${stack}" is unreadable: ${why}; run \`pulumi stack export --stack ${stack}\` ` +
        `to see it, and \`pulumi cancel\` or \`pulumi refresh\` if an update left it broken`,
      exitCodes.usage,
      "INVALID_STATE",
    );
  let parsed: unknown;
  try {
    parsed = JSON.parse(text, revealed);
  } catch {
    throw bad("`pulumi stack export` did not print JSON");
  }
  const deployment = (parsed as { deployment?: Record<string, unknown> } | null)?.deployment;
  if (!deployment || typeof deployment !== "object") throw bad("it has no `deployment`");
  const resources = deployment.resources ?? [];
  const pending = deployment.pending_operations ?? [];
  if (!Array.isArray(resources) || !Array.isArray(pending)) {
    throw bad("`resources` or `pending_operations` is not a list");
  }
  const creates = pending
    .filter((op: { type?: unknown }) => op?.type === "creating")
    .map((op: { resource?: unknown }) => op.resource);
  for (const r of [...resources, ...creates]) {
    if (!r || typeof (r as { urn?: unknown }).urn !== "string") throw bad("a resource has no urn");
  }
  return { resources: resources as SnapshotResource[], pendingCreates: creates as SnapshotResource[] };
}

/**
 * Deployments from `pulumi stack history --json`, oldest first; none when it cannot be read. The
 * file backend reports every version as 0: then deployments are numbered in order from 1, as
 * Pulumi Cloud numbers them.
 */
export function parseHistory(text: string): Deployment[] {
  let list: unknown;
  try {
    list = JSON.parse(text);
  } catch {
    return [];
  }
  if (!Array.isArray(list)) return [];
  const time = (v: unknown) =>
    typeof v === "string" ? Date.parse(v) : typeof v === "number" ? v * 1000 : NaN;
  const deployments = list
    .map((u: Record<string, unknown>) => ({
      version: Number(u.version) || 0,
      kind: String(u.kind ?? "update"),
      start: time(u.startTime),
      end: time(u.endTime),
    }))
    .filter((d) => !Number.isNaN(d.start))
    .sort((a, b) => a.start - b.start || a.version - b.version);
  if (deployments.every((d) => d.version === 0)) deployments.forEach((d, i) => (d.version = i + 1));
  return deployments;
}

/**
 * The deployment during which something happened at `when` (RFC 3339): the latest one that had
 * started by then. Undefined without a timestamp or history.
 */
export function deploymentAt(
  deployments: readonly Deployment[],
  when: string | undefined,
): Deployment | undefined {
  const t = when === undefined ? NaN : Date.parse(when);
  if (Number.isNaN(t)) return undefined;
  return deployments.findLast((d) => d.start <= t + 1000);
}
