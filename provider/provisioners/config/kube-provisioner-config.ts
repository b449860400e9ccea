import type { AwsProvisionerConfig } from "./aws-provisioner-config";
import { clusterSettingProblem } from "../../kube/cluster-identity";
import { kubeconfigSettingProblem } from "../../kube/kube-config";
import { shown } from "../../core/text";
import { canonicalCidr } from "../../allocator/prefix";
import { isLabelKey, isLabelValue } from "./label-syntax";

const isCidr = (text: string) => {
  try {
    canonicalCidr(text);
    return true;
  } catch {
    return false;
  }
};

/** Settings every Kubernetes provisioner (`ocp-static`, `ocp-dynamic`, `ovn`, `antrea`) shares. */
export interface KubeProvisionerSettings {
  /**
   * The kubeconfig context to use (from `$KUBECONFIG` or `~/.kube/config`, as kubectl and
   * pulumi-kubernetes read them); default: the current context. Only the name is stored in state.
   */
  context?: string;
  /**
   * The kubeconfig itself (its YAML or JSON text) instead of `$KUBECONFIG` / `~/.kube/config`: e.g.
   * the `kubeconfig` output of the cluster resource the same program creates, or of the one a
   * `k8s.Provider` is given. Kept secret in state, never printed; `context` then names one of its
   * contexts (default: its current one). Changing it is an update: nothing moves, and the cluster
   * it points at must stay the one recorded (see `cluster`).
   */
  kubeconfig?: string;
  /**
   * The cluster the provisioner must talk to, as state records it (`ca sha256:<16 hex>` of its CA,
   * or `server <url>` for a kubeconfig without a CA). Default: the cluster of the resource's first
   * `up`, kept in its state. Declaring it refuses any other cluster from the start, and re-pins
   * after a CA rotation (an update, nothing moves).
   */
  cluster?: string;
  /** Labels every eligible Node carries, e.g. `{ "node-role.kubernetes.io/worker": "" }`; default: every Node. */
  nodeSelector?: Record<string, string>;
  /** The Node label whose value is the failure domain (default `topology.kubernetes.io/zone`). */
  zoneLabel?: string;
}

/**
 * OpenShift SDN, manual mode: each egress IP goes on one node's `HostSubnet.egressIPs` and on the
 * namespace's `NetNamespace.egressIPs`. With `cloud`, the address is first made a secondary IP of
 * the node's instance (AWS), and that step is undone when the HostSubnet write fails.
 */
export interface OcpStaticProvisionerConfig extends KubeProvisionerSettings {
  kind: "ocp-static";
  /**
   * The cloud the nodes run in, whose network must carry the address too (OpenShift SDN on AWS).
   * Its `elasticIps` is refused: this kind does not support Elastic IPs.
   */
  cloud?: AwsProvisionerConfig;
}

/**
 * OpenShift SDN, automatic mode: `CidrAssignment` puts the pool's CIDRs on nodes'
 * `HostSubnet.egressCIDRs`; `EgressIp` writes only `NetNamespace.egressIPs` and the SDN master
 * places the addresses.
 */
export interface OcpDynamicProvisionerConfig extends KubeProvisionerSettings {
  kind: "ocp-dynamic";
}

/**
 * OVN-Kubernetes: `EgressIp` writes the spec of one `EgressIP` object (k8s.ovn.org/v1) per
 * namespace; `CidrAssignment` labels nodes `k8s.ovn.org/egress-assignable`; ovnkube places the
 * addresses and reports them in the object's `status.items`.
 */
export interface OvnProvisionerConfig extends KubeProvisionerSettings {
  kind: "ovn";
}

/**
 * Antrea: `EgressIp` writes one `Egress` object (crd.antrea.io/v1beta1) per namespace and address,
 * its `egressIP` the planned address and `appliedTo` the namespace. Antrea puts the address on a
 * Node and reports which in `status.egressNode`, which refresh records.
 */
export interface AntreaProvisionerConfig extends KubeProvisionerSettings {
  kind: "antrea";
  /**
   * The Antrea `ExternalIPPool` whose ranges hold the pool's addresses: Antrea then assigns each
   * address to a Node of that ExternalIPPool's nodeSelector and moves it when the Node fails. Without
   * it, Antrea uses an address only where it is already configured on a Node's interface.
   */
  externalIPPool?: string;
}

/**
 * Cilium egress gateway: `EgressIp` writes one `CiliumEgressGatewayPolicy` (cilium.io/v2) per
 * namespace and address family that sends the namespace's traffic to `destinations` (minus
 * `excluded`) of that family out through a gateway Node per address, pinned by
 * `kubernetes.io/hostname`, with the address as its `egressIP`. Cilium neither allocates the
 * address nor puts it on the Node: with `cloud`, it is made a secondary IP (or an IPv6 address) of
 * the gateway Node's instance first (AWS), as for `ocp-static`.
 */
export interface CiliumProvisionerConfig extends KubeProvisionerSettings {
  kind: "cilium";
  /**
   * Where the namespace's traffic leaves through the gateways (`destinationCIDRs`): each family's
   * policy takes this list's CIDRs of its family (an address of a family the list has no CIDR of is
   * refused at preview). Default: every destination of the address's family (`0.0.0.0/0`, `::/0`).
   */
  destinations?: string[];
  /** Destinations that keep the normal path (`excludedCIDRs`, each family's in its policy), e.g. a peered VPC. */
  excluded?: string[];
  /**
   * The cloud the Nodes run in, whose network must carry the address too (EKS: AWS). Its
   * `elasticIps` is refused: this kind does not support Elastic IPs.
   */
  cloud?: AwsProvisionerConfig;
}

/** The settings of any Kubernetes provisioner. */
export type KubeProvisionerConfig =
  | OcpStaticProvisionerConfig
  | OcpDynamicProvisionerConfig
  | OvnProvisionerConfig
  | AntreaProvisionerConfig
  | CiliumProvisionerConfig;

/** The Kubernetes provisioner kinds. */
export const kubeKinds = ["ocp-static", "ocp-dynamic", "ovn", "antrea", "cilium"] as const;

/** The zone label used when `zoneLabel` is not given. */
export const defaultZoneLabel = "topology.kubernetes.io/zone";

/**
 * Problems of a Kubernetes provisioner's settings, as `check` failures (`property` relative to the
 * config). `cloudProblems` checks a nested `cloud` config (the aws provisioner's own checks).
 */
export function kubeConfigProblems(
  c: Record<string, unknown>,
  cloudProblems: (cloud: unknown) => { property: string; reason: string }[],
  isSecretLike: (key: string) => boolean,
): { property: string; reason: string }[] {
  const problems: { property: string; reason: string }[] = [];
  if (c.context !== undefined && (typeof c.context !== "string" || c.context === "")) {
    problems.push({
      property: "context",
      reason: `must be the name of a kubeconfig context (got ${shown(c.context)}); leave it out to use the current context`,
    });
  }
  const clusterProblem = c.cluster === undefined ? undefined : clusterSettingProblem(c.cluster);
  if (clusterProblem) problems.push({ property: "cluster", reason: clusterProblem });
  const kubeconfigProblem = kubeconfigSettingProblem(c.kubeconfig);
  if (kubeconfigProblem) problems.push({ property: "kubeconfig", reason: kubeconfigProblem });
  if (c.nodeSelector !== undefined) {
    const sel = c.nodeSelector as Record<string, unknown>;
    const ok = sel && typeof sel === "object" && !Array.isArray(sel);
    const bad = ok
      ? Object.entries(sel).filter(([k, v]) => !isLabelKey(k) || typeof v !== "string" || !isLabelValue(v))
      : [];
    if (!ok || bad.length > 0) {
      problems.push({
        property: "nodeSelector",
        reason:
          `must map Node label keys to values, e.g. { "node-role.kubernetes.io/worker": "" }` +
          (bad.length > 0 ? ` (invalid: ${bad.map(([k, v]) => `${k}=${shown(v)}`).join(", ")})` : ""),
      });
    }
  }
  if (c.zoneLabel !== undefined && (typeof c.zoneLabel !== "string" || !isLabelKey(c.zoneLabel))) {
    problems.push({
      property: "zoneLabel",
      reason: `must be a Node label key such as "${defaultZoneLabel}" (got ${shown(c.zoneLabel)})`,
    });
  }
  const keys = new Set([
    "kind",
    "context",
    "kubeconfig",
    "cluster",
    "nodeSelector",
    "zoneLabel",
    ...(c.kind === "ocp-static" || c.kind === "cilium" ? ["cloud"] : []),
    ...(c.kind === "antrea" ? ["externalIPPool"] : []),
    ...(c.kind === "cilium" ? ["destinations", "excluded"] : []),
  ]);
  if (c.kind === "cilium") {
    for (const key of ["destinations", "excluded"] as const) {
      const v = c[key];
      if (v === undefined) continue;
      const bad = Array.isArray(v) ? v.filter((x) => typeof x !== "string" || !isCidr(x)) : [v];
      if (!Array.isArray(v) || bad.length > 0 || (key === "destinations" && v.length === 0)) {
        problems.push({
          property: key,
          reason:
            `must be a list of CIDRs such as ["0.0.0.0/0"]` +
            (key === "destinations" ? " with at least one" : "") +
            (bad.length > 0 ? ` (not a CIDR: ${bad.map((b) => shown(b)).join(", ")})` : ""),
        });
      }
    }
  }
  if (
    c.externalIPPool !== undefined &&
    c.kind === "antrea" &&
    (typeof c.externalIPPool !== "string" || !/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(c.externalIPPool))
  ) {
    problems.push({
      property: "externalIPPool",
      reason: `must be the name of an Antrea ExternalIPPool, e.g. "egress-pool" (got ${shown(c.externalIPPool)})`,
    });
  }
  if (c.cloud !== undefined && (c.kind === "ocp-static" || c.kind === "cilium")) {
    const cloud = c.cloud as Record<string, unknown>;
    if (!cloud || typeof cloud !== "object" || cloud.kind !== "aws") {
      problems.push({
        property: "cloud",
        reason: `must be an aws provisioner config such as { kind: "aws", region: "us-east-1" } (the only cloud supported)`,
      });
    } else {
      problems.push(...cloudProblems(cloud).map((p) => ({ ...p, property: `cloud.${p.property}` })));
      // The aws provisioner's own setting: only this kind's EC2 step would act on it, at create.
      if (cloud.elasticIps !== undefined) {
        problems.push({
          property: "cloud.elasticIps",
          reason:
            `Elastic IPs are not supported on the cloud side of ${String(c.kind)}: only its EC2 step would act ` +
            `on the setting (allocating one at create), and nothing of this kind shows, refreshes or checks ` +
            `it, so the address may not leave from it; leave elasticIps out of cloud. ` +
            `An egress address with an Elastic IP that follows it is the aws provisioner's ` +
            `(kind: "aws" with elasticIps, on instances it places addresses on itself)`,
        });
      }
    }
  }
  for (const key of Object.keys(c)) {
    if (!keys.has(key) && !isSecretLike(key)) {
      problems.push({
        property: key,
        reason: `unknown setting of the ${String(c.kind)} provisioner; it takes ${[...keys].filter((k) => k !== "kind").join(", ")}`,
      });
    }
  }
  return problems;
}
