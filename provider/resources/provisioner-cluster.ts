import { failureOf, inputFailure, type Failure } from "../core/failure";
import { IpamError } from "../core/ipam-error";
import { otherCluster, pinnedCluster } from "../kube/cluster-identity";
import type { EgressIPProvisioner } from "../provisioners/egress-ip-provisioner";
import type { Props } from "./provider-props";

// The cluster of a resource whose provisioner writes Kubernetes objects (ocp-static, ocp-dynamic,
// ovn): recorded in its state (`cluster`) at its first check and compared on every later operation,
// so a kubeconfig whose current context now points at another cluster cannot redirect a preview,
// refresh or destroy to that cluster's same-named objects.

/**
 * At `check`: records in `news.cluster` which cluster `provisioner` (built from `news`) talks to
 * (the one recorded before while the context keeps its name; the `cluster` setting when given), or
 * returns why not, naming both clusters. Undefined for a provisioner without a cluster.
 */
export function pinProvisionerCluster(
  olds: Props,
  news: Props,
  provisioner: EgressIPProvisioner,
  what: string,
): Failure | undefined {
  if (!provisioner.cluster) return undefined;
  const config = news.provisioner as Props;
  // A context given a new name is the user's choice of cluster; an unchanged name must still mean
  // the cluster recorded (whatever else changes, so a replacement cannot half-happen on another one).
  const recorded = olds.provisioner?.context === config.context ? olds.cluster : undefined;
  try {
    const pin = pinnedCluster(provisioner.cluster(), recorded, config.cluster, what, "provisioner");
    if (pin.problem !== undefined) return inputFailure("provisioner.context", pin.problem, "INVALID_CONFIG");
    news.cluster = pin.cluster;
    return undefined;
  } catch (e) {
    return failureOf("provisioner.context", e, "INVALID_CONFIG");
  }
}

/**
 * At `read` and `delete` (which run no check): refuses when `provisioner` (built from `props`)
 * talks to another cluster than the one the state recorded.
 * @param outcome - what the refusal leaves, e.g. `nothing was removed`.
 * @throws IpamError INVALID_CONFIG naming both clusters.
 */
export function assertProvisionerCluster(
  props: Props,
  provisioner: EgressIPProvisioner,
  what: string,
  outcome: string,
): void {
  if (!provisioner.cluster || props.cluster === undefined) return;
  const problem = otherCluster(provisioner.cluster(), props.cluster, what);
  if (problem) throw new IpamError("INVALID_CONFIG", `${problem}; ${outcome}`);
}

/**
 * The provisioner settings that decide a replacement: all but `cluster` (re-pinning is an update),
 * `kubeconfig` (new credentials for the cluster recorded are an update, nothing moves) and aws's
 * `elasticIps` (what it gives each address is compared per address, and changed by an update).
 */
export function placementSettings(provisioner: unknown): string {
  if (!provisioner || typeof provisioner !== "object") return JSON.stringify(provisioner ?? null);
  const {
    cluster: _cluster,
    kubeconfig: _kubeconfig,
    elasticIps: _elasticIps,
    ...rest
  } = provisioner as Props;
  return JSON.stringify(rest);
}

/**
 * The settings that choose among hosts: which may carry an address (`hosts` of none, aws's and a
 * cloud's `hostTags`, the Kubernetes kinds' `nodeSelector` and `zoneLabel`).
 */
const hostChoice = ["hosts", "hostTags", "nodeSelector", "zoneLabel"] as const;

/**
 * The provisioner settings that decide the replacement of an address's placement: those of
 * {@link placementSettings} but the ones that choose among hosts ({@link hostChoice}). A change of
 * those is an update: `check` keeps the address on its host while the new settings still take that
 * host, and plans a move (shown at preview) where they do not.
 */
export function placementSettingsOfAddress(provisioner: unknown): string {
  if (!provisioner || typeof provisioner !== "object") return placementSettings(provisioner);
  const rest: Props = { ...(provisioner as Props) };
  for (const key of hostChoice) delete rest[key];
  if (rest.cloud && typeof rest.cloud === "object") {
    const { hostTags: _hostTags, ...cloud } = rest.cloud as Props;
    rest.cloud = cloud;
  }
  return placementSettings(rest);
}
