// An address the namespace already has from somebody else is refused at create, with the real
// engine and the real kube-apiserver: ovn (the namespace's EgressIP object lists it) and
// ocp-static (its NetNamespace does), written by hand as an unmanaged writer would. `adopt: true`
// takes it over; the assignment's own address after `pulumi state delete` (what an interrupted
// create leaves) is recognised by its owner record and not refused. And an address somebody else
// took after this stack's allocation got it, per kind: the refusal's advice, followed as written,
// leads to a successful up and a clean preview.
import type * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { changesOf, Harness } from "../support/harness";
import { kube, setNodeReady, testKubeconfig } from "../support/kube";
import {
  foreignAdd,
  hostSubnetIps,
  netNamespaceIps,
  sdnWorld,
  type SdnWorld,
  egressIpObjectIps,
} from "../support/sdn-world";
import { followAdvice, type AdviceEdit } from "../support/follow-advice";
import { managedBy } from "../../provider/provisioners/kubernetes/managed-by";
import { ovnObjectName } from "../../provider/provisioners/kubernetes/ovn/ovn";

type Pkg = typeof import("../../provider/index");
const net = `10.25.${1 + Math.floor(Math.random() * 250)}`;

describe("an address the namespace already has from somebody else", () => {
  let w: SdnWorld<"n1" | "n2", "x" | "y">;
  const harnesses: Harness[] = [];
  const stack = (project: string) => {
    const h = Harness.create(project, { env: { KUBECONFIG: testKubeconfig() } });
    harnesses.push(h);
    return h;
  };
  const program =
    (h: Harness, kind: "ovn" | "ocp-static", namespace: string, ip: string, adopt?: boolean) => async () => {
      const { EgressIpAssignment } = h.pkg<Pkg>("pulumi-egress-ipam");
      const a = new EgressIpAssignment("egress", {
        ip,
        provisioner: { kind, nodeSelector: w.selector },
        failureDomain: w.zone("a"),
        namespace,
        ...(adopt === undefined ? {} : { adopt }),
      });
      return { host: a.host };
    };

  beforeAll(async () => {
    w = await sdnWorld({ n1: { zone: "a" }, n2: { zone: "a" } }, ["x", "y"]);
  });
  afterAll(async () => {
    for (const h of harnesses) h.dispose();
    await w?.cleanup();
  });

  it("ovn: refused naming the EgressIP object; adopt: true takes it over, and destroy takes it off", async () => {
    const ip = `${net}.10`;
    // The namespace's object, as this package names and labels it, with an address added by hand.
    await kube().objects.create({
      apiVersion: "k8s.ovn.org/v1",
      kind: "EgressIP",
      metadata: { name: ovnObjectName(w.ns.x), labels: managedBy },
      spec: {
        egressIPs: [ip],
        namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": w.ns.x } },
      },
    } as k8s.KubernetesObject);
    const h = stack("owners-ovn");
    await h.program(program(h, "ovn", w.ns.x, ip));
    await expect(h.up()).rejects.toThrow(
      new RegExp(
        `EgressIP ${ovnObjectName(w.ns.x)} \\(spec\\.egressIPs\\) already lists ${ip.replace(/\./g, "\\.")} \\(not recorded as written by this package\\).*adopt: true`,
      ),
    );
    expect(await egressIpObjectIps(w.ns.x)).toEqual([ip]);

    await h.program(program(h, "ovn", w.ns.x, ip, true));
    await h.up();
    expect(await egressIpObjectIps(w.ns.x)).toEqual([ip]);
    await h.destroy();
    expect(await egressIpObjectIps(w.ns.x)).toEqual([]);
  });

  it("ocp-static: refused naming the NetNamespace; its own address after a lost create is not refused", async () => {
    const ip = `${net}.20`;
    const { objects } = kube();
    const nn = await objects.read({
      apiVersion: "network.openshift.io/v1",
      kind: "NetNamespace",
      metadata: { name: w.ns.y },
    });
    await objects.replace({ ...nn, egressIPs: [ip] } as k8s.KubernetesObject); // by hand
    const h = stack("owners-sdn");
    await h.program(program(h, "ocp-static", w.ns.y, ip));
    await expect(h.up()).rejects.toThrow(
      new RegExp(
        `NetNamespace ${w.ns.y} already lists ${ip.replace(/\./g, "\\.")} \\(not recorded as written by this package\\)`,
      ),
    );
    expect([...(await hostSubnetIps(w.node.n1)), ...(await hostSubnetIps(w.node.n2))]).toEqual([]);

    // Taken off by hand: now the stack places it, recording itself on the NetNamespace.
    await objects.replace({
      ...(await objects.read({
        apiVersion: "network.openshift.io/v1",
        kind: "NetNamespace",
        metadata: { name: w.ns.y },
      })),
      egressIPs: [],
    } as k8s.KubernetesObject);
    await h.up();
    expect(await netNamespaceIps(w.ns.y)).toEqual([ip]);
    // The resource lost from state (as after an interrupted create): the next up recognises its own.
    const urn = (await h.resources()).find((r) => r.type.endsWith("EgressIpAssignment"))!.urn;
    await h.forget(urn);
    await h.up();
    expect(await netNamespaceIps(w.ns.y)).toEqual([ip]);
    await h.destroy();
    expect(await netNamespaceIps(w.ns.y)).toEqual([]);
  });
});

type Kind = "ovn" | "cilium" | "antrea" | "ocp-static" | "ocp-dynamic";
const custom = (apiVersion: string, kind: string, name: string, spec: Record<string, unknown>) =>
  ({ apiVersion, kind, metadata: { name }, ...spec }) as k8s.KubernetesObject;

describe("an address somebody else took after the stack's allocation got it", () => {
  // Zone a is ready; the second zone's Node is NotReady until the address is taken, so the first
  // up allocates both addresses and places only the first (as a Node joining later would).
  let w: SdnWorld<"a1" | "b1" | "d1" | "d2", "p1" | "p2" | "p3" | "p4" | "p5" | "p6" | "other">;
  const net = `10.26.${1 + Math.floor(Math.random() * 250)}`;
  const harnesses: Harness[] = [];
  const foreign: k8s.KubernetesObject[] = [];

  /** One kind: where somebody else puts the address, what the refusal names, and the advice the test follows. */
  interface Case {
    kind: Kind;
    zones: ["a1" | "d1", "b1" | "d2"];
    take(ip: string, namespace: string): Promise<string>;
    follow: AdviceEdit["kind"];
  }
  const plant = async (o: k8s.KubernetesObject) => {
    foreign.push(await kube().objects.create(o));
  };
  const addToNetNamespace = async (namespace: string, ip: string) => {
    const { objects } = kube();
    const nn = await objects.read({
      apiVersion: "network.openshift.io/v1",
      kind: "NetNamespace",
      metadata: { name: namespace },
    });
    await objects.replace({ ...nn, egressIPs: [ip] } as k8s.KubernetesObject);
  };
  const cases: [string, Case][] = [
    [
      "ovn: another EgressIP object",
      {
        kind: "ovn",
        zones: ["a1", "b1"],
        follow: "ips",
        take: async (ip) => {
          const name = `foreign-ovn-${Date.now()}`;
          const selector = { matchLabels: { team: "elsewhere" } };
          await plant(
            custom("k8s.ovn.org/v1", "EgressIP", name, {
              spec: { egressIPs: [ip], namespaceSelector: selector },
            }),
          );
          return `EgressIP ${name} already has it in spec.egressIPs`;
        },
      },
    ],
    [
      "cilium: another CiliumEgressGatewayPolicy",
      {
        kind: "cilium",
        zones: ["a1", "b1"],
        follow: "ips",
        take: async (ip) => {
          const name = `foreign-cilium-${Date.now()}`;
          await plant(
            custom("cilium.io/v2", "CiliumEgressGatewayPolicy", name, {
              spec: {
                selectors: [{ podSelector: { matchLabels: { app: "other" } } }],
                destinationCIDRs: ["0.0.0.0/0"],
                egressGateway: {
                  nodeSelector: { matchLabels: { "kubernetes.io/hostname": w.node.a1 } },
                  egressIP: ip,
                },
              },
            }),
          );
          return `CiliumEgressGatewayPolicy ${name} already uses it as an egressIP`;
        },
      },
    ],
    [
      "antrea: another Egress",
      {
        kind: "antrea",
        zones: ["a1", "b1"],
        follow: "ips",
        take: async (ip) => {
          const name = `foreign-antrea-${Date.now()}`;
          await plant(
            custom("crd.antrea.io/v1beta1", "Egress", name, {
              spec: { appliedTo: { podSelector: { matchLabels: { app: "other" } } }, egressIP: ip },
            }),
          );
          return `Egress ${name} already has egressIP ${ip}`;
        },
      },
    ],
    [
      "ocp-static: another node's HostSubnet",
      {
        kind: "ocp-static",
        zones: ["a1", "b1"],
        follow: "ips",
        take: async (ip) => {
          await foreignAdd(w.node.a1, ip);
          return `HostSubnet ${w.node.a1} already has it`;
        },
      },
    ],
    [
      "ocp-dynamic: another namespace's NetNamespace",
      {
        kind: "ocp-dynamic",
        zones: ["d1", "d2"],
        follow: "ips",
        take: async (ip) => {
          await addToNetNamespace(w.ns.other, ip);
          return `NetNamespace ${w.ns.other} already has it`;
        },
      },
    ],
    [
      "ocp-static: its own NetNamespace, written by hand (adopt)",
      {
        kind: "ocp-static",
        zones: ["a1", "b1"],
        follow: "adopt",
        take: async (ip, namespace) => {
          await addToNetNamespace(namespace, ip);
          return `NetNamespace ${namespace} already lists ${ip}`;
        },
      },
    ],
  ];

  beforeAll(async () => {
    const dynamic = { egressCIDRs: [`${net}.0/24`] };
    w = await sdnWorld(
      {
        a1: { zone: "a" },
        b1: { zone: "b" },
        d1: { zone: "da", hostSubnet: dynamic },
        d2: { zone: "db", hostSubnet: dynamic },
      },
      ["p1", "p2", "p3", "p4", "p5", "p6", "other"],
    );
  });
  afterAll(async () => {
    for (const h of harnesses) h.dispose();
    for (const o of foreign)
      await kube()
        .objects.delete(o)
        .catch(() => undefined);
    await w?.cleanup();
  });

  it.each(cases.map(([name, c], k) => [name, c, k] as const))(
    "%s: the advice, followed as written, leads to a successful up",
    async (_name, c, k) => {
      const namespace = w.ns[`p${k + 1}` as "p1"];
      const [first, second] = c.zones.map((n) => w.node[n]);
      const zones = c.zones.map((n) =>
        w.zone(n === "a1" ? "a" : n === "b1" ? "b" : n === "d1" ? "da" : "db"),
      );
      const h = Harness.create(`taken-${c.kind}`, { env: { KUBECONFIG: testKubeconfig() } });
      harnesses.push(h);
      const program =
        (edit: Partial<{ ips: string[]; adopt: boolean; exclude: string[] }> = {}) =>
        async () => {
          const { IpPool, EgressIp } = h.pkg<Pkg>("pulumi-egress-ipam");
          const lo = 100 + 10 * k;
          const pool = new IpPool("egress", {
            ranges: [{ subnet: `${net}.0/24`, rangeStart: `${net}.${lo}`, rangeEnd: `${net}.${lo + 9}` }],
            ...(edit.exclude ? { exclude: edit.exclude } : {}),
          });
          const e = new EgressIp("team", {
            pool,
            namespace,
            failureDomains: zones,
            provisioner: {
              kind: c.kind,
              nodeSelector: w.selector,
              ...(c.kind === "cilium" ? { destinations: ["0.0.0.0/0"] } : {}),
            },
            ...(edit.ips ? { ips: edit.ips } : {}),
            ...(edit.adopt ? { adopt: true } : {}),
          });
          return { ips: e.ips, hosts: e.hosts };
        };
      await setNodeReady(second!, false);
      await h.program(program());
      await expect(h.up()).rejects.toThrow(/no eligible node in failure domain/);
      const held = (await h.resources()).find((r) => r.urn.endsWith(`IpAllocation::team-${zones[1]}`));
      const ip = held!.outputs!.ip as string;
      const where = await c.take(ip, namespace);
      await setNodeReady(second!, true);

      const failure = await h.up().then(
        () => "",
        (e: unknown) => String(e),
      );
      expect(failure).toContain(where);
      const edit = followAdvice(failure, "team", ip, c.follow);
      await h.program(
        program(
          edit.kind === "adopt"
            ? { adopt: true }
            : edit.kind === "ips"
              ? { ips: edit.ips }
              : { exclude: [ip] },
        ),
      );
      const up = await h.up();
      if (edit.kind === "ips") expect(up.outputs.ips!.value).toEqual(edit.ips);
      else expect(up.outputs.ips!.value[1]).toBe(ip);
      // ocp-dynamic's host is the SDN master's choice: "(automatic)".
      if (c.kind !== "ocp-dynamic") expect(up.outputs.hosts!.value).toEqual([first, second]);
      expect(changesOf((await h.preview()).changeSummary)).toEqual({});
      await h.destroy();
    },
  );
});
