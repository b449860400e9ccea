// editObject against the real kube-apiserver: a write after another writer's change gets the
// server's 409 and is redone on a fresh read, so neither change is lost; the retry is bounded.
// The other writer is the test itself, writing between our read and our write (the change
// callback runs there).
import type * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isIpamError } from "../../provider/allocator";
import { kubeClients } from "../../provider/kube/kube-config";
import { editObject, type KubeObject } from "../../provider/kube/object-edit";
import { createHostSubnet, deleteClusterObjects, kube, testKubeconfig, uniqueName } from "../support/kube";

const net = "network.openshift.io/v1";

describe("editObject (real kube-apiserver)", () => {
  const name = uniqueName("edit");
  const ref = { apiVersion: net, kind: "HostSubnet", name };
  const read = async () =>
    (await kube().objects.read({ apiVersion: net, kind: "HostSubnet", metadata: { name } })) as KubeObject;
  const ips = async () => ((await read()).egressIPs as string[] | undefined) ?? [];
  /** Another writer: appends to egressIPs with a fresh read. */
  const foreignAdd = async (ip: string) => {
    const o = await read();
    await kube().objects.replace({
      ...o,
      egressIPs: [...((o.egressIPs as string[]) ?? []), ip],
    } as k8s.KubernetesObject);
  };
  const adding = (ip: string, current: KubeObject | undefined) => ({
    replace: { ...current!, egressIPs: [...((current?.egressIPs as string[] | undefined) ?? []), ip] },
  });

  beforeAll(async () => {
    process.env.KUBECONFIG = testKubeconfig();
    await createHostSubnet(name, { hostIP: "172.31.0.1", subnet: "10.131.0.0/23" });
  });
  afterAll(() => deleteClusterObjects(net, "HostSubnet", [name]));

  it("redoes a write that lost to another writer (409) on a fresh read: both addresses survive", async () => {
    const seen: string[][] = [];
    await editObject(kubeClients(), ref, "adding 10.50.0.1", async (current) => {
      seen.push([...((current?.egressIPs as string[] | undefined) ?? [])]);
      if (seen.length === 1) await foreignAdd("10.50.0.99"); // in between our read and our write, once
      return adding("10.50.0.1", current);
    });
    expect(seen).toEqual([[], ["10.50.0.99"]]);
    expect(await ips()).toEqual(["10.50.0.99", "10.50.0.1"]);
  });

  it("gives up after the retry budget with CONFLICT naming the object, having written nothing stale", async () => {
    let attempts = 0;
    const run = editObject(
      kubeClients(),
      ref,
      "adding 10.50.0.2",
      async (current) => {
        attempts++;
        await foreignAdd(`10.50.1.${attempts}`); // every time
        return adding("10.50.0.2", current);
      },
      { attempts: 3, baseMs: 1, maxMs: 5 },
    );
    const err = await run.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isIpamError(err, "CONFLICT")).toBe(true);
    expect((err as Error).message).toMatch(
      `adding 10.50.0.2 (HostSubnet ${name}): the object changed under 3 attempts`,
    );
    expect(attempts).toBe(3);
    expect(await ips()).toEqual(["10.50.0.99", "10.50.0.1", "10.50.1.1", "10.50.1.2", "10.50.1.3"]);
  });

  it("deletes only the version it read", async () => {
    let calls = 0;
    await editObject(kubeClients(), ref, "deleting", async (current) => {
      calls++;
      if (calls === 1) {
        await foreignAdd("10.50.2.1");
        return { delete: true };
      }
      // Read again after the 409: someone still uses it, so it stays.
      expect(current?.egressIPs).toContain("10.50.2.1");
      return undefined;
    });
    expect(calls).toBe(2);
    expect(await ips()).toContain("10.50.2.1");
  });
});
