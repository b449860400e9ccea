// EgressIps that serve some pods of a namespace (podSelector) with the ovn provisioner: the real
// Pulumi engine against the real kube-apiserver. Each selector gets an EgressIP object of its own
// with spec.podSelector; another stack's EgressIp whose pods may overlap is refused at preview,
// naming the object; disjoint selectors live side by side; a non-ovn kind refuses podSelector.
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
  let w: SdnWorld<"a1" | "a2", "x">;
  /** The EgressIP objects that select namespace x. */
  const objects = async () =>
    ((await kube().objects.list(ovn, "EgressIP")) as unknown as { items: EgressIpObject[] }).items.filter(
      (o) => JSON.stringify(o.spec.namespaceSelector).includes(w.ns.x),
    );
  const program = (h: Harness, name: string, first: number, podSelector?: Record<string, string>) => {
    const { IpPool, EgressIp } = h.pkg<Pkg>("pulumi-egress-ipam");
    return async () => {
      const pool = new IpPool("egress", {
        ranges: [{ subnet: `${net}.0/24`, rangeStart: `${net}.${first}` }],
      });
      const e = new EgressIp(name, {
        pool,
        namespace: w.ns.x,
        failureDomains: [w.zone("a")],
        provisioner: { kind: "ovn", nodeSelector: w.selector },
        ...(podSelector ? { podSelector } : {}),
      });
      return { ips: e.ips };
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
      },
      ["x"],
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
    expect(err).toContain("podSelector is for ovn");
  });
});
