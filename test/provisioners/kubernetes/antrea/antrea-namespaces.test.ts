import { describe, expect, it } from "vitest";
import {
  adoptedEgress,
  antreaAddresses,
  readAntreaEgressFacts,
  servesNamespace,
} from "../../../../provider/provisioners/kubernetes/antrea/antrea-namespaces";
import type { KubeObject } from "../../../../provider/kube/object-edit";

const ns = {
  name: "team-a",
  labels: { "kubernetes.io/metadata.name": "team-a", tier: "gold" },
  annotations: {},
};
const egress = (
  name: string,
  spec: Record<string, unknown>,
  node?: string,
  metadata: { labels?: Record<string, string>; annotations?: Record<string, string> } = {},
) =>
  readAntreaEgressFacts({
    apiVersion: "crd.antrea.io/v1beta1",
    kind: "Egress",
    metadata: { name, ...metadata },
    spec,
    ...(node ? { status: { egressNode: node } } : {}),
  } as KubeObject);
const onNamespace = (name: string) => ({
  namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": name } },
});

describe("servesNamespace: an Egress that applies to every Pod of the namespace", () => {
  it.each<[string, Record<string, unknown>, boolean]>([
    ["namespaceSelector by name", onNamespace("team-a"), true],
    ["namespaceSelector of another namespace", onNamespace("team-b"), false],
    ["namespaceSelector on another label", { namespaceSelector: { matchLabels: { tier: "gold" } } }, true],
    ["namespaceSelector with an empty podSelector", { ...onNamespace("team-a"), podSelector: {} }, true],
    [
      "namespaceSelector with Pod labels: some Pods only",
      { ...onNamespace("team-a"), podSelector: { matchLabels: { app: "web" } } },
      false,
    ],
    [
      "podSelector alone with labels: some Pods of any namespace",
      { podSelector: { matchLabels: { app: "x" } } },
      false,
    ],
    ["an empty podSelector alone: every Pod of the cluster", { podSelector: {} }, true],
    ["empty appliedTo: nothing", {}, false],
  ])("%s → %s", (_what, appliedTo, serves) => {
    expect(servesNamespace(egress("e", { appliedTo, egressIP: "10.0.0.5" }), ns)).toBe(serves);
  });
});

describe("readAntreaEgressFacts and antreaAddresses", () => {
  const egresses = [
    egress(
      "hand-made",
      { appliedTo: onNamespace("team-a"), egressIP: "FD00::0005", externalIPPool: "p" },
      "n1",
    ),
    egress("pending", { appliedTo: onNamespace("team-a"), egressIP: "10.0.0.6" }),
    egress("dual", { appliedTo: onNamespace("team-a"), egressIPs: ["10.0.0.7", "fd00::7", ""] }, "n2"),
    egress("web", {
      appliedTo: { ...onNamespace("team-a"), podSelector: { matchLabels: { app: "web" } } },
      egressIP: "10.0.0.8",
    }),
    egress("from-pool", { appliedTo: onNamespace("team-a"), externalIPPool: "p" }),
  ];

  it("reads egressIP or egressIPs (canonical, empty entries left out), externalIPPool and status.egressNode", () => {
    expect(egresses[0]).toMatchObject({ ips: ["fd00::5"], listed: false, externalIPPool: "p", node: "n1" });
    expect(egresses[2]).toMatchObject({ ips: ["10.0.0.7", "fd00::7"], listed: true });
    expect(egresses[4]!.ips).toEqual([]);
  });

  it("gives the namespace every address of an Egress that serves it whole; the Node only for egressIP", () => {
    expect(antreaAddresses(egresses, ns)).toEqual([
      { ip: "fd00::5", source: "Egress hand-made", node: "n1" },
      { ip: "10.0.0.6", source: "Egress pending" },
      { ip: "10.0.0.7", source: "Egress dual" },
      { ip: "fd00::7", source: "Egress dual" },
    ]);
  });

  it("adoptedEgress finds the managed Egress annotated with the namespace that has the address", () => {
    const managed = { "app.kubernetes.io/managed-by": "pulumi-egress-ipam" };
    const taken = egress("hand-made", { appliedTo: onNamespace("team-a"), egressIP: "10.0.0.5" }, "n1", {
      labels: managed,
      annotations: { "egress-ipam/namespace": "team-a" },
    });
    const unlabelled = egress("other", { egressIP: "10.0.0.6" }, undefined, {
      annotations: { "egress-ipam/namespace": "team-a" },
    });
    expect(adoptedEgress([taken, unlabelled], "team-a", "10.0.0.5")).toBe("hand-made");
    expect(adoptedEgress([taken, unlabelled], "team-a", "10.0.0.6")).toBeUndefined();
    expect(adoptedEgress([taken], "team-b", "10.0.0.5")).toBeUndefined();
  });
});
