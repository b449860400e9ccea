import { describe, expect, it } from "vitest";
import type { CiliumPolicyFacts } from "../../../../provider/provisioners/kubernetes/cilium/cilium-namespaces";
import {
  refuseHandMadePolicy,
  refuseSelectionOverlap,
} from "../../../../provider/provisioners/kubernetes/cilium/cilium-selections";

const ns = "team-a";
const policy = (
  name: string,
  selectors: CiliumPolicyFacts["selectors"],
  ip = "10.0.0.5",
  managed = true,
): CiliumPolicyFacts => ({
  name,
  labels: managed ? { "app.kubernetes.io/managed-by": "pulumi-egress-ipam" } : {},
  annotations: managed ? { "egress-ipam/owners": JSON.stringify({ [ip]: ["stack-1 urn:x"] }) } : {},
  selectors,
  destinations: ["0.0.0.0/0"],
  excluded: [],
  gateways: [{ ip }],
});
const pods = (labels: Record<string, string>) => [
  { podSelector: { matchLabels: { "io.kubernetes.pod.namespace": ns, ...labels } } },
];

describe("refuseSelectionOverlap", () => {
  it.each<[string, CiliumPolicyFacts, 4 | 6, Record<string, string> | undefined, RegExp | undefined]>([
    [
      "a selector beside the namespace-wide policy",
      policy("wide", pods({})),
      4,
      { app: "web" },
      /CiliumEgressGatewayPolicy wide already sends every pod of namespace team-a out through IPv4 gateways \(its gateways are stack-1 urn:x's\)/,
    ],
    [
      "namespace-wide beside a selector's policy",
      policy("web", pods({ app: "web" })),
      4,
      undefined,
      /already sends pods \{"app":"web"\}/,
    ],
    [
      "a superset selector",
      policy("web", pods({ app: "web" })),
      4,
      { app: "web", tier: "front" },
      /already sends pods/,
    ],
    ["a selector differing in a value", policy("web", pods({ app: "web" })), 4, { app: "api" }, undefined],
    [
      "two namespace-wide policies (adopt takes a hand-made one)",
      policy("hand-made", pods({}), "10.0.0.5", false),
      4,
      undefined,
      undefined,
    ],
    [
      "another family's policy (other destinations)",
      policy("wide6", pods({}), "fd00::5"),
      4,
      { app: "web" },
      undefined,
    ],
    [
      "a policy selecting pods of every namespace by label",
      policy("other", [{ podSelector: { matchLabels: { app: "web" } } }]),
      4,
      { app: "web" },
      undefined,
    ],
    [
      "this selection's own policy",
      policy("own", pods({ app: "web" })),
      4,
      { app: "web", tier: "x" },
      undefined,
    ],
  ])("%s", async (_name, p, family, podSelector, refused) => {
    const call = refuseSelectionOverlap([p], ns, "own", family, podSelector, {
      holder: "EgressIp web",
      holderOwners: () => Promise.resolve(new Set(["stack-1 urn:web-b"])),
    });
    if (refused) await expect(call).rejects.toThrow(refused);
    else await expect(call).resolves.toBeUndefined();
  });

  // A podSelector added to (or removed from) an EgressIp moves every one of its assignments: the
  // policy holding their gateways alone is the selection they leave, not another's.
  const ofHolder = (records: Record<string, string[]>, selectors = pods({})): CiliumPolicyFacts => ({
    ...policy("wide", selectors),
    annotations: { "egress-ipam/owners": JSON.stringify(records) },
    gateways: Object.keys(records).map((ip) => ({ ip })),
  });
  it.each<[string, CiliumPolicyFacts, Record<string, string> | undefined, boolean]>([
    [
      "its gateways, of this assignment and its sibling",
      ofHolder({ "10.0.0.5": ["a"], "10.0.0.6": ["b"] }),
      { app: "web" },
      false,
    ],
    [
      "its gateways, a selection removed",
      ofHolder({ "10.0.0.5": ["a"] }, pods({ app: "web" })),
      undefined,
      false,
    ],
    [
      "one gateway also recorded for another stack",
      ofHolder({ "10.0.0.5": ["a", "other"] }),
      { app: "web" },
      true,
    ],
    [
      "one gateway of another holder",
      ofHolder({ "10.0.0.5": ["a"], "10.0.0.6": ["other"] }),
      { app: "web" },
      true,
    ],
    ["one gateway nobody recorded", ofHolder({ "10.0.0.5": ["a"], "10.0.0.6": [] }), { app: "web" }, true],
  ])("a policy holding %s", async (_name, p, podSelector, refused) => {
    const call = refuseSelectionOverlap([p], ns, "own", 4, podSelector, {
      holder: "EgressIp web",
      holderOwners: () => Promise.resolve(new Set(["a", "b"])),
    });
    if (refused)
      await expect(call).rejects.toThrow(/SCOPE_CONFLICT|CiliumEgressGatewayPolicy wide already sends/);
    else await expect(call).resolves.toBeUndefined();
  });
});

describe("refuseHandMadePolicy", () => {
  const facts = { name: ns, labels: { "kubernetes.io/metadata.name": ns }, annotations: {} };
  const byName = [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": ns } } }];
  it.each<
    [string, CiliumPolicyFacts, 4 | 6, Record<string, string> | undefined, boolean, RegExp | undefined]
  >([
    [
      "namespace-wide beside one selecting the namespace by namespaceSelector",
      policy("hand", byName, "10.0.0.5", false),
      4,
      undefined,
      false,
      /^EgressIp web: CiliumEgressGatewayPolicy hand, not made by pulumi-egress-ipam, already serves every pod of namespace team-a, .*set adopt: true on the EgressIp to take it over/,
    ],
    [
      "a pod selector beside one on io.kubernetes.pod.namespace (adopt or not)",
      policy("hand", pods({}), "10.0.0.5", false),
      4,
      { app: "web" },
      true,
      /CiliumEgressGatewayPolicy hand, not made by pulumi-egress-ipam, .*delete CiliumEgressGatewayPolicy hand or narrow what it selects/,
    ],
    [
      "with adopt, which takes it over",
      policy("hand", byName, "10.0.0.5", false),
      4,
      undefined,
      true,
      undefined,
    ],
    ["one of this package (owner records decide)", policy("ours", byName), 4, undefined, false, undefined],
    ["one of the other family", policy("hand", byName, "fd00::5", false), 4, undefined, false, undefined],
    [
      "one sending some Pods only",
      policy("hand", pods({ app: "api" }), "10.0.0.5", false),
      4,
      undefined,
      false,
      undefined,
    ],
  ])("%s", (_name, p, family, podSelector, adopting, refused) => {
    const call = () => refuseHandMadePolicy([p], facts, family, podSelector, adopting, "EgressIp web");
    if (refused) expect(call).toThrow(refused);
    else expect(call).not.toThrow();
  });
});
