// IPv6 egress with the antrea provisioner: the real Pulumi engine against the real kube-apiserver
// (Egress objects of crd.antrea.io/v1beta1; the test writes status.egressNode as Antrea's agent
// would). An Egress takes one egressIP of either family, so an EgressIp of IPv6 addresses writes one
// Egress per address as for IPv4: preview = up, refresh finds an Egress deleted by hand and up
// writes it back, destroy leaves none. Dual stack is refused at preview (Antrea applies one Egress
// to a Pod, and antrea-controller refuses the dual-stack egressIPs), in one stack and across two.
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { antreaObjectName } from "../../provider/provisioners/kubernetes/antrea/antrea";
import { changesOf, Harness } from "../support/harness";
import { kube, testKubeconfig } from "../support/kube";
import { sdnWorld, type SdnWorld } from "../support/sdn-world";

type Pkg = typeof import("../../provider/index");
const group = "crd.antrea.io";
const version = "v1beta1";
const plural = "egresses";
type Egress = k8s.KubernetesObject & {
  spec: { egressIP: string; externalIPPool?: string; appliedTo: unknown };
  status?: { egressNode?: string };
};
const custom = () => kube().config.makeApiClient(k8s.CustomObjectsApi);
const readEgress = (name: string) =>
  custom().getClusterCustomObject({ group, version, plural, name }) as Promise<Egress>;
/** Writes status.egressNode as Antrea's agent does, through the status subresource. */
const setEgressNode = (name: string, node: string) =>
  custom().patchClusterCustomObjectStatus(
    { group, version, plural, name, body: { status: { egressNode: node } } },
    k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
  );

const octet = 1 + Math.floor(Math.random() * 120);
const v4 = { a: `10.36.${octet * 2}`, b: `10.36.${octet * 2 + 1}` };
const v6 = { a: `fd36:${octet.toString(16)}:a::`, b: `fd36:${octet.toString(16)}:b::` };

describe("IPv6 EgressIp with the antrea provisioner, against kube-apiserver", () => {
  const harnesses: Harness[] = [];
  const stack = (project: string) => {
    const h = Harness.create(project, { env: { KUBECONFIG: testKubeconfig() } });
    harnesses.push(h);
    return h;
  };
  const h = stack("antrea-v6");
  let w: SdnWorld<"a1" | "a2" | "b1", "x">;
  /** The Egress objects that apply to namespace x. */
  const egresses = async () =>
    (
      (await custom().listClusterCustomObject({ group, version, plural })) as { items: Egress[] }
    ).items.filter((e) => JSON.stringify(e.spec.appliedTo).includes(`"${w.ns.x}"`));

  beforeAll(async () => {
    w = await sdnWorld(
      {
        a1: { zone: "a", hostSubnet: false },
        a2: { zone: "a", hostSubnet: false },
        b1: { zone: "b", hostSubnet: false },
      },
      ["x"],
      { netNamespaces: false },
    );
  });
  afterAll(async () => {
    for (const s of harnesses) {
      await s.destroy().catch(() => undefined);
      s.dispose();
    }
    await w?.cleanup();
  });

  /** An EgressIp of namespace x over both zones, from IPv6 pools (or IPv4 ones, or dual-stack CNI configs). */
  const program = (s: Harness, name: string, families: "ipv4" | "ipv6" | "dual") => async () => {
    const { IpPool, EgressIp } = s.pkg<Pkg>("pulumi-egress-ipam");
    const range = (z: "a" | "b") =>
      families === "ipv4"
        ? { ranges: [{ subnet: `${v4[z]}.0/24`, rangeStart: `${v4[z]}.10` }] }
        : families === "ipv6"
          ? { ranges: [{ subnet: `${v6[z]}/64`, rangeStart: `${v6[z]}10` }] }
          : {
              cniConfig: JSON.stringify({
                cniVersion: "1.0.0",
                ipam: {
                  type: "host-local",
                  ranges: [
                    [{ subnet: `${v4[z]}.0/24`, rangeStart: `${v4[z]}.20` }],
                    [{ subnet: `${v6[z]}/64`, rangeStart: `${v6[z]}20` }],
                  ],
                },
              }),
            };
    const pools = {
      [w.zone("a")]: new IpPool(`${name}-a`, range("a")),
      [w.zone("b")]: new IpPool(`${name}-b`, range("b")),
    };
    const e = new EgressIp(name, {
      pool: pools,
      namespace: w.ns.x,
      failureDomains: Object.keys(pools),
      ...(families === "dual" ? { families } : {}),
      provisioner: { kind: "antrea", nodeSelector: w.selector, externalIPPool: "egress-pool" },
    });
    return { ips: e.ips, hosts: e.hosts };
  };
  const planned: { ip: string; host: string }[] = [];

  it("writes one Egress per IPv6 address as preview showed it; refresh finds one deleted by hand and up writes it back", async () => {
    await h.program(program(h, "team", "ipv6"));
    const preview = await h.preview();
    for (const d of [w.zone("a"), w.zone("b")])
      planned.push({
        ip: preview.planned(`IpAllocation::team-${d}`)?.ip as string,
        host: preview.planned(`EgressIpAssignment::team-${d}`)?.host as string,
      });
    expect(planned.map((p) => p.ip)).toEqual([`${v6.a}10`, `${v6.b}10`]);
    const up = await h.up();
    expect(up.outputs.ips!.value).toEqual(planned.map((p) => p.ip));
    expect(up.outputs.hosts!.value).toEqual(planned.map((p) => p.host));
    for (const { ip, host } of planned) {
      const name = antreaObjectName(w.ns.x, ip);
      expect(name).toMatch(/^egress-ipam-.*-fd36\.[0-9a-f.]+$/);
      expect((await readEgress(name)).spec).toEqual({
        appliedTo: { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": w.ns.x } } },
        egressIP: ip,
        externalIPPool: "egress-pool",
      });
      await setEgressNode(name, host);
    }
    expect(changesOf((await h.refresh()).summary.resourceChanges)).toEqual({});
    expect(changesOf((await h.preview()).changeSummary)).toEqual({});

    const gone = antreaObjectName(w.ns.x, planned[1]!.ip);
    await custom().deleteClusterCustomObject({ group, version, plural, name: gone });
    expect(changesOf((await h.refresh()).summary.resourceChanges)).toEqual({ update: 1 });
    await h.up();
    expect((await readEgress(gone)).spec.egressIP).toBe(planned[1]!.ip);
    await setEgressNode(gone, planned[1]!.host);
    expect(changesOf((await h.refresh()).summary.resourceChanges)).toEqual({});
    expect(changesOf((await h.preview()).changeSummary)).toEqual({});
  });

  it("refuses at preview another stack's IPv4 addresses for the same Pods, naming the IPv6 Egress and its owner", async () => {
    const other = stack("antrea-v4");
    await other.program(program(other, "team-v4", "ipv4"));
    const err = String(await other.preview().catch((e: Error) => e));
    expect(err).toContain("SCOPE_CONFLICT");
    expect(err).toMatch(/EgressIp team-v4 gives 10\.36\.\d+\.10, an IPv4 address, to the Pods of namespace/);
    expect(err).toMatch(
      /that Egress egress-ipam-\S+-fd36\.[0-9a-f.]+ \(stack-\w+ urn:pulumi:[^)]*antrea-v6[^)]*'s\) gives an IPv6 address/,
    );
    expect(err).toContain("Antrea applies one Egress to a Pod");
    expect(await egresses()).toHaveLength(2);
  });

  it("destroy leaves no Egress", async () => {
    await h.destroy();
    expect(await egresses()).toEqual([]);
  });

  it('refuses families: "dual" at preview, naming the IPv6 address and what to do; nothing is written', async () => {
    const dual = stack("antrea-dual");
    await dual.program(program(dual, "team-dual", "dual"));
    const err = String(await dual.preview().catch((e: Error) => e));
    expect(err).toContain("SCOPE_CONFLICT");
    // Every assignment claims the Pods of the namespace: the first one checked of the other family
    // than the first, in either zone, is refused, and the engine checks them in no fixed order.
    const anyAddress = [`${v4.a}.20`, `${v4.b}.20`, `${v6.a}20`, `${v6.b}20`]
      .map((ip) => ip.replace(/\./g, "\\."))
      .join("|");
    expect(err).toMatch(
      new RegExp(
        `EgressIp team-dual gives (${anyAddress}), an IPv(4|6) address, to the Pods of namespace ` +
          `${w.ns.x} that EgressIp team-dual of this stack gives an IPv(6|4) address`,
      ),
    );
    expect(err).toContain('"spec.egressIPs is not supported yet"');
    expect(err).toContain('families: "ipv4" or "ipv6"');
    expect(await egresses()).toEqual([]);
  });
});
