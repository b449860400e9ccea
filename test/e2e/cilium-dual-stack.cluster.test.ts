// Dual-stack egress with the cilium provisioner: the real Pulumi engine against the real
// kube-apiserver (CiliumEgressGatewayPolicy objects of cilium.io/v2). Cilium SNATs a family's
// traffic to an egressIP of that family, so an EgressIp with families "dual" over two zones writes
// two policies: egress-ipam-<ns> with the IPv4 gateways and the IPv4 destinations, and
// egress-ipam-<ns>.ipv6 with the IPv6 ones. Preview = up; refresh finds the IPv6 policy deleted by
// hand and up writes it back; destroy leaves none. Destinations without a family's CIDR are refused
// at preview for an address of that family.
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ciliumObjectName } from "../../provider/provisioners/kubernetes/cilium/cilium";
import { changesOf, Harness } from "../support/harness";
import { kube, testKubeconfig } from "../support/kube";
import { sdnWorld, type SdnWorld } from "../support/sdn-world";

type Pkg = typeof import("../../provider/index");
const group = "cilium.io";
const version = "v2";
const plural = "ciliumegressgatewaypolicies";
interface Gateway {
  nodeSelector: { matchLabels: Record<string, string> };
  egressIP: string;
}
type Policy = k8s.KubernetesObject & {
  spec: {
    selectors: unknown;
    destinationCIDRs: string[];
    excludedCIDRs?: string[];
    egressGateway: Gateway;
    egressGateways: Gateway[];
  };
};
const custom = () => kube().config.makeApiClient(k8s.CustomObjectsApi);
const readPolicy = (name: string) =>
  custom().getClusterCustomObject({ group, version, plural, name }) as Promise<Policy>;
const policyExists = (name: string) =>
  readPolicy(name).then(
    () => true,
    (e: { code?: number }) => (e.code === 404 ? false : Promise.reject(e)),
  );

// Subnets of their own per run (egress addresses anywhere in the cluster count as taken).
const octet = 1 + Math.floor(Math.random() * 120);
const v4 = { a: `10.35.${octet * 2}`, b: `10.35.${octet * 2 + 1}` };
const v6 = { a: `fd35:${octet.toString(16)}:a::`, b: `fd35:${octet.toString(16)}:b::` };
/** A dual-stack pool of a zone: one range set per family, as a CNI host-local config gives them. */
const cniConfig = (zone: "a" | "b") =>
  JSON.stringify({
    cniVersion: "1.0.0",
    ipam: {
      type: "host-local",
      ranges: [
        [{ subnet: `${v4[zone]}.0/24`, rangeStart: `${v4[zone]}.10` }],
        [{ subnet: `${v6[zone]}/64`, rangeStart: `${v6[zone]}10` }],
      ],
    },
  });

describe("dual-stack EgressIp with the cilium provisioner, against kube-apiserver", () => {
  const h = Harness.create("cilium-dual", { env: { KUBECONFIG: testKubeconfig() } });
  const { IpPool, EgressIp } = h.pkg<Pkg>("pulumi-egress-ipam");
  let w: SdnWorld<"a1" | "a2" | "b1" | "b2", "x">;
  const names = () =>
    ["a", "b"]
      .flatMap((z) => [`team-${w.zone(z)}`, `team-${w.zone(z)}-ipv6`])
      .map((n) => `EgressIpAssignment::${n}`);
  const expected = () => ({
    [w.zone("a")]: { ipv4: `${v4.a}.10`, ipv6: `${v6.a}10` },
    [w.zone("b")]: { ipv4: `${v4.b}.10`, ipv6: `${v6.b}10` },
  });
  const program = (destinations?: string[]) => async () => {
    const pools = {
      [w.zone("a")]: new IpPool("egress-a", { cniConfig: cniConfig("a") }),
      [w.zone("b")]: new IpPool("egress-b", { cniConfig: cniConfig("b") }),
    };
    const e = new EgressIp("team", {
      pool: pools,
      namespace: w.ns.x,
      failureDomains: Object.keys(pools),
      families: "dual",
      provisioner: {
        kind: "cilium",
        nodeSelector: w.selector,
        destinations: destinations ?? ["0.0.0.0/0", "::/0"],
        excluded: ["192.168.0.0/16", "fd99::/16"],
      },
    });
    return { ips: e.ips, addresses: e.addresses };
  };
  /** `[egressIP, node]` of each gateway of a policy, sorted. */
  const pins = async (name: string) =>
    (await readPolicy(name)).spec.egressGateways
      .map((g) => [g.egressIP, g.nodeSelector.matchLabels["kubernetes.io/hostname"]])
      .sort();
  const placed: Record<string, { ip: string; host: string }> = {};

  beforeAll(async () => {
    w = await sdnWorld(
      {
        a1: { zone: "a", hostSubnet: false },
        a2: { zone: "a", hostSubnet: false },
        b1: { zone: "b", hostSubnet: false },
        b2: { zone: "b", hostSubnet: false },
      },
      ["x"],
      { netNamespaces: false },
    );
  });
  afterAll(async () => {
    await h.destroy().catch(() => undefined);
    h.dispose();
    await w?.cleanup();
  });

  it("plans an IPv4 and an IPv6 address per zone at preview; up writes them to a policy per family, each with its family's destinations", async () => {
    await h.program(program());
    const preview = await h.preview();
    const planned = Object.fromEntries(names().map((n) => [n, preview.planned(n)!]));
    const byZone = (z: "a" | "b") => ({
      ipv4: planned[`EgressIpAssignment::team-${w.zone(z)}`]!.ip,
      ipv6: planned[`EgressIpAssignment::team-${w.zone(z)}-ipv6`]!.ip,
    });
    expect({ [w.zone("a")]: byZone("a"), [w.zone("b")]: byZone("b") }).toEqual(expected());

    const up = await h.up();
    const addresses = up.outputs.addresses!.value as Record<
      string,
      Record<"ipv4" | "ipv6", { ip: string; host: string }>
    >;
    for (const z of ["a", "b"] as const) {
      const got = addresses[w.zone(z)]!;
      expect({ ipv4: got.ipv4.ip, ipv6: got.ipv6.ip }).toEqual(expected()[w.zone(z)]);
      // Each the Node preview showed, of its zone. Each family is a policy of its own, so the two
      // are planned apart and may share a Node.
      expect(got.ipv4.host).toBe(planned[`EgressIpAssignment::team-${w.zone(z)}`]!.host);
      expect(got.ipv6.host).toBe(planned[`EgressIpAssignment::team-${w.zone(z)}-ipv6`]!.host);
      expect([w.node[`${z}1`], w.node[`${z}2`]]).toContain(got.ipv4.host);
      expect([w.node[`${z}1`], w.node[`${z}2`]]).toContain(got.ipv6.host);
      placed[`ipv4-${z}`] = got.ipv4;
      placed[`ipv6-${z}`] = got.ipv6;
    }
    expect(up.outputs.ips!.value).toEqual([`${v4.a}.10`, `${v4.b}.10`]);

    const selectors = [{ podSelector: { matchLabels: { "io.kubernetes.pod.namespace": w.ns.x } } }];
    const ipv4 = await readPolicy(ciliumObjectName(w.ns.x));
    const ipv6 = await readPolicy(ciliumObjectName(w.ns.x, { family: 6 }));
    expect(ipv6.metadata?.name).toBe(`egress-ipam-${w.ns.x}.ipv6`);
    for (const p of [ipv4, ipv6])
      expect(p.metadata?.labels?.["app.kubernetes.io/managed-by"]).toBe("pulumi-egress-ipam");
    expect(ipv4.spec).toMatchObject({
      selectors,
      destinationCIDRs: ["0.0.0.0/0"],
      excludedCIDRs: ["192.168.0.0/16"],
    });
    expect(ipv6.spec).toMatchObject({ selectors, destinationCIDRs: ["::/0"], excludedCIDRs: ["fd99::/16"] });
    const pin = (p: { ip: string; host: string }) => [p.ip, p.host];
    expect(await pins(ciliumObjectName(w.ns.x))).toEqual(
      [pin(placed["ipv4-a"]!), pin(placed["ipv4-b"]!)].sort(),
    );
    expect(await pins(ciliumObjectName(w.ns.x, { family: 6 }))).toEqual(
      [pin(placed["ipv6-a"]!), pin(placed["ipv6-b"]!)].sort(),
    );
    expect(ipv6.spec.egressGateway).toEqual(ipv6.spec.egressGateways[0]);
    expect(changesOf((await h.up()).summary.resourceChanges)).toEqual({});
  });

  it("refresh finds the IPv6 policy deleted by hand; up writes it back with the gateways preview shows", async () => {
    const name = ciliumObjectName(w.ns.x, { family: 6 });
    const before = await pins(name);
    await custom().deleteClusterCustomObject({ group, version, plural, name });
    expect(changesOf((await h.refresh()).summary.resourceChanges)).toEqual({ update: 2 });
    // The gateways are planned again (each family's policy apart: a Node of the zone, the least
    // loaded now that the IPv4 policy is there), and written as planned.
    const preview = await h.preview();
    const planned = (["a", "b"] as const).map((z) => {
      const p = preview.planned(`EgressIpAssignment::team-${w.zone(z)}-ipv6`)!;
      expect(z === "a" ? [w.node.a1, w.node.a2] : [w.node.b1, w.node.b2]).toContain(p.host);
      return [String(p.ip), String(p.host)];
    });
    expect(planned.map(([ip]) => ip).sort()).toEqual(before.map(([ip]) => ip));
    await h.up();
    expect(await pins(name)).toEqual(planned.sort());
    expect(changesOf((await h.preview()).changeSummary)).toEqual({});
  });

  it("refuses at preview destinations without an IPv6 CIDR for the IPv6 addresses, naming them; nothing changes", async () => {
    const before = await readPolicy(ciliumObjectName(w.ns.x, { family: 6 }));
    await h.program(program(["10.0.0.0/8"]));
    try {
      const err = String(await h.preview().catch((e: Error) => e));
      expect(err).toContain("INVALID_INPUT");
      // Each zone's IPv6 assignment is refused; the engine checks them in no fixed order, so
      // the first error names either zone's address.
      const named = [v6.a, v6.b].map(
        (prefix) => `places ${prefix}10, an IPv6 address, and the provisioner's destinations (10.0.0.0/8)`,
      );
      expect(
        named.some((text) => err.includes(text)),
        err,
      ).toBe(true);
      expect(err).toContain('add IPv6 destinations (e.g. "::/0") or place IPv4 only (families: "ipv4")');
    } finally {
      await h.program(program());
    }
    expect((await readPolicy(ciliumObjectName(w.ns.x, { family: 6 }))).spec).toEqual(before.spec);
  });

  it("destroy leaves neither policy", async () => {
    await h.destroy();
    expect(await policyExists(ciliumObjectName(w.ns.x))).toBe(false);
    expect(await policyExists(ciliumObjectName(w.ns.x, { family: 6 }))).toBe(false);
  });
});
