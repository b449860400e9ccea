import { retrying } from "../../core/retry";
import { execFile } from "node:child_process";
import { IpamError } from "../../allocator";

/** One resource of a checkpoint, as `pulumi stack export` writes it (fields this package reads). */
export interface CheckpointResource {
  urn: string;
  type: string;
  inputs?: Record<string, unknown>;
  outputs?: Record<string, unknown>;
  /** The URN of its parent, when it has one (a component's child). */
  parent?: string;
  /** Set on the old copy of a resource replaced create-before-delete, until it is deleted. */
  delete?: boolean;
  /** Set on a resource that will be replaced delete-before-create. */
  pendingReplacement?: boolean;
}

/**
 * Every resource of an exported stack, including those pending deletion or replacement and those
 * of interrupted operations (`pending_operations`: an interrupted create may already hold an IP).
 * @throws IpamError `LEDGER_UNAVAILABLE` when `exported` is not a stack export.
 */
export function checkpointResources(exported: unknown, stack: string): CheckpointResource[] {
  const deployment = (exported as { deployment?: unknown } | null)?.deployment as
    { resources?: unknown; pending_operations?: unknown } | undefined;
  if (!deployment || typeof deployment !== "object") {
    throw unavailable(stack, "the export has no `deployment` object");
  }
  const resources = deployment.resources ?? [];
  const pending = deployment.pending_operations ?? [];
  if (!Array.isArray(resources) || !Array.isArray(pending)) {
    throw unavailable(stack, "`deployment.resources` or `deployment.pending_operations` is not a list");
  }
  const all = [...resources, ...pending.map((op: { resource?: unknown }) => op?.resource)];
  for (const r of all) {
    if (!r || typeof r !== "object" || typeof (r as CheckpointResource).urn !== "string") {
      throw unavailable(stack, `a resource entry has no urn: ${JSON.stringify(r)?.slice(0, 200)}`);
    }
  }
  return all as CheckpointResource[];
}

/** How to run the Pulumi CLI; defaults suit a provider started by the engine. */
export interface ExportOptions {
  /** The CLI to run; default `$PULUMI_EGRESS_IPAM_CLI`, else `pulumi` on PATH. */
  cli?: string;
  /** Environment; default this process's (the engine passes the backend URL and credentials). */
  env?: NodeJS.ProcessEnv;
  /** Gives up on a hung CLI after this many milliseconds (default 120 s). */
  timeoutMs?: number;
  /**
   * Waits before each new attempt after the CLI failed or printed something that is not JSON
   * (default 100, 300, 1000 and 2000 ms). During a deployment the engine rewrites the checkpoint
   * after every step, and an export that reads it mid-write fails (`failed to load checkpoint: EOF`
   * with the file backend). A missing CLI or a timeout is not retried.
   */
  retryDelaysMs?: readonly number[];
}

class Retryable extends Error {}

/**
 * Reads the stack's own checkpoint with `pulumi stack export --stack <stack>`.
 * @param stack - fully qualified stack name, `<org>/<project>/<stack>`.
 * @throws IpamError `LEDGER_UNAVAILABLE` naming the stack, the command and what to do, when the
 * CLI is missing, fails or prints something that is not a stack export. Never an empty result
 * in place of an error: an empty taken set would hand out IPs that are in use.
 */
export async function exportStackResources(
  stack: string,
  opts: ExportOptions = {},
): Promise<CheckpointResource[]> {
  return checkpointResources(await exportStack(stack, opts), stack);
}

/**
 * The stack's checkpoint as `pulumi stack export --stack <stack>` prints it (parsed JSON), with
 * the retries and errors of {@link exportStackResources}.
 */
export async function exportStack(stack: string, opts: ExportOptions = {}): Promise<unknown> {
  const env = opts.env ?? process.env;
  const cli = opts.cli ?? env.PULUMI_EGRESS_IPAM_CLI ?? "pulumi";
  const args = ["stack", "export", "--stack", stack];
  const command = `${cli} ${args.join(" ")}`;
  const delays = opts.retryDelaysMs ?? [100, 300, 1_000, 2_000];
  // A fixed schedule rather than a doubling one: the waits are the backoff, so its ceiling is unused.
  return retrying(
    async () => {
      const stdout = await runPulumi(stack, cli, args, env, opts.timeoutMs ?? 120_000);
      let parsed: unknown;
      try {
        parsed = JSON.parse(stdout);
      } catch {
        throw new Retryable(`\`${command}\` printed something that is not JSON: ${stdout.slice(0, 200)}`);
      }
      // Parse errors of a well-formed JSON that is no export are not retried.
      checkpointResources(parsed, stack);
      return parsed;
    },
    {
      baseMs: 0,
      maxMs: 0,
      retryable: (e, attempt) => {
        if (!(e instanceof Retryable)) return false;
        const delay = delays[attempt - 1];
        if (delay === undefined) {
          const tries = attempt === 1 ? "" : ` (${attempt} attempts)`;
          throw unavailable(stack, `${e.message}${tries}`);
        }
        return delay;
      },
    },
  );
}

/**
 * The engine's own telemetry endpoints, which it puts in the environment of the processes it starts:
 * a CLI run by a provider would send its logs there and, once the engine is gone (a killed `up`),
 * wait 5 s at its exit for an endpoint nobody serves. What these commands log is not the run's.
 */
const engineTelemetry = ["PULUMI_LOG_OTLP_ENDPOINT", "PULUMI_OTEL_EXPORTER_OTLP_ENDPOINT"];

/** `env` without the engine's telemetry endpoints. */
export function cliEnvironment(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  if (!engineTelemetry.some((k) => k in env)) return env;
  const own = { ...env };
  for (const k of engineTelemetry) delete own[k];
  return own;
}

/** Runs the CLI once with `args`; a failure worth another attempt is a {@link Retryable}. */
export function runPulumi(
  stack: string,
  cli: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  timeout: number,
): Promise<string> {
  const command = `${cli} ${args.join(" ")}`;
  return new Promise<string>((resolve, reject) => {
    const options = { env: cliEnvironment(env), maxBuffer: 1 << 30, timeout, encoding: "utf8" } as const;
    execFile(cli, args, options, (err, out, stderr) => {
      if (!err) return resolve(out);
      const e = err as NodeJS.ErrnoException & { killed?: boolean };
      if (e.code === "ENOENT") {
        const why = `the Pulumi CLI "${cli}" was not found: put pulumi on PATH or set PULUMI_EGRESS_IPAM_CLI`;
        return reject(unavailable(stack, why));
      }
      if (e.killed) return reject(unavailable(stack, `\`${command}\` did not finish in time`));
      const why = stderr.trim() || e.message;
      // The stack renamed (or removed) since the resource recorded its name, or a name no stack of
      // this backend can have (a self-managed one's organization is `organization`): no attempt can help.
      if (/no stack named|organization name must be/i.test(why))
        return reject(missing(unavailable(stack, `\`${command}\` failed: ${why}`)));
      reject(new Retryable(`\`${command}\` failed: ${why}`));
    });
  });
}

function unavailable(stack: string, why: string): IpamError {
  return new IpamError(
    "LEDGER_UNAVAILABLE",
    `cannot read the allocations of stack "${stack}" from its checkpoint: ${why}. ` +
      `Nothing was allocated; fix this and run the command again.`,
  );
}

const stackMissing = Symbol("stack missing");

function missing(e: IpamError): IpamError {
  return Object.assign(e, { [stackMissing]: true });
}

/**
 * Whether `e` says the backend has no stack of the name a resource recorded: the stack was renamed
 * with `pulumi stack rename` (or removed) since.
 */
export const isStackMissing = (e: unknown): boolean =>
  typeof e === "object" && e !== null && (e as Record<symbol, unknown>)[stackMissing] === true;
