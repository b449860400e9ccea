// `adopt: true` with families "dual": the real engine and the real kube-apiserver. The namespace's
// IPv4 and IPv6 addresses, as the cluster gives them, are planned at preview one per zone and
// family, where they are, and up moves nothing: ovn from a hand-made EgressIP object listing both
// families (its status as ovnkube would write it), cilium from two hand-made
// CiliumEgressGatewayPolicies, one per family (Cilium SNATs a family to an egressIP of that family).
// Objects are compared before and after. An address of a family the EgressIp does not place is
// refused at preview, naming it.
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { changesOf, Harness } from "../support/harness";
import { kube, testKubeconfig } from "../support/kube";
import { sdnWorld, type SdnWorld } from "../support/sdn-world";

type Pkg = typeof import("../../provider/index");
const octet = 1 + Math.floor(Math.random() * 120);
const v4 = { a: `10.38.${octet * 2}`, b: `10.38.${octet * 2 + 1}` };
const v6 = { a: `fd38:${octet.toString(16)}:a::`, b: `fd38:${octet.toString(16)}:b::` };
const ovnApi = "k8s.ovn.org/v1";
const cilium = { group: "cilium.io", version: "v2", plural: "ciliumegressgatewaypolicies" };
type Obj = k8s.KubernetesObject & { spec: Record<string, unknown>; status?: unknown };
const custom = () => kube().config.makeApiClient(k8s.CustomObjectsApi);
const readPolicy = (name: string) => custom().getClusterCustomObject({ ...cilium, name }) as Promise<Obj>;
const readEgressIp = (name: string) =>
  kube().objects.read({ apiVersion: ovnApi, kind: "EgressIP", metadata: { name } }) as Promise<Obj>;
/** A dual-stack pool of a zone, as a CNI host-local config gives it. */
const cniConfig = (zone: "a" | "b") =>
  JSON.stringify({
    cniVersion: "1.0.0",
    ipam: {
      type: "host-local",
      ranges: [[{ subnet: `${v4[zone]}.0/24` }], [{ subnet: `${v6[zone]}/64` }]],
    },
  });
/** The addresses each family of each zone has, and their Nodes (a2 and b2 carry the IPv6 ones). */
const addresses = (w: SdnWorld<"a1" | "a2" | "b1" | "b2", string>) => ({
  [w.zone("a")]: { ipv4: { ip: `${v4.a}.9`, host: w.node.a1 }, ipv6: { ip: `${v6.a}9`, host: w.node.a2 } },
  [w.zone("b")]: { ipv4: { ip: `${v4.b}.4`, host: w.node.b1 }, ipv6: { ip: `${v6.b}4`, host: w.node.b2 } },
});
/** `o` but its metadata's labels, annotations, resourceVersion, managedFields and generation. */
const content = (o: Obj) => {
  const {
    labels: _l,
    annotations: _a,
    resourceVersion: _r,
    managedFields: _m,
    generation: _g,
    ...meta
  } = o.metadata!;
  return { ...o, metadata: meta };
};

describe("adopt: true with families dual takes over both families of a namespace, where they are", () => {
  let w: SdnWorld<"a1" | "a2" | "b1" | "b2", "o" | "c">;
  const harnesses: Harness[] = [];
  const made: (() => Promise<unknown>)[] = [];
  const stack = (project: string) => {
    const h = Harness.create(project, { env: { KUBECONFIG: testKubeconfig() } });
    harnesses.push(h);
    return h;
  };
  const program =
    (
      h: Harness,
      namespace: string,
      provisioner: Record<string, unknown>,
      families: "dual" | "ipv4" = "dual",
    ) =>
    async () => {
      const { IpPool, EgressIp } = h.pkg<Pkg>("pulumi-egress-ipam");
      const pools = {
        [w.zone("a")]: new IpPool("egress-a", { cniConfig: cniConfig("a") }),
        [w.zone("b")]: new IpPool("egress-b", { cniConfig: cniConfig("b") }),
      };
      const e = new EgressIp("team", {
        pool: pools,
        namespace,
        failureDomains: Object.keys(pools),
        families,
        provisioner: { ...provisioner, nodeSelector: w.selector } as never,
        adopt: true,
      });
      return { addresses: e.addresses };
    };
  /** Preview plans exactly the namespace's addresses, each on its Node and taken from `source`. */
  const previewPlans = async (h: Harness, source: (family: "ipv4" | "ipv6") => string) => {
    const preview = await h.preview();
    for (const [zone, families] of Object.entries(addresses(w)))
      for (const [family, { ip, host }] of Object.entries(families)) {
        const child = `team-${zone}${family === "ipv6" ? "-ipv6" : ""}`;
        expect({
          ip: preview.planned(`IpAllocation::${child}`)?.ip,
          from: preview.planned(`IpAllocation::${child}`)?.adoptedFrom,
          host: preview.planned(`EgressIpAssignment::${child}`)?.host,
        }).toEqual({ ip, from: source(family as "ipv4" | "ipv6"), host });
      }
  };

  beforeAll(async () => {
    w = await sdnWorld(
      {
        a1: { zone: "a", hostSubnet: false },
        a2: { zone: "a", hostSubnet: false },
        b1: { zone: "b", hostSubnet: false },
        b2: { zone: "b", hostSubnet: false },
      },
      ["o", "c"],
      { netNamespaces: false },
    );
  });
  afterAll(async () => {
    for (const h of harnesses) await h.destroy().catch(() => undefined);
    for (const h of harnesses) h.dispose();
    for (const undo of made) await undo().catch(() => undefined);
    await w?.cleanup();
  });

  it("ovn: an EgressIP object listing both families becomes ours; spec and status stay", async () => {
    const name = `hand-made-dual-${w.zone("o")}`;
    const all = Object.values(addresses(w)).flatMap((f) => [f.ipv4, f.ipv6]);
    const { objects } = kube();
    await objects.create({
      apiVersion: ovnApi,
      kind: "EgressIP",
      metadata: { name },
      spec: {
        egressIPs: all.map((a) => a.ip),
        namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": w.ns.o } },
      },
    } as k8s.KubernetesObject);
    made.push(() => objects.delete({ apiVersion: ovnApi, kind: "EgressIP", metadata: { name } }));
    const created = await readEgressIp(name);
    const items = all.map((a) => ({ node: a.host, egressIP: a.ip }));
    await objects.replace({ ...created, status: { items } } as k8s.KubernetesObject);
    const before = await readEgressIp(name);

    const h = stack("adopt-dual-ovn");
    await h.program(program(h, w.ns.o, { kind: "ovn" }));
    await previewPlans(h, () => `EgressIP ${name}`);
    expect(await readEgressIp(name)).toEqual(before);
    const up = await h.up();
    expect(up.outputs.addresses!.value).toEqual(addresses(w));
    const after = await readEgressIp(name);
    expect(content(after)).toEqual(content(before));
    expect(after.metadata?.labels?.["app.kubernetes.io/managed-by"]).toBe("pulumi-egress-ipam");
    expect(after.metadata?.annotations?.["egress-ipam/namespace"]).toBe(w.ns.o);
    expect(Object.keys(JSON.parse(after.metadata!.annotations!["egress-ipam/owners"]!)).sort()).toEqual(
      all.map((a) => a.ip).sort(),
    );
    expect(changesOf((await h.refresh()).summary.resourceChanges)).toEqual({});
    expect(changesOf((await h.preview()).changeSummary)).toEqual({});
  });

  it("cilium: a hand-made policy per family becomes ours; gateways, selectors and destinations stay", async () => {
    const pin = (a: { ip: string; host: string }) => ({
      nodeSelector: { matchLabels: { "kubernetes.io/hostname": a.host } },
      egressIP: a.ip,
    });
    const byFamily = (family: "ipv4" | "ipv6") => Object.values(addresses(w)).map((f) => pin(f[family]));
    const names = { ipv4: `hand-made-v4-${w.zone("c")}`, ipv6: `hand-made-v6-${w.zone("c")}` };
    for (const family of ["ipv4", "ipv6"] as const) {
      await custom().createClusterCustomObject({
        ...cilium,
        body: {
          apiVersion: `${cilium.group}/${cilium.version}`,
          kind: "CiliumEgressGatewayPolicy",
          metadata: { name: names[family] },
          spec: {
            selectors: [{ podSelector: { matchLabels: { "io.kubernetes.pod.namespace": w.ns.c } } }],
            destinationCIDRs: [family === "ipv4" ? "0.0.0.0/0" : "::/0"],
            egressGateway: byFamily(family)[0],
            egressGateways: byFamily(family),
          },
        },
      });
      made.push(() => custom().deleteClusterCustomObject({ ...cilium, name: names[family] }));
    }
    const before = { ipv4: await readPolicy(names.ipv4), ipv6: await readPolicy(names.ipv6) };

    // The refusal first: IPv4 only, while the namespace has IPv6 addresses too.
    const h = stack("adopt-dual-cilium");
    await h.program(program(h, w.ns.c, { kind: "cilium" }, "ipv4"));
    const err = String(await h.preview().catch((e: Error) => e));
    expect(err).toContain(
      `${v6.a}9 (CiliumEgressGatewayPolicy ${names.ipv6}, on node ${w.node.a2} in domain ${w.zone("a")}) is an ` +
        `IPv6 address and the EgressIp places IPv4 only: set families: "dual" to take it over too`,
    );

    await h.program(program(h, w.ns.c, { kind: "cilium", destinations: ["0.0.0.0/0", "::/0"] }));
    await previewPlans(h, (family) => `CiliumEgressGatewayPolicy ${names[family]}`);
    const up = await h.up();
    expect(up.outputs.addresses!.value).toEqual(addresses(w));
    for (const family of ["ipv4", "ipv6"] as const) {
      const after = await readPolicy(names[family]);
      expect(content(after)).toEqual(content(before[family]));
      expect(after.metadata?.annotations?.["egress-ipam/namespace"]).toBe(w.ns.c);
      expect(after.metadata?.labels?.["app.kubernetes.io/managed-by"]).toBe("pulumi-egress-ipam");
    }
    // No policy of this package's own names was made.
    const ours = ((await custom().listClusterCustomObject(cilium)) as { items: Obj[] }).items.filter((p) =>
      p.metadata?.name?.startsWith(`egress-ipam-${w.ns.c}`),
    );
    expect(ours).toEqual([]);
    expect(changesOf((await h.refresh()).summary.resourceChanges)).toEqual({});
    expect(changesOf((await h.preview()).changeSummary)).toEqual({});
  });
});
