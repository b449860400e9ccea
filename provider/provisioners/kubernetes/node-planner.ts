import { kubeClients, kubeTargetKey, type KubeClients } from "../../kube/kube-config";
import { leastLoaded } from "../least-loaded";
import { shared } from "../../core/process-registry";
import { readEgressView, type EgressView } from "./egress-view";
import { capacityFor, NodeInventory, subnetFits, type KubeNode } from "./nodes";
import { defaultZoneLabel, type KubeProvisionerConfig } from "../config/kube-provisioner-config";

/**
 * Where addresses are, as the platform reports them: address → node, and address → the group it
 * belongs to (see {@link AddressGroup.key}).
 */
export interface AddressLocations {
  nodeOf: Map<string, string>;
  groupOf: Map<string, string>;
}

/**
 * The platform object whose addresses a Node carries at most one of: ovn's EgressIP object (both
 * families: ovnkube places no two addresses of one object on one Node), a Cilium policy (one per
 * family), an SDN NetNamespace, the Egress objects of one namespace's pods on Antrea. Keyed the way
 * {@link AddressLocations.groupOf} keys the cluster's addresses.
 */
export interface AddressGroup {
  key: string;
  /** For messages: `EgressIP egress-ipam-team-a`. */
  name: string;
  /** Why a Node takes one address of it, and what to do when a zone has too few Nodes. */
  rule: string;
}

/** What {@link NodePlanner.choose} needs to know about one placement. */
export interface ChooseRequest {
  zone: string;
  /** The address, when known (checks know it: it is planned by the pool first). */
  ip?: string;
  /** Its group: a Node never gets two addresses of one group. */
  group?: AddressGroup;
  /** The provisioner's own reason a Node cannot take an address ("" when it can). */
  unusable?: (node: KubeNode) => string;
  /** Where the platform has the addresses now. */
  locations: AddressLocations;
}

/**
 * The state every provisioner of one cluster, kind, node selector and zone label shares in a
 * process, whatever namespace it serves: the Node inventory, a short-lived read of the cluster's
 * egress objects, and the placements planned by this process that the cluster does not show yet.
 * Planning with it keeps parallel plans spread out and never puts two addresses of one group
 * ({@link AddressGroup}) on one Node; every write still re-reads the object it changes.
 */
export class NodePlanner {
  /** Address → planned node and group key. */
  private readonly planned = new Map<string, { node: string; group?: string }>();
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

  /** Records that `ip` went on `node` (or left every node, with `node` undefined), as an address of `group` (its key). */
  record(ip: string, node: string | undefined, group?: string): void {
    if (node === undefined) this.planned.delete(ip);
    else this.planned.set(ip, { node, group });
  }

  /**
   * The least loaded usable Node of the zone: Ready, schedulable, with room (egress-ipconfig
   * capacity, counting this process's plans), whose egress subnet contains the address, without an
   * address of the request's group (planned or placed), and not refused by `unusable`. Load is what the
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
    const groupOf = new Map(req.locations.groupOf);
    if (req.ip) observed.delete(req.ip);
    const all = new Map(observed);
    for (const [ip, p] of this.planned) {
      if (ip === req.ip) continue;
      all.set(ip, p.node);
      if (p.group) groupOf.set(ip, p.group);
    }
    const count = (m: Map<string, string>) => {
      const c = new Map<string, number>();
      for (const node of m.values()) c.set(node, (c.get(node) ?? 0) + 1);
      return c;
    };
    const [load, used] = [count(observed), count(all)];
    /** Node → the address of the group it already carries. */
    const inGroup = new Map<string, string>();
    for (const [ip, node] of all) if (req.group && groupOf.get(ip) === req.group.key) inGroup.set(node, ip);
    const skipped = new Map<string, string>();
    const usable = (await this.nodes.eligible(req.zone, signal)).filter((n) => {
      const u = used.get(n.name) ?? 0;
      const reason =
        req.unusable?.(n) ||
        (u >= capacityFor(n, req.ip) ? `full: ${u} of ${capacityFor(n, req.ip)} egress IPs` : "") ||
        (req.ip && !subnetFits(n, req.ip)
          ? `${req.ip} is outside its egress subnet ${n.egress?.subnets.join(", ")}`
          : "") ||
        (inGroup.has(n.name) ? `already carries ${inGroup.get(n.name)} of ${req.group?.name}` : "");
      if (reason) skipped.set(n.name, reason);
      return !reason;
    });
    if (usable.length === 0) {
      const grouped = [...skipped.keys()].some((n) => inGroup.has(n));
      throw await this.nodes.noHost(req.zone, skipped, signal, grouped ? req.group?.rule : undefined);
    }
    // Least loaded as the cluster showed it when this process first looked (see leastLoaded).
    const best = leastLoaded(
      usable,
      (n) => load.get(n.name) ?? 0,
      (n) => n.name,
      req.ip,
    );
    // Only a known address is a placement (a CidrAssignment asks without one: it places nothing).
    if (req.ip) this.planned.set(req.ip, { node: best.name, group: req.group?.key });
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
