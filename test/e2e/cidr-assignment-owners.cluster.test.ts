// A CidrAssignment takes off only what it put on, with the real engine and the real kube-apiserver:
// two stacks assign one pool to the same nodes, and an administrator labelled a Node (ovn) or
// gave a HostSubnet the CIDR (ocp-dynamic) before either. Each destroy leaves what the other stack
// and the administrator rely on.
import type * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Harness } from "../support/harness";
import { kube, testKubeconfig } from "../support/kube";
import { hostSubnetCidrs, sdnWorld, type SdnWorld } from "../support/sdn-world";

type Pkg = typeof import("../../provider/index");
const assignable = "k8s.ovn.org/egress-assignable";
const net = `10.24.${1 + Math.floor(Math.random() * 250)}`;

describe("CidrAssignment takes off only what it put on", () => {
  let w: SdnWorld<"n1" | "n2">;
  const harnesses: Harness[] = [];
  const stack = (project: string) => {
    const h = Harness.create(project, { env: { KUBECONFIG: testKubeconfig() } });
    harnesses.push(h);
    return h;
  };
  const program = (h: Harness, kind: "ovn" | "ocp-dynamic", subnet: string) => async () => {
    const { IpPool, CidrAssignment } = h.pkg<Pkg>("pulumi-egress-ipam");
    const pool = new IpPool("egress", { ranges: [{ subnet }] });
    const cidrs = new CidrAssignment("cidrs", {
      pool,
      provisioner: { kind, nodeSelector: w.selector },
      hosts: [w.node.n1, w.node.n2],
    });
    return { hosts: cidrs.hosts };
  };
  const node = (name: string) => kube().core.readNode({ name });
  const labelled = async (name: string) => assignable in ((await node(name)).metadata?.labels ?? {});
  const owners = async (read: Promise<k8s.KubernetesObject>) =>
    JSON.parse((await read).metadata?.annotations?.["egress-ipam/owners"] ?? "{}") as Record<
      string,
      string[]
    >;

  beforeAll(async () => {
    w = await sdnWorld({ n1: { zone: "a" }, n2: { zone: "a" } });
  });
  afterAll(async () => {
    for (const h of harnesses) h.dispose();
    await w?.cleanup();
  });

  it("ovn: the administrator's egress-assignable label and the other stack's stay after a destroy", async () => {
    const { objects } = kube();
    await objects.patch(
      { apiVersion: "v1", kind: "Node", metadata: { name: w.node.n1, labels: { [assignable]: "" } } },
      undefined,
      undefined,
      undefined,
      undefined,
      "application/merge-patch+json" as never,
    );
    const a = stack("owners-ovn-a");
    const b = stack("owners-ovn-b");
    await a.program(program(a, "ovn", `${net}.0/25`));
    await b.program(program(b, "ovn", `${net}.0/25`));
    await a.up();
    await b.up();
    expect(await labelled(w.node.n2)).toBe(true);
    const record = (await owners(node(w.node.n2)))[assignable]!;
    expect(record).toHaveLength(2); // one per stack: two identities
    expect((await owners(node(w.node.n1)))[assignable]).toContain("(there before)");

    await a.destroy();
    expect(await labelled(w.node.n1)).toBe(true); // the administrator's
    expect(await labelled(w.node.n2)).toBe(true); // stack b relies on it
    await b.destroy();
    expect(await labelled(w.node.n1)).toBe(true);
    expect(await labelled(w.node.n2)).toBe(false); // the last owner took it off
    expect((await node(w.node.n2)).metadata?.annotations?.["egress-ipam/owners"]).toBeUndefined();
  });

  it("ocp-dynamic: another stack's egressCIDRs and one that was there before stay after a destroy", async () => {
    const subnet = `${net}.128/25`;
    const { objects } = kube();
    const hs = await objects.read({
      apiVersion: "network.openshift.io/v1",
      kind: "HostSubnet",
      metadata: { name: w.node.n1 },
    });
    await objects.replace({ ...hs, egressCIDRs: [subnet] } as k8s.KubernetesObject); // the administrator's
    const a = stack("owners-sdn-a");
    const b = stack("owners-sdn-b");
    await a.program(program(a, "ocp-dynamic", subnet));
    await b.program(program(b, "ocp-dynamic", subnet));
    await a.up();
    await b.up();
    expect(await hostSubnetCidrs(w.node.n1)).toEqual([subnet]);
    expect(await hostSubnetCidrs(w.node.n2)).toEqual([subnet]);

    await a.destroy();
    expect(await hostSubnetCidrs(w.node.n1)).toEqual([subnet]);
    expect(await hostSubnetCidrs(w.node.n2)).toEqual([subnet]); // stack b relies on it
    await b.destroy();
    expect(await hostSubnetCidrs(w.node.n1)).toEqual([subnet]); // there before
    expect(await hostSubnetCidrs(w.node.n2)).toEqual([]);
  });

  it("ovn: a name freed by a rename is another owner; the renamed one's delete leaves the label it relies on", async () => {
    const h = stack("owners-freed");
    const { IpPool, CidrAssignment } = h.pkg<Pkg>("pulumi-egress-ipam");
    const program = (assignments: [string, string[]][]) => async () => {
      const pool = new IpPool("egress", { ranges: [{ subnet: `${net}.0/25` }] });
      for (const [name, aliases] of assignments) {
        const provisioner = { kind: "ovn" as const, nodeSelector: w.selector };
        const opts = { aliases: aliases.map((a) => ({ name: a })) };
        new CidrAssignment(name, { pool, provisioner, hosts: [w.node.n2] }, opts);
      }
    };
    await h.program(program([["cidrs", []]]));
    await h.up();
    await h.program(program([["cidrs2", ["cidrs"]]]));
    await h.up();
    await h.program(
      program([
        ["cidrs2", []],
        ["cidrs", []],
      ]),
    );
    await h.up();
    expect((await owners(node(w.node.n2)))[assignable]).toHaveLength(2);
    await h.program(program([["cidrs", []]]));
    await h.up();
    expect(await labelled(w.node.n2)).toBe(true); // the new cidrs relies on it
    await h.destroy();
    expect(await labelled(w.node.n2)).toBe(false);
  });
});
