// The clients of a kubeconfig context reuse their connections to the real kube-apiserver: the
// connections undici opens are counted on its diagnostics channel, for the same calls made through
// the clients kubeClients builds and through a KubeConfig as the library builds it.
import * as k8s from "@kubernetes/client-node";
import { channel } from "node:diagnostics_channel";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { kubeClients } from "../../provider/kube/kube-config";
import { reuseConnections } from "../../provider/kube/reused-connections";
import { freshNamespace, testKubeconfig, uniqueName } from "../support/kube";

describe("connections to the API server", () => {
  let opened = 0;
  const count = () => opened++;
  const connected = channel("undici:client:connected");
  beforeEach(() => {
    opened = 0;
    connected.subscribe(count);
  });
  afterEach(() => {
    connected.unsubscribe(count);
  });

  /** 30 calls, 10 at a time, then 10 one after another. */
  async function calls(core: k8s.CoreV1Api, namespace: string): Promise<void> {
    const prefix = uniqueName("c");
    const create = (i: number) =>
      core.createNamespacedConfigMap({ namespace, body: { metadata: { name: `${prefix}-${i}` } } });
    for (let wave = 0; wave < 3; wave++)
      await Promise.all(Array.from({ length: 10 }, (_, i) => create(wave * 10 + i)));
    for (let i = 0; i < 10; i++) await core.readNamespacedConfigMap({ namespace, name: `${prefix}-${i}` });
  }

  it("kubeClients: 40 calls (10 at a time, then one by one) open at most 10 connections", async () => {
    process.env.KUBECONFIG = testKubeconfig();
    const namespace = await freshNamespace("conn");
    opened = 0;
    await calls(kubeClients({ context: "admin@test" }).core, namespace);
    expect(opened).toBeGreaterThan(0); // the channel is seen
    expect(opened).toBeLessThanOrEqual(10);
  });

  it("a KubeConfig as the library builds it opens one per call; reuseConnections on it, at most 10", async () => {
    const namespace = await freshNamespace("conn");
    const config = new k8s.KubeConfig();
    config.loadFromFile(testKubeconfig());
    config.setCurrentContext("admin@test");
    opened = 0;
    await calls(config.makeApiClient(k8s.CoreV1Api), namespace);
    expect(opened).toBe(40);

    reuseConnections(config);
    opened = 0;
    await calls(config.makeApiClient(k8s.CoreV1Api), namespace);
    expect(opened).toBeLessThanOrEqual(10);
  });
});
