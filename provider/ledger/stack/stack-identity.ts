import { createHash, randomBytes } from "node:crypto";
import { IpamError } from "../../core/ipam-error";
import { ownKind } from "../../core/resource-types";
import { errorMessage } from "../../core/failure";
import { checkpointResources, exportStack, runPulumi, type ExportOptions } from "./stack-checkpoint";

/**
 * A stack's identity in shared ledgers: made once and kept in the state of every holder of a shared
 * pool (`stackId`), so that it is the same for every resource of the stack and survives
 * `pulumi stack rename` and a move to another backend.
 *
 * A stack's fully qualified name cannot be that identity: every self-managed backend (file, S3,
 * GCS, Azure Blob) reports the organization `organization`, so `network/prod` in two state
 * buckets are the same name for two different stacks. Nor can anything made from the name, the
 * backend's URL and the secrets provider's state: `file://~` is the same URL for every user, and a
 * committed `Pulumi.<stack>.yaml` gives every clone's stack the same passphrase salt.
 *
 * The first time (no resource of the stack has one yet, which includes stacks written by earlier
 * versions), it is random, and kept in the stack tag {@link identityTag} until a holder's state
 * keeps it: the first `preview` writes it and the `up` after it reads it, so `up` gets the
 * addresses the preview held.
 */
export type StackIdentity = (stack: string) => Promise<string>;

/**
 * The stack tag that keeps a stack's identity until the state of a holder does:
 * `<identity> for secrets <fingerprint>`. Users may set it to an identity of their own (no `for`).
 */
export const identityTag = "egress-ipam:stack-identity";

const known = new Map<string, Promise<string>>();

/** The identity of `stack`, looked up once per process ({@link StackIdentity}). */
export const stackIdentity: StackIdentity = (stack) => {
  let id = known.get(stack);
  if (!id) {
    id = findOrMake(stack);
    known.set(stack, id);
    // A failure (the CLI missing, the backend unreachable) is not remembered: the next call retries.
    id.catch(() => known.delete(stack));
  }
  return id;
};

async function findOrMake(stack: string, opts: ExportOptions = {}): Promise<string> {
  const exported = await exportStack(stack, opts);
  const stored = storedIdentity(exported, stack);
  if (stored) return stored;
  const secrets = secretsFingerprint(exported);
  const tagged = taggedIdentity(await readTag(stack, opts), secrets);
  if (tagged) return tagged;
  await writeTag(stack, `${newIdentity()} for ${secrets}`, opts);
  // What is read back, not what was written: of two first runs at once, both use the last write.
  const kept = taggedIdentity(await readTag(stack, opts), secrets);
  if (!kept) throw tagFailure(stack, `the tag read back is not the one written`);
  return kept;
}

/** The identity kept in the state of the stack's resources, if one has it. */
export function storedIdentity(exported: unknown, stack: string): string | undefined {
  for (const r of checkpointResources(exported, stack)) {
    if (ownKind(r.type) === undefined) continue;
    const id = r.outputs?.stackId ?? r.inputs?.stackId;
    if (typeof id === "string" && id !== "") return id;
  }
  return undefined;
}

/** A new identity: 96 random bits, in the form identities have always had. */
export function newIdentity(): string {
  return `stack-${randomBytes(12).toString("hex")}`;
}

/**
 * `secrets <16 hex>` of the export's secrets provider state (its random salt or data key), or
 * `secrets none` when the checkpoint has none yet (a fresh Pulumi Cloud stack before its first update).
 */
export function secretsFingerprint(exported: unknown): string {
  const state = (exported as { deployment?: { secrets_providers?: unknown } }).deployment?.secrets_providers;
  if (state === undefined || state === null) return "secrets none";
  return `secrets ${createHash("sha256").update(JSON.stringify(state)).digest("hex").slice(0, 16)}`;
}

/**
 * The identity of a tag value, when it is this stack's: one set by hand (no `for`), or one written
 * for this secrets provider state, or for none (a checkpoint gets one at its first update). A tag
 * written for other secrets is another stack's: a self-managed backend's `pulumi stack rename`
 * leaves the tags behind under the old name, and a new stack of that name finds them.
 */
export function taggedIdentity(value: string | undefined, secrets: string): string | undefined {
  const match = /^\s*(\S+)(?:\s+for\s+(.*\S))?\s*$/.exec(value ?? "");
  if (!match) return undefined;
  const [, id, madeFor] = match;
  return madeFor === undefined || madeFor === "secrets none" || madeFor === secrets ? id : undefined;
}

async function readTag(stack: string, opts: ExportOptions): Promise<string | undefined> {
  const out = await cli(stack, ["stack", "tag", "ls", "--json", "--stack", stack], opts);
  let tags: unknown;
  try {
    tags = JSON.parse(out);
  } catch {
    throw tagFailure(
      stack,
      `\`pulumi stack tag ls\` printed something that is not JSON: ${out.slice(0, 200)}`,
    );
  }
  const value = (tags as Record<string, unknown> | null)?.[identityTag];
  return typeof value === "string" ? value : undefined;
}

async function writeTag(stack: string, value: string, opts: ExportOptions): Promise<void> {
  await cli(stack, ["stack", "tag", "set", identityTag, value, "--stack", stack], opts);
}

async function cli(stack: string, args: string[], opts: ExportOptions): Promise<string> {
  const env = opts.env ?? process.env;
  const command = opts.cli ?? env.PULUMI_EGRESS_IPAM_CLI ?? "pulumi";
  try {
    return await runPulumi(stack, command, args, env, opts.timeoutMs ?? 120_000);
  } catch (e) {
    if (e instanceof IpamError) throw e;
    throw tagFailure(stack, errorMessage(e));
  }
}

function tagFailure(stack: string, why: string): IpamError {
  return new IpamError(
    "LEDGER_UNAVAILABLE",
    `cannot keep the identity of stack "${stack}" in a shared pool in its stack tag ${identityTag}: ${why}. ` +
      `Nothing was allocated; fix this, or set the tag to a value no other stack has ` +
      `(\`pulumi stack tag set ${identityTag} ${newIdentity()} --stack ${stack}\`), and run the command again.`,
  );
}
