import { errorMessage } from "../../core/failure";
import type * as pulumi from "@pulumi/pulumi";
import { IpamError } from "../../allocator";
import { readRecord, recordProps } from "../../ledger/stack/allocation-record";
import { kubeLedger } from "../../ledger/kubernetes/kube-ledger";
import {
  claimNodeAddress,
  planNodeAddress,
  releaseNodeAddress,
} from "../../ledger/kubernetes/mesh-node-claims";
import { resolveLedger } from "../pool/ledger-option";
import { addressDetails, type ResolvedPool } from "../pool/pool-spec";
import { withPoolRef, type Props } from "../provider-props";

// IpAllocation with `nodeId`: a webmesh node address (one /32 or /128 per node ID) from a pool with a
// node `network` and a Kubernetes ledger, the same address for the node from every stack.

const ledgerOf = (props: Props, holder: string) => {
  const { config } = resolveLedger(props.pool?.ledger);
  if (!config) throw new IpamError("NO_STORAGE", "no storage configured for node addresses");
  return kubeLedger({ stack: props.stack, ledger: config, holder });
};

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
  const fail = (property: string, reason: string) => ({ inputs: news, failures: [{ property, reason }] });
  if (typeof news.nodeId !== "string" || news.nodeId === "")
    return fail("nodeId", "give the node's ID as a string");
  if (news.ip !== undefined)
    return fail("ip", "a node address comes from nodeId (or the pool's static); leave ip out");
  if (!pool.node) {
    return fail(
      "nodeId",
      "no network configured (webmesh ErrNoNetwork): node addresses come from a pool with `network`, " +
        `e.g. new IpPool("mesh", { network: "10.42.0.0/16", ledger: {...} })`,
    );
  }
  if (!resolveLedger(news.pool?.ledger).config) {
    return fail(
      "pool",
      "no storage configured (webmesh ErrNoStorage): node addresses are kept in a shared ledger so a node " +
        'gets the same address from every stack; give the pool `ledger: { kind: "kubernetes", name, namespace }`',
    );
  }
  const old = readRecord(olds);
  let ip = old?.pool === news.pool.id && olds.nodeId === news.nodeId ? old?.ips[0] : undefined;
  if (ip === undefined) {
    try {
      const ledger = ledgerOf(news, `IpAllocation ${news.owner} (check)`);
      ip = (await planNodeAddress(ledger, news.owner, news.nodeId, pool.node)).split("/")[0]!;
    } catch (e) {
      return fail("nodeId", errorMessage(e));
    }
  }
  const record = { pool: news.pool.id, owner: news.owner, ips: [ip], seq: 0 };
  const bits = ip.includes(":") ? 128 : 32;
  const outputs = { ip, ...addressDetails(pool, ip), prefix: `${ip}/${bits}`, ...recordProps(record) };
  return { inputs: { ...withPoolRef(news), ...outputs } };
}

/** Claims the planned node address for this resource (adds it to the claim's references). */
export async function createNodeAllocation(inputs: Props): Promise<void> {
  const ledger = ledgerOf(inputs, `IpAllocation ${inputs.owner} (create)`);
  await claimNodeAddress(ledger, inputs.owner, inputs.nodeId, inputs.ip);
}

/** Drops this resource's reference to its node address; the last reference frees it. */
export async function deleteNodeAllocation(props: Props): Promise<void> {
  const ledger = ledgerOf(props, `IpAllocation ${props.owner} (delete)`);
  await releaseNodeAddress(ledger, props.owner, props.nodeId, props.ip);
}
