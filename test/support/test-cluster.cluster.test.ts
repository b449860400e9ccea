// The test cluster is a real one: optimistic concurrency, name uniqueness, CRD schema validation,
// Leases, namespace deletion by the namespace controller, and no controller overriding test Nodes.
import type * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createHostSubnet,
  createNode,
  deleteClusterObjects,
  freshNamespace,
  kube,
  statusOf,
  uniqueName,
} from "./kube";

// The node lifecycle controller would mark a Node without kubelet heartbeats NotReady (Unknown)
// after its grace period (50 s by default); the test cluster must not run it.
const nodeLifecycleGraceMs = 50_000;

describe("test cluster", () => {
  const node = uniqueName("node");
  let nodeCreatedAt = 0;
  let ns = "";

  beforeAll(async () => {
    await createNode(node, { zone: "zone-a", internalIP: "10.0.0.10" });
    nodeCreatedAt = Date.now();
    ns = await freshNamespace("cluster");
  });
  afterAll(() => deleteClusterObjects("v1", "Node", [node]));

  it("refuses an update carrying a stale resourceVersion with 409 Conflict", async () => {
    const { core } = kube();
    const name = uniqueName("cm");
    const created = await core.createNamespacedConfigMap({
      namespace: ns,
      body: { metadata: { name }, data: { v: "1" } },
    });
    const fresh = await core.readNamespacedConfigMap({ name, namespace: ns });
    fresh.data = { v: "2" };
    await core.replaceNamespacedConfigMap({ name, namespace: ns, body: fresh });

    created.data = { v: "stale" }; // still carries the first resourceVersion
    expect(await statusOf(core.replaceNamespacedConfigMap({ name, namespace: ns, body: created }))).toBe(409);
    expect((await core.readNamespacedConfigMap({ name, namespace: ns })).data).toEqual({ v: "2" });
  });

  it("refuses a create of an existing name with 409 AlreadyExists", async () => {
    const { core } = kube();
    const body = { metadata: { name: uniqueName("cm") }, data: { owner: "first" } };
    await core.createNamespacedConfigMap({ namespace: ns, body });
    let reason = "";
    try {
      await core.createNamespacedConfigMap({ namespace: ns, body: { ...body, data: { owner: "second" } } });
    } catch (err) {
      const e = err as { code: number; body: string };
      expect(e.code).toBe(409);
      reason = JSON.parse(e.body).reason;
    }
    expect(reason).toBe("AlreadyExists");
    const kept = await core.readNamespacedConfigMap({ name: body.metadata.name, namespace: ns });
    expect(kept.data).toEqual({ owner: "first" });
  });

  it.each([["10.0.0.300"], ["not-an-ip"], ["10.0.0.1/24"]])(
    "rejects a HostSubnet whose egressIPs holds %s (CRD schema)",
    async (bad) => {
      const name = uniqueName("hs");
      const status = await statusOf(
        createHostSubnet(name, { hostIP: "10.0.0.11", subnet: "10.128.2.0/23", egressIPs: [bad] }),
      );
      expect(status).toBe(422);
    },
  );

  it("accepts a valid HostSubnet, NetNamespace and EgressIP", async () => {
    const { objects } = kube();
    const name = uniqueName("hs");
    try {
      await createHostSubnet(name, {
        hostIP: "10.0.0.12",
        subnet: "10.128.4.0/23",
        egressIPs: ["10.0.0.99"],
      });
      await objects.create({
        apiVersion: "network.openshift.io/v1",
        kind: "NetNamespace",
        metadata: { name },
        netname: name,
        netid: 4242,
        egressIPs: ["10.0.0.99"],
      } as k8s.KubernetesObject);
      await objects.create({
        apiVersion: "k8s.ovn.org/v1",
        kind: "EgressIP",
        metadata: { name },
        spec: { egressIPs: ["10.0.0.98"], namespaceSelector: { matchLabels: { team: "a" } } },
      } as k8s.KubernetesObject);
      const hs = (await objects.read({
        apiVersion: "network.openshift.io/v1",
        kind: "HostSubnet",
        metadata: { name },
      })) as k8s.KubernetesObject & { egressIPs?: string[] };
      expect(hs.egressIPs).toEqual(["10.0.0.99"]);
    } finally {
      await deleteClusterObjects("network.openshift.io/v1", "HostSubnet", [name]);
      await deleteClusterObjects("network.openshift.io/v1", "NetNamespace", [name]);
      await deleteClusterObjects("k8s.ovn.org/v1", "EgressIP", [name]);
    }
  });

  // Lease times are MicroTime (six fractional digits): the typed CoordinationV1Api serializes a Date
  // with three, which the API server refuses (400), so Leases go through the generic client.
  it("creates and renews a Lease, refusing a renewal from a stale read", async () => {
    const { objects } = kube();
    const micro = (d: Date) => d.toISOString().replace(/Z$/, "000Z");
    const now = new Date();
    const lease = (spec: Record<string, unknown>, from?: k8s.KubernetesObject) =>
      ({
        apiVersion: "coordination.k8s.io/v1",
        kind: "Lease",
        metadata: from?.metadata ?? { name: uniqueName("lease"), namespace: ns },
        spec,
      }) as k8s.KubernetesObject;
    const base = {
      holderIdentity: "a",
      leaseDurationSeconds: 10,
      acquireTime: micro(now),
      renewTime: micro(now),
    };
    const created = await objects.create(lease(base));
    const renewed = await objects.replace(
      lease({ ...base, renewTime: micro(new Date(now.getTime() + 1000)) }, created),
    );
    expect(renewed.metadata?.resourceVersion).not.toBe(created.metadata?.resourceVersion);
    // A second contender still holding the first read loses: its write carries a stale resourceVersion.
    expect(await statusOf(objects.replace(lease({ ...base, holderIdentity: "b" }, created)))).toBe(409);
    const header = {
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: { name: created.metadata!.name!, namespace: ns },
    };
    const current = (await objects.read(header)) as k8s.KubernetesObject & {
      spec: { holderIdentity: string };
    };
    expect(current.spec.holderIdentity).toBe("a");
  });

  it("removes a deleted namespace with objects in it within a minute", async () => {
    const { core } = kube();
    const doomed = await freshNamespace("doomed");
    for (let i = 0; i < 3; i++) {
      await core.createNamespacedConfigMap({ namespace: doomed, body: { metadata: { name: `cm-${i}` } } });
    }
    await core.deleteNamespace({ name: doomed });
    const deadline = Date.now() + 60_000;
    let status = 0;
    while (Date.now() < deadline && status !== 404) {
      status = await statusOf(core.readNamespace({ name: doomed }));
      if (status !== 404) await new Promise((r) => setTimeout(r, 500));
    }
    expect(status).toBe(404);
  }, 90_000);

  it("leaves a Node marked Ready alone past the node lifecycle grace period", async () => {
    const wait = nodeCreatedAt + nodeLifecycleGraceMs + 5_000 - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const status = (await kube().core.readNode({ name: node })).status;
    const ready = status?.conditions?.find((c) => c.type === "Ready");
    expect(ready?.status).toBe("True");
    expect(status?.addresses).toContainEqual({ type: "InternalIP", address: "10.0.0.10" });
  }, 120_000);
});
