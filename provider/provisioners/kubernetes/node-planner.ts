import { kubeClients, kubeTargetKey, type KubeClients } from "../../kube/kube-config";
import { leastLoaded } from "../least-loaded";
import { shared } from "../../core/process-registry";
import { readEgressView, type EgressView } from "./egress-view";
import { capacityFor, NodeInventory, subnetFits, type KubeNode } from "./nodes";
import { defaultZoneLabel, type KubeProvisionerConfig } from "./kube-provisioner-config";

/** Where addresses are, as the platform reports them: address → node, and address → namespace. */
export interface AddressLocations {
  nodeOf: Map<string, string>;
  namespaceOf: Map<string, string>;
}

/** What {@link NodePlanner.choose} needs to know about one placement. */
export interface ChooseRequest {
  zone: string;
  /** The address, when known (checks know it: it is planned by the pool first). */
  ip?: string;
  /** Its namespace: a Node never gets two addresses of one namespace. */
  namespace?: string;
  /** The provisioner's own reason a Node cannot take an address ("" when it can). */
  unusable?: (node: KubeNode) => string;
  /** Where the platform has the addresses now. */
  locations: AddressLocations;
}

/**
 * The state every provisioner of one cluster, kind, node selector and zone label shares in a
 * process, whatever namespace it serves: the Node inventory, a short-lived read of the cluster's
 * egress objects, and the placements planned by this process that the cluster does not show yet.
 * Planning with it keeps parallel plans spread out and never puts two addresses of one namespace
 * on one Node; every write still re-reads the object it changes.
 */
export class NodePlanner {
  /** Address → planned node and namespace. */
  private readonly planned = new Map<string, { node: string; namespace?: string }>();
  private view?: Promise<EgressView>;
  /** Plans run one at a time: two concurrent checks must not both see a Node as free. */
  private turn: Promise<unknown> = Promise.resolve();

  constructor(
    readonly kube: KubeClients,
    readonly nodes: NodeInventory,
  ) {}

  /**
   * The cluster's egress objects as planning sees them: read once per process (a deployment), so
   * every plan of the deployment starts from the same picture and preview and up agree; this
   * process's own placements are added from {@link record}. Writes always read afresh.
   */
  egressView(): Promise<EgressView> {
    if (this.view) return this.view;
    const value = readEgressView(this.kube);
    value.catch(() => (this.view = undefined));
    this.view = value;
    return value;
  }

  /** Forgets the cluster picture (tests; a CidrAssignment that changed egressCIDRs). */
  invalidate(): void {
    this.view = undefined;
  }

  /** Records that `ip` went on `node` (or left every node, with `node` undefined). */
  record(ip: string, node: string | undefined, namespace?: string): void {
    if (node === undefined) this.planned.delete(ip);
    else this.planned.set(ip, { node, namespace });
  }

  /**
   * The least loaded usable Node of the zone: Ready, schedulable, with room (egress-ipconfig
   * capacity, counting this process's plans), whose egress subnet contains the address, without an
   * address of the namespace (planned or placed), and not refused by `unusable`. Load is what the
   * cluster showed; ties go by a hash of address and node. Records the choice for a known address.
   * @throws IpamError HOST_UNAVAILABLE naming the zone and why each of its Nodes was passed over.
   */
  choose(req: ChooseRequest, signal?: AbortSignal): Promise<string> {
    const result = this.turn.then(() => this.chooseNow(req, signal));
    this.turn = result.catch(() => undefined);
    return result;
  }

  private async chooseNow(req: ChooseRequest, signal?: AbortSignal): Promise<string> {
    const observed = new Map(req.locations.nodeOf);
    const namespaceOf = new Map(req.locations.namespaceOf);
    if (req.ip) observed.delete(req.ip);
    const all = new Map(observed);
    for (const [ip, p] of this.planned) {
      if (ip === req.ip) continue;
      all.set(ip, p.node);
      if (p.namespace) namespaceOf.set(ip, p.namespace);
    }
    const count = (m: Map<string, string>) => {
      const c = new Map<string, number>();
      for (const node of m.values()) c.set(node, (c.get(node) ?? 0) + 1);
      return c;
    };
    const [load, used] = [count(observed), count(all)];
    const hasNamespace = new Set<string>();
    for (const [ip, node] of all)
      if (req.namespace && namespaceOf.get(ip) === req.namespace) hasNamespace.add(node);
    const skipped = new Map<string, string>();
    const usable = (await this.nodes.eligible(req.zone, signal)).filter((n) => {
      const u = used.get(n.name) ?? 0;
      const reason =
        req.unusable?.(n) ||
        (u >= capacityFor(n, req.ip) ? `full: ${u} of ${capacityFor(n, req.ip)} egress IPs` : "") ||
        (req.ip && !subnetFits(n, req.ip)
          ? `${req.ip} is outside its egress subnet ${n.egress?.subnets.join(", ")}`
          : "") ||
        (hasNamespace.has(n.name) ? `already carries an egress IP of namespace ${req.namespace}` : "");
      if (reason) skipped.set(n.name, reason);
      return !reason;
    });
    if (usable.length === 0) throw await this.nodes.noHost(req.zone, skipped, signal);
    // Least loaded as the cluster showed it when this process first looked (see leastLoaded).
    const best = leastLoaded(
      usable,
      (n) => load.get(n.name) ?? 0,
      (n) => n.name,
      req.ip,
    );
    // Only a known address is a placement (a CidrAssignment asks without one: it places nothing).
    if (req.ip) this.planned.set(req.ip, { node: best.name, namespace: req.namespace });
    return best.name;
  }
}

/**
 * The planner of a Kubernetes provisioner config, one per process for each kind, cluster target
 * (kubeconfig and context), node
 * selector and zone label (the namespace an instance serves is not part of the key).
 */
export function plannerFor(config: KubeProvisionerConfig): NodePlanner {
  const key = JSON.stringify([
    config.kind,
    kubeTargetKey(config),
    config.nodeSelector ?? {},
    config.zoneLabel ?? "",
  ]);
  return shared("kube-planner", key, () => {
    const kube = kubeClients(config);
    const nodes = new NodeInventory(kube, {
      nodeSelector: config.nodeSelector ?? {},
      zoneLabel: config.zoneLabel ?? defaultZoneLabel,
    });
    return new NodePlanner(kube, nodes);
  });
}
