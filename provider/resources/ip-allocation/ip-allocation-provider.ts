import { errorMessage, failureOf, inputFailure, type Failure } from "../../core/failure";
import { resolvePoolRef } from "../pool/shared-pool-ref";
import type * as pulumi from "@pulumi/pulumi";
import type { RangeSet } from "../../allocator";
import { readRecord, recordProps, type AllocationRecord } from "../../ledger/stack/allocation-record";
import {
  addressDetails,
  checkRequestable,
  familyOfSet,
  poolChooser,
  poolOfFamily,
  type ResolvedPool,
} from "../pool/pool-spec";
import { takeHolder, withoutProvider, withPoolRef, type Props, type ProviderImpl } from "../provider-props";
import {
  checkNodeAllocation,
  createNodeAllocation,
  deleteNodeAllocation,
  nodeAllocationProblem,
  updateNodeAllocation,
} from "./mesh-node-allocation";
import { assertSameCluster, isShared, ledgerFor, pinCluster, sharedLedgerFor } from "../pool/ledger-option";
import { codeOf, IpamError } from "../../core/ipam-error";
import type { ClaimProblem } from "../../ledger/kubernetes/kube-ledger";
import { stackIdentity } from "../../ledger/stack/stack-identity";
import { createHash, randomUUID } from "node:crypto";
import { holdersAhead, poolName, readQueue, unknownAhead, usedAddresses } from "../pool/pool-queue";
import { hasUnknown } from "../../core/unknowns";
import { shapeFailures } from "../input-shape";
import { provisionerFailures } from "../../provisioners/factory/provisioner-cache";
import { ipAllocationInputs } from "../resource-inputs";
import { adoptedAddress, describeAddress } from "../pool/adopted-address";
import type { NamespaceAddress } from "../../provisioners/egress-ip-provisioner";
import { adoptHint } from "../../ledger/planner";
import { madeByEgressIp } from "../../core/resource-types";
import { holdRefusal } from "../pool/hold-refusal";

/** The outputs an allocation shows for its addresses (also returned by `check`, so preview shows them). */
function addressOutputs(pool: ResolvedPool, record: AllocationRecord) {
  const first = record.ips[0]!;
  return { ip: first, ...addressDetails(pool, first), ...recordProps(record) };
}

async function checkAllocation(olds: Props, checked: Props): Promise<pulumi.dynamic.CheckResult> {
  const { news, queue } = takeHolder(checked);
  const malformed = shapeFailures(news, ipAllocationInputs);
  if (malformed.length > 0) return { inputs: news, failures: malformed };
  // Not known yet (at preview, another resource's output; `family` too, where a program in another
  // language gives one): planned when it is, never refused for a value it does not have yet.
  if (
    [news.pool, news.ip, news.adopt, news.observeWith, news.nodeId, news.adoptFrom, news.family].some(
      hasUnknown,
    )
  )
    return { inputs: news };
  const failures: Failure[] =
    news.observeWith == null ? [] : provisionerFailures(news.observeWith, "observeWith");
  const {
    pool: wholePool,
    failures: poolFailures,
    ownedBy,
    definition,
  } = await resolvePoolRef(news.pool ?? {});
  failures.push(...poolFailures);
  // One family of a dual-stack pool: the allocation plans from that range set only.
  const pool = wholePool && poolOfFamily(wholePool, news.family);
  if (wholePool && !pool) failures.push(familyFailure(wholePool, news.family));
  if (news.family !== undefined && news.nodeId !== undefined)
    failures.push(inputFailure("family", "a node address has its network's family: leave family out"));
  if (typeof news.stack !== "string" || typeof news.owner !== "string" || typeof news.pool?.id !== "string") {
    failures.push(inputFailure("pool", "create IpAllocation with the IpAllocation class and an IpPool"));
  }
  if (pool && failures.length === 0 && news.nodeId !== undefined)
    return checkNodeAllocation(olds, news, pool);
  if (news.adopt && news.ip === undefined) {
    failures.push(inputFailure("adopt", "adopt needs the address to take over: set ip"));
  }
  if (news.adoptFrom != null && news.observeWith == null) {
    failures.push(
      inputFailure(
        "adoptFrom",
        "adopting a namespace's addresses reads them through a provisioner: set observeWith",
      ),
    );
  }
  if (pool && pool.rangeSets.length > 1 && news.adoptFrom != null) {
    failures.push(
      inputFailure(
        "adoptFrom",
        "a dual-stack pool plans one address per family; adopting a namespace's address needs a single-family pool",
      ),
    );
  }
  // An EgressIp without `families` places the pool's one family (its children take no `family`).
  if (pool && pool.rangeSets.length > 1 && news.family === undefined && madeByEgressIp(String(news.owner))) {
    failures.push(
      inputFailure(
        "pool",
        `an EgressIp without families places the pool's one family, and pool "${poolName(String(news.pool.id))}" ` +
          `is dual-stack (${pool.rangeSets.map(familyOfSet).join(" and ")}): set families: "dual" on the ` +
          `EgressIp to place both, or "ipv4" or "ipv6" for one`,
      ),
    );
  }
  if (pool && pool.rangeSets.length > 1 && news.ip !== undefined) {
    failures.push(inputFailure("ip", "a dual-stack pool plans one address per family; ip cannot be set"));
  }
  let requested: string | undefined;
  if (pool && news.ip !== undefined && failures.length === 0) {
    requested = await checkRequestable(pool, String(news.ip)).catch((e: unknown) => {
      failures.push(failureOf("ip", e));
      return undefined;
    });
  }
  if (failures.length > 0 || !pool) return { inputs: news, failures };

  try {
    // In a shared pool, the stack's identity (kept in state) decides what is its own.
    if (isShared(news.pool.ledger)) news.stackId = olds.stackId ?? (await stackIdentity(news.stack));
  } catch (e) {
    return { inputs: news, failures: [failureOf("pool", e, "LEDGER_UNAVAILABLE")] };
  }
  const elsewhere = pinCluster(olds, news, news.pool.ledger, `the claim of IpAllocation ${news.owner}`);
  if (elsewhere) return { inputs: news, failures: [inputFailure("pool", elsewhere, "INVALID_CONFIG")] };
  // Stable: the address held before stays while the pool and the requested address allow it.
  const poolId: string = news.pool.id;
  const old = readRecord(olds);
  // Of the family asked for, if one is, else one address per family of the pool: a change of
  // `family` that the held addresses already answer keeps them (an IPv6-only pool's address is its
  // `family: "ipv6"` address); one they do not plans anew, and diff replaces the allocation.
  const ofFamily =
    old !== undefined &&
    (news.family === undefined
      ? old.ips.length === pool.rangeSets.length
      : old.ips.every((ip) => pool.rangeSets.some((set: RangeSet) => set.contains(ip))));
  if (old && ofFamily && old.pool === poolId && (requested === undefined || old.ips[0] === requested)) {
    const kept = olds.adoptedFrom === undefined ? {} : { adoptedFrom: olds.adoptedFrom };
    return { inputs: { ...withPoolRef(news), ...addressOutputs(pool, old), ...kept } };
  }

  // A first plan of an EgressIp with `adopt`: the address its namespace has already (none: a new one).
  let adopted: NamespaceAddress | undefined;
  if (news.adoptFrom != null && requested === undefined && !old) {
    try {
      adopted = await adoptedAddress(pool, poolName(poolId), news.observeWith, news.adoptFrom, news.family);
      if (adopted) requested = await checkRequestable(pool, adopted.ip);
    } catch (e) {
      return { inputs: news, failures: [failureOf("adopt", e, "PROVISIONER_FAILED")] };
    }
  }

  try {
    // Addresses in use outside Pulumi state are never planned, nor accepted unless adopted.
    const inUse = await usedAddresses(pool, news.observeWith);
    if (requested !== undefined && !news.adopt && !adopted) await checkRequestable(pool, requested, inUse);
    const ledger = ledgerFor(news, news.pool.ledger, `IpAllocation ${news.owner} (check)`);
    // The pool's earlier holders first, so the plan does not depend on the order checks arrive in.
    let ahead;
    try {
      ahead = readQueue(queue, news.owner);
    } catch (e) {
      return { inputs: news, failures: [failureOf("pool", e, "INVALID_STATE")] };
    }
    if (ahead?.holders.at(-1)?.ip === null && requested === undefined) {
      // Planned on its own, it would take an address the others could not foresee.
      const reason = news.adoptFrom
        ? `namespace ${String(news.adoptFrom.namespace)} has no address to adopt in this pool for failure domain ` +
          `"${String(news.adoptFrom.failureDomain ?? "")}", and a new one cannot be planned for a namespace that came ` +
          "from an output (the pool's other holders could not take it into account): give the namespace as a plain string"
        : "ip came from an output or a promise and resolved to nothing, so the pool's other holders could not " +
          "take this allocation into account: give ip as a plain string, or leave it out";
      return { inputs: news, failures: [inputFailure("ip", reason)] };
    }
    // At preview, an earlier holder not planned yet whose observer is not known: unknown until `up`.
    const unsettled = ahead && requested === undefined ? unknownAhead(ahead) : [];
    if (unsettled.length > 0) {
      const holding = new Set((await ledger.holders(poolId)).values());
      if (unsettled.some((owner) => !holding.has(owner))) return { inputs: news };
    }
    if (ahead) await ledger.planAhead(await holdersAhead(wholePool!, poolId, ahead));
    const plan = await ledger.plan({
      pool: poolId,
      owner: news.owner,
      requested: requested === undefined ? undefined : [requested],
      count: pool.rangeSets.length,
      ...(news.family ? { family: news.family } : {}),
      choose: poolChooser(pool, inUse),
      adopt: Boolean(news.adopt),
      // A hold planned earlier is renewed only while the pool still hands it out (any family's).
      ...(requested === undefined ? { refuses: holdRefusal(wholePool!, inUse, ownedBy) } : {}),
      ...(definition === undefined ? {} : { definition }),
    });
    ahead?.planned();
    const record = { pool: poolId, owner: news.owner, ips: plan.ips, seq: plan.seq };
    const from = adopted ? { adoptedFrom: adopted.source } : {};
    return { inputs: { ...withPoolRef(news), ...addressOutputs(pool, record), ...from } };
  } catch (e) {
    if (!adopted) return { inputs: news, failures: [failureOf("ip", e, "PROVISIONER_FAILED")] };
    // The namespace's address is another holder's: adopt takes over from the cluster, not from Pulumi.
    const reason =
      `namespace ${String(news.adoptFrom.namespace)} has ${describeAddress(adopted)}, and ` +
      `${errorMessage(e).replace(adoptHint, "")}: two holders cannot have one address; find out which should ` +
      `(pulumi-egress-ipam report), then delete the other or leave adopt off`;
    return { inputs: news, failures: [inputFailure("adopt", reason, codeOf(e, "IP_UNAVAILABLE"))] };
  }
}

/**
 * Provider of IpAllocation. `check` plans the address under the pool's stack-scoped lock and
 * returns it as an input (so preview shows it), keeping the previous address whenever the pool and
 * the requested address allow; `create` reserves exactly that address; `delete` releases it.
 */
export const ipAllocationProvider: ProviderImpl = {
  check: checkAllocation,
  ...holderLifecycle("IpAllocation"),
};

/**
 * What happens to a holder of a pool's addresses or blocks after `check` planned it, the same for
 * every kind that holds entries of a pool (`kind` names it in messages): `diff` replaces on another
 * pool or entry and refuses at preview an entry another stack claims; `create` reserves exactly the
 * planned entries; `read` finds lost claims; `update` claims again; `delete` releases what this
 * instance holds. `entryInput` is the input a change of the held entry is shown under.
 */
export function holderLifecycle(kind: string, entryInput = "ip"): Omit<ProviderImpl, "check"> {
  return {
    async diff(_id, olds, news) {
      // Not planned yet (the pool depends on values preview cannot know): the plan at `up` decides.
      if (news.poolId === undefined) return { changes: true, replaces: [] };
      const replaces: string[] = [];
      if (olds.poolId !== news.poolId) replaces.push("pool");
      if (olds.nodeId !== news.nodeId) replaces.push("nodeId");
      // A change of family that keeps the addresses (check kept them) is an update; one that does not
      // changes the addresses, which replaces the allocation.
      if (JSON.stringify(olds.ips) !== JSON.stringify(news.ips))
        replaces.push(olds.family === news.family ? entryInput : "family");
      // The state's address must be this holder's in its shared pool: a claim lost since is made again
      // by update; one another stack has now is refused here, at preview, naming that stack.
      const lost = replaces.length > 0 ? [] : await claimProblems(kind, news, true);
      const foreign = lost.filter((p) => p.kind === "foreign");
      if (foreign.length > 0) {
        throw new IpamError(
          "IP_UNAVAILABLE",
          `${kind} ${String(news.owner)}: ${foreign.map((p) => p.message).join("; ")}, while this stack's ` +
            `state holds it: two stacks would use one address. Find out which stack should have it ` +
            `(pulumi-egress-ipam report --ledger), then delete the other's claim or this allocation`,
        );
      }
      // A stack identity new to the state (a stack of an earlier version) is written to the claims by update.
      // So are the pool's ledger settings (lock durations, context): every later operation reads them.
      const changes =
        replaces.length > 0 ||
        olds.family !== news.family ||
        Boolean(olds.adopt) !== Boolean(news.adopt) ||
        olds.stackId !== news.stackId ||
        olds.claim !== undefined ||
        lost.length > 0 ||
        JSON.stringify(olds.pool?.ledger ?? null) !== JSON.stringify(news.pool?.ledger ?? null);
      return { changes, replaces };
    },

    async create(inputs) {
      const record = readRecord(inputs)!;
      if (inputs.nodeId !== undefined) {
        const nodeRef = await createNodeAllocation(inputs);
        return { id: record.ips.join(","), outs: { ...withoutProvider(inputs), nodeRef } };
      }
      const ledger = ledgerFor(inputs, inputs.pool?.ledger, `${kind} ${record.owner} (create)`);
      // This instance's claims: a later replacement writes its own, and this one's delete leaves those.
      const instance = isShared(inputs.pool?.ledger) ? randomUUID() : undefined;
      await ledger.reserve(record.pool, record.owner, record, Boolean(inputs.adopt), instance);
      const outs = withoutProvider(inputs);
      return { id: record.ips.join(","), outs: instance === undefined ? outs : { ...outs, instance } };
    },

    async read(id, props) {
      // Refresh reads the holder's claims: a problem is recorded (`claim`), the next up repairs or refuses it.
      const { claim: _previous, ...rest } = props;
      if (props.nodeId !== undefined) {
        const problem = await nodeAllocationProblem(props);
        return { id, props: problem === undefined ? rest : { ...rest, claim: problem } };
      }
      const what = `the claim of ${kind} ${String(props.owner)}`;
      assertSameCluster(props, props.pool?.ledger, what, "nothing was recorded");
      const problems = await claimProblems(kind, props, false);
      if (problems.length === 0) return { id, props: rest };
      return { id, props: { ...rest, claim: problems.map((p) => p.message).join("; ") } };
    },

    async update(_id, olds, news) {
      const { claim: _claim, ...outs } = withoutProvider(news);
      const record = readRecord(news);
      if (record && news.nodeId !== undefined)
        return { outs: { ...outs, nodeRef: await updateNodeAllocation(olds, news) } };
      if (!record || !isShared(news.pool?.ledger)) return { outs };
      // The claims say who holds them now: this stack's identity and this instance (a claim of an
      // earlier version gets both here; a missing one is made again while the address is free).
      const instance = typeof olds.instance === "string" ? olds.instance : firstInstance(olds);
      const ledger = ledgerFor(news, news.pool.ledger, `${kind} ${record.owner} (update)`);
      await ledger.reserve(record.pool, record.owner, record, Boolean(news.adopt), instance);
      return { outs: { ...outs, instance } };
    },

    async delete(_id, props) {
      const record = readRecord(props);
      if (!record) return;
      if (props.nodeId !== undefined) return deleteNodeAllocation(props);
      assertSameCluster(
        props,
        props.pool?.ledger,
        `the claim of ${kind} ${record.owner}`,
        "nothing was released",
      );
      const ledger = ledgerFor(props, props.pool?.ledger, `${kind} ${record.owner} (delete)`);
      if (typeof props.instance === "string") {
        await ledger.release(record.pool, record.owner, record.ips, props.instance);
        return;
      }
      // No instance in state: the claims are an earlier version's, or those the first update wrote
      // before it was interrupted (its outputs never saved).
      await ledger.release(record.pool, record.owner, record.ips, undefined);
      await ledger.release(record.pool, record.owner, record.ips, firstInstance(props));
    },
  };
}

/**
 * The instance a holder whose state has none (claims of an earlier version, a pool just put on a
 * ledger) writes to its claims at its first update: made from what its state records, so a delete
 * with that state finds those claims even when the update's outputs were never saved.
 */
function firstInstance(props: Props): string {
  const record = readRecord(props);
  const hex = createHash("sha256")
    .update(JSON.stringify(["first instance", record?.pool, record?.owner, record?.ips]))
    .digest("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/** What is wrong with the claims of a holder of a shared pool (none for a stack-local pool or a node address). */
async function claimProblems(kind: string, props: Props, recent: boolean): Promise<ClaimProblem[]> {
  const record = readRecord(props);
  if (!record || props.nodeId !== undefined || hasUnknown(props.pool)) return [];
  const ledger = sharedLedgerFor(props, props.pool?.ledger, `${kind} ${record.owner} (claims)`);
  return ledger ? ledger.claimProblems(record.owner, record.ips, recent) : [];
}

/** The refusal of a `family` the pool has no range set of. */
function familyFailure(pool: ResolvedPool, family: unknown): Failure {
  const has = pool.rangeSets.map(familyOfSet).join(" and ");
  const reason =
    family === "ipv4" || family === "ipv6"
      ? `the pool has no ${family} range set (it has ${has}): leave family out, or use a pool with ${family} ranges`
      : `${JSON.stringify(family)} is not a family: use "ipv4" or "ipv6"`;
  return inputFailure("family", reason, "INVALID_INPUT");
}
