// Dual-stack egress with the ovn provisioner: the real Pulumi engine against the real kube-apiserver.
// An EgressIp with families "dual" over two zones places an IPv4 and an IPv6 address per zone in
// the namespace's EgressIP object; preview = up, refresh finds an address taken out by hand and up
// puts it back, a NotReady node's addresses move, destroy leaves nothing. Without families a
// dual-stack pool is refused at preview, and so is an IPv6 address on OpenShift SDN.
import type * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { changesOf, Harness } from "../support/harness";
import { kube, setNodeReady, testKubeconfig } from "../support/kube";
import { sdnWorld, type SdnWorld } from "../support/sdn-world";

type Pkg = typeof import("../../provider/index");
// Subnets of their own per run (egress addresses anywhere in the cluster count as taken).
const octet = 1 + Math.floor(Math.random() * 120);
const v4 = { a: `10.23.${octet * 2}`, b: `10.23.${octet * 2 + 1}` };
const v6 = { a: `fd23:${octet.toString(16)}:a::`, b: `fd23:${octet.toString(16)}:b::` };
type EgressIpObject = k8s.KubernetesObject & { spec: { egressIPs: string[] }; status?: unknown };
const ovn = "k8s.ovn.org/v1";
const ipconfig = (zone: "a" | "b") => ({
  "cloud.network.openshift.io/egress-ipconfig": JSON.stringify([
    {
      interface: "eth0",
      ifaddr: { ipv4: `${v4[zone]}.0/24`, ipv6: `${v6[zone]}/64` },
      capacity: { ipv4: 8, ipv6: 8 },
    },
  ]),
});
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

describe("dual-stack EgressIp with the ovn provisioner, against kube-apiserver", () => {
  const h = Harness.create("ovn-dual", { env: { KUBECONFIG: testKubeconfig() } });
  const { IpPool, EgressIp } = h.pkg<Pkg>("pulumi-egress-ipam");
  let w: SdnWorld<"a1" | "a2" | "b1" | "b2", "x">;
  const read = () =>
    kube().objects.read({
      apiVersion: ovn,
      kind: "EgressIP",
      metadata: { name: `egress-ipam-${w.ns.x}` },
    }) as Promise<EgressIpObject>;
  const exists = () =>
    read().then(
      () => true,
      (e: { code?: number }) => (e.code === 404 ? false : Promise.reject(e)),
    );
  const program =
    (families?: "dual", kind: "ovn" | "ocp-static" = "ovn") =>
    async () => {
      const pools = {
        [w.zone("a")]: new IpPool("egress-a", { cniConfig: cniConfig("a") }),
        [w.zone("b")]: new IpPool("egress-b", { cniConfig: cniConfig("b") }),
      };
      const x = new EgressIp("team-x", {
        pool: pools,
        namespace: w.ns.x,
        failureDomains: Object.keys(pools),
        provisioner: { kind, nodeSelector: w.selector },
        ...(families ? { families } : {}),
      });
      return { ips: x.ips, addresses: x.addresses };
    };
  const expected = () => ({
    [w.zone("a")]: { ipv4: `${v4.a}.10`, ipv6: `${v6.a}10` },
    [w.zone("b")]: { ipv4: `${v4.b}.10`, ipv6: `${v6.b}10` },
  });
  const names = () =>
    ["a", "b"]
      .flatMap((z) => [`team-x-${w.zone(z)}`, `team-x-${w.zone(z)}-ipv6`])
      .map((n) => `EgressIpAssignment::${n}`);
  const planned: Record<string, { ip: string; host: string }> = {};

  beforeAll(async () => {
    w = await sdnWorld(
      {
        a1: { zone: "a", hostSubnet: false, annotations: ipconfig("a") },
        a2: { zone: "a", hostSubnet: false, annotations: ipconfig("a") },
        b1: { zone: "b", hostSubnet: false, annotations: ipconfig("b") },
        b2: { zone: "b", hostSubnet: false, annotations: ipconfig("b") },
      },
      ["x"],
      { netNamespaces: false },
    );
  });
  afterAll(async () => {
    h.dispose();
    await w?.cleanup();
  });

  it("refuses a dual-stack pool at preview when the EgressIp does not say which families to place", async () => {
    await h.program(program());
    const err = String(await h.preview().catch((e: Error) => e));
    expect(err).toContain("INVALID_INPUT");
    expect(err).toMatch(
      /an EgressIp without families places the pool's one family, and pool "[^"]+" is dual-stack/,
    );
    expect(err).not.toMatch(/Unhandled exception/);
    expect(err).toContain('families: "dual"');
    expect(await exists()).toBe(false);
  });

  it("plans an IPv4 and an IPv6 address per zone at preview, and up places exactly those in one EgressIP", async () => {
    await h.program(program("dual"));
    const preview = await h.preview();
    for (const n of names()) {
      const p = preview.planned(n)!;
      planned[n] = { ip: String(p.ip), host: String(p.host) };
    }
    const byZone = (z: "a" | "b") => ({
      ipv4: planned[`EgressIpAssignment::team-x-${w.zone(z)}`]!.ip,
      ipv6: planned[`EgressIpAssignment::team-x-${w.zone(z)}-ipv6`]!.ip,
    });
    expect({ [w.zone("a")]: byZone("a"), [w.zone("b")]: byZone("b") }).toEqual(expected());
    const up = await h.up();
    const addresses = up.outputs.addresses!.value as Record<
      string,
      Record<string, { ip: string; host: string }>
    >;
    // The addresses and hosts are exactly the previewed ones: a zone's two families on its two Nodes
    // (ovnkube places no two addresses of one EgressIP object on one Node).
    for (const z of ["a", "b"] as const) {
      const got = addresses[w.zone(z)]!;
      expect({ ipv4: got.ipv4?.ip, ipv6: got.ipv6?.ip }).toEqual(expected()[w.zone(z)]);
      expect([got.ipv4!.host, got.ipv6!.host].sort()).toEqual([w.node[`${z}1`], w.node[`${z}2`]]);
    }
    for (const r of await h.resources()) {
      const n = names().find((x) => r.urn.endsWith(x));
      if (n) expect(String(r.outputs?.host)).toBe(planned[n]!.host);
    }
    expect(up.outputs.ips!.value).toEqual([`${v4.a}.10`, `${v4.b}.10`]);
    const all = Object.values(expected()).flatMap((f) => [f.ipv4, f.ipv6]);
    expect([...(await read()).spec.egressIPs].sort()).toEqual([...all].sort());
    expect(changesOf((await h.up()).summary.resourceChanges)).toEqual({});
  });

  it("finds an IPv6 address taken out of the EgressIP by hand at refresh; the next up puts it back", async () => {
    const gone = `${v6.b}10`;
    const o = await read();
    await kube().objects.replace({
      ...o,
      spec: { ...o.spec, egressIPs: o.spec.egressIPs.filter((ip) => ip !== gone) },
    } as k8s.KubernetesObject);
    expect(changesOf((await h.refresh()).summary.resourceChanges)).toEqual({ update: 1 });
    await h.up();
    expect((await read()).spec.egressIPs).toContain(gone);
    expect(changesOf((await h.up()).summary.resourceChanges)).toEqual({});
  });

  it("moves every address off a node that went NotReady, keeping each address", async () => {
    const node = planned[names()[0]!]!.host;
    const moved = names().filter((n) => planned[n]!.host === node);
    await setNodeReady(node, false);
    try {
      const preview = await h.preview();
      for (const n of moved) {
        expect(preview.op(n)).toBe("update");
        expect(preview.planned(n)).toMatchObject({ ip: planned[n]!.ip });
        expect(preview.planned(n)?.host).not.toBe(node);
      }
      await h.up();
      const all = Object.values(expected()).flatMap((f) => [f.ipv4, f.ipv6]);
      expect([...(await read()).spec.egressIPs].sort()).toEqual([...all].sort());
    } finally {
      await setNodeReady(node, true);
    }
  });

  it("leaves no EgressIP on destroy", async () => {
    await h.destroy();
    expect(await exists()).toBe(false);
  });

  it("refuses an IPv6 address on OpenShift SDN (ocp-static) at preview, naming it", async () => {
    const sdn = Harness.create("ocp-v6", { env: { KUBECONFIG: testKubeconfig() } });
    try {
      const pkg = sdn.pkg<Pkg>("pulumi-egress-ipam");
      await sdn.program(async () => {
        const pool = new pkg.IpPool("v6", { ranges: [{ subnet: `${v6.a}/64`, rangeStart: `${v6.a}10` }] });
        new pkg.EgressIp("v6", {
          pool,
          namespace: w.ns.x,
          failureDomains: [w.zone("a")],
          provisioner: { kind: "ocp-static", nodeSelector: w.selector },
        });
      });
      const err = String(await sdn.preview().catch((e: Error) => e));
      expect(err).toContain(
        `${v6.a}10 is an IPv6 address, and OpenShift SDN (ocp-static) places IPv4 egress addresses only`,
      );
    } finally {
      sdn.dispose();
    }
  });
});
