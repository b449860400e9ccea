import { describe, expect, it } from "vitest";
import type { AntreaEgressFacts } from "../../../../provider/provisioners/kubernetes/antrea/antrea-namespaces";
import {
  claimedServings,
  namespaceEgresses,
  refuseAntreaSharing,
  refuseHandMadeEgress,
  type AntreaServing,
} from "../../../../provider/provisioners/kubernetes/antrea/antrea-selections";
import { placementRequest } from "../../../../provider/provisioners/placement-request";

const ns = "team-a";
const serving = (families: (4 | 6)[], matchLabels?: Record<string, string>): AntreaServing => ({
  what: "Egress other",
  ...(matchLabels ? { selector: { matchLabels } } : {}),
  families,
});
// An Egress of this package's holding 10.0.0.9, recorded for `owners`.
const recordedFor = (...owners: string[]): Pick<AntreaServing, "records"> => ({
  records: { ips: ["10.0.0.9"], owners: { "10.0.0.9": owners } },
});

describe("refuseAntreaSharing", () => {
  it.each<[string, string, Record<string, string> | undefined, AntreaServing, RegExp | undefined]>([
    [
      "the namespace's addresses side by side (one per domain)",
      "10.0.0.6",
      undefined,
      serving([4]),
      undefined,
    ],
    [
      "an IPv6 address beside an IPv4 one for the same Pods",
      "fd00::6",
      undefined,
      serving([4]),
      /gives fd00::6, an IPv6 address, to the Pods of namespace team-a that Egress other gives an IPv4 address/,
    ],
    [
      "an IPv4 address beside an IPv6 one for some of them",
      "10.0.0.6",
      { app: "web" },
      serving([6]),
      /to some of the Pods of namespace team-a that Egress other gives an IPv6 address \(it serves every pod\)/,
    ],
    [
      "another family for Pods it cannot take",
      "fd00::6",
      { app: "web" },
      serving([4], { app: "api" }),
      undefined,
    ],
    [
      "a selector beside the namespace-wide Egress",
      "10.0.0.6",
      { app: "web" },
      serving([4]),
      /Egress other already serves every pod of namespace team-a, and this EgressIp's podSelector \{"app":"web"\}/,
    ],
    [
      "namespace-wide beside a selector's Egress",
      "10.0.0.6",
      undefined,
      serving([4], { app: "web" }),
      /already serves pods \{"app":"web"\}/,
    ],
    [
      "the same selector (addresses side by side)",
      "10.0.0.6",
      { app: "web" },
      serving([4], { app: "web" }),
      undefined,
    ],
    ["a selector differing in a value", "10.0.0.6", { app: "web" }, serving([4], { app: "api" }), undefined],
    // The holder's own Egress (a podSelector added or removed moves all of its addresses), but not
    // one also recorded for somebody else, nor the other family of the same Pods.
    [
      "a selector beside its own namespace-wide Egress",
      "10.0.0.6",
      { app: "web" },
      { ...serving([4]), ...recordedFor("a", "b") },
      undefined,
    ],
    [
      "namespace-wide beside its own selector's Egress",
      "10.0.0.6",
      undefined,
      { ...serving([4], { app: "web" }), ...recordedFor("b") },
      undefined,
    ],
    [
      "a selector beside an Egress also another's",
      "10.0.0.6",
      { app: "web" },
      { ...serving([4]), ...recordedFor("a", "c") },
      /Egress other already serves every pod/,
    ],
    [
      "a selector beside an Egress of which one address is not recorded",
      "10.0.0.6",
      { app: "web" },
      { ...serving([4]), records: { ips: ["10.0.0.9", "10.0.0.10"], owners: { "10.0.0.9": ["a"] } } },
      /Egress other already serves every pod/,
    ],
    [
      "its own Egress of the other family",
      "fd00::6",
      { app: "web" },
      { ...serving([4]), ...recordedFor("a") },
      /Egress other gives an IPv4 address/,
    ],
  ])("%s", (_name, ip, podSelector, other, refused) => {
    const mine = new Set(["a", "b"]);
    const call = () =>
      refuseAntreaSharing(placementRequest(ip, "EgressIp web"), ns, podSelector, [other], mine);
    if (refused) expect(call).toThrow(refused);
    else expect(call).not.toThrow();
  });
});

describe("namespaceEgresses and claimedServings", () => {
  const egress = (name: string, ips: string[], appliedTo: Partial<AntreaEgressFacts>): AntreaEgressFacts => ({
    name,
    labels: {},
    annotations: {},
    ips,
    listed: false,
    ...appliedTo,
  });
  const byName = { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": ns } } };

  it("takes the Egresses applied to the namespace by name, but the one of the address itself", () => {
    const got = namespaceEgresses(
      [
        egress("own", ["10.0.0.5"], byName),
        egress("wide", ["10.0.0.6"], byName),
        egress("web", ["fd00::6"], { ...byName, podSelector: { matchLabels: { app: "web" } } }),
        egress("cluster-wide", ["10.0.0.7"], { podSelector: { matchLabels: { app: "web" } } }),
        egress("other-namespace", ["10.0.0.8"], {
          namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "team-b" } },
        }),
      ],
      ns,
      "10.0.0.5",
    );
    expect(got).toEqual([
      { what: "Egress wide", families: [4] },
      { what: "Egress web", selector: { matchLabels: { app: "web" } }, families: [6] },
    ]);
  });

  it("carries the owner records of an Egress of this package's, and none of one made by hand", () => {
    const managed = { "app.kubernetes.io/managed-by": "pulumi-egress-ipam" };
    const recorded = (
      ip: string,
      owners: Record<string, string[]>,
      labels: Record<string, string> = managed,
    ) => ({
      ...egress("e", [ip], byName),
      labels,
      annotations: { "egress-ipam/owners": JSON.stringify(owners) },
    });
    const got = namespaceEgresses(
      [
        recorded("10.0.0.6", { "10.0.0.6": ["s1 urn:a"] }),
        recorded("10.0.0.7", { "10.0.0.9": ["s1 urn:a"] }),
        recorded("10.0.0.8", { "10.0.0.8": ["s1 urn:a"] }, {}),
      ],
      ns,
      "10.0.0.5",
    );
    expect(got.map((s) => s.records)).toEqual([
      { ips: ["10.0.0.6"], owners: { "10.0.0.6": ["s1 urn:a"] } },
      { ips: ["10.0.0.7"], owners: { "10.0.0.9": ["s1 urn:a"] } },
      undefined,
    ]);
  });

  it("names a claim after its EgressIp", () => {
    expect(claimedServings([{ holder: "EgressIp web", podSelector: { app: "web" }, family: 6 }])).toEqual([
      { what: "EgressIp web of this stack", selector: { matchLabels: { app: "web" } }, families: [6] },
    ]);
  });
});

describe("refuseHandMadeEgress", () => {
  const facts = { name: ns, labels: { "kubernetes.io/metadata.name": ns, team: "a" }, annotations: {} };
  const egress = (spec: Partial<AntreaEgressFacts>, managed = false): AntreaEgressFacts => ({
    name: "hand",
    labels: managed ? { "app.kubernetes.io/managed-by": "pulumi-egress-ipam" } : {},
    annotations: {},
    ips: ["10.0.0.9"],
    listed: false,
    ...spec,
  });
  const byTeam = { namespaceSelector: { matchLabels: { team: "a" } } };
  it.each<[string, AntreaEgressFacts, Record<string, string> | undefined, boolean, RegExp | undefined]>([
    [
      "namespace-wide beside one applied by the namespace's labels",
      egress(byTeam),
      undefined,
      false,
      /^EgressIp web: Egress hand, not made by pulumi-egress-ipam, already serves every pod of namespace team-a, .*set adopt: true on the EgressIp to take it over/,
    ],
    [
      "a pod selector beside it (adopt or not)",
      egress(byTeam),
      { app: "web" },
      true,
      /Egress hand, not made by pulumi-egress-ipam, .*delete Egress hand or narrow what it selects/,
    ],
    [
      "one still to get its address from an ExternalIPPool",
      egress({ ...byTeam, ips: [], externalIPPool: "p" }),
      undefined,
      false,
      /Egress hand/,
    ],
    ["with adopt, which takes it over", egress(byTeam), undefined, true, undefined],
    ["one of this package (owner records decide)", egress(byTeam, true), undefined, false, undefined],
    [
      "one applied to some Pods only",
      egress({ ...byTeam, podSelector: { matchLabels: { app: "api" } } }),
      undefined,
      false,
      undefined,
    ],
    [
      "one of another namespace",
      egress({ namespaceSelector: { matchLabels: { team: "b" } } }),
      undefined,
      false,
      undefined,
    ],
    ["one with neither address nor pool", egress({ ...byTeam, ips: [] }), undefined, false, undefined],
  ])("%s", (_name, e, podSelector, adopting, refused) => {
    const call = () => refuseHandMadeEgress([e], facts, podSelector, adopting, "EgressIp web");
    if (refused) expect(call).toThrow(refused);
    else expect(call).not.toThrow();
  });
});
