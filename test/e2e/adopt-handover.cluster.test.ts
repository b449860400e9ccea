// An address handed over with `adopt: true` stays where it is when its old owner lets go, with the
// real engine and the real kube-apiserver, for every Kubernetes kind. Stack OLD places it; stack
// NEW (another project, the same namespace and pool range) adopts it and becomes its recorded owner;
// OLD's destroy succeeds and leaves the address on the platform, NEW's refresh and preview find
// nothing to change, and NEW's destroy takes it off. The same inside one stack: an EgressIp renamed
// with adopt: true (the new one is created, adopting, before the old one is deleted). And OLD, kept in
// its program after NEW adopted: its refresh reports the address as not its own, and its next `up`
// fails naming NEW rather than taking the address back.
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { antreaObjectName } from "../../provider/provisioners/kubernetes/antrea/antrea";
import { ciliumObjectName } from "../../provider/provisioners/kubernetes/cilium/cilium";
import { ovnObjectName } from "../../provider/provisioners/kubernetes/ovn/ovn";
import { ownersAnnotation } from "../../provider/provisioners/kubernetes/owners";
import { changesOf, Harness } from "../support/harness";
import { deleteClusterObjects, kube, testKubeconfig } from "../support/kube";
import { hostSubnetIps, sdnWorld, type SdnWorld } from "../support/sdn-world";

type Pkg = typeof import("../../provider/index");
const net = `10.36.${1 + Math.floor(Math.random() * 250)}`;
const kinds = ["ovn", "ocp-static", "ocp-dynamic", "antrea", "cilium"] as const;
type Kind = (typeof kinds)[number];
/** Kinds that read a namespace's addresses from the cluster: `adopt` needs no `ips` for them. */
const readsNamespace = (kind: Kind) => kind === "ovn" || kind === "ocp-static" || kind === "ocp-dynamic";
const api = {
  ovn: "k8s.ovn.org/v1",
  sdn: "network.openshift.io/v1",
  antrea: "crd.antrea.io/v1beta1",
  cilium: "cilium.io/v2",
};

type Obj = k8s.KubernetesObject & Record<string, unknown>;
async function readOrNone(apiVersion: string, kind: string, name: string): Promise<Obj | undefined> {
  try {
    return (await kube().objects.read({ apiVersion, kind, metadata: { name } })) as Obj;
  } catch (err) {
    if ((err as { code?: number }).code === 404) return undefined;
    throw err;
  }
}
const spec = (o: Obj | undefined) => (o?.spec ?? {}) as Record<string, unknown>;
const ownersOf = (o: Obj | undefined, ip: string): string[] | undefined => {
  const raw = o?.metadata?.annotations?.[ownersAnnotation];
  return raw === undefined ? undefined : (JSON.parse(raw) as Record<string, string[]>)[ip];
};

describe("adopt: true hands an address over; the old owner's delete leaves it in place", () => {
  let w: SdnWorld<"n1" | "n2", Kind | `${Kind}-r` | `${Kind}-d`>;
  const harnesses: Harness[] = [];
  const stack = (project: string) => {
    const h = Harness.create(project, { env: { KUBECONFIG: testKubeconfig() } });
    harnesses.push(h);
    return h;
  };

  /** Which objects of the kind carry `ip` for `namespace` now, and who the owner record names for it. */
  const platform = async (kind: Kind, namespace: string, ip: string) => {
    const where: string[] = [];
    let record: Obj | undefined;
    if (kind === "ovn") {
      record = await readOrNone(api.ovn, "EgressIP", ovnObjectName(namespace));
      if (((spec(record).egressIPs as string[]) ?? []).includes(ip))
        where.push(`EgressIP ${ovnObjectName(namespace)}`);
    } else if (kind === "ocp-static" || kind === "ocp-dynamic") {
      record = await readOrNone(api.sdn, "NetNamespace", namespace);
      if (((record?.egressIPs as string[]) ?? []).includes(ip)) where.push(`NetNamespace ${namespace}`);
      for (const node of [w.node.n1, w.node.n2])
        if ((await hostSubnetIps(node)).includes(ip)) where.push(`HostSubnet ${node}`);
    } else if (kind === "antrea") {
      record = await readOrNone(api.antrea, "Egress", antreaObjectName(namespace, ip));
      if (spec(record).egressIP === ip) where.push(`Egress ${antreaObjectName(namespace, ip)}`);
    } else {
      record = await readOrNone(api.cilium, "CiliumEgressGatewayPolicy", ciliumObjectName(namespace));
      const gateways = (spec(record).egressGateways as { egressIP: string }[] | undefined) ?? [];
      if (gateways.some((g) => g.egressIP === ip))
        where.push(`CiliumEgressGatewayPolicy ${ciliumObjectName(namespace)}`);
    }
    return { where, owners: ownersOf(record, ip) };
  };
  /** What the kind writes for an address on `host`. */
  const placed = (kind: Kind, namespace: string, ip: string, host: string) =>
    ({
      ovn: [`EgressIP ${ovnObjectName(namespace)}`],
      "ocp-static": [`NetNamespace ${namespace}`, `HostSubnet ${host}`],
      "ocp-dynamic": [`NetNamespace ${namespace}`],
      antrea: [`Egress ${antreaObjectName(namespace, ip)}`],
      cilium: [`CiliumEgressGatewayPolicy ${ciliumObjectName(namespace)}`],
    })[kind];

  const program =
    (
      h: Harness,
      kind: Kind,
      namespace: string,
      subnet: string,
      opts: { name?: string; adopt?: boolean; ips?: string[] } = {},
    ) =>
    async () => {
      const pkg = h.pkg<Pkg>("pulumi-egress-ipam");
      const pool = new pkg.IpPool("egress", { ranges: [{ subnet }] });
      const e = new pkg.EgressIp(opts.name ?? "team", {
        pool,
        namespace,
        failureDomains: [w.zone("a")],
        provisioner: { kind, nodeSelector: w.selector },
        ...(opts.adopt ? { adopt: true } : {}),
        ...(opts.ips ? { ips: opts.ips } : {}),
      });
      return { ips: e.ips, hosts: e.hosts };
    };
  /** The owner the stack's (only live) EgressIpAssignment records on the objects it writes. */
  const ownerIn = async (h: Harness, name: string) => {
    const r = (await h.resources()).find(
      (x) => x.type.endsWith("EgressIpAssignment") && x.urn.includes(name),
    );
    return (r?.outputs?.ownerId ?? r?.inputs?.ownerId) as string;
  };
  /** As Antrea's agent reports where it put an Egress (refresh compares it with the host). */
  const asAntrea = async (kind: Kind, namespace: string, ip: string, host: string) => {
    if (kind !== "antrea") return;
    await kube()
      .config.makeApiClient(k8s.CustomObjectsApi)
      .patchClusterCustomObjectStatus(
        {
          group: "crd.antrea.io",
          version: "v1beta1",
          plural: "egresses",
          name: antreaObjectName(namespace, ip),
          body: { status: { egressNode: host } },
        },
        k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
      );
  };
  const noDrift = async (h: Harness) => {
    expect(changesOf((await h.refresh()).summary.resourceChanges)).toEqual({});
    expect(changesOf((await h.preview()).changeSummary)).toEqual({});
  };

  beforeAll(async () => {
    w = await sdnWorld({ n1: { zone: "a" }, n2: { zone: "a" } }, [
      ...kinds,
      ...kinds.map((k) => `${k}-r` as const),
      ...kinds.map((k) => `${k}-d` as const),
    ]);
  });
  afterAll(async () => {
    for (const h of harnesses) await h.destroy().catch(() => undefined);
    for (const h of harnesses) h.dispose();
    const namespaces = Object.values(w?.ns ?? {});
    await deleteClusterObjects(
      api.cilium,
      "CiliumEgressGatewayPolicy",
      namespaces.map((n) => ciliumObjectName(n)),
    );
    await w?.cleanup();
  });

  it.each(kinds.map((kind, i) => [kind, i] as const))(
    "%s: another stack adopts it; the old stack's destroy leaves it, the new one's takes it off",
    async (kind, i) => {
      const namespace = w.ns[kind];
      const subnet = `${net}.${16 * i}/28`;
      const old = stack(`handover-old-${kind}`);
      await old.program(program(old, kind, namespace, subnet));
      const up = await old.up();
      const [ip] = up.outputs.ips!.value as string[];
      const [host] = up.outputs.hosts!.value as string[];
      await asAntrea(kind, namespace, ip!, host!);
      expect((await platform(kind, namespace, ip!)).where).toEqual(placed(kind, namespace, ip!, host!));

      const adopter = stack(`handover-new-${kind}`);
      await adopter.program(
        program(adopter, kind, namespace, subnet, {
          adopt: true,
          ...(readsNamespace(kind) ? {} : { ips: [ip!] }),
        }),
      );
      const taken = await adopter.up();
      expect(taken.outputs.ips!.value).toEqual([ip]);
      expect(taken.outputs.hosts!.value).toEqual([host]);
      const owner = await ownerIn(adopter, "team");
      expect(owner).toMatch(/ urn:pulumi:/);
      expect(await platform(kind, namespace, ip!)).toEqual({
        where: placed(kind, namespace, ip!, host!),
        owners: [owner],
      });

      // The address is NEW's now: OLD's destroy succeeds and takes nothing off.
      await old.destroy();
      expect(await platform(kind, namespace, ip!)).toEqual({
        where: placed(kind, namespace, ip!, host!),
        owners: [owner],
      });
      await noDrift(adopter);

      await adopter.destroy();
      expect((await platform(kind, namespace, ip!)).where).toEqual([]);
    },
    400_000,
  );

  it.each(kinds.map((kind, i) => [kind, i] as const))(
    "%s: an EgressIp renamed with adopt: true in one up keeps its address",
    async (kind, i) => {
      const namespace = w.ns[`${kind}-r`];
      const subnet = `${net}.${128 + 16 * i}/28`;
      const h = stack(`handover-rename-${kind}`);
      await h.program(program(h, kind, namespace, subnet));
      const up = await h.up();
      const [ip] = up.outputs.ips!.value as string[];
      const [host] = up.outputs.hosts!.value as string[];
      await asAntrea(kind, namespace, ip!, host!);

      // The new EgressIp is created (adopting the address) before the old one is deleted.
      await h.program(program(h, kind, namespace, subnet, { name: "renamed", adopt: true, ips: [ip!] }));
      const renamed = await h.up();
      expect(renamed.outputs.ips!.value).toEqual([ip]);
      expect(changesOf(renamed.summary.resourceChanges)).toEqual({ create: 3, delete: 3 });
      const owner = await ownerIn(h, "renamed");
      expect(owner).toMatch(/ urn:pulumi:.*renamed/);
      expect(await platform(kind, namespace, ip!)).toEqual({
        where: placed(kind, namespace, ip!, host!),
        owners: [owner],
      });
      await noDrift(h);

      await h.destroy();
      expect((await platform(kind, namespace, ip!)).where).toEqual([]);
    },
    400_000,
  );

  it.each(kinds.map((kind, i) => [kind, i] as const))(
    "%s: the old stack's refresh reports an adopted address as not its own, and its up does not take it back",
    async (kind, i) => {
      const namespace = w.ns[`${kind}-d`];
      const subnet = `${net}.${208 + 8 * i}/29`;
      const old = stack(`handover-drift-old-${kind}`);
      await old.program(program(old, kind, namespace, subnet));
      const up = await old.up();
      const [ip] = up.outputs.ips!.value as string[];
      const [host] = up.outputs.hosts!.value as string[];
      await asAntrea(kind, namespace, ip!, host!);

      const adopter = stack(`handover-drift-new-${kind}`);
      await adopter.program(
        program(adopter, kind, namespace, subnet, {
          adopt: true,
          ...(readsNamespace(kind) ? {} : { ips: [ip!] }),
        }),
      );
      await adopter.up();
      const owner = await ownerIn(adopter, "team");
      expect(owner).toMatch(/ urn:pulumi:.*handover-drift-new/);
      const theirs = { where: placed(kind, namespace, ip!, host!), owners: [owner] };
      expect(await platform(kind, namespace, ip!)).toEqual(theirs);

      // OLD's refresh: the address is on its host, but NEW's now: drift, naming NEW.
      expect(changesOf((await old.refresh()).summary.resourceChanges)).toEqual({ update: 1 });
      const state = (await old.resources()).find((x) => x.type.endsWith("EgressIpAssignment"))!;
      expect(state.outputs).toMatchObject({ host: "", placement: { state: "missing", from: host } });
      const reason = (state.outputs!.placement as { reason: string }).reason;
      expect(reason).toContain(ip!);
      expect(reason).toContain(`taken over by ${owner} (adopt)`);

      // OLD's up fails naming NEW, and NEW's record and the platform object stay NEW's.
      await expect(old.up()).rejects.toThrow(owner);
      expect(await platform(kind, namespace, ip!)).toEqual(theirs);
      await noDrift(adopter);

      await old.destroy();
      expect(await platform(kind, namespace, ip!)).toEqual(theirs);
      await adopter.destroy();
      expect((await platform(kind, namespace, ip!)).where).toEqual([]);
    },
    400_000,
  );
});
