// An address the namespace already has from somebody else is refused at create, with the real
// engine and the real kube-apiserver: ovn (the namespace's EgressIP object lists it) and
// ocp-static (its NetNamespace does), written by hand as an unmanaged writer would. `adopt: true`
// takes it over; the assignment's own address after `pulumi state delete` (what an interrupted
// create leaves) is recognised by its owner record and not refused.
import type * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Harness } from "../support/harness";
import { kube, testKubeconfig } from "../support/kube";
import {
  hostSubnetIps,
  netNamespaceIps,
  sdnWorld,
  type SdnWorld,
  egressIpObjectIps,
} from "../support/sdn-world";
import { managedBy, ovnObjectName } from "../../provider/provisioners/kubernetes/ovn";

type Pkg = typeof import("../../provider/index");
const net = `10.25.${1 + Math.floor(Math.random() * 250)}`;

describe("an address the namespace already has from somebody else", () => {
  let w: SdnWorld<"n1" | "n2", "x" | "y">;
  const harnesses: Harness[] = [];
  const stack = (project: string) => {
    const h = Harness.create(project, { env: { KUBECONFIG: testKubeconfig() } });
    harnesses.push(h);
    return h;
  };
  const program =
    (h: Harness, kind: "ovn" | "ocp-static", namespace: string, ip: string, adopt?: boolean) => async () => {
      const { EgressIpAssignment } = h.pkg<Pkg>("pulumi-egress-ipam");
      const a = new EgressIpAssignment("egress", {
        ip,
        provisioner: { kind, nodeSelector: w.selector },
        failureDomain: w.zone("a"),
        namespace,
        ...(adopt === undefined ? {} : { adopt }),
      });
      return { host: a.host };
    };

  beforeAll(async () => {
    w = await sdnWorld({ n1: { zone: "a" }, n2: { zone: "a" } }, ["x", "y"]);
  });
  afterAll(async () => {
    for (const h of harnesses) h.dispose();
    await w?.cleanup();
  });

  it("ovn: refused naming the EgressIP object; adopt: true takes it over, and destroy takes it off", async () => {
    const ip = `${net}.10`;
    // The namespace's object, as this package names and labels it, with an address added by hand.
    await kube().objects.create({
      apiVersion: "k8s.ovn.org/v1",
      kind: "EgressIP",
      metadata: { name: ovnObjectName(w.ns.x), labels: managedBy },
      spec: {
        egressIPs: [ip],
        namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": w.ns.x } },
      },
    } as k8s.KubernetesObject);
    const h = stack("owners-ovn");
    await h.program(program(h, "ovn", w.ns.x, ip));
    await expect(h.up()).rejects.toThrow(
      new RegExp(
        `EgressIP ${ovnObjectName(w.ns.x)} \\(spec\\.egressIPs\\) already lists ${ip.replace(/\./g, "\\.")} \\(not recorded as written by this package\\).*adopt: true`,
      ),
    );
    expect(await egressIpObjectIps(w.ns.x)).toEqual([ip]);

    await h.program(program(h, "ovn", w.ns.x, ip, true));
    await h.up();
    expect(await egressIpObjectIps(w.ns.x)).toEqual([ip]);
    await h.destroy();
    expect(await egressIpObjectIps(w.ns.x)).toEqual([]);
  });

  it("ocp-static: refused naming the NetNamespace; its own address after a lost create is not refused", async () => {
    const ip = `${net}.20`;
    const { objects } = kube();
    const nn = await objects.read({
      apiVersion: "network.openshift.io/v1",
      kind: "NetNamespace",
      metadata: { name: w.ns.y },
    });
    await objects.replace({ ...nn, egressIPs: [ip] } as k8s.KubernetesObject); // by hand
    const h = stack("owners-sdn");
    await h.program(program(h, "ocp-static", w.ns.y, ip));
    await expect(h.up()).rejects.toThrow(
      new RegExp(
        `NetNamespace ${w.ns.y} already lists ${ip.replace(/\./g, "\\.")} \\(not recorded as written by this package\\)`,
      ),
    );
    expect([...(await hostSubnetIps(w.node.n1)), ...(await hostSubnetIps(w.node.n2))]).toEqual([]);

    // Taken off by hand: now the stack places it, recording itself on the NetNamespace.
    await objects.replace({
      ...(await objects.read({
        apiVersion: "network.openshift.io/v1",
        kind: "NetNamespace",
        metadata: { name: w.ns.y },
      })),
      egressIPs: [],
    } as k8s.KubernetesObject);
    await h.up();
    expect(await netNamespaceIps(w.ns.y)).toEqual([ip]);
    // The resource lost from state (as after an interrupted create): the next up recognises its own.
    const urn = (await h.resources()).find((r) => r.type.endsWith("EgressIpAssignment"))!.urn;
    await h.forget(urn);
    await h.up();
    expect(await netNamespaceIps(w.ns.y)).toEqual([ip]);
    await h.destroy();
    expect(await netNamespaceIps(w.ns.y)).toEqual([]);
  });
});
