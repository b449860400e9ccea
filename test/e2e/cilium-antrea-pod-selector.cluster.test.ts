// EgressIps that serve some pods of a namespace (podSelector) with the cilium and antrea
// provisioners: the real Pulumi engine against the real kube-apiserver. The selector lands in the
// objects (cilium: a policy of its own, egress-ipam-<ns>.<hash>, its selectors the namespace's
// pods with those labels; antrea: the Egress's appliedTo.podSelector); another stack's EgressIp
// whose pods may overlap is refused at preview, naming the object and its owner, and so are two
// EgressIps of one stack at its first preview, before either object exists; a disjoint selector
// lives beside it; destroy removes only each stack's own objects.
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { antreaObjectName } from "../../provider/provisioners/kubernetes/antrea/antrea";
import { ciliumObjectName } from "../../provider/provisioners/kubernetes/cilium/cilium";
import { changesOf, Harness } from "../support/harness";
import { kube, testKubeconfig } from "../support/kube";
import { sdnWorld, type SdnWorld } from "../support/sdn-world";

type Pkg = typeof import("../../provider/index");
type Kind = "cilium" | "antrea";
const octet = 1 + Math.floor(Math.random() * 120);
const net = { cilium: `10.37.${octet * 2}`, antrea: `10.37.${octet * 2 + 1}` };
const where = {
  cilium: { group: "cilium.io", version: "v2", plural: "ciliumegressgatewaypolicies" },
  antrea: { group: "crd.antrea.io", version: "v1beta1", plural: "egresses" },
};
type Obj = k8s.KubernetesObject & { spec: Record<string, unknown> };
const custom = () => kube().config.makeApiClient(k8s.CustomObjectsApi);
const read = (kind: Kind, name: string) =>
  custom().getClusterCustomObject({ ...where[kind], name }) as Promise<Obj>;

describe.each<Kind>(["cilium", "antrea"])("EgressIp podSelector with the %s provisioner", (kind) => {
  const harnesses: Harness[] = [];
  const stack = (project: string) => {
    const h = Harness.create(`${kind}-${project}`, { env: { KUBECONFIG: testKubeconfig() } });
    harnesses.push(h);
    return h;
  };
  let w: SdnWorld<"a1" | "a2" | "a3" | "b1", "x" | "y">;
  /** This kind's objects that serve `namespace` (namespace x unless named). */
  const objects = async (namespace = w.ns.x) =>
    ((await custom().listClusterCustomObject(where[kind])) as { items: Obj[] }).items.filter((o) =>
      JSON.stringify(o.spec).includes(`"${namespace}"`),
    );
  const program = (
    h: Harness,
    name: string,
    first: number,
    podSelector?: Record<string, string>,
    namespace = w.ns.x,
    failureDomains = [w.zone("a")],
  ) => {
    const { IpPool, EgressIp } = h.pkg<Pkg>("pulumi-egress-ipam");
    return async () => {
      const pool = new IpPool("egress", {
        ranges: [{ subnet: `${net[kind]}.0/24`, rangeStart: `${net[kind]}.${first}` }],
      });
      const e = new EgressIp(name, {
        pool,
        namespace,
        failureDomains,
        provisioner: { kind, nodeSelector: w.selector },
        ...(podSelector ? { podSelector } : {}),
      });
      return { ips: e.ips };
    };
  };

  /** What Antrea's agent does: puts the address on the Node the stack's assignment chose (refresh reads it). */
  const agentPlaces = async (h: Harness, namespace: string, ip: string) => {
    const host = (await h.resources()).find(
      (r) => r.type.endsWith("EgressIpAssignment") && r.outputs?.ip === ip,
    )!.outputs?.host as string;
    await custom().patchClusterCustomObjectStatus(
      { ...where.antrea, name: antreaObjectName(namespace, ip), body: { status: { egressNode: host } } },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    );
  };

  beforeAll(async () => {
    w = await sdnWorld(
      {
        a1: { zone: "a", hostSubnet: false },
        a2: { zone: "a", hostSubnet: false },
        a3: { zone: "a", hostSubnet: false },
        b1: { zone: "b", hostSubnet: false },
      },
      ["x", "y"],
      { netNamespaces: false },
    );
  });
  afterAll(async () => {
    for (const h of harnesses) {
      await h.destroy().catch(() => undefined);
      h.dispose();
    }
    await w?.cleanup();
  });

  it("refuses at the first preview two EgressIps of one stack whose pods may overlap, naming both", async () => {
    const h = stack("pods-pair");
    const { IpPool, EgressIp } = h.pkg<Pkg>("pulumi-egress-ipam");
    await h.program(async () => {
      const pool = new IpPool("egress", {
        ranges: [{ subnet: `${net[kind]}.0/24`, rangeStart: `${net[kind]}.50` }],
      });
      for (const [name, podSelector] of [
        ["pair-web", { app: "web" }],
        ["pair-all", undefined],
      ] as const)
        new EgressIp(name, {
          pool,
          namespace: w.ns.y,
          failureDomains: [w.zone("a")],
          provisioner: { kind, nodeSelector: w.selector },
          ...(podSelector ? { podSelector } : {}),
        });
    });
    const err = String(await h.preview().catch((e: Error) => e));
    expect(err).toContain("SCOPE_CONFLICT");
    expect(err).toMatch(/EgressIp pair-(web|all): EgressIp pair-(web|all) of this stack (already )?serves /);
    expect(err).toContain(`of namespace ${w.ns.y}`);
    expect(await objects(w.ns.y)).toEqual([]);
  });

  const web = stack("pods-web");
  const api = stack("pods-api");
  const wide = stack("pods-wide");

  it("puts the selector in the object the selected pods' address is written to", async () => {
    await web.program(program(web, "web", 10, { tier: "front", app: "web" }));
    const up = await web.up();
    const ip = `${net[kind]}.10`;
    expect(up.outputs.ips?.value).toEqual([ip]);
    const all = await objects();
    expect(all).toHaveLength(1);
    if (kind === "cilium") {
      const name = ciliumObjectName(w.ns.x, { podSelector: { app: "web", tier: "front" } });
      expect(name).toMatch(new RegExp(`^egress-ipam-${w.ns.x}\\.[0-9a-f]{10}$`));
      expect(all[0]!.metadata?.name).toBe(name);
      expect((await read(kind, name)).spec.selectors).toEqual([
        {
          podSelector: {
            matchLabels: { app: "web", "io.kubernetes.pod.namespace": w.ns.x, tier: "front" },
          },
        },
      ]);
    } else {
      expect(all[0]!.metadata?.name).toBe(antreaObjectName(w.ns.x, ip));
      expect((await read(kind, antreaObjectName(w.ns.x, ip))).spec.appliedTo).toEqual({
        namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": w.ns.x } },
        podSelector: { matchLabels: { app: "web", tier: "front" } },
      });
      await agentPlaces(web, w.ns.x, ip);
    }
    expect(changesOf((await web.refresh()).summary.resourceChanges)).toEqual({});
    expect(changesOf((await web.up()).summary.resourceChanges)).toEqual({});
  });

  it("refuses at preview another stack's EgressIp whose pods may overlap, naming the object and its owner", async () => {
    await wide.program(program(wide, "wide", 20));
    const err = String(await wide.preview().catch((e: Error) => e));
    expect(err).toContain("SCOPE_CONFLICT");
    expect(err).toMatch(
      kind === "cilium"
        ? new RegExp(`CiliumEgressGatewayPolicy egress-ipam-${w.ns.x}\\.[0-9a-f]{10} already sends pods`)
        : new RegExp(
            `Egress egress-ipam-${w.ns.x}-${net.antrea.replace(/\./g, "\\.")}\\.10 \\(.*'s\\) already serves pods`,
          ),
    );
    expect(err).toContain(`${kind}-pods-web`);
    expect(err).toContain("give the EgressIps pod selectors that differ in some label's value");
    await wide.program(program(wide, "wide", 20, { app: "web" }));
    expect(String(await wide.preview().catch((e: Error) => e))).toContain("SCOPE_CONFLICT");
    expect(await objects()).toHaveLength(1);
  });

  it("takes a podSelector added to an EgressIp of two failure domains that served the whole namespace, and its removal, keeping the addresses", async () => {
    const grow = stack("pods-grow");
    const domains = [w.zone("a"), w.zone("b")];
    const ips = [`${net[kind]}.40`, `${net[kind]}.41`];
    await grow.program(program(grow, "grow", 40, undefined, w.ns.y, domains));
    expect((await grow.up()).outputs.ips?.value).toEqual(ips);
    for (const podSelector of [{ app: "grow" }, undefined]) {
      await grow.program(program(grow, "grow", 40, podSelector, w.ns.y, domains));
      const preview = await grow.preview();
      for (const d of domains) expect(preview.op(`IpAllocation::grow-${d}`)).toBe("same");
      expect((await grow.up()).outputs.ips?.value).toEqual(ips);
      const objs = await objects(w.ns.y);
      expect(objs.length).toBeGreaterThan(0);
      for (const o of objs)
        expect(JSON.stringify(o.spec).includes(`"app":"grow"`)).toBe(podSelector !== undefined);
      if (kind === "antrea") for (const ip of ips) await agentPlaces(grow, w.ns.y, ip);
      expect(changesOf((await grow.refresh()).summary.resourceChanges)).toEqual({});
    }
    await grow.destroy();
    expect(await objects(w.ns.y)).toEqual([]);
  });

  it("lets a selector that differs in a label's value live beside it; destroy removes only each stack's own", async () => {
    await api.program(program(api, "api", 30, { app: "api" }));
    expect((await api.up()).outputs.ips?.value).toEqual([`${net[kind]}.30`]);
    expect(await objects()).toHaveLength(2);
    await api.destroy();
    expect(await objects()).toHaveLength(1);
    await web.destroy();
    expect(await objects()).toEqual([]);
  });
});
