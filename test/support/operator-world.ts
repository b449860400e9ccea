// The cluster as redhat-cop's egressip-ipam-operator leaves it on OpenShift SDN with one CIDR per
// group of nodes (two or more CIDRs, or a cloud: its explicit mode), written by the test as the
// operator writes it: its EgressIPAM object (with the finalizer it adds), on each opted-in Namespace
// the `egressips` annotation (one address per CIDR, in cidrAssignments order, each the lowest free of
// its CIDR: not the network or broadcast address, a reserved IP or a Node's address), the
// NetNamespace's egressIPs, and each address on the HostSubnet of the node of its group that carries
// the fewest. The operator itself does not run here.
import type * as k8s from "@kubernetes/client-node";
import { kube } from "./kube";
import { sdnWorld, type SdnWorld } from "./sdn-world";

const operatorApi = "redhatcop.redhat.io/v1alpha1";
const sdnApi = "network.openshift.io/v1";
/** The annotations the operator reads (`egressipam`, set by the user) and writes (`egressips`). */
export const operatorAnnotation = {
  ipam: "egressip-ipam-operator.redhat-cop.io/egressipam",
  ips: "egressip-ipam-operator.redhat-cop.io/egressips",
} as const;

/** One `spec.cidrAssignments` entry, with the nodes whose `topologyLabel` has `labelValue`. */
export interface OperatorCidr {
  cidr: string;
  labelValue: string;
  reservedIPs?: string[];
  nodes: string[];
}

/** What {@link operatorWorld} wrote: per namespace, its addresses and their nodes, in CIDR order. */
export interface OperatorWorld {
  name: string;
  assigned: Record<string, { ips: string[]; nodes: string[] }>;
  cleanup(): Promise<void>;
}

const v4 = (ip: string) => ip.split(".").reduce((n, o) => n * 256 + Number(o), 0);
const text4 = (n: number) => [24, 16, 8, 0].map((s) => (n >>> s) & 255).join(".");

async function replaceWith(
  apiVersion: string,
  kind: string,
  name: string,
  change: (o: Record<string, unknown>) => void,
) {
  const { objects } = kube();
  const o = (await objects.read({ apiVersion, kind, metadata: { name } })) as Record<string, unknown>;
  change(o);
  await objects.replace(o as k8s.KubernetesObject);
}

/**
 * Writes an EgressIPAM `name` with `cidrs` and `topologyLabel`/`nodeSelector`, and gives each of
 * `namespaces` (which must exist, with their NetNamespaces and the nodes' HostSubnets) its
 * addresses as the operator would. `taken` are what it never hands out besides the network and
 * broadcast addresses and the reservedIPs: the Nodes' addresses, and on AWS the subnet's first three
 * and every address in use there. `onPlace` does the cloud side (on AWS: the secondary IP).
 */
export async function operatorWorld(options: {
  name: string;
  topologyLabel: string;
  nodeSelector: Record<string, string>;
  cidrs: OperatorCidr[];
  namespaces: string[];
  taken?: string[];
  onPlace?: (node: string, ip: string) => Promise<void>;
}): Promise<OperatorWorld> {
  const { objects, core } = kube();
  await objects.create({
    apiVersion: operatorApi,
    kind: "EgressIPAM",
    metadata: { name: options.name, finalizers: ["EgressIPAM_controller"] },
    spec: {
      cidrAssignments: options.cidrs.map((c) => ({
        CIDR: c.cidr,
        labelValue: c.labelValue,
        ...(c.reservedIPs ? { reservedIPs: c.reservedIPs } : {}),
      })),
      topologyLabel: options.topologyLabel,
      nodeSelector: { matchLabels: options.nodeSelector },
    },
  } as k8s.KubernetesObject);

  const taken = new Set(options.taken ?? []);
  const load = new Map<string, number>();
  const assigned: OperatorWorld["assigned"] = {};
  for (const ns of options.namespaces) {
    const ips: string[] = [];
    const nodes: string[] = [];
    for (const c of options.cidrs) {
      const [base, bits] = c.cidr.split("/") as [string, string];
      const size = 2 ** (32 - Number(bits));
      const network = v4(base);
      const reserved = new Set(c.reservedIPs ?? []);
      let ip: string | undefined;
      for (let n = network + 1; n < network + size - 1 && ip === undefined; n++)
        if (!taken.has(text4(n)) && !reserved.has(text4(n))) ip = text4(n);
      if (ip === undefined) throw new Error(`operator fixture: ${c.cidr} is full`);
      taken.add(ip);
      const node = [...c.nodes].sort(
        (a, b) => (load.get(a) ?? 0) - (load.get(b) ?? 0) || a.localeCompare(b),
      )[0]!;
      load.set(node, (load.get(node) ?? 0) + 1);
      ips.push(ip);
      nodes.push(node);
    }
    assigned[ns] = { ips, nodes };
    const namespace = await core.readNamespace({ name: ns });
    namespace.metadata!.annotations = {
      ...namespace.metadata!.annotations,
      [operatorAnnotation.ipam]: options.name,
      [operatorAnnotation.ips]: ips.join(","),
    };
    await core.replaceNamespace({ name: ns, body: namespace });
    await replaceWith(sdnApi, "NetNamespace", ns, (o) => (o.egressIPs = ips));
  }
  const byNode = new Map<string, string[]>();
  for (const { ips, nodes } of Object.values(assigned))
    nodes.forEach((node, i) => byNode.set(node, [...(byNode.get(node) ?? []), ips[i]!]));
  for (const [node, ips] of byNode) {
    for (const ip of ips) await options.onPlace?.(node, ip);
    await replaceWith(sdnApi, "HostSubnet", node, (o) => (o.egressIPs = ips));
  }

  return {
    name: options.name,
    assigned,
    async cleanup() {
      // Stopped operator: the finalizer is taken off by hand, as the migration guide says.
      await replaceWith(operatorApi, "EgressIPAM", options.name, (o) => {
        (o.metadata as k8s.V1ObjectMeta).finalizers = [];
      }).catch(() => undefined);
      await objects
        .delete({ apiVersion: operatorApi, kind: "EgressIPAM", metadata: { name: options.name } })
        .catch(() => undefined);
    },
  };
}

/**
 * The cluster `import` is tested on: three SDN Nodes (n1 and n3 in zone a, n2 in zone b; n1's
 * address `<net>.1`), the operator's two /28s of `net` (`.3` reserved) and its addresses for
 * namespaces t1 and t2, placed where it places them; `more` namespaces are made too, with none.
 */
export async function importedCluster<S extends string = never>(
  net: string,
  more: S[] = [],
): Promise<{ w: SdnWorld<"n1" | "n2" | "n3", "t1" | "t2" | S>; op: OperatorWorld }> {
  const w = await sdnWorld<"n1" | "n2" | "n3", "t1" | "t2" | S>(
    { n1: { zone: "a", internalIP: `${net}.1` }, n2: { zone: "b" }, n3: { zone: "a" } },
    ["t1", "t2", ...more],
  );
  const op = await operatorWorld({
    name: `ipam-${w.zone("x")}`,
    topologyLabel: "topology.kubernetes.io/zone",
    nodeSelector: w.selector,
    cidrs: [
      {
        cidr: `${net}.0/28`,
        labelValue: w.zone("a"),
        reservedIPs: [`${net}.3`],
        nodes: [w.node.n1, w.node.n3],
      },
      { cidr: `${net}.16/28`, labelValue: w.zone("b"), nodes: [w.node.n2] },
    ],
    namespaces: [w.ns.t1, w.ns.t2],
    taken: [`${net}.1`],
  });
  return { w, op };
}
