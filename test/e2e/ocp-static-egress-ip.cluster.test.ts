// EgressIp with the ocp-static provisioner: the real Pulumi engine against the real kube-apiserver
// of the test cluster (HostSubnet and NetNamespace objects as OpenShift SDN has them).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { changesOf, Harness } from "../support/harness";
import { setNodeReady, testKubeconfig } from "../support/kube";
import {
  hostSubnetIps,
  netNamespaceIps,
  sdnWorld,
  setHostSubnetIps,
  type SdnWorld,
} from "../support/sdn-world";

type Pkg = typeof import("../../provider/index");
// A subnet of its own per run: egress addresses anywhere in the cluster count as taken, so a
// leftover of an interrupted run must not shift this run's plan.
const net = `10.21.${1 + Math.floor(Math.random() * 250)}`;

describe("EgressIp with the ocp-static provisioner, against kube-apiserver", () => {
  const h = Harness.create("ocp-static", { env: { KUBECONFIG: testKubeconfig() } });
  const { IpPool, EgressIp } = h.pkg<Pkg>("pulumi-egress-ipam");
  let w: SdnWorld<"a1" | "a2" | "b1" | "b2", "x" | "y">;
  const previewHosts: Record<string, string> = {};

  const program = () => async () => {
    const provisioner = { kind: "ocp-static" as const, nodeSelector: w.selector };
    const pool = new IpPool("egress", { ranges: [{ subnet: `${net}.0/24`, rangeStart: `${net}.10` }] });
    const x = new EgressIp("team-x", {
      pool,
      namespace: w.ns.x,
      failureDomains: [w.zone("a"), w.zone("b")],
      provisioner,
    });
    const y = new EgressIp("team-y", { pool, namespace: w.ns.y, failureDomains: [w.zone("a")], provisioner });
    return { xIps: x.ips, xHosts: x.hosts, yIps: y.ips, yHosts: y.hosts };
  };
  const outputs = async () => {
    const up = await h.up();
    return Object.fromEntries(Object.entries(up.outputs).map(([k, v]) => [k, v.value as string[]]));
  };
  /** Every address on the world's HostSubnets, by node key. */
  const onNodes = async () =>
    Object.fromEntries(
      await Promise.all(
        (["a1", "a2", "b1", "b2"] as const).map(async (k) => [k, (await hostSubnetIps(w.node[k])).sort()]),
      ),
    );

  beforeAll(async () => {
    w = await sdnWorld(
      {
        a1: { zone: "a", hostSubnet: { egressIPs: [`${net}.10`] } }, // used outside Pulumi
        a2: { zone: "a" },
        b1: { zone: "b" },
        b2: { zone: "b" },
      },
      ["x", "y"],
    );
    await h.program(program());
  });
  afterAll(async () => {
    h.dispose();
    await w?.cleanup();
  });

  it("shows addresses and hosts at preview, skipping the address a HostSubnet already has", async () => {
    const preview = await h.preview();
    const a = `team-x-${w.zone("a")}`;
    const b = `team-x-${w.zone("b")}`;
    expect(preview.planned(`IpAllocation::${a}`)).toMatchObject({ ip: `${net}.11` });
    expect(preview.planned(`IpAllocation::${b}`)).toMatchObject({ ip: `${net}.12` });
    expect(preview.planned(`EgressIpAssignment::${a}`)).toMatchObject({ ip: `${net}.11`, host: w.node.a2 });
    const xb = preview.planned(`EgressIpAssignment::${b}`)!;
    expect(xb).toMatchObject({ ip: `${net}.12` });
    expect([w.node.b1, w.node.b2]).toContain(xb.host);
    previewHosts.xb = xb.host as string;
    // Another namespace: the least loaded node, although x's address is planned there.
    expect(preview.planned(`EgressIpAssignment::team-y-${w.zone("a")}`)).toMatchObject({
      ip: `${net}.13`,
      host: w.node.a2,
    });
    expect(await onNodes()).toEqual({ a1: [`${net}.10`], a2: [], b1: [], b2: [] });
  });

  it("writes HostSubnet.egressIPs and NetNamespace.egressIPs as planned; a second up changes nothing", async () => {
    const out = await outputs();
    // Exactly what preview showed.
    expect(out).toEqual({
      xIps: [`${net}.11`, `${net}.12`],
      xHosts: [w.node.a2, previewHosts.xb],
      yIps: [`${net}.13`],
      yHosts: [w.node.a2],
    });
    const bKey = previewHosts.xb === w.node.b1 ? "b1" : "b2";
    const expected: Record<string, string[]> = {
      a1: [`${net}.10`],
      a2: [`${net}.11`, `${net}.13`],
      b1: [],
      b2: [],
    };
    expected[bKey] = [`${net}.12`];
    expect(await onNodes()).toEqual(expected);
    expect((await netNamespaceIps(w.ns.x)).sort()).toEqual([`${net}.11`, `${net}.12`]);
    expect(await netNamespaceIps(w.ns.y)).toEqual([`${net}.13`]);
    expect(changesOf((await h.up()).summary.resourceChanges)).toEqual({});
  });

  it("finds an address removed behind its back at refresh; the next up puts it back", async () => {
    await setHostSubnetIps(previewHosts.xb!, []);
    const refresh = await h.refresh();
    expect(changesOf(refresh.summary.resourceChanges)).toEqual({ update: 1 });
    const assignment = (await h.resources()).find((r) =>
      r.urn.endsWith(`EgressIpAssignment::team-x-${w.zone("b")}`),
    )!;
    expect(assignment.outputs).toMatchObject({
      host: "",
      placement: { state: "missing", from: previewHosts.xb },
    });
    expect((assignment.outputs!.placement as { reason: string }).reason).toMatch(
      `egress IP ${net}.12 is not on HostSubnet ${previewHosts.xb}`,
    );
    const out = await outputs();
    const bHost = out.xHosts![1]!;
    expect([w.node.b1, w.node.b2]).toContain(bHost);
    expect(await hostSubnetIps(bHost)).toEqual([`${net}.12`]);
    expect(changesOf((await h.up()).summary.resourceChanges)).toEqual({});
  });

  it("moves the address off a node that went NotReady: preview shows the move, up makes it", async () => {
    await setNodeReady(w.node.a2, false);
    try {
      const preview = await h.preview();
      const name = `EgressIpAssignment::team-x-${w.zone("a")}`;
      expect(preview.op(name)).toBe("update");
      expect(preview.planned(name)).toMatchObject({ ip: `${net}.11`, host: w.node.a1 });
      const out = await outputs();
      expect(out.xHosts![0]).toBe(w.node.a1);
      expect(await hostSubnetIps(w.node.a2)).not.toContain(`${net}.11`);
      expect(await hostSubnetIps(w.node.a1)).toContain(`${net}.11`);
      // One HostSubnet has it, exactly.
      const all = Object.values(await onNodes()).flat();
      expect(all.filter((ip) => ip === `${net}.11`)).toHaveLength(1);
      expect(changesOf((await h.up()).summary.resourceChanges)).toEqual({});
    } finally {
      await setNodeReady(w.node.a2, true);
    }
  });

  it("leaves no trace on destroy (the foreign address stays)", async () => {
    await h.destroy();
    expect((await h.resources()).filter((r) => r.type !== "pulumi:pulumi:Stack")).toEqual([]);
    expect(await onNodes()).toEqual({ a1: [`${net}.10`], a2: [], b1: [], b2: [] });
    expect(await netNamespaceIps(w.ns.x)).toEqual([]);
    expect(await netNamespaceIps(w.ns.y)).toEqual([]);
  });

  describe("refuses bad config at preview, naming the value", () => {
    const cases: [string, () => Record<string, unknown>, RegExp][] = [
      [
        "an unknown context",
        () => ({ provisioner: { kind: "ocp-static", context: "nobody@nowhere" } }),
        /kubeconfig context "nobody@nowhere" not found/,
      ],
      [
        "a nodeSelector matching nothing",
        () => ({ provisioner: { kind: "ocp-static", nodeSelector: { "egress-test/none": "yes" } } }),
        /nodeSelector \{egress-test\/none=yes\} matches no Node/,
      ],
      [
        "a domain without an eligible node",
        () => ({ failureDomains: [w.zone("nowhere")] }),
        /no eligible node in failure domain "w-[0-9a-f]+-nowhere": no Node with labels egress-test\/w-[0-9a-f]+=true has topology\.kubernetes\.io\/zone=w-[0-9a-f]+-nowhere/,
      ],
      [
        "a missing namespace",
        () => ({ namespace: undefined }),
        /the ocp-static provisioner gives the addresses to a namespace: set the EgressIp's namespace/,
      ],
      [
        "a credential in the settings",
        () => ({ provisioner: { kind: "ocp-static", token: "x" } }),
        /"token" looks like a credential/,
      ],
    ];
    it.each(cases)("%s", async (_what, over, message) => {
      const bad = Harness.create("ocp-static-bad", { env: { KUBECONFIG: testKubeconfig() } });
      try {
        await bad.program(async () => {
          const pool = new IpPool("egress", {
            ranges: [{ subnet: `${net}.0/24`, rangeStart: `${net}.10` }],
          });
          new EgressIp("bad", {
            pool,
            namespace: w.ns.x,
            failureDomains: [w.zone("a")],
            provisioner: { kind: "ocp-static", nodeSelector: w.selector },
            ...over(),
          } as ConstructorParameters<typeof EgressIp>[1]);
        });
        await expect(bad.preview()).rejects.toThrow(message);
      } finally {
        bad.dispose();
      }
    });
  });
});
