import { failureOf, inputFailure } from "../../core/failure";
import type * as pulumi from "@pulumi/pulumi";
import { familyOfText, IpamError, type IpamErrorCode } from "../../allocator";
import { readRecord, recordProps } from "../../ledger/stack/allocation-record";
import { kubeLedger } from "../../ledger/kubernetes/kube-ledger";
import {
  claimNodeAddress,
  legacyNodeRef,
  nodeClaimProblem,
  planNodeAddress,
  releaseNodeAddress,
} from "../../ledger/kubernetes/mesh-node-claims";
import { stackIdentity } from "../../ledger/stack/stack-identity";
import { randomUUID } from "node:crypto";
import { assertSameCluster, pinCluster, resolveLedger } from "../pool/ledger-option";
import { addressDetails, type ResolvedPool } from "../pool/pool-spec";
import { withPoolRef, type Props } from "../provider-props";

// IpAllocation with `nodeId`: a webmesh node address (one /32 or /128 per node ID) from a pool with a
// node `network` and a Kubernetes ledger, the same address for the node from every stack.

const ledgerOf = (props: Props, holder: string) => {
  const { config } = resolveLedger(props.pool?.ledger);
  if (!config) throw new IpamError("NO_STORAGE", "no storage configured for node addresses");
  const stackId = typeof props.stackId === "string" ? props.stackId : undefined;
  return kubeLedger({
    stack: props.stack,
    ...(stackId === undefined ? {} : { stackId }),
    ledger: config,
    holder,
  });
};

/** This resource's reference in its node address's claim: the one its create wrote, or an earlier version's. */
const refOf = (props: Props): string =>
  typeof props.nodeRef === "string" ? props.nodeRef : legacyNodeRef(String(props.stack), String(props.owner));

const whatOf = (props: Props) => `the node address of IpAllocation ${String(props.owner)}`;

/**
 * Plans the address of `news.nodeId` at `check` (preview shows it) and returns the inputs with the
 * address outputs and `prefix`; problems come back as failures naming what to do: a pool without
 * `network` (webmesh ErrNoNetwork), a pool without a shared ledger (ErrNoStorage).
 */
export async function checkNodeAllocation(
  olds: Props,
  news: Props,
  pool: ResolvedPool,
): Promise<pulumi.dynamic.CheckResult> {
  const fail = (property: string, reason: string, code?: IpamErrorCode) => ({
    inputs: news,
    failures: [inputFailure(property, reason, code)],
  });
  const failWith = (property: string, err: unknown, fallback: IpamErrorCode) => ({
    inputs: news,
    failures: [failureOf(property, err, fallback)],
  });
  if (typeof news.nodeId !== "string" || news.nodeId === "")
    return fail("nodeId", "give the node's ID as a string");
  if (news.ip !== undefined)
    return fail("ip", "a node address comes from nodeId (or the pool's static); leave ip out");
  if (!pool.node) {
    return fail(
      "nodeId",
      "no network configured (webmesh ErrNoNetwork): node addresses come from a pool with `network`, " +
        `e.g. new IpPool("mesh", { network: "10.42.0.0/16", ledger: {...} })`,
      "NO_NETWORK",
    );
  }
  if (!resolveLedger(news.pool?.ledger).config) {
    return fail(
      "pool",
      "no storage configured (webmesh ErrNoStorage): node addresses are kept in a shared ledger so a node " +
        'gets the same address from every stack; give the pool `ledger: { kind: "kubernetes", name, namespace }`',
      "NO_STORAGE",
    );
  }
  try {
    // Who references the node's address: the stack's identity (kept in state), never its name alone.
    news.stackId = olds.stackId ?? (await stackIdentity(news.stack));
  } catch (e) {
    return failWith("pool", e, "LEDGER_UNAVAILABLE");
  }
  const elsewhere = pinCluster(olds, news, news.pool.ledger, whatOf(news));
  if (elsewhere) return fail("pool", elsewhere, "INVALID_CONFIG");
  const old = readRecord(olds);
  let ip = old?.pool === news.pool.id && olds.nodeId === news.nodeId ? old?.ips[0] : undefined;
  if (ip === undefined) {
    try {
      const ledger = ledgerOf(news, `IpAllocation ${news.owner} (check)`);
      ip = (await planNodeAddress(ledger, news.owner, news.nodeId, pool.node)).split("/")[0]!;
    } catch (e) {
      return failWith("nodeId", e, "LEDGER_UNAVAILABLE");
    }
  }
  const record = { pool: news.pool.id, owner: news.owner, ips: [ip], seq: 0 };
  const bits = familyOfText(ip) === "ipv6" ? 128 : 32;
  const outputs = { ip, ...addressDetails(pool, ip), prefix: `${ip}/${bits}`, ...recordProps(record) };
  return { inputs: { ...withPoolRef(news), ...outputs } };
}

/**
 * Claims the planned node address for this resource instance (adds a reference of its own to the
 * claim) and returns that reference, which its outputs keep as `nodeRef`.
 */
export async function createNodeAllocation(inputs: Props): Promise<string> {
  const ledger = ledgerOf(inputs, `IpAllocation ${inputs.owner} (create)`);
  const ref = `${String(inputs.stackId)} ${String(inputs.owner)} ${randomUUID()}`;
  await claimNodeAddress(ledger, inputs.owner, inputs.nodeId, inputs.ip, ref);
  return ref;
}

/**
 * Claims the node address again at `update`: with this instance's reference (one made now for a
 * resource of an earlier version, in place of the name-based one it wrote), and anew when the
 * claim was lost while the address is free. Returns the reference.
 */
export async function updateNodeAllocation(olds: Props, news: Props): Promise<string> {
  const ledger = ledgerOf(news, `IpAllocation ${news.owner} (update)`);
  const legacy = typeof olds.nodeRef === "string" ? undefined : refOf(olds);
  const ref =
    legacy === undefined ? refOf(olds) : `${String(news.stackId)} ${String(news.owner)} ${randomUUID()}`;
  await claimNodeAddress(ledger, news.owner, news.nodeId, news.ip, ref, legacy);
  return ref;
}

/** Drops this resource's reference to its node address; the last reference frees it. */
export async function deleteNodeAllocation(props: Props): Promise<void> {
  assertSameCluster(props, props.pool?.ledger, whatOf(props), "nothing was released");
  const ledger = ledgerOf(props, `IpAllocation ${props.owner} (delete)`);
  await releaseNodeAddress(ledger, props.owner, props.nodeId, props.ip, refOf(props));
}

/** At refresh: what is wrong with this resource's node address claim, or undefined. */
export async function nodeAllocationProblem(props: Props): Promise<string | undefined> {
  assertSameCluster(props, props.pool?.ledger, whatOf(props), "nothing was recorded");
  const ledger = ledgerOf(props, `IpAllocation ${props.owner} (refresh)`);
  return nodeClaimProblem(ledger, props.nodeId, props.ip, refOf(props));
}
