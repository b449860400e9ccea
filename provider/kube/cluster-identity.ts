import { createHash } from "node:crypto";
import * as fs from "node:fs";
import type { KubeClients } from "./kube-config";
import { shown } from "../core/text";

/**
 * Which cluster a context points at, as state records it: the fingerprint of the cluster's CA
 * (`ca sha256:<16 hex>`), which stays the same whichever URL a kubeconfig reaches the API server
 * by; the server URL for a cluster without a CA in the kubeconfig. Never a credential.
 */
export function clusterIdentity(clients: KubeClients): string {
  const cluster = clients.config.getCurrentCluster();
  let ca: Buffer | undefined;
  if (cluster?.caData) ca = Buffer.from(cluster.caData, "base64");
  else if (cluster?.caFile && fs.existsSync(cluster.caFile)) ca = fs.readFileSync(cluster.caFile);
  if (!ca) return `server ${clients.server}`;
  return `ca sha256:${createHash("sha256").update(ca).digest("hex").slice(0, 16)}`;
}

// The form of a cluster identity as `clusterIdentity` writes it (and a `cluster` setting gives it).
const identityPattern = /^(ca sha256:[0-9a-f]{16}|server \S+)$/;

/** Why `value` cannot be a `cluster` setting (a ledger's or a provisioner's), or undefined when it can. */
export function clusterSettingProblem(value: unknown): string | undefined {
  if (typeof value === "string" && identityPattern.test(value)) return undefined;
  return (
    `must be a cluster as state records it, "ca sha256:" and 16 hex digits (or "server <url>" for a ` +
    `kubeconfig without a CA), as a refusal names it; got ${shown(value)}`
  );
}

/** Which cluster a kubeconfig context points at: its identity, and the context and server for messages. */
export interface ClusterView {
  /** As {@link clusterIdentity} gives it. */
  identity: string;
  context: string;
  server: string;
}

/** The {@link ClusterView} of `clients`. */
export function clusterView(clients: KubeClients): ClusterView {
  return { identity: clusterIdentity(clients), context: clients.context, server: clients.server };
}

/**
 * Why a context pointing at `current` must not be used for something recorded on cluster
 * `pinned`, or undefined when it points at that cluster (or nothing was recorded).
 * @param what - what was recorded there, e.g. `pool "egress" (namespace "ipam")`.
 */
export function otherCluster(current: ClusterView, pinned: unknown, what: string): string | undefined {
  if (typeof pinned !== "string" || current.identity === pinned) return undefined;
  return (
    `${what} is on the cluster with ${pinned}, but context "${current.context}" points at ${current.server} ` +
    `(${current.identity}), another cluster; switch to a context of the first cluster, or give its name as the ` +
    `ledger's or provisioner's context so that a change of the current context cannot redirect it. Only if ` +
    `it is the same cluster and its CA was rotated: set cluster: "${current.identity}" in those settings and run pulumi up`
  );
}

/**
 * The cluster to record at `check` for something reached through a context pointing at `current`: the `declared` one
 * (the settings' `cluster`, which re-pins on purpose), else the `recorded` one (state), else the
 * current one. A problem instead when the current context points at another cluster than that.
 * @param whose - whose settings declare it, for messages: `ledger` or `provisioner`.
 */
export function pinnedCluster(
  current: ClusterView,
  recorded: unknown,
  declared: unknown,
  what: string,
  whose: "ledger" | "provisioner",
): { cluster: string; problem?: undefined } | { problem: string } {
  if (typeof declared === "string") {
    if (declared === current.identity) return { cluster: declared };
    return {
      problem:
        `the ${whose}'s cluster setting says ${declared}, but context "${current.context}" points at ` +
        `${current.server} (${current.identity}); switch to a context of that cluster, or correct the setting`,
    };
  }
  const problem = otherCluster(current, recorded, what);
  return problem ? { problem } : { cluster: typeof recorded === "string" ? recorded : current.identity };
}
