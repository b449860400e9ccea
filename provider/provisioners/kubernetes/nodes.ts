import { IpamError } from "../../core/ipam-error";
import type * as k8s from "@kubernetes/client-node";
import { parseAddress } from "../../allocator/address";
import { parsePrefix } from "../../allocator/prefix";
import { kubeFailure } from "../../kube/kube-errors";
import type { KubeClients } from "../../kube/kube-config";

/** The annotation cloud-network-config-controller puts on Nodes: egress subnet and capacity per interface. */
export const egressIpConfigAnnotation = "cloud.network.openshift.io/egress-ipconfig";

/** A Node as the Kubernetes provisioners see it. */
export interface KubeNode {
  name: string;
  /** Value of the zone label ("" when the Node has none). */
  zone: string;
  ready: boolean;
  schedulable: boolean;
  /** `spec.providerID`, e.g. `aws:///us-east-1a/i-0abc`. */
  providerID?: string;
  labels: Record<string, string>;
  /** From the egress-ipconfig annotation, when the Node has one. */
  egress?: EgressIpConfig;
}

/** A Node's egress subnets and capacity (cloud.network.openshift.io/egress-ipconfig). */
export interface EgressIpConfig {
  /** The subnets egress IPs of this Node must lie in (`ifaddr.ipv4` / `ifaddr.ipv6`). */
  subnets: string[];
  /** How many egress IPs the Node can carry per family (`capacity.ipv4` / `ipv6`, or `ip` for both). */
  capacity: { ipv4?: number; ipv6?: number; ip?: number };
}

/** Parses the egress-ipconfig annotation; undefined when absent or unreadable. */
export function parseEgressIpConfig(text: string | undefined): EgressIpConfig | undefined {
  if (!text) return undefined;
  try {
    const entries = JSON.parse(text) as {
      ifaddr?: { ipv4?: string; ipv6?: string };
      capacity?: { ipv4?: number; ipv6?: number; ip?: number };
    }[];
    if (!Array.isArray(entries) || entries.length === 0) return undefined;
    const subnets = entries.flatMap((e) => [e.ifaddr?.ipv4, e.ifaddr?.ipv6].filter((s): s is string => !!s));
    const capacity: EgressIpConfig["capacity"] = {};
    for (const e of entries) {
      for (const k of ["ipv4", "ipv6", "ip"] as const) {
        const n = e.capacity?.[k];
        if (typeof n === "number") capacity[k] = (capacity[k] ?? 0) + n;
      }
    }
    return { subnets, capacity };
  } catch {
    return undefined;
  }
}

/** How many egress IPs of `ip`'s family the Node can carry (Infinity without an annotation). */
export function capacityFor(node: KubeNode, ip?: string): number {
  const c = node.egress?.capacity;
  if (!c) return Infinity;
  const family = ip && parseAddress(ip).family === 6 ? "ipv6" : "ipv4";
  return c[family] ?? c.ip ?? Infinity;
}

/** Whether `ip` lies in one of the Node's egress subnets (true without an annotation). */
export function subnetFits(node: KubeNode, ip: string): boolean {
  if (!node.egress || node.egress.subnets.length === 0) return true;
  const a = parseAddress(ip);
  return node.egress.subnets.some((s) => {
    try {
      const p = parsePrefix(s, "egress-ipconfig subnet");
      return p.family === a.family && a.value >= p.network && a.value <= p.last;
    } catch {
      return false;
    }
  });
}

function toKubeNode(n: k8s.V1Node, zoneLabel: string): KubeNode {
  const labels = n.metadata?.labels ?? {};
  return {
    name: n.metadata?.name ?? "",
    zone: labels[zoneLabel] ?? "",
    ready: (n.status?.conditions ?? []).some((c) => c.type === "Ready" && c.status === "True"),
    schedulable: !n.spec?.unschedulable,
    providerID: n.spec?.providerID,
    labels,
    egress: parseEgressIpConfig(n.metadata?.annotations?.[egressIpConfigAnnotation]),
  };
}

/** Why a Node is not eligible, for messages: "NotReady", "unschedulable", … ("" when it is). */
export function whyNot(node: KubeNode): string {
  return [!node.ready && "NotReady", !node.schedulable && "unschedulable"].filter(Boolean).join(", ");
}

/** Settings of a {@link NodeInventory}. */
export interface NodeInventoryOptions {
  nodeSelector: Record<string, string>;
  zoneLabel: string;
  /** How long the Node list is reused (default 10 s): every check asks, one list serves them all. */
  ttlMs?: number;
}

/**
 * The Nodes one Kubernetes provisioner may use: those matching `nodeSelector`, by failure domain
 * (the `zoneLabel` value). Eligible: Ready and schedulable. One list call serves every question
 * for `ttlMs`.
 */
export class NodeInventory {
  private snapshot?: { at: number; nodes: Promise<KubeNode[]> };

  constructor(
    private readonly kube: KubeClients,
    private readonly options: NodeInventoryOptions,
  ) {}

  /** `key=value,…`, the label selector of `nodeSelector`. */
  get selectorText(): string {
    return Object.entries(this.options.nodeSelector)
      .map(([k, v]) => `${k}=${v}`)
      .join(",");
  }

  /** Every Node matching the selector (cached for `ttlMs`). */
  all(signal?: AbortSignal): Promise<KubeNode[]> {
    const now = Date.now();
    if (this.snapshot && now - this.snapshot.at < (this.options.ttlMs ?? 10_000)) return this.snapshot.nodes;
    signal?.throwIfAborted();
    const labelSelector = this.selectorText || undefined;
    const nodes = this.kube.core.listNode({ labelSelector }).then(
      (list) => list.items.map((n) => toKubeNode(n, this.options.zoneLabel)),
      (err: unknown) => {
        throw kubeFailure(
          `listing Nodes${labelSelector ? ` with labels ${labelSelector}` : ""}`,
          err,
          this.kube,
        );
      },
    );
    nodes.catch(() => (this.snapshot = undefined));
    this.snapshot = { at: now, nodes };
    return nodes;
  }

  /** Forgets the cached list (after a write that changes Nodes). */
  invalidate(): void {
    this.snapshot = undefined;
  }

  /** A Node by name among those matching the selector. */
  async find(name: string, signal?: AbortSignal): Promise<KubeNode | undefined> {
    return (await this.all(signal)).find((n) => n.name === name);
  }

  /** Ready, schedulable Nodes of the failure domain. */
  async eligible(zone: string, signal?: AbortSignal): Promise<KubeNode[]> {
    return (await this.all(signal)).filter((n) => n.zone === zone && n.ready && n.schedulable);
  }

  /** Whether `host` is an eligible Node of the failure domain. */
  async serves(host: string, zone: string, signal?: AbortSignal): Promise<boolean> {
    return (await this.eligible(zone, signal)).some((n) => n.name === host);
  }

  /**
   * The error for a failure domain without a usable Node, saying why each candidate was passed
   * over: `skipped` names the provisioner's own reasons (full, wrong subnet, …) per Node.
   */
  async noHost(
    zone: string,
    skipped: Map<string, string> = new Map(),
    signal?: AbortSignal,
    advice?: string,
  ): Promise<IpamError> {
    const all = await this.all(signal);
    const where = `${this.kube.server} (kubeconfig context "${this.kube.context}")`;
    const selector = this.selectorText ? ` with labels ${this.selectorText}` : "";
    if (all.length === 0) {
      return new IpamError(
        "HOST_UNAVAILABLE",
        `nodeSelector ${this.selectorText ? `{${this.selectorText}}` : "{}"} matches no Node on ${where}; ` +
          `check the provisioner's nodeSelector and context`,
      );
    }
    const here = all.filter((n) => n.zone === zone);
    if (here.length === 0) {
      const zones = [...new Set(all.map((n) => n.zone || "(no label)"))].sort().join(", ");
      return new IpamError(
        "HOST_UNAVAILABLE",
        `no eligible node in failure domain "${zone}": no Node${selector} has ${this.options.zoneLabel}=${zone} ` +
          `on ${where} (their domains: ${zones}); check the failure domain name and the provisioner's zoneLabel`,
      );
    }
    const reasons = here.map((n) => `${n.name} (${whyNot(n) || skipped.get(n.name) || "not usable"})`);
    return new IpamError(
      "HOST_UNAVAILABLE",
      `no eligible node in failure domain "${zone}" on ${where}: ${reasons.join(", ")}; ` +
        (advice ? `${advice}; or ` : "") +
        `make a Node there Ready and schedulable, or free room on one`,
    );
  }
}
