import { describe, expect, it } from "vitest";
import { scopeOf } from "../../../../provider/provisioners/kubernetes/cilium/cilium-destinations";
import { ciliumObjectName } from "../../../../provider/provisioners/kubernetes/cilium/cilium-policy";
import type { CiliumProvisionerConfig } from "../../../../provider/provisioners/config/kube-provisioner-config";

const config = (destinations?: string[], excluded?: string[]): CiliumProvisionerConfig => ({
  kind: "cilium",
  ...(destinations ? { destinations } : {}),
  ...(excluded ? { excluded } : {}),
});

describe("scopeOf: each family's policy sends its family's part of destinations and excluded", () => {
  it.each<[string, CiliumProvisionerConfig, 4 | 6, { destinations: string[]; excluded: string[] }]>([
    ["no destinations, IPv4", config(), 4, { destinations: ["0.0.0.0/0"], excluded: [] }],
    ["no destinations, IPv6", config(), 6, { destinations: ["::/0"], excluded: [] }],
    [
      "IPv4 only, IPv4 (as every earlier version)",
      config(["10.0.0.0/8"], ["10.1.0.0/16"]),
      4,
      { destinations: ["10.0.0.0/8"], excluded: ["10.1.0.0/16"] },
    ],
    ["IPv4 only, IPv6: nothing to send", config(["10.0.0.0/8"]), 6, { destinations: [], excluded: [] }],
    [
      "both, IPv4",
      config(["0.0.0.0/0", "::/0"], ["192.168.0.0/16", "fd99::/16"]),
      4,
      { destinations: ["0.0.0.0/0"], excluded: ["192.168.0.0/16"] },
    ],
    [
      "both, IPv6",
      config(["0.0.0.0/0", "::/0"], ["192.168.0.0/16", "fd99::/16"]),
      6,
      { destinations: ["::/0"], excluded: ["fd99::/16"] },
    ],
    [
      "excluded alone, IPv6",
      config(undefined, ["192.168.0.0/16", "fd99::/16"]),
      6,
      { destinations: ["::/0"], excluded: ["fd99::/16"] },
    ],
  ])("%s", (_name, c, family, expected) => expect(scopeOf(c, family)).toEqual(expected));
});

describe("ciliumObjectName", () => {
  it.each<[string, Parameters<typeof ciliumObjectName>[1], RegExp]>([
    ["IPv4, every pod: the name every earlier version wrote", undefined, /^egress-ipam-team-a$/],
    ["IPv6, every pod", { family: 6 }, /^egress-ipam-team-a\.ipv6$/],
    ["IPv4, a pod selector", { podSelector: { app: "web" } }, /^egress-ipam-team-a\.[0-9a-f]{10}$/],
    [
      "IPv6, a pod selector",
      { family: 6, podSelector: { app: "web" } },
      /^egress-ipam-team-a\.[0-9a-f]{10}\.ipv6$/,
    ],
  ])("%s", (_name, selection, expected) => expect(ciliumObjectName("team-a", selection)).toMatch(expected));

  it("never gives two namespaces one name (a namespace name has no '.')", () => {
    expect(ciliumObjectName("a-ipv6")).not.toBe(ciliumObjectName("a", { family: 6 }));
  });
});
