import { failureOf, inputFailure, type Failure } from "../../core/failure";
import { resolvePoolRef } from "../pool/shared-pool-ref";
import type * as pulumi from "@pulumi/pulumi";
import { readRecord, recordProps, type AllocationRecord } from "../../ledger/stack/allocation-record";
import {
  blockChooser,
  blockDetails,
  blockLength,
  blockRangeSet,
  checkRequestableBlock,
} from "../pool/pool-blocks";
import { takeHolder, withPoolRef, type Props, type ProviderImpl } from "../provider-props";
import { isShared, ledgerFor, pinCluster } from "../pool/ledger-option";
import { parsePrefix } from "../../allocator/prefix";
import { stackIdentity } from "../../ledger/stack/stack-identity";
import { holdersAhead, readQueue } from "../pool/pool-queue";
import { hasUnknown } from "../../core/unknowns";
import { shapeFailures } from "../input-shape";
import { prefixAllocationInputs } from "../resource-inputs";
import { holderLifecycle } from "../ip-allocation/ip-allocation-provider";
import { isBlock } from "../../ledger/held-entry";
import { stackResources } from "../../ledger/stack/stack-ledger";
import { childPoolHolders } from "./child-pools";
import { holdRefusal } from "../pool/hold-refusal";

/** The outputs a block holder shows (also returned by `check`, so preview shows them). */
function blockOutputs(record: AllocationRecord) {
  return { ...blockDetails(record.ips[0]!), ...recordProps(record) };
}

async function checkBlock(olds: Props, checked: Props): Promise<pulumi.dynamic.CheckResult> {
  const { news, queue } = takeHolder(checked);
  const malformed = shapeFailures(news, prefixAllocationInputs);
  if (malformed.length > 0) return { inputs: news, failures: malformed };
  if ([news.pool, news.cidr, news.prefixLength, news.adopt].some(hasUnknown)) return { inputs: news };
  const failures: Failure[] = [];
  const { pool, failures: poolFailures, ownedBy, definition } = await resolvePoolRef(news.pool ?? {});
  failures.push(...poolFailures);
  if (typeof news.stack !== "string" || typeof news.owner !== "string" || typeof news.pool?.id !== "string") {
    failures.push(
      inputFailure("pool", "create PrefixAllocation with the PrefixAllocation class and an IpPool"),
    );
  }
  if (news.adopt && news.cidr === undefined) {
    failures.push(inputFailure("adopt", "adopt needs the block to take over: set cidr"));
  }
  let requested: string | undefined;
  if (pool && failures.length === 0) {
    try {
      blockRangeSet(pool);
    } catch (e) {
      failures.push(failureOf("pool", e));
    }
  }
  if (pool && failures.length === 0) {
    if (news.cidr !== undefined) {
      try {
        requested = checkRequestableBlock(pool, String(news.cidr));
      } catch (e) {
        failures.push(failureOf("cidr", e));
      }
      if (
        requested !== undefined &&
        news.prefixLength != null &&
        news.prefixLength !== parsePrefix(requested).prefixLength
      ) {
        failures.push(
          inputFailure(
            "prefixLength",
            `/${String(news.prefixLength)} is not the length of cidr ${requested}: give one of them`,
          ),
        );
      }
    }
  }
  if (failures.length > 0 || !pool) return { inputs: news, failures };
  // Stable: the block held before stays while the pool, the requested block and the length allow it
  // (the pool's rule applies to new plans only: a held block keeps its length).
  const poolId: string = news.pool.id;
  const old = readRecord(olds);
  const oldBlock = old?.ips[0];
  const keep =
    old !== undefined &&
    oldBlock !== undefined &&
    isBlock(oldBlock) &&
    old.pool === poolId &&
    (requested === undefined
      ? news.prefixLength == null || parsePrefix(oldBlock).prefixLength === news.prefixLength
      : oldBlock === requested);
  let length = 0;
  if (!keep) {
    try {
      length = blockLength(pool, news.prefixLength ?? undefined, requested);
    } catch (e) {
      return { inputs: news, failures: [failureOf(requested === undefined ? "prefixLength" : "cidr", e)] };
    }
  }

  try {
    if (isShared(news.pool.ledger)) news.stackId = olds.stackId ?? (await stackIdentity(news.stack));
  } catch (e) {
    return { inputs: news, failures: [failureOf("pool", e, "LEDGER_UNAVAILABLE")] };
  }
  const elsewhere = pinCluster(olds, news, news.pool.ledger, `the claim of PrefixAllocation ${news.owner}`);
  if (elsewhere) return { inputs: news, failures: [inputFailure("pool", elsewhere, "INVALID_CONFIG")] };
  if (keep) return { inputs: { ...withPoolRef(news), ...blockOutputs(old) } };
  if (oldBlock !== undefined && isBlock(oldBlock)) {
    // The held block is given up for another: refused while pools carved from it have holders.
    const stranded = await stackResources(String(news.stack)).then(
      (rs) => childPoolHolders(rs, oldBlock, old!.pool),
      () => [],
    );
    if (stranded.length > 0) {
      const reason =
        `this change gives up block ${oldBlock}, and pools carved from it have holders: ${stranded.join(", ")}; ` +
        "move or delete those first, or keep the block (its prefixLength, cidr and pool)";
      return {
        inputs: news,
        failures: [inputFailure(news.cidr === undefined ? "prefixLength" : "cidr", reason, "POOL_IN_USE")],
      };
    }
  }
  try {
    const ledger = ledgerFor(news, news.pool.ledger, `PrefixAllocation ${news.owner} (check)`);
    let ahead;
    try {
      ahead = readQueue(queue, news.owner);
    } catch (e) {
      return { inputs: news, failures: [failureOf("pool", e, "INVALID_STATE")] };
    }
    if (ahead?.holders.at(-1)?.ip === null) {
      const reason =
        "cidr or prefixLength came from an output or a promise, so the pool's other holders could not take this " +
        "block into account: give them as plain values";
      return { inputs: news, failures: [inputFailure("prefixLength", reason)] };
    }
    if (ahead) await ledger.planAhead(await holdersAhead(pool, poolId, ahead));
    const plan = await ledger.plan({
      pool: poolId,
      owner: news.owner,
      requested: requested === undefined ? undefined : [requested],
      count: 1,
      prefixLength: length,
      choose: blockChooser(pool, length),
      adopt: Boolean(news.adopt),
      // A block held since an earlier plan is renewed only while the pool still hands it out.
      ...(requested === undefined ? { refuses: holdRefusal(pool, [], ownedBy) } : {}),
      ...(definition === undefined ? {} : { definition }),
    });
    ahead?.planned();
    const record = { pool: poolId, owner: news.owner, ips: plan.ips, seq: plan.seq };
    return { inputs: { ...withPoolRef(news), ...blockOutputs(record) } };
  } catch (e) {
    return { inputs: news, failures: [failureOf(requested === undefined ? "prefixLength" : "cidr", e)] };
  }
}

/**
 * Provider of PrefixAllocation. `check` plans the block under the pool's lock, after every earlier
 * holder of the pool in program order, and returns it as an input (so preview shows it), keeping
 * the previous block whenever the pool, the requested block and the length allow; the rest of the
 * lifecycle is every pool holder's ({@link holderLifecycle}).
 */
export const prefixAllocationProvider: ProviderImpl = {
  check: checkBlock,
  ...holderLifecycle("PrefixAllocation", "cidr"),
};
