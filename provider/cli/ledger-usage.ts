import { IpamError } from "../core/ipam-error";
import { ownKind } from "../core/resource-types";
import type { KubeClients } from "../kube/kube-config";
import { poolOfDefinition } from "../resources/pool/canonical-definition";
import { claimName, ledgerNameProblem, namespaceProblem } from "../ledger/kubernetes/claim-names";
import {
  ClaimStore,
  isLive,
  nodeReferrer,
  ofStack,
  type Claim,
  type StackRef,
} from "../ledger/kubernetes/claim-store";
import { readRecord } from "../ledger/stack/allocation-record";
import { shellCommand, shown } from "../core/text";
import { PoolDefinitions } from "../ledger/kubernetes/pool-definition";
import { objectLimit, objectSizes } from "../ledger/kubernetes/object-sizes";
import { CliError, exitCodes } from "./cli-error";
import { compareEntries, compareHolders, type Holder } from "./holder";
import { usage, type PoolUsage, type SharedView } from "./pool-usage";
import { poolOwner, usageByStack } from "./quota-usage";
import type { StackPool } from "./stack-pools";
import { kubeClients } from "../kube/kube-config";
import type { StackSnapshot } from "./stack-snapshot";

/** A shared pool's ledger as `--ledger` names it: `kubernetes:<namespace>/<name>`. */
export interface LedgerRef {
  namespace: string;
  name: string;
}

/**
 * Parses `kubernetes:<namespace>/<name>`.
 * @throws CliError naming the text and the expected form.
 */
export function parseLedgerRef(text: string): LedgerRef {
  const m = /^kubernetes:([^/]*)\/(.*)$/.exec(text);
  const problem = m
    ? (namespaceProblem(m[1]) ?? ledgerNameProblem(m[2]))
    : "give it as kubernetes:<namespace>/<name>, the namespace and name of the IpPool's `ledger`";
  if (problem) throw new CliError(`--ledger ${shown(text)}: ${problem}`);
  return { namespace: m![1]!, name: m![2]! };
}

/** `kubernetes:<namespace>/<name>`. */
export const ledgerId = (ref: LedgerRef): string => `kubernetes:${ref.namespace}/${ref.name}`;

/**
 * The usage of a shared pool, read from its ledger: the definition its owner stored, every claim
 * (held) and every hold that has not lapsed (planned, not created), from all stacks, and what each
 * stack uses against the quotas the owner set (see {@link usageByStack}). Read only.
 * @param clients - the cluster's clients (`kubeClients({ context })` in the CLI).
 * @throws CliError (exit 2) when the pool has no definition there, or its definition or quotas
 *   are not valid; (exit 3) when the cluster cannot be asked.
 */
export async function ledgerUsage(
  ref: LedgerRef,
  clients: KubeClients,
  now = Date.now(),
): Promise<PoolUsage> {
  // Reading takes no lock: the lock settings of a ledger config are not used here.
  const config = { ...ref, lockDuration: 0, lockAcquireTimeout: 0 };
  const [stored, claims, sizes] = await Promise.all([
    new PoolDefinitions(config, clients).read(),
    new ClaimStore(clients, ref.namespace, ref.name).list(),
    objectSizes(clients, ref.namespace, ref.name),
  ]).catch((e: unknown) => {
    if (!(e instanceof IpamError)) throw e;
    // INVALID_STATE: quotas stored that this package did not write, which only their owner can fix.
    if (e.code === "INVALID_STATE") throw new CliError(e.message, exitCodes.usage, e.code);
    throw e.code === "LEDGER_UNAVAILABLE"
      ? new CliError(`${e.message}; then run report again`, exitCodes.unreachable, e.code)
      : e;
  });
  if (!stored) {
    throw new CliError(
      `no shared pool "${ref.name}" in namespace "${ref.namespace}" on ${clients.server} (context "${clients.context}"): ` +
        `no ConfigMap ${ref.name}.pool there; check the IpPool's ledger namespace and name, and the context (--context)`,
      exitCodes.usage,
      "NOT_FOUND",
    );
  }
  let pool;
  try {
    pool = poolOfDefinition(stored.definition);
  } catch (e) {
    throw new CliError(
      `shared pool "${ref.name}" in namespace "${ref.namespace}": ${(e as Error).message}; ` +
        `it was written by stack ${stored.stack}: run pulumi up there to write it again`,
      exitCodes.usage,
      "INVALID_STATE",
    );
  }
  const holders = claims
    .filter((c) => isLive(c, now))
    .map(holderOf)
    .sort(compareHolders);
  return {
    ...usage(ledgerId(ref), ref.name, pool, holders),
    ownedBy: poolOwner(stored),
    ...(stored.quotas ? { quotas: stored.quotas } : {}),
    stacks: usageByStack(stored, claims, now),
    lapsed: claims
      .filter((c) => c.state === "hold" && !isLive(c, now))
      .sort((a, b) => compareEntries(a.ip, b.ip))
      .map((c) => ({ ip: c.ip, stack: c.stack, owner: c.owner, lapsed: new Date(c.expires).toISOString() })),
    largest: { ...sizes[0]!, limit: objectLimit(), objects: sizes.length },
  };
}

/** A stack as shared ledgers tell it apart: its name, and the identity its resources keep in state. */
export function stackRefOf(snapshot: StackSnapshot): StackRef {
  for (const r of snapshot.resources) {
    const id = r.outputs?.stackId ?? r.inputs?.stackId;
    if (ownKind(r.type) !== undefined && typeof id === "string")
      return { stack: snapshot.stack, stackId: id };
  }
  return { stack: snapshot.stack };
}

/**
 * What the ledger of each shared pool of a stack says, by pool id.
 * @param me - the stack asking: its name and its identity (`stackId` in its state).
 * @throws CliError (exit 3) naming the ledger when it cannot be read.
 */
export async function sharedHolders(
  pools: StackPool[],
  me: StackRef,
  now = Date.now(),
): Promise<Map<string, SharedView>> {
  const out = new Map<string, SharedView>();
  for (const { id, ledger } of pools) {
    if (!ledger) continue;
    const claims = await new ClaimStore(kubeClients(ledger), ledger.namespace, ledger.name)
      .list()
      .catch((e: unknown) => {
        throw e instanceof IpamError && e.code === "LEDGER_UNAVAILABLE"
          ? new CliError(
              `${e.message}; the claims of every shared pool of the stack are needed to tell other ` +
                `stacks' addresses apart: then run the command again`,
              exitCodes.unreachable,
              e.code,
            )
          : e;
      });
    const live = claims.filter((c) => isLive(c, now));
    const own = live
      .filter((c) => c.state === "claim" && c.owner !== "" && onlyOf(c, me))
      .map((c) => ({ ip: c.ip, owner: c.owner, fix: freeCommand(ledger, c.ip, ledger.context) }));
    out.set(id, { holders: live.map(holderOf), own });
  }
  return out;
}

/** The command that frees the claim of `ip` in the ledger `ref`. */
function freeCommand(ref: LedgerRef, ip: string, context?: string): string {
  const ctx = context === undefined ? [] : ["--context", context];
  return shellCommand(
    "kubectl",
    "delete",
    "configmap",
    claimName(ref.name, ip),
    "--namespace",
    ref.namespace,
    ...ctx,
  );
}

/**
 * Whether the claim `c` is the stack `me`'s alone: its own claim, or a node address (shared by
 * reference) that only resources of `me` reference. Freeing it can then harm no other stack.
 */
function onlyOf(c: Claim, me: StackRef): boolean {
  if (c.nodeId === undefined) return ofStack(c, me);
  const refs = c.refs ?? [];
  return refs.length > 0 && refs.every((r) => nodeReferrer({ refs: [r] }, me) !== undefined);
}

/** The addresses some resource of a stack's state holds (any pool), from its allocation records. */
function heldIn(snapshot: StackSnapshot): Set<string> {
  const held = new Set<string>();
  for (const r of snapshot.resources) {
    for (const props of [r.outputs, r.inputs]) for (const ip of readRecord(props)?.ips ?? []) held.add(ip);
  }
  return held;
}

/**
 * The claims of a shared pool that no resource of their stack holds any more (stale), each with
 * the command that frees it, for every stack among the claims that `read` can read here (the
 * backend `pulumi` is logged in to); `unchecked` names the stacks it cannot (another backend, no
 * access, or a same-named stack of another backend, told apart by its identity).
 */
export async function staleClaims(
  ref: LedgerRef,
  clients: KubeClients,
  read: (stack: string) => Promise<StackSnapshot>,
  context?: string,
  now = Date.now(),
): Promise<{ stale: { ip: string; owner: string; fix: string }[]; unchecked: string[] }> {
  const claims = (await new ClaimStore(clients, ref.namespace, ref.name).list()).filter(
    (c) => c.state === "claim" && isLive(c, now) && c.owner !== "",
  );
  const stale: { ip: string; owner: string; fix: string }[] = [];
  const unchecked = new Set<string>();
  const stacks = [...new Set(claims.map((c) => c.stack))].sort();
  const snapshots = await Promise.all(stacks.map((s) => read(s).catch(() => undefined)));
  stacks.forEach((stack, i) => {
    const snapshot = snapshots[i];
    const mine = claims.filter((c) => c.stack === stack);
    if (!snapshot) return void unchecked.add(stack);
    const me = stackRefOf(snapshot);
    const held = heldIn(snapshot);
    for (const c of mine) {
      if (c.stackId !== undefined && me.stackId !== undefined && c.stackId !== me.stackId) {
        unchecked.add(`${stack} (identity ${c.stackId}, of another backend)`);
      } else if (onlyOf(c, me) && !held.has(c.ip)) {
        stale.push({ ip: c.ip, owner: c.owner, fix: freeCommand(ref, c.ip, context) });
      }
    }
  });
  stale.sort((a, b) => compareEntries(a.ip, b.ip));
  return { stale, unchecked: [...unchecked] };
}

function holderOf(c: Claim): Holder {
  const h: Holder = {
    ip: c.ip,
    owner: c.owner,
    stack: c.stack,
    state: c.state === "claim" ? "held" : "planned",
  };
  if (c.created) h.sinceTime = c.created;
  return h;
}
