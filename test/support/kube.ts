// The test cluster as tests use it: clients for its kubeconfig, fresh names and namespaces, and
// Nodes and HostSubnets made the way the kubelet and the OpenShift SDN master would make them.
import * as k8s from "@kubernetes/client-node";
import { randomBytes } from "node:crypto";

/** The kubeconfig of the running test cluster (set by the e2e project's global setup). */
export function testKubeconfig(): string {
  const file = process.env.EGRESS_IPAM_KUBECONFIG;
  if (!file)
    throw new Error("EGRESS_IPAM_KUBECONFIG is not set: run kube tests through vitest's e2e project");
  return file;
}

/** Clients of the test cluster, as `admin@test` (system:masters) or as another context. */
export function kube(context = "admin@test") {
  const config = new k8s.KubeConfig();
  config.loadFromFile(testKubeconfig());
  config.setCurrentContext(context);
  return {
    config,
    objects: k8s.KubernetesObjectApi.makeApiClient(config),
    core: config.makeApiClient(k8s.CoreV1Api),
    coordination: config.makeApiClient(k8s.CoordinationV1Api),
    rbac: config.makeApiClient(k8s.RbacAuthorizationV1Api),
  };
}

/** A DNS-label name unique to this test: `<prefix>-<8 hex>`. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${randomBytes(4).toString("hex")}`;
}

/** Creates a namespace with a unique name and returns the name. */
export async function freshNamespace(prefix = "t"): Promise<string> {
  const name = uniqueName(prefix);
  await kube().core.createNamespace({ body: { metadata: { name } } });
  return name;
}

/** What a test Node looks like. */
export interface NodeSpec {
  /** Value of `topology.kubernetes.io/zone`. */
  zone: string;
  /** Ready condition (default true). */
  ready?: boolean;
  /** More labels (e.g. a per-test label a nodeSelector matches). */
  labels?: Record<string, string>;
  /** Annotations, e.g. `cloud.network.openshift.io/egress-ipconfig`. */
  annotations?: Record<string, string>;
  /** InternalIP address. */
  internalIP?: string;
  /** `spec.providerID`, e.g. `aws:///us-east-1a/i-0123`. */
  providerID?: string;
  /** `spec.unschedulable`. */
  unschedulable?: boolean;
}

function readyCondition(ready: boolean): k8s.V1NodeCondition {
  const now = new Date();
  return {
    type: "Ready",
    status: ready ? "True" : "False",
    reason: ready ? "KubeletReady" : "KubeletNotReady",
    message: ready ? "kubelet is posting ready status (test)" : "marked NotReady by the test",
    lastHeartbeatTime: now,
    lastTransitionTime: now,
  };
}

/** Creates a Node with a zone label, a Ready condition and an InternalIP, as a kubelet would. */
export async function createNode(name: string, spec: NodeSpec): Promise<k8s.V1Node> {
  const { core } = kube();
  await core.createNode({
    body: {
      metadata: {
        name,
        labels: { "kubernetes.io/hostname": name, "topology.kubernetes.io/zone": spec.zone, ...spec.labels },
        annotations: spec.annotations,
      },
      spec: { providerID: spec.providerID, unschedulable: spec.unschedulable },
    },
  });
  const node = await core.readNode({ name });
  node.status = {
    conditions: [readyCondition(spec.ready ?? true)],
    addresses: [
      ...(spec.internalIP ? [{ type: "InternalIP", address: spec.internalIP }] : []),
      { type: "Hostname", address: name },
    ],
  };
  return core.replaceNodeStatus({ name, body: node });
}

/** Sets a Node's Ready condition (nothing in the test cluster changes it back). */
export async function setNodeReady(name: string, ready: boolean): Promise<void> {
  const { core } = kube();
  const node = await core.readNode({ name });
  const others = (node.status?.conditions ?? []).filter((c) => c.type !== "Ready");
  node.status = { ...node.status, conditions: [...others, readyCondition(ready)] };
  await core.replaceNodeStatus({ name, body: node });
}

/** Creates the HostSubnet the OpenShift SDN master makes for a node. */
export async function createHostSubnet(
  node: string,
  spec: { hostIP: string; subnet: string; egressIPs?: string[]; egressCIDRs?: string[] },
): Promise<k8s.KubernetesObject> {
  return kube().objects.create({
    apiVersion: "network.openshift.io/v1",
    kind: "HostSubnet",
    metadata: { name: node },
    host: node,
    ...spec,
  } as k8s.KubernetesObject);
}

/** Deletes cluster-scoped objects by kind and name, ignoring those already gone. */
export async function deleteClusterObjects(apiVersion: string, kind: string, names: string[]): Promise<void> {
  const { objects } = kube();
  await Promise.all(
    names.map((name) =>
      objects.delete({ apiVersion, kind, metadata: { name } }).catch((err: { code?: number }) => {
        if (err.code !== 404) throw err;
      }),
    ),
  );
}

/** The HTTP code of a failed client call (409, 422, 404, …), or 0 when it succeeded. */
export async function statusOf(call: Promise<unknown>): Promise<number> {
  try {
    await call;
    return 0;
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (typeof code !== "number") throw err;
    return code;
  }
}
