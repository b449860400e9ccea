// `adopt: true` with the cilium and antrea kinds takes over what the cluster already gives a
// namespace, with the real engine and the real kube-apiserver: a CiliumEgressGatewayPolicy and
// Antrea Egresses made by hand (the test writes status.egressNode as Antrea's agent would). Preview
// plans exactly their addresses, where they are; up moves nothing: each object is compared before
// and after, and what adoption adds (as for OVN's EgressIP object) is exactly the managed-by label,
// the owner record (`egress-ipam/owners`) and the namespace it serves (`egress-ipam/namespace`);
// refresh and a second preview find nothing; destroy takes the adopted objects off, as for OVN. A
// gateway on a group of Nodes is planned on the Node Cilium uses and pinned there by hostname.
// Refused at preview, nothing changed: an Egress of another externalIPPool, a policy of other
// destinations. Without `adopt`, for ovn, cilium and antrea alike, a hand-made object serving the
// whole namespace (however it selects it) is refused at preview beside an EgressIp of that
// namespace, naming it: the two would compete for the same Pods; `adopt: true` then plans its
// address.
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { changesOf, Harness } from "../support/harness";
import { kube, testKubeconfig } from "../support/kube";
import { sdnWorld, type SdnWorld } from "../support/sdn-world";

type Pkg = typeof import("../../provider/index");
const net = `10.37.${1 + Math.floor(Math.random() * 250)}`;
const cilium = { group: "cilium.io", version: "v2", plural: "ciliumegressgatewaypolicies" };
const antrea = { group: "crd.antrea.io", version: "v1beta1", plural: "egresses" };
const ovn = { group: "k8s.ovn.org", version: "v1", plural: "egressips" };
type Api = typeof cilium | typeof antrea | typeof ovn;
type Obj = k8s.KubernetesObject & { spec: Record<string, unknown>; status?: Record<string, unknown> };
const managedBy = { "app.kubernetes.io/managed-by": "pulumi-egress-ipam" };

const custom = () => kube().config.makeApiClient(k8s.CustomObjectsApi);
const create = (api: Api, kind: string, name: string, spec: Record<string, unknown>) =>
  custom().createClusterCustomObject({
    ...api,
    body: {
      apiVersion: `${api.group}/${api.version}`,
      kind,
      metadata: { name, labels: { team: "a" } },
      spec,
    },
  });
const read = (api: Api, name: string) => custom().getClusterCustomObject({ ...api, name }) as Promise<Obj>;
const exists = (api: Api, name: string) =>
  read(api, name).then(
    () => true,
    (e: { code?: number }) => (e.code === 404 ? false : Promise.reject(e)),
  );
const remove = (api: Api, name: string) =>
  custom()
    .deleteClusterCustomObject({ ...api, name })
    .catch(() => undefined);
/** Writes status.egressNode as Antrea's agent does, through the status subresource. */
const setEgressNode = (name: string, node: string) =>
  custom().patchClusterCustomObjectStatus(
    { ...antrea, name, body: { status: { egressNode: node } } },
    k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
  );
const pinned = (node: string, ip: string) => ({
  nodeSelector: { matchLabels: { "kubernetes.io/hostname": node } },
  egressIP: ip,
});
const podsOf = (namespace: string) => [
  { podSelector: { matchLabels: { "io.kubernetes.pod.namespace": namespace } } },
];

/**
 * `after` is `before` with exactly what adoption adds: the managed-by label, the owner record (one
 * owner per address) and the namespace; spec, status and generation as they were.
 */
function expectAdopted(before: Obj, after: Obj, namespace: string, owners: Record<string, string[]>) {
  const { annotations = {}, resourceVersion: _a, managedFields: _b, ...meta } = after.metadata!;
  const { [`egress-ipam/owners`]: record, ...rest } = annotations;
  const { resourceVersion: _c, managedFields: _d, ...was } = before.metadata!;
  expect({ ...after, metadata: meta }).toEqual({
    ...before,
    metadata: { ...was, labels: { ...before.metadata!.labels, ...managedBy } },
  });
  expect(rest).toEqual({ ...before.metadata!.annotations, "egress-ipam/namespace": namespace });
  expect(JSON.parse(record!)).toEqual(owners);
}

describe("adopt: true takes over a hand-made CiliumEgressGatewayPolicy and Antrea Egresses where they are", () => {
  let w: SdnWorld<"a1" | "a2" | "b1", "c" | "g" | "r" | "q1" | "q2" | "ho" | "hc" | "ha">;
  const harnesses: Harness[] = [];
  const made: [Api, string][] = [];
  const stack = (project: string) => {
    const h = Harness.create(project, { env: { KUBECONFIG: testKubeconfig() } });
    harnesses.push(h);
    return h;
  };
  const handMade = (api: Api, kind: string, key: string, spec: Record<string, unknown>) => {
    const name = `hand-made-${key}-${w.zone("x")}`;
    made.push([api, name]);
    return create(api, kind, name, spec).then(() => name);
  };
  const program =
    (
      h: Harness,
      namespace: string,
      subnet: string,
      domains: string[],
      provisioner: Record<string, unknown>,
      { adopt = true, podSelector }: { adopt?: boolean; podSelector?: Record<string, string> } = {},
    ) =>
    async () => {
      const pkg = h.pkg<Pkg>("pulumi-egress-ipam");
      const pool = new pkg.IpPool("egress", { ranges: [{ subnet, gateway: subnet.replace(/\/.*/, "") }] });
      const e = new pkg.EgressIp("team", {
        pool,
        namespace,
        failureDomains: domains,
        provisioner: { ...provisioner, nodeSelector: w.selector } as never,
        ...(adopt ? { adopt: true } : {}),
        ...(podSelector ? { podSelector } : {}),
      });
      return { ips: e.ips, hosts: e.hosts };
    };
  /** Preview plans exactly `ips` on `hosts`, taken over from `sources`, per domain in order. */
  const previewPlans = async (
    h: Harness,
    domains: string[],
    ips: string[],
    hosts: string[],
    sources: string[],
  ) => {
    const preview = await h.preview();
    const planned = domains.map((d) => ({
      ip: preview.planned(`IpAllocation::team-${d}`)?.ip,
      from: preview.planned(`IpAllocation::team-${d}`)?.adoptedFrom,
      host: preview.planned(`EgressIpAssignment::team-${d}`)?.host,
    }));
    expect(planned).toEqual(ips.map((ip, i) => ({ ip, from: sources[i], host: hosts[i] })));
  };
  /** The owner record each domain's EgressIpAssignment writes, by its address. */
  const ownersOf = async (h: Harness) => {
    const owners: Record<string, string[]> = {};
    for (const r of await h.resources())
      if (r.type.endsWith("EgressIpAssignment"))
        owners[r.outputs!.ip as string] = [r.outputs!.ownerId as string];
    return owners;
  };
  const noDrift = async (h: Harness) => {
    expect(changesOf((await h.refresh()).summary.resourceChanges)).toEqual({});
    expect(changesOf((await h.preview()).changeSummary)).toEqual({});
  };

  beforeAll(async () => {
    w = await sdnWorld(
      {
        a1: { zone: "a", hostSubnet: false },
        a2: { zone: "a", hostSubnet: false },
        b1: { zone: "b", hostSubnet: false },
      },
      ["c", "g", "r", "q1", "q2", "ho", "hc", "ha"],
      { netNamespaces: false },
    );
  });
  afterAll(async () => {
    for (const h of harnesses) await h.destroy().catch(() => undefined);
    for (const h of harnesses) h.dispose();
    for (const [api, name] of made) await remove(api, name);
    await w?.cleanup();
  });

  it("cilium: the policy's gateways stay as written; it is labelled and annotated ours; destroy deletes it", async () => {
    const [ipA, ipB] = [`${net}.9`, `${net}.4`];
    const domains = [w.zone("a"), w.zone("b")];
    // Gateways on a2 (zone a, not the least loaded choice: a1 is as free) and b1 (zone b).
    const name = await handMade(cilium, "CiliumEgressGatewayPolicy", "c", {
      selectors: podsOf(w.ns.c),
      destinationCIDRs: ["0.0.0.0/0"],
      egressGateway: pinned(w.node.a2, ipA),
      egressGateways: [pinned(w.node.a2, ipA), pinned(w.node.b1, ipB)],
    });
    const before = await read(cilium, name);
    const h = stack("adopt-cilium");
    await h.program(program(h, w.ns.c, `${net}.0/28`, domains, { kind: "cilium" }));
    const from = `CiliumEgressGatewayPolicy ${name}`;
    await previewPlans(h, domains, [ipA, ipB], [w.node.a2, w.node.b1], [from, from]);
    expect(await read(cilium, name)).toEqual(before);

    const up = await h.up();
    expect(up.outputs.ips!.value).toEqual([ipA, ipB]);
    expect(up.outputs.hosts!.value).toEqual([w.node.a2, w.node.b1]);
    expectAdopted(before, await read(cilium, name), w.ns.c, await ownersOf(h));
    expect(await exists(cilium, `egress-ipam-${w.ns.c}`)).toBe(false);
    await noDrift(h);

    await h.destroy();
    expect(await exists(cilium, name)).toBe(false);
  });

  it("cilium: a gateway on a group of Nodes is planned on the one Cilium uses and pinned there, nothing else changed", async () => {
    const ip = `${net}.20`;
    const domains = [w.zone("a")];
    // a1 and a2 match; Cilium sends the traffic through the first by name, a1.
    const group = {
      nodeSelector: { matchLabels: { ...w.selector, "topology.kubernetes.io/zone": w.zone("a") } },
      egressIP: ip,
    };
    const name = await handMade(cilium, "CiliumEgressGatewayPolicy", "g", {
      selectors: [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": w.ns.g } } }],
      destinationCIDRs: ["0.0.0.0/0"],
      excludedCIDRs: ["192.168.0.0/16"],
      egressGateway: group,
    });
    const before = await read(cilium, name);
    const h = stack("adopt-cilium-group");
    const provisioner = { kind: "cilium", excluded: ["192.168.0.0/16"] };
    await h.program(program(h, w.ns.g, `${net}.16/28`, domains, provisioner));
    await previewPlans(h, domains, [ip], [w.node.a1], [`CiliumEgressGatewayPolicy ${name}`]);
    await h.up();
    const after = await read(cilium, name);
    // The one change to the spec: the gateway pinned to a1 by hostname, in both gateway fields.
    expect(after.spec).toEqual({
      ...before.spec,
      egressGateway: pinned(w.node.a1, ip),
      egressGateways: [pinned(w.node.a1, ip)],
    });
    expectAdopted(
      {
        ...before,
        spec: after.spec,
        metadata: { ...before.metadata, generation: after.metadata!.generation },
      },
      after,
      w.ns.g,
      await ownersOf(h),
    );
    await noDrift(h);
  });

  it("antrea: each Egress stays as written, status included; it is labelled and annotated ours; destroy deletes it", async () => {
    const [ipA, ipB] = [`${net}.35`, `${net}.40`];
    const domains = [w.zone("a"), w.zone("b")];
    const appliedTo = { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": w.ns.r } } };
    const egressA = await handMade(antrea, "Egress", "ra", {
      appliedTo,
      egressIP: ipA,
      externalIPPool: "egress-pool",
    });
    const egressB = await handMade(antrea, "Egress", "rb", {
      appliedTo,
      egressIP: ipB,
      externalIPPool: "egress-pool",
    });
    await setEgressNode(egressA, w.node.a2);
    await setEgressNode(egressB, w.node.b1);
    const before = [await read(antrea, egressA), await read(antrea, egressB)];
    const h = stack("adopt-antrea");
    await h.program(
      program(h, w.ns.r, `${net}.32/28`, domains, { kind: "antrea", externalIPPool: "egress-pool" }),
    );
    await previewPlans(
      h,
      domains,
      [ipA, ipB],
      [w.node.a2, w.node.b1],
      [`Egress ${egressA}`, `Egress ${egressB}`],
    );

    const up = await h.up();
    expect(up.outputs.ips!.value).toEqual([ipA, ipB]);
    expect(up.outputs.hosts!.value).toEqual([w.node.a2, w.node.b1]);
    const owners = await ownersOf(h);
    expectAdopted(before[0]!, await read(antrea, egressA), w.ns.r, { [ipA]: owners[ipA]! });
    expectAdopted(before[1]!, await read(antrea, egressB), w.ns.r, { [ipB]: owners[ipB]! });
    for (const ip of [ipA, ipB]) expect(await exists(antrea, `egress-ipam-${w.ns.r}-${ip}`)).toBe(false);
    await noDrift(h);

    await h.destroy();
    expect([await exists(antrea, egressA), await exists(antrea, egressB)]).toEqual([false, false]);
  });

  it("refuses at preview, changing nothing, an Egress of another externalIPPool and a policy of other destinations", async () => {
    const egress = await handMade(antrea, "Egress", "q1", {
      appliedTo: { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": w.ns.q1 } } },
      egressIP: `${net}.50`,
      externalIPPool: "other-pool",
    });
    const policy = await handMade(cilium, "CiliumEgressGatewayPolicy", "q2", {
      selectors: podsOf(w.ns.q2),
      destinationCIDRs: ["10.0.0.0/8"],
      egressGateway: pinned(w.node.a1, `${net}.51`),
    });
    const snapshot = async () => [await read(antrea, egress), await read(cilium, policy)];
    const before = await snapshot();
    const domains = [w.zone("a")];
    const h = stack("adopt-refused");
    await h.program(
      program(h, w.ns.q1, `${net}.48/28`, domains, { kind: "antrea", externalIPPool: "egress-pool" }),
    );
    await expect(h.preview()).rejects.toThrow(
      new RegExp(
        `cannot take Egress ${egress} over: it has externalIPPool "other-pool" and the provisioner asks for "egress-pool"`,
      ),
    );
    await h.program(program(h, w.ns.q2, `${net}.48/28`, domains, { kind: "cilium" }));
    await expect(h.preview()).rejects.toThrow(
      new RegExp(
        `SCOPE_CONFLICT.*cannot take CiliumEgressGatewayPolicy ${policy} over: it sends destinations 10\\.0\\.0\\.0/8`,
      ),
    );
    expect(await snapshot()).toEqual(before);
  });

  // Each hand-made object selects the namespace another way: by a matchExpression on its name
  // (ovn), by a namespaceSelector (cilium), by name (antrea).
  it.each([
    {
      kind: "ovn",
      key: "ho" as const,
      api: ovn,
      objectKind: "EgressIP",
      spec: (ns: string, ip: string) => ({
        egressIPs: [ip],
        namespaceSelector: {
          matchExpressions: [{ key: "kubernetes.io/metadata.name", operator: "In", values: [ns] }],
        },
      }),
      provisioner: { kind: "ovn" },
    },
    {
      kind: "cilium",
      key: "hc" as const,
      api: cilium,
      objectKind: "CiliumEgressGatewayPolicy",
      spec: (ns: string, ip: string) => ({
        selectors: [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": ns } } }],
        destinationCIDRs: ["0.0.0.0/0"],
        egressGateway: pinned(w.node.a1, ip),
      }),
      provisioner: { kind: "cilium" },
    },
    {
      kind: "antrea",
      key: "ha" as const,
      api: antrea,
      objectKind: "Egress",
      spec: (ns: string, ip: string) => ({
        appliedTo: { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": ns } } },
        egressIP: ip,
        externalIPPool: "egress-pool",
      }),
      provisioner: { kind: "antrea", externalIPPool: "egress-pool" },
    },
  ])(
    "$kind: without adopt, a hand-made $objectKind serving the namespace is refused at preview, naming it; adopt: true plans its address",
    async ({ kind, key, api, objectKind, spec, provisioner }) => {
      const ip = `${net}.${{ ho: 66, hc: 67, ha: 68 }[key]}`;
      const ns = w.ns[key];
      const name = await handMade(api, objectKind, key, spec(ns, ip));
      const before = await read(api, name);
      const domains = [w.zone("a")];
      const h = stack(`hand-made-${kind}`);
      const subnet = `${net}.64/28`;
      /** The preview's error, or what it planned when it was not refused. */
      const refusal = () =>
        h.preview().then(
          (p) => `preview not refused: it planned ${p.planned(`IpAllocation::team-${domains[0]}`)?.ip}`,
          (e: Error) => String(e),
        );
      await h.program(program(h, ns, subnet, domains, provisioner, { adopt: false }));
      const err = await refusal();
      expect.soft(err).toContain("SCOPE_CONFLICT");
      expect.soft(err).toContain(`${objectKind} ${name}, not made by pulumi-egress-ipam, already serves`);
      expect.soft(err).toContain(`set adopt: true on the EgressIp to take it over`);
      // Some of the namespace's Pods: refused too (adopt takes over for the whole namespace only).
      await h.program(
        program(h, ns, subnet, domains, provisioner, { adopt: false, podSelector: { app: "web" } }),
      );
      const some = await refusal();
      expect.soft(some).toContain("SCOPE_CONFLICT");
      expect.soft(some).toContain(`${objectKind} ${name}`);
      await h.program(program(h, ns, subnet, domains, provisioner));
      const preview = await h.preview();
      expect({
        ip: preview.planned(`IpAllocation::team-${domains[0]}`)?.ip,
        from: preview.planned(`IpAllocation::team-${domains[0]}`)?.adoptedFrom,
      }).toEqual({ ip, from: `${objectKind} ${name}` });
      expect(await read(api, name)).toEqual(before);
    },
  );
});
