// EgressIps that serve some pods of a namespace (podSelector) with the ovn provisioner: the real
// Pulumi engine against the real kube-apiserver. Each selector gets an EgressIP object of its own
// with spec.podSelector; another stack's EgressIp whose pods may overlap is refused at preview,
// naming the object; disjoint selectors live side by side; two EgressIps of one stack whose pods may
// overlap are refused at its first preview, before either object exists.
import type * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { changesOf, Harness } from "../support/harness";
import { kube, testKubeconfig } from "../support/kube";
import { sdnWorld, type SdnWorld } from "../support/sdn-world";

type Pkg = typeof import("../../provider/index");
const octet = 1 + Math.floor(Math.random() * 120);
const net = `10.24.${octet}`;
type EgressIpObject = k8s.KubernetesObject & {
  spec: { egressIPs: string[]; namespaceSelector: unknown; podSelector?: unknown };
};
const ovn = "k8s.ovn.org/v1";

describe("EgressIp podSelector with the ovn provisioner, against kube-apiserver", () => {
  const harnesses: Harness[] = [];
  const stack = (project: string) => {
    const h = Harness.create(project, { env: { KUBECONFIG: testKubeconfig() } });
    harnesses.push(h);
    return h;
  };
  let w: SdnWorld<"a1" | "a2" | "b1", "x" | "y" | "z">;
  /** The EgressIP objects that select namespace x (or another). */
  const objects = async (ns = w.ns.x) =>
    ((await kube().objects.list(ovn, "EgressIP")) as unknown as { items: EgressIpObject[] }).items.filter(
      (o) => JSON.stringify(o.spec.namespaceSelector).includes(`"${ns}"`),
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
        ranges: [{ subnet: `${net}.0/24`, rangeStart: `${net}.${first}` }],
      });
      const e = new EgressIp(name, {
        pool,
        namespace,
        failureDomains,
        provisioner: { kind: "ovn", nodeSelector: w.selector },
        ...(podSelector ? { podSelector } : {}),
      });
      return { ips: e.ips };
    };
  };
  /** Two EgressIps of namespace y in one program, with these pod selectors (none: namespace-wide). */
  const pair = (h: Harness, first?: Record<string, string>, second?: Record<string, string>) => {
    const { IpPool, EgressIp } = h.pkg<Pkg>("pulumi-egress-ipam");
    return async () => {
      const pool = new IpPool("egress", { ranges: [{ subnet: `${net}.0/24`, rangeStart: `${net}.50` }] });
      const ips = [first, second].map(
        (podSelector, i) =>
          new EgressIp(`pair-${i}`, {
            pool,
            namespace: w.ns.y,
            failureDomains: [w.zone("a")],
            provisioner: { kind: "ovn", nodeSelector: w.selector },
            ...(podSelector ? { podSelector } : {}),
          }).ips,
      );
      return { ips };
    };
  };

  beforeAll(async () => {
    const ipconfig = {
      "cloud.network.openshift.io/egress-ipconfig": JSON.stringify([
        { interface: "eth0", ifaddr: { ipv4: `${net}.0/24` }, capacity: { ipv4: 8 } },
      ]),
    };
    w = await sdnWorld(
      {
        a1: { zone: "a", hostSubnet: false, annotations: ipconfig },
        a2: { zone: "a", hostSubnet: false, annotations: ipconfig },
        b1: { zone: "b", hostSubnet: false, annotations: ipconfig },
      },
      ["x", "y", "z"],
      { netNamespaces: false },
    );
  });
  afterAll(async () => {
    for (const h of harnesses) h.dispose();
    await w?.cleanup();
  });

  const web = stack("pods-web");
  const api = stack("pods-api");
  const wide = stack("pods-wide");

  it("gives the selected pods an EgressIP object of their own, with the podSelector", async () => {
    await web.program(program(web, "web", 10, { app: "web" }));
    const up = await web.up();
    expect(up.outputs.ips?.value).toEqual([`${net}.10`]);
    const [o, ...rest] = await objects();
    expect(rest).toEqual([]);
    expect(o?.metadata?.name).toMatch(new RegExp(`^egress-ipam-${w.ns.x}-[0-9a-f]{10}$`));
    expect(o?.spec).toEqual({
      egressIPs: [`${net}.10`],
      namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": w.ns.x } },
      podSelector: { matchLabels: { app: "web" } },
    });
    expect(changesOf((await web.up()).summary.resourceChanges)).toEqual({});
  });

  it("refuses at preview another stack's EgressIp whose pods may overlap, naming the object and its owner", async () => {
    await wide.program(program(wide, "wide", 20));
    const err = String(await wide.preview().catch((e: Error) => e));
    expect(err).toContain("SCOPE_CONFLICT");
    expect(err).toMatch(new RegExp(`EgressIP egress-ipam-${w.ns.x}-[0-9a-f]{10} already serves pods`));
    expect(err).toContain("pods-web");
    await wide.program(program(wide, "wide", 20, { app: "web", tier: "front" }));
    expect(String(await wide.preview().catch((e: Error) => e))).toContain("SCOPE_CONFLICT");
    expect(await objects()).toHaveLength(1);
  });

  it("lets a selector that differs in a label's value live beside it, and destroy removes only its own object", async () => {
    await api.program(program(api, "api", 30, { app: "api" }));
    const up = await api.up();
    expect(up.outputs.ips?.value).toEqual([`${net}.30`]);
    const names = (await objects()).map((o) => o.metadata?.name);
    expect(names).toHaveLength(2);
    await api.destroy();
    expect(await objects()).toHaveLength(1);
    await web.destroy();
    expect(await objects()).toEqual([]);
  });

  it("refuses at the first preview two EgressIps of one stack whose pods may overlap, naming both; disjoint ones are placed", async () => {
    const h = stack("pods-pair");
    for (const [first, second] of [
      [{ app: "web" }, undefined],
      [undefined, { app: "web" }],
      [{ app: "web" }, { app: "web", tier: "front" }],
    ] as const) {
      await h.program(pair(h, first, second));
      const err = String(await h.preview().catch((e: Error) => e));
      expect(err).toContain("SCOPE_CONFLICT");
      expect(err).toMatch(/EgressIp pair-(0|1): EgressIp pair-(0|1) of this stack serves /);
      expect(err).toContain(`of namespace ${w.ns.y}, and this EgressIp's`);
    }
    expect(await objects(w.ns.y)).toEqual([]);
    await h.program(pair(h, { app: "web" }, { app: "api" }));
    await h.up();
    const selectors = (await objects(w.ns.y)).map((o) => o.spec.podSelector);
    expect(selectors).toHaveLength(2);
    expect(selectors).toEqual(
      expect.arrayContaining([{ matchLabels: { app: "web" } }, { matchLabels: { app: "api" } }]),
    );
    await h.destroy();
    expect(await objects(w.ns.y)).toEqual([]);
  });

  it("takes a podSelector added to an EgressIp of two failure domains that served the whole namespace, and its removal, keeping the addresses", async () => {
    const grow = stack("pods-grow");
    const domains = [w.zone("a"), w.zone("b")];
    const ips = [`${net}.70`, `${net}.71`];
    await grow.program(program(grow, "grow", 70, undefined, w.ns.z, domains));
    expect((await grow.up()).outputs.ips?.value).toEqual(ips);
    for (const podSelector of [{ app: "grow" }, undefined]) {
      await grow.program(program(grow, "grow", 70, podSelector, w.ns.z, domains));
      const preview = await grow.preview();
      for (const d of domains) expect(preview.op(`IpAllocation::grow-${d}`)).toBe("same");
      expect((await grow.up()).outputs.ips?.value).toEqual(ips);
      const objs = await objects(w.ns.z);
      expect(objs).toHaveLength(1);
      expect(objs[0]!.spec.egressIPs.toSorted()).toEqual(ips);
      expect(objs[0]!.spec.podSelector).toEqual(podSelector ? { matchLabels: podSelector } : undefined);
      expect(changesOf((await grow.refresh()).summary.resourceChanges)).toEqual({});
    }
    await grow.destroy();
    expect(await objects(w.ns.z)).toEqual([]);
  });

  it("refuses podSelector at preview for a kind that gives addresses to a whole namespace", async () => {
    const sdn = stack("pods-sdn");
    const { IpPool, EgressIp } = sdn.pkg<Pkg>("pulumi-egress-ipam");
    await sdn.program(async () => {
      const pool = new IpPool("egress", { ranges: [{ subnet: `${net}.0/24`, rangeStart: `${net}.40` }] });
      new EgressIp("sdn", {
        pool,
        namespace: w.ns.x,
        failureDomains: [w.zone("a")],
        provisioner: { kind: "ocp-static", nodeSelector: w.selector },
        podSelector: { app: "web" },
      });
    });
    const err = String(await sdn.preview().catch((e: Error) => e));
    expect(err).toContain("property podSelector");
    expect(err).toContain("podSelector is for ovn, cilium and antrea");
  });

  // Before issue 54, preview took any key and value, and up wrote them into the EgressIP object.
  it("refuses at preview and up a podSelector that is not label syntax, naming the key and the value; nothing reaches the cluster", async () => {
    const bad = stack("pods-syntax");
    await bad.program(program(bad, "syntax", 60, { "app web": "x", tier: "front-" }));
    const err = String(await bad.preview().catch((e: Error) => e));
    expect(err).toContain("property podSelector");
    expect(err).toContain('[INVALID_INPUT] podSelector key "app web" is not a Kubernetes label key');
    expect(err).toContain(
      '[INVALID_INPUT] podSelector value "front-" of key "tier" is not a Kubernetes label value',
    );
    await expect(bad.up()).rejects.toThrow(/podSelector key "app web" is not a Kubernetes label key/);
    expect(await objects()).toEqual([]);
    await bad.destroy();
  });
});
