import { tryParseAddress } from "../../allocator/address";
import { canonicalAddress } from "../../allocator";
import { isNotFound, kubeFailure } from "../../kube/kube-errors";
import type { NamespaceAddress } from "../egress-ip-provisioner";
import { selectorMatches, type EgressView } from "./egress-view";
import type { NodePlanner } from "./node-planner";
import { forget, shared } from "../../core/process-registry";
import type { KubeClients } from "../../kube/kube-config";

// What a cluster already gives a namespace, whoever wrote it: read by `adopt: true` on an EgressIp
// so that its plan is exactly those addresses and hosts.

/** The Namespace annotations of redhat-cop's egressip-ipam-operator. */
export const operatorAnnotations = {
  /** Set by the user: the EgressIPAM that serves the namespace. */
  ipam: "egressip-ipam-operator.redhat-cop.io/egressipam",
  /** Set by the operator: the addresses it gave the namespace, comma-separated. */
  ips: "egressip-ipam-operator.redhat-cop.io/egressips",
} as const;

/** The addresses of a comma-separated annotation value, canonical (text that is no address is skipped). */
export function annotatedAddresses(value: string | undefined): string[] {
  return (value ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter((s) => tryParseAddress(s) !== undefined)
    .map((s) => canonicalAddress(s));
}

/** The parts of a Namespace the sources read. */
export interface NamespaceFacts {
  name: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

/** An address of a namespace, where it was seen and the node carrying it (when the cluster shows one). */
export interface SeenAddress {
  ip: string;
  source: string;
  node?: string;
}

/**
 * The namespace's addresses in `view`, each once, in the order the sources give them:
 * `NetNamespace.egressIPs` (OpenShift SDN; the node is the HostSubnet listing it), then every
 * EgressIP object whose namespaceSelector selects the namespace (OVN-Kubernetes; the node is its
 * `status.items`), then the egressip-ipam-operator's annotation. `source` names the first one.
 */
export function presentAddresses(view: EgressView, ns: NamespaceFacts): SeenAddress[] {
  const sdnNode = new Map<string, string>();
  for (const [node, h] of view.hostSubnets) for (const ip of h.egressIPs) sdnNode.set(ip, node);
  const ovnNode = new Map<string, string>();
  for (const e of view.egressIps) for (const s of e.status ?? []) ovnNode.set(s.egressIP, s.node);
  const found = new Map<string, SeenAddress>();
  const add = (ip: string, source: string, node: string | undefined) => {
    if (!found.has(ip)) found.set(ip, { ip, source, ...(node ? { node } : {}) });
  };
  for (const ip of view.netNamespaces.get(ns.name) ?? []) add(ip, `NetNamespace ${ns.name}`, sdnNode.get(ip));
  for (const e of view.egressIps) {
    if (!selectorMatches(e.namespaceSelector, ns.labels)) continue;
    for (const ip of e.ips) add(ip, `EgressIP ${e.name}`, ovnNode.get(ip));
  }
  const where = `annotation ${operatorAnnotations.ips} of Namespace ${ns.name}`;
  for (const ip of annotatedAddresses(ns.annotations[operatorAnnotations.ips]))
    add(ip, where, sdnNode.get(ip) ?? ovnNode.get(ip));
  return [...found.values()];
}

async function readFacts(planner: NodePlanner, namespace: string): Promise<NamespaceFacts | undefined> {
  try {
    const object = await planner.kube.core.readNamespace({ name: namespace });
    return {
      name: namespace,
      labels: object.metadata?.labels ?? {},
      annotations: object.metadata?.annotations ?? {},
    };
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw kubeFailure(`reading Namespace ${namespace}`, err, planner.kube);
  }
}

/**
 * The Namespace's name, labels and annotations, or undefined when it does not exist. Read once per
 * process, as the egress objects are: every plan of a deployment sees one picture.
 */
export function namespaceFactsOf(
  planner: NodePlanner,
  namespace: string,
): Promise<NamespaceFacts | undefined> {
  const { kube } = planner;
  const key = JSON.stringify([kube.server, kube.context, namespace]);
  return shared("namespace-facts", key, () => {
    const read = readFacts(planner, namespace);
    read.catch(() => forget("namespace-facts", key));
    return read;
  });
}

/** Where a kind sees a namespace's addresses: {@link presentAddresses} for OpenShift SDN and OVN. */
export type PresentAddresses = (
  view: EgressView,
  ns: NamespaceFacts,
  signal?: AbortSignal,
) => SeenAddress[] | Promise<SeenAddress[]>;

/**
 * The addresses the cluster gives `namespace` (`present`, by default {@link presentAddresses}),
 * with each node's failure domain as the provisioner's zone label and node selector see it;
 * `hostOf` names the host as the provisioner does (ocp-dynamic: the SDN master places them). A
 * namespace that does not exist has none.
 */
export async function namespaceAddressesOf(
  planner: NodePlanner,
  namespace: string,
  hostOf: (node: string) => string = (node) => node,
  signal?: AbortSignal,
  present: PresentAddresses = presentAddresses,
): Promise<NamespaceAddress[]> {
  const { nodes } = planner;
  const facts = await namespaceFactsOf(planner, namespace);
  if (!facts) return [];
  const [view, all] = await Promise.all([planner.egressView(), nodes.all(signal)]);
  const zoneOf = new Map(all.map((n) => [n.name, n.zone]));
  return (await present(view, facts, signal)).map((a) => {
    const zone = a.node === undefined ? undefined : zoneOf.get(a.node);
    return {
      ip: a.ip,
      source: a.source,
      ...(a.node === undefined ? {} : { host: hostOf(a.node), node: a.node }),
      ...(zone === undefined ? {} : { failureDomain: zone }),
    };
  });
}

/**
 * Every Namespace's name, labels and annotations: what `adopt` needs to tell whether a hand-made
 * object serves one namespace alone.
 */
export async function listNamespaceFacts(kube: KubeClients, why: string): Promise<NamespaceFacts[]> {
  const list = await kube.core.listNamespace().catch((err: unknown) => {
    throw kubeFailure(`listing Namespaces (${why})`, err, kube);
  });
  return list.items.map((n) => ({
    name: n.metadata?.name ?? "",
    labels: n.metadata?.labels ?? {},
    annotations: n.metadata?.annotations ?? {},
  }));
}

/** `no namespace`, `namespace a`, `namespaces a, b, c, d, e, …`: who an object serves, in messages. */
export function namedNamespaces(names: string[]): string {
  if (names.length === 0) return "no namespace";
  const shown = `${names.slice(0, 5).join(", ")}${names.length > 5 ? ", …" : ""}`;
  return names.length === 1 ? `namespace ${shown}` : `namespaces ${shown}`;
}
