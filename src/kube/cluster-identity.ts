import { createHash } from "node:crypto";
import * as fs from "node:fs";
import type { KubeClients } from "./kube-config";

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

/**
 * Why `clients` must not be used for something recorded on cluster `pinned`, or undefined when
 * they point at that cluster.
 * @param what - what was recorded there, e.g. `pool "egress" (namespace "ipam")`.
 */
export function otherCluster(clients: KubeClients, pinned: unknown, what: string): string | undefined {
  if (typeof pinned !== "string") return undefined;
  const current = clusterIdentity(clients);
  if (current === pinned) return undefined;
  return (
    `${what} is on the cluster with ${pinned}, but context "${clients.context}" points at ${clients.server} ` +
    `(${current}), another cluster; switch to a context of the first cluster, or give its name as the ` +
    `ledger's or provisioner's context so that a change of the current context cannot redirect it`
  );
}
