// Where dual-stack and pod-selector addresses go on the Kubernetes kinds: the real Pulumi engine
// against the real kube-apiserver. A Node never carries two addresses of one platform object: for
// ovn one EgressIP object holds both families of a namespace (ovnkube places no two addresses of
// one object on one Node), for cilium each family has a policy of its own, and a pod selector's
// addresses are an object of their own on both. So cilium dual stack fits in a zone with one
// gateway Node, ovn's is refused at preview there (not at up), selector EgressIps of one namespace
// of one namespace share a Node, and the hosts preview shows are the ones up records, however many times and with
// whatever parallelism the engine checks them.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { changesOf, Harness } from "../support/harness";
import { testKubeconfig } from "../support/kube";
import { sdnWorld, type SdnWorld } from "../support/sdn-world";

type Pkg = typeof import("../../provider/index");
// Subnets of their own per run (egress addresses anywhere in the cluster count as taken).
const octet = 1 + Math.floor(Math.random() * 80);
const zones = ["a", "b", "c"] as const;
type Zone = (typeof zones)[number];
const v4 = (z: Zone) => `10.39.${octet * 3 + zones.indexOf(z)}`;
const v6 = (z: Zone) => `fd39:${octet.toString(16)}:${z}::`;
const ipconfig = (z: Zone) => ({
  "cloud.network.openshift.io/egress-ipconfig": JSON.stringify([
    {
      interface: "eth0",
      ifaddr: { ipv4: `${v4(z)}.0/24`, ipv6: `${v6(z)}/64` },
      capacity: { ipv4: 8, ipv6: 8 },
    },
  ]),
});
/** A dual-stack pool of a zone: one range set per family, as a CNI host-local config gives them. */
const cniConfig = (z: Zone) =>
  JSON.stringify({
    cniVersion: "1.0.0",
    ipam: {
      type: "host-local",
      ranges: [
        [{ subnet: `${v4(z)}.0/24`, rangeStart: `${v4(z)}.10` }],
        [{ subnet: `${v6(z)}/64`, rangeStart: `${v6(z)}10` }],
      ],
    },
  });

describe("which Node each address of a dual-stack or pod-selector EgressIp goes on, against kube-apiserver", () => {
  const h = Harness.create("dual-hosts", { env: { KUBECONFIG: testKubeconfig() } });
  const { IpPool, EgressIp } = h.pkg<Pkg>("pulumi-egress-ipam");
  // Zones a and b have one egress Node each, zone c two.
  let w: SdnWorld<"a1" | "b1" | "c1" | "c2", "x">;
  const pools = (zs: readonly Zone[]) =>
    Object.fromEntries(zs.map((z) => [w.zone(z), new IpPool(`egress-${z}`, { cniConfig: cniConfig(z) })]));
  const egress = (kind: "ovn" | "cilium", zs: readonly Zone[]) => async () => {
    const e = new EgressIp("team", {
      pool: pools(zs),
      namespace: w.ns.x,
      failureDomains: zs.map(w.zone),
      families: "dual",
      provisioner: { kind, nodeSelector: w.selector },
    });
    return { addresses: e.addresses };
  };
  /** The host of each assignment in a preview's plan, by name. */
  const plannedHosts = (preview: Awaited<ReturnType<Harness["preview"]>>) =>
    Object.fromEntries(
      Object.entries(preview.ops)
        .filter(([urn]) => urn.includes("EgressIpAssignment::"))
        .map(([urn]) => {
          const name = urn.split("::").pop()!;
          return [name, String(preview.planned(`EgressIpAssignment::${name}`)?.host)];
        }),
    );
  const recordedHosts = async () =>
    Object.fromEntries(
      (await h.resources())
        .filter((r) => r.urn.includes("EgressIpAssignment::"))
        .map((r) => [r.urn.split("::").pop()!, String(r.outputs?.host)]),
    );

  beforeAll(async () => {
    w = await sdnWorld(
      {
        a1: { zone: "a", hostSubnet: false, annotations: ipconfig("a") },
        b1: { zone: "b", hostSubnet: false, annotations: ipconfig("b") },
        c1: { zone: "c", hostSubnet: false, annotations: ipconfig("c") },
        c2: { zone: "c", hostSubnet: false, annotations: ipconfig("c") },
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

  it("refuses ovn dual stack at preview in a zone of one egress Node, naming ovnkube's rule and the way on", async () => {
    await h.program(egress("ovn", ["a"]));
    const err = String(await h.preview().catch((e: Error) => e));
    expect(err).toContain("HOST_UNAVAILABLE");
    expect(err).toContain(`${w.node.a1} (already carries`);
    expect(err).toContain(`of EgressIP egress-ipam-${w.ns.x}`);
    expect(err).toContain("ovnkube places no two addresses of one EgressIP object on one Node");
    expect(err).toContain("k8s.ovn.org/egress-assignable");
  });

  it("puts cilium's IPv4 and IPv6 gateway of a zone with one Node on that Node: each family is a policy of its own", async () => {
    await h.program(egress("cilium", ["a", "b"]));
    const planned = plannedHosts(await h.preview());
    expect(Object.keys(planned)).toHaveLength(4);
    await h.up();
    expect(await recordedHosts()).toEqual(planned);
    expect(Object.values(planned).sort()).toEqual([w.node.a1, w.node.a1, w.node.b1, w.node.b1]);
    expect(changesOf((await h.up()).summary.resourceChanges)).toEqual({});
    await h.destroy();
  });

  it("shows the same hosts at every preview (20, --parallel 16) and up records them: ovn's two families of a zone on its two Nodes", async () => {
    await h.program(egress("ovn", ["c"]));
    const first = plannedHosts(await h.preview({ parallel: 16 }));
    expect(Object.values(first).sort()).toEqual([w.node.c1, w.node.c2]);
    for (let i = 1; i < 20; i++) expect(plannedHosts(await h.preview({ parallel: 16 }))).toEqual(first);
    await h.up({ parallel: 16 });
    expect(await recordedHosts()).toEqual(first);
    await h.destroy();
  });

  it("puts two pod-selector ovn EgressIps of a namespace on a zone's one Node: each is an EgressIP object of its own", async () => {
    await h.program(async () => {
      const pool = pools(["a"]);
      for (const app of ["web", "db"])
        new EgressIp(app, {
          pool,
          namespace: w.ns.x,
          failureDomains: [w.zone("a")],
          families: "ipv4",
          provisioner: { kind: "ovn", nodeSelector: w.selector },
          podSelector: { app },
        });
    });
    const planned = plannedHosts(await h.preview());
    expect(Object.values(planned)).toEqual([w.node.a1, w.node.a1]);
    await h.up();
    expect(await recordedHosts()).toEqual(planned);
    await h.destroy();
  });
});
