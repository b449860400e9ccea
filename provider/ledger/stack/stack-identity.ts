import { createHash } from "node:crypto";
import { IpamError } from "../../core/ipam-error";
import { errorMessage } from "../../core/failure";
import { checkpointResources, exportStack, runPulumi, type ExportOptions } from "./stack-checkpoint";

/** The type prefix of every resource of this package in a checkpoint. */
const ownTypes = "pulumi-nodejs:dynamic/egress-ipam:";

/**
 * A stack's identity in shared ledgers: made once and kept in the state of every holder of a shared
 * pool (`stackId`), so that it is the same for every resource of the stack and survives
 * `pulumi stack rename` and a move to another backend.
 *
 * A stack's fully qualified name cannot be that identity: every self-managed backend (file, S3,
 * GCS, Azure Blob) reports the organization `organization`, so `network/prod` in two state buckets
 * are the same name for two different stacks.
 *
 * The first time (no resource of the stack has one yet, which includes stacks written by earlier
 * versions), it is derived from what tells two stacks apart and is stable between a `preview` and
 * the `up` after it: the backend's URL (`pulumi whoami`), the stack's name and its secrets
 * provider's state (the random salt or data key made at `pulumi stack init`). A preview and the
 * `up` that follows derive the same identity, so `up` gets the addresses the preview held.
 */
export type StackIdentity = (stack: string) => Promise<string>;

const known = new Map<string, Promise<string>>();

/** The identity of `stack`, looked up once per process ({@link StackIdentity}). */
export const stackIdentity: StackIdentity = (stack) => {
  let id = known.get(stack);
  if (!id) {
    id = findOrDerive(stack);
    known.set(stack, id);
    // A failure (the CLI missing, the backend unreachable) is not remembered: the next call retries.
    id.catch(() => known.delete(stack));
  }
  return id;
};

async function findOrDerive(stack: string, opts: ExportOptions = {}): Promise<string> {
  const exported = await exportStack(stack, opts);
  const stored = storedIdentity(exported, stack);
  if (stored) return stored;
  const secrets = (exported as { deployment?: { secrets_providers?: unknown } }).deployment
    ?.secrets_providers;
  return deriveIdentity(await backendUrl(stack, opts), stack, secrets);
}

/** The identity kept in the state of the stack's resources, if one has it. */
export function storedIdentity(exported: unknown, stack: string): string | undefined {
  for (const r of checkpointResources(exported, stack)) {
    if (!r.type.startsWith(ownTypes)) continue;
    const id = r.outputs?.stackId ?? r.inputs?.stackId;
    if (typeof id === "string" && id !== "") return id;
  }
  return undefined;
}

/** A new identity from the backend's URL, the stack's name and its secrets provider's state. */
export function deriveIdentity(backend: string, stack: string, secrets: unknown): string {
  const text = ["egress-ipam stack identity v1", backend, stack, JSON.stringify(secrets ?? null)].join("\n");
  return `stack-${createHash("sha256").update(text).digest("hex").slice(0, 24)}`;
}

/** The URL of the backend the CLI uses for `stack`, from `pulumi whoami --verbose --json`. */
async function backendUrl(stack: string, opts: ExportOptions): Promise<string> {
  const env = opts.env ?? process.env;
  const cli = opts.cli ?? env.PULUMI_EGRESS_IPAM_CLI ?? "pulumi";
  const args = ["whoami", "--verbose", "--json"];
  try {
    const out = await runPulumi(stack, cli, args, env, opts.timeoutMs ?? 120_000);
    const url = (JSON.parse(out) as { url?: unknown }).url;
    if (typeof url === "string" && url !== "") return url;
    throw new Error(`\`${cli} ${args.join(" ")}\` printed no backend url: ${out.slice(0, 200)}`);
  } catch (e) {
    if (e instanceof IpamError) throw e;
    throw new IpamError(
      "LEDGER_UNAVAILABLE",
      `cannot tell which backend stack "${stack}" is on, which its identity in a shared pool is made from: ` +
        `${errorMessage(e)}. Nothing was allocated; fix this and run the command again.`,
    );
  }
}
