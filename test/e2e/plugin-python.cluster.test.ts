// A Python program using this package through its plugin and the Python SDK generated from the
// plugin's schema (`npm run sdks`), run with the real engine and the Python language host: the
// exact addresses at preview, up, a second up that changes nothing, a new holder that moves none,
// an EgressIpAssignment on ovn whose EgressIP object, deleted by hand, is found by refresh and put
// back by up (test cluster), an input error refused at preview naming the property, and a destroy
// that leaves nothing.
import type * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { changesOf, type Harness } from "../support/harness";
import { pluginProject, pythonSdk, writeProjectFile } from "../support/plugin-project";
import { kube, testKubeconfig } from "../support/kube";
import { sdnWorld, type SdnWorld } from "../support/sdn-world";

const octet = 1 + Math.floor(Math.random() * 120);
const net = `10.23.${octet}`;
const ovn = "k8s.ovn.org/v1";
const ipconfig = (subnet: string) => ({
  "cloud.network.openshift.io/egress-ipconfig": JSON.stringify([
    { interface: "eth0", ifaddr: { ipv4: subnet }, capacity: { ipv4: 8 } },
  ]),
});

/** The program: a pool, a chain of allocations (`names`), and the first one's address egressing `namespace`. */
function program(
  names: string[],
  namespace: string,
  selector: Record<string, string>,
  zone: string,
  strategy = "lowest-free",
) {
  return `import pulumi
import pulumi_egress_ipam as ipam

pool = ipam.IpPool("pool", ranges=[ipam.IpPoolRangeArgs(subnet="${net}.0/24", range_start="${net}.10")], strategy="${strategy}")
before = None
holders = {}
for name in ${JSON.stringify(names)}:
    before = ipam.IpAllocation(name, pool=pool, after=before)
    holders[name] = before
    pulumi.export(name, before.ip)

egress = ipam.EgressIpAssignment(
    "egress",
    ip=holders["${names[0]}"].ip,
    namespace="${namespace}",
    failure_domain="${zone}",
    provisioner={"kind": "ovn", "nodeSelector": ${JSON.stringify(selector)}},
)
pulumi.export("host", egress.host)
`;
}

describe("a Python program through the egress-ipam plugin and its Python SDK", () => {
  let h: Harness;
  let w: SdnWorld<"a1" | "a2", "x">;
  const objectName = () => `egress-ipam-${w.ns.x}`;
  const objectExists = () =>
    kube()
      .objects.read({ apiVersion: ovn, kind: "EgressIP", metadata: { name: objectName() } })
      .then(
        (o) => (o as k8s.KubernetesObject & { spec: { egressIPs: string[] } }).spec.egressIPs,
        (e: { code?: number }) => (e.code === 404 ? undefined : Promise.reject(e)),
      );
  const write = (names: string[], strategy?: string) =>
    writeProjectFile(h, "__main__.py", program(names, w.ns.x, w.selector, w.zone("a"), strategy));

  beforeAll(async () => {
    w = await sdnWorld(
      {
        a1: { zone: "a", hostSubnet: false, annotations: ipconfig(`${net}.0/24`) },
        a2: { zone: "a", hostSubnet: false, annotations: ipconfig(`${net}.0/24`) },
      },
      ["x"],
      { netNamespaces: false },
    );
    const consumer = process.env.EGRESS_IPAM_CONSUMER!;
    h = pluginProject(
      consumer,
      "plugin-python",
      { "Pulumi.yaml": "name: plugin-python\nruntime: python\n", "__main__.py": "" },
      { env: { KUBECONFIG: testKubeconfig(), PYTHONPATH: pythonSdk(consumer) } },
    );
    write(["web", "api"]);
    await h.project();
  });
  afterAll(async () => {
    h?.dispose();
    await w?.cleanup();
  });

  it("refuses at preview a strategy the pool does not know, naming it", async () => {
    write(["web", "api"], "random");
    const err = String(await h.preview().catch((e: Error) => e));
    expect(err).toMatch(/strategy/);
    expect(err).toMatch(/random/);
    write(["web", "api"]);
  });

  it("preview shows each address and host, up creates exactly those, a second up changes nothing", async () => {
    const preview = await h.preview();
    expect([preview.planned("web")?.ip, preview.planned("api")?.ip]).toEqual([`${net}.10`, `${net}.11`]);
    const host = preview.planned("egress")?.host;
    expect([w.node.a1, w.node.a2]).toContain(host);
    const up = await h.up();
    expect([up.outputs.web?.value, up.outputs.api?.value, up.outputs.host?.value]).toEqual([
      `${net}.10`,
      `${net}.11`,
      host,
    ]);
    expect(await objectExists()).toEqual([`${net}.10`]);
    expect(changesOf((await h.up()).summary.resourceChanges as Record<string, number>)).toEqual({});
  });

  it("a new holder moves none; refresh finds the EgressIP object deleted by hand and up puts it back", async () => {
    write(["web", "api", "db"]);
    const grown = await h.preview();
    expect([grown.op("web"), grown.op("api"), grown.op("db")]).toEqual(["same", "same", "create"]);
    expect(grown.planned("db")?.ip).toBe(`${net}.12`);
    await h.up();

    await kube().objects.delete({ apiVersion: ovn, kind: "EgressIP", metadata: { name: objectName() } });
    const refresh = await h.refresh();
    expect(changesOf(refresh.summary.resourceChanges as Record<string, number>)).toEqual({ update: 1 });
    expect((await h.preview()).op("egress")).toBe("update");
    await h.up();
    expect(await objectExists()).toEqual([`${net}.10`]);
    expect(changesOf((await h.preview()).changeSummary)).toEqual({});
  });

  it("destroy leaves nothing, in the stack or the cluster", async () => {
    await h.destroy();
    expect(await h.resources()).toEqual([]);
    expect(await objectExists()).toBeUndefined();
  });
});
