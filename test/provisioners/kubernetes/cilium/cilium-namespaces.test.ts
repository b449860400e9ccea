import { describe, expect, it } from "vitest";
import {
  ciliumAddresses,
  gatewayNode,
  needsNodes,
  readCiliumPolicyFacts,
  selectsNamespace,
  type CiliumSelector,
} from "../../../../provider/provisioners/kubernetes/cilium/cilium-namespaces";
import type { KubeObject } from "../../../../provider/kube/object-edit";
import type { LabelledNode } from "../../../../provider/provisioners/kubernetes/cilium/cilium-namespaces";

const ns = {
  name: "team-a",
  labels: { "kubernetes.io/metadata.name": "team-a", tier: "gold" },
  annotations: {},
};
const byName = (name: string) => ({ matchLabels: { "io.kubernetes.pod.namespace": name } });

describe("selectsNamespace: a selector entry that takes every Pod of the namespace", () => {
  it.each<[string, CiliumSelector, boolean]>([
    ["podSelector on io.kubernetes.pod.namespace", { podSelector: byName("team-a") }, true],
    ["the same for another namespace", { podSelector: byName("team-b") }, false],
    [
      "namespaceSelector on kubernetes.io/metadata.name",
      { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "team-a" } } },
      true,
    ],
    ["namespaceSelector on another label", { namespaceSelector: { matchLabels: { tier: "gold" } } }, true],
    [
      "namespaceSelector that does not match",
      { namespaceSelector: { matchLabels: { tier: "iron" } } },
      false,
    ],
    ["an empty namespaceSelector: every namespace", { namespaceSelector: {} }, true],
    ["an empty podSelector: every Pod of the cluster", { podSelector: {} }, true],
    [
      "a Pod label besides the namespace: some Pods only",
      { podSelector: { matchLabels: { "io.kubernetes.pod.namespace": "team-a", app: "web" } } },
      false,
    ],
    [
      "matchExpressions on the namespace",
      {
        podSelector: {
          matchExpressions: [
            { key: "io.kubernetes.pod.namespace", operator: "In", values: ["team-a", "team-b"] },
          ],
        },
      },
      true,
    ],
    [
      "Cilium's namespace-label Pod labels",
      { podSelector: { matchLabels: { "io.cilium.k8s.namespace.labels.tier": "gold" } } },
      true,
    ],
    [
      "namespaceSelector with a Pod label selector: some Pods only",
      { namespaceSelector: { matchLabels: { tier: "gold" } }, podSelector: { matchLabels: { app: "web" } } },
      false,
    ],
    [
      "a nodeSelector narrows to Pods on some Nodes",
      { podSelector: byName("team-a"), nodeSelector: { matchLabels: { pool: "a" } } },
      false,
    ],
    ["neither selector (Cilium rejects it)", {}, false],
  ])("%s → %s", (_what, entry, selects) => {
    expect(selectsNamespace(entry, ns)).toBe(selects);
  });
});

const nodes: LabelledNode[] = [
  { name: "n3", labels: { "egress-gw": "true" } },
  { name: "n1", labels: { "egress-gw": "true" } },
  { name: "n2", labels: {} },
];

describe("gatewayNode: the Node Cilium sends a gateway's traffic through", () => {
  it.each<[string, Record<string, string>, LabelledNode[], string | undefined]>([
    ["pinned by hostname (no Node list needed)", { "kubernetes.io/hostname": "n9" }, [], "n9"],
    ["the first by name of those matching", { "egress-gw": "true" }, nodes, "n1"],
    ["none matching", { "egress-gw": "false" }, nodes, undefined],
  ])("%s", (_what, matchLabels, list, node) => {
    expect(gatewayNode({ ip: "10.0.0.5", nodeSelector: { matchLabels } }, list)).toBe(node);
  });
});

const policy = (name: string, spec: Record<string, unknown>, labels: Record<string, string> = {}) =>
  readCiliumPolicyFacts({
    apiVersion: "cilium.io/v2",
    kind: "CiliumEgressGatewayPolicy",
    metadata: { name, labels },
    spec,
  } as KubeObject);
const gateway = (ip: string, matchLabels: Record<string, string>) => ({
  egressIP: ip,
  nodeSelector: { matchLabels },
});

describe("readCiliumPolicyFacts", () => {
  it("reads egressGateways when it has entries, else egressGateway; addresses canonical; excluded [] when absent", () => {
    const p = policy("p", {
      selectors: [{ podSelector: byName("team-a") }],
      destinationCIDRs: ["0.0.0.0/0"],
      egressGateway: gateway("10.0.0.9", { "kubernetes.io/hostname": "n1" }),
      egressGateways: [
        gateway("FD00:0::0010", { "kubernetes.io/hostname": "n1" }),
        { nodeSelector: { matchLabels: { x: "y" } }, interface: "eth1" },
      ],
    });
    expect(p.destinations).toEqual(["0.0.0.0/0"]);
    expect(p.excluded).toEqual([]);
    expect(p.gateways).toEqual([
      { ip: "fd00::10", nodeSelector: { matchLabels: { "kubernetes.io/hostname": "n1" } } },
      { ip: "", nodeSelector: { matchLabels: { x: "y" } } },
    ]);
    const single = policy("q", { egressGateway: gateway("10.0.0.9", { a: "b" }), egressGateways: [] });
    expect(single.gateways).toEqual([{ ip: "10.0.0.9", nodeSelector: { matchLabels: { a: "b" } } }]);
  });
});

describe("ciliumAddresses: what the cluster's policies give a namespace", () => {
  const policies = [
    policy("hand-made", {
      selectors: [{ podSelector: { matchLabels: { app: "x" } } }, { podSelector: byName("team-a") }],
      destinationCIDRs: ["0.0.0.0/0"],
      egressGateways: [
        gateway("10.0.0.5", { "kubernetes.io/hostname": "n2" }),
        gateway("10.0.0.6", { "egress-gw": "true" }),
        { nodeSelector: { matchLabels: {} }, interface: "eth1" },
      ],
    }),
    policy("web-only", {
      selectors: [{ podSelector: { matchLabels: { "io.kubernetes.pod.namespace": "team-a", app: "web" } } }],
      egressGateway: gateway("10.0.0.7", { "kubernetes.io/hostname": "n1" }),
    }),
    policy("other", {
      selectors: [{ podSelector: byName("team-b") }],
      egressGateway: gateway("10.0.0.8", { "kubernetes.io/hostname": "n1" }),
    }),
  ];

  it("every gateway address of a policy that selects the whole namespace, with its Node; interface gateways and pod selections left out", () => {
    expect(ciliumAddresses(policies, ns, nodes)).toEqual([
      { ip: "10.0.0.5", source: "CiliumEgressGatewayPolicy hand-made", node: "n2" },
      { ip: "10.0.0.6", source: "CiliumEgressGatewayPolicy hand-made", node: "n1" },
    ]);
  });

  it("asks for the Node list only when a gateway of the namespace is not pinned by hostname", () => {
    expect(needsNodes(policies, ns)).toBe(true);
    expect(needsNodes(policies, { ...ns, name: "team-b", labels: {} })).toBe(false);
    expect(ciliumAddresses(policies, ns, [])[1]).toEqual({
      ip: "10.0.0.6",
      source: "CiliumEgressGatewayPolicy hand-made",
    });
  });
});
