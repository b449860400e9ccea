import { describe, expect, it } from "vitest";
import {
  adoptedSpec,
  namespacePolicyName,
  policyWrite,
} from "../../../../provider/provisioners/kubernetes/cilium/cilium-adopt";
import type { KubeObject } from "../../../../provider/kube/object-edit";

const config = { kind: "cilium" as const };
const pinned = (ip: string, node: string) => ({
  nodeSelector: { matchLabels: { "kubernetes.io/hostname": node } },
  egressIP: ip,
});
const handMade = {
  selectors: [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "team-a" } } }],
  destinationCIDRs: ["0.0.0.0/0"],
  egressGateway: pinned("10.0.0.5", "n1"),
};
const grouped = { nodeSelector: { matchLabels: { "egress-gw": "true" } }, egressIP: "10.0.0.6" };
const managed = { "app.kubernetes.io/managed-by": "pulumi-egress-ipam" };

describe("adoptedSpec: an adopted policy keeps what it had", () => {
  it.each<[string, Record<string, unknown>, { ip: string; node?: string }[], Record<string, unknown>]>([
    [
      "the same gateways: the spec as it was (no egressGateways added)",
      handMade,
      [{ ip: "10.0.0.5", node: "n1" }],
      handMade,
    ],
    [
      "a new address: egressGateways lists both, egressGateway the first as written",
      handMade,
      [
        { ip: "10.0.0.5", node: "n1" },
        { ip: "10.0.0.9", node: "n2" },
      ],
      {
        ...handMade,
        egressGateway: pinned("10.0.0.5", "n1"),
        egressGateways: [pinned("10.0.0.5", "n1"), pinned("10.0.0.9", "n2")],
      },
    ],
    [
      "a gateway on a group of Nodes pinned by hostname; the other entry as written",
      { ...handMade, egressGateways: [pinned("10.0.0.5", "n1"), grouped] },
      [
        { ip: "10.0.0.5", node: "n1" },
        { ip: "10.0.0.6", node: "n3" },
      ],
      {
        ...handMade,
        egressGateway: pinned("10.0.0.5", "n1"),
        egressGateways: [pinned("10.0.0.5", "n1"), pinned("10.0.0.6", "n3")],
      },
    ],
    [
      "a group gateway not re-pinned stays as written",
      { ...handMade, egressGateways: [pinned("10.0.0.5", "n1"), grouped] },
      [{ ip: "10.0.0.5", node: "n1" }, { ip: "10.0.0.6" }],
      { ...handMade, egressGateways: [pinned("10.0.0.5", "n1"), grouped] },
    ],
    [
      "excludedCIDRs: [] is no excluded",
      { ...handMade, excludedCIDRs: [] },
      [{ ip: "10.0.0.5", node: "n1" }],
      { ...handMade, excludedCIDRs: [] },
    ],
  ])("%s", (_what, spec, gateways, want) => {
    expect(adoptedSpec(spec, gateways, config)).toEqual(want);
  });

  it("destinations and excluded are the provisioner's once they differ (changed after adoption)", () => {
    const spec = adoptedSpec(
      { ...handMade, excludedCIDRs: ["10.0.0.0/8"] },
      [{ ip: "10.0.0.5", node: "n1" }],
      {
        ...config,
        destinations: ["1.2.3.0/24"],
      },
    );
    expect(spec).toEqual({ ...handMade, destinationCIDRs: ["1.2.3.0/24"] });
  });
});

describe("policyWrite", () => {
  const object = (labels: Record<string, string> = {}, annotations: Record<string, string> = {}) =>
    ({
      apiVersion: "cilium.io/v2",
      kind: "CiliumEgressGatewayPolicy",
      metadata: { name: "hand-made", resourceVersion: "7", labels: { team: "a", ...labels }, annotations },
      spec: handMade,
    }) as KubeObject;
  const record = JSON.stringify({ "10.0.0.5": ["stack urn"] });

  it("takes a policy over with labels and annotations added, everything else as it was", () => {
    const edit = policyWrite(
      object({}, { note: "by hand" }),
      { name: "hand-made", takeOver: true },
      "team-a",
      [{ ip: "10.0.0.5", node: "n1" }],
      record,
      config,
      "adopting",
    );
    expect(edit).toEqual({
      replace: {
        ...object(),
        metadata: {
          name: "hand-made",
          resourceVersion: "7",
          labels: { team: "a", ...managed },
          annotations: { note: "by hand", "egress-ipam/owners": record, "egress-ipam/namespace": "team-a" },
        },
      },
    });
  });

  it("an own policy is patched to the spec the kind writes; a missing one is created under its own name", () => {
    const own = object(managed);
    const edit = policyWrite(
      own,
      { name: "egress-ipam-team-a", takeOver: false },
      "team-a",
      [{ ip: "10.0.0.5", node: "n1" }],
      record,
      config,
      "x",
    );
    expect(edit).toMatchObject({
      mergePatch: {
        metadata: { labels: managed, annotations: { "egress-ipam/owners": record } },
        spec: { selectors: [{ podSelector: { matchLabels: { "io.kubernetes.pod.namespace": "team-a" } } }] },
      },
    });
    expect(
      policyWrite(
        undefined,
        { name: "egress-ipam-team-a", takeOver: false },
        "team-a",
        [{ ip: "10.0.0.5", node: "n1" }],
        null,
        config,
        "x",
      ),
    ).toMatchObject({ create: { metadata: { name: "egress-ipam-team-a", labels: managed } } });
    expect(() =>
      policyWrite(
        undefined,
        { name: "hand-made", takeOver: true },
        "team-a",
        [{ ip: "10.0.0.5", node: "n1" }],
        null,
        config,
        "adopting",
      ),
    ).toThrow(/\[?NOT_FOUND|was deleted meanwhile/);
  });

  it("namespacePolicyName: the managed policy annotated with the namespace, else egress-ipam-<namespace>", () => {
    const policies = [
      { name: "hand-made", labels: managed, annotations: { "egress-ipam/namespace": "team-a" } },
      { name: "unlabelled", labels: {}, annotations: { "egress-ipam/namespace": "team-b" } },
    ];
    expect(namespacePolicyName(policies, "team-a")).toBe("hand-made");
    expect(namespacePolicyName(policies, "team-b")).toBe("egress-ipam-team-b");
  });
});
