// RBAC as a contract: every Kubernetes provisioner kind runs its whole lifecycle (preview, up,
// refresh, adopt where the kind has it, a CidrAssignment where it has one, destroy) as the user
// `contract`, bound to exactly the ClusterRoles docs/provisioners.md gives for the kind, read from
// the docs themselves: a verb the code needs and the docs lack fails here with the API server's 403.
// `pulumi-egress-ipam check` runs with the common role alone, as docs/cli.md says it may.
// ocp-static with `cloud: aws` (moto's EC2) adds the documented cloud role.
import * as fs from "node:fs";
import * as path from "node:path";
import { UnassignPrivateIpAddressesCommand } from "@aws-sdk/client-ec2";
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { antreaObjectName } from "../../provider/provisioners/kubernetes/antrea/antrea";
import { ciliumObjectName } from "../../provider/provisioners/kubernetes/cilium/cilium";
import { ovnObjectName } from "../../provider/provisioners/kubernetes/ovn/ovn";
import { runCli } from "../support/cli";
import {
  createWorld,
  interfacesIn,
  ec2Client,
  motoCredentials,
  secondaryIps,
  startMoto,
  type MotoServer,
} from "../support/moto";
import { changesOf, Harness } from "../support/harness";
import { kube, testKubeconfig, uniqueName } from "../support/kube";
import {
  egressIpObjectIps,
  hostSubnetIps,
  netNamespaceIps,
  sdnWorld,
  setHostSubnetIps,
  type SdnWorld,
} from "../support/sdn-world";

type Pkg = typeof import("../../provider/index");
type Kind = "ocp-static" | "ocp-dynamic" | "ovn" | "antrea" | "cilium";
type Role = { name: string; rules: k8s.V1PolicyRule[] };

const docsFile = path.resolve(__dirname, "..", "..", "docs", "provisioners.md");
/** The role every kind is bound to (and all `check` needs). */
const observeRole = "egress-ipam-observe";
const kindRole = (kind: Kind) => `egress-ipam-${kind}`;

/** The ClusterRoles of the first yaml block of the docs' RBAC section, by name. */
function documentedRoles(): Map<string, Role> {
  const text = fs.readFileSync(docsFile, "utf8");
  const section = /^### RBAC\n([\s\S]*?)(?=^#{2,3} )/m.exec(text + "\n## end")?.[1];
  const block = section && /```yaml\n([\s\S]*?)```/.exec(section)?.[1];
  if (!block) throw new Error(`${docsFile}: no yaml block in the "### RBAC" section`);
  const roles = new Map<string, Role>();
  for (const doc of k8s.loadAllYaml(block) as (k8s.V1ClusterRole | null)[]) {
    if (doc?.kind !== "ClusterRole") continue;
    roles.set(doc.metadata!.name!, { name: doc.metadata!.name!, rules: doc.rules ?? [] });
  }
  return roles;
}

/** The documented roles of a kind: the common one and the kind's own (and the cloud one, with `cloud`). */
function rolesOf(kind: Kind | "check", cloud = false): Role[] {
  const roles = documentedRoles();
  const names =
    kind === "check" ? [observeRole] : [observeRole, kindRole(kind), ...(cloud ? ["egress-ipam-cloud"] : [])];
  return names.map((name) => {
    const role = roles.get(name);
    if (!role)
      throw new Error(
        `${docsFile} documents no ClusterRole ${name} (it has ${[...roles.keys()].join(", ")})`,
      );
    return role;
  });
}

const user = { kind: "User", apiGroup: "rbac.authorization.k8s.io", name: "contract" };

/** Every (group, resource, verb) the rules grant. */
const grantsOf = (roles: Role[]) =>
  roles.flatMap((r) =>
    r.rules.flatMap((rule) =>
      (rule.apiGroups ?? []).flatMap((group) =>
        (rule.resources ?? []).flatMap((resource) =>
          (rule.verbs ?? []).map((verb) => ({ group, resource, verb })),
        ),
      ),
    ),
  );

/** Whether the API server's authorizer lets `contract` do it now. */
async function allowed(g: { group: string; resource: string; verb: string }): Promise<boolean> {
  const review = await kube()
    .config.makeApiClient(k8s.AuthorizationV1Api)
    .createSubjectAccessReview({ body: { spec: { user: "contract", resourceAttributes: g } } });
  return review.status?.allowed === true;
}

/** Waits until every grant is (or no grant is) in effect: RBAC reaches the authorizer through a watch. */
async function settle(grants: ReturnType<typeof grantsOf>, want: boolean): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const now = await Promise.all(grants.map(allowed));
    if (now.every((a) => a === want)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`RBAC grants did not ${want ? "take effect" : "go away"} in 10 s`);
}

/** Binds `contract` to copies (uniquely named) of the roles; `revoke` deletes them and waits until they are gone. */
async function grant(roles: Role[]): Promise<{ revoke(): Promise<void> }> {
  const { rbac } = kube();
  const prefix = uniqueName("rbac-test");
  const names = roles.map((r) => `${prefix}-${r.name}`);
  for (const [i, role] of roles.entries()) {
    await rbac.createClusterRole({ body: { metadata: { name: names[i] }, rules: role.rules } });
    await rbac.createClusterRoleBinding({
      body: {
        metadata: { name: names[i] },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: names[i]! },
        subjects: [user],
      },
    });
  }
  await settle(grantsOf(roles), true);
  return {
    async revoke() {
      for (const name of names) {
        await rbac.deleteClusterRoleBinding({ name }).catch(() => undefined);
        await rbac.deleteClusterRole({ name }).catch(() => undefined);
      }
      await settle(grantsOf(roles), false);
    },
  };
}

const octet = () => 1 + Math.floor(Math.random() * 250);
const ovnApi = "k8s.ovn.org/v1";
const sdnApi = "network.openshift.io/v1";

/** The addresses the kind's objects give a namespace, read as the admin. */
async function addressesOf(kind: Kind, namespace: string): Promise<string[]> {
  const { objects } = kube();
  switch (kind) {
    case "ocp-static":
    case "ocp-dynamic":
      return netNamespaceIps(namespace);
    case "ovn":
      return egressIpObjectIps(namespace);
    case "antrea": {
      const list = await objects.list("crd.antrea.io/v1beta1", "Egress");
      return (list.items as (k8s.KubernetesObject & { spec: { egressIP: string } })[])
        .filter((e) => e.metadata?.name === antreaObjectName(namespace, e.spec.egressIP))
        .map((e) => e.spec.egressIP);
    }
    case "cilium": {
      const list = await objects.list("cilium.io/v2", "CiliumEgressGatewayPolicy");
      const policy = (
        list.items as (k8s.KubernetesObject & { spec: { egressGateways?: { egressIP: string }[] } })[]
      ).find((p) => p.metadata?.name === ciliumObjectName(namespace));
      return (policy?.spec.egressGateways ?? []).map((g) => g.egressIP);
    }
  }
}

/** Changes, as the admin, what the kind wrote for a namespace: an address off its list, or a spec field. */
async function tamper(kind: Kind, namespace: string): Promise<void> {
  const { objects } = kube();
  const ref = {
    "ocp-static": { apiVersion: sdnApi, kind: "NetNamespace", name: namespace },
    "ocp-dynamic": { apiVersion: sdnApi, kind: "NetNamespace", name: namespace },
    ovn: { apiVersion: ovnApi, kind: "EgressIP", name: ovnObjectName(namespace) },
    antrea: {
      apiVersion: "crd.antrea.io/v1beta1",
      kind: "Egress",
      name: antreaObjectName(namespace, (await addressesOf(kind, namespace))[0]!),
    },
    cilium: {
      apiVersion: "cilium.io/v2",
      kind: "CiliumEgressGatewayPolicy",
      name: ciliumObjectName(namespace),
    },
  }[kind];
  const o = (await objects.read({ ...ref, metadata: { name: ref.name } })) as k8s.KubernetesObject & {
    egressIPs?: string[];
    spec: Record<string, unknown>;
  };
  if (kind === "ocp-static" || kind === "ocp-dynamic") o.egressIPs = o.egressIPs!.slice(1);
  else if (kind === "ovn") o.spec.egressIPs = (o.spec.egressIPs as string[]).slice(1);
  else if (kind === "antrea") o.spec.externalIPPool = "another-pool";
  else o.spec.destinationCIDRs = ["10.0.0.0/8"];
  await objects.replace(o);
}

/** A hand-made EgressIP object that selects `namespace` alone, placed on `node` (as ovnkube reports it). */
async function handMadeEgressIp(name: string, namespace: string, ip: string, node: string) {
  const { objects } = kube();
  await objects.create({
    apiVersion: ovnApi,
    kind: "EgressIP",
    metadata: { name },
    spec: {
      egressIPs: [ip],
      namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": namespace } },
    },
  } as k8s.KubernetesObject);
  const o = (await objects.read({ apiVersion: ovnApi, kind: "EgressIP", metadata: { name } })) as Record<
    string,
    unknown
  >;
  await objects.replace({ ...o, status: { items: [{ node, egressIP: ip }] } } as k8s.KubernetesObject);
}

/** `spec.egressIPs` of an EgressIP object by name (`[]` when it is gone). */
async function egressIpIps(name: string): Promise<string[]> {
  try {
    const o = (await kube().objects.read({ apiVersion: ovnApi, kind: "EgressIP", metadata: { name } })) as {
      spec?: { egressIPs?: string[] };
    };
    return o.spec?.egressIPs ?? [];
  } catch (err) {
    if ((err as { code?: number }).code === 404) return [];
    throw err;
  }
}

/** What each kind needs around it, and whether it adopts and assigns CIDRs. */
const cases: { kind: Kind; adopt: boolean; cidrs: boolean }[] = [
  { kind: "ocp-static", adopt: true, cidrs: false },
  { kind: "ocp-dynamic", adopt: true, cidrs: true },
  { kind: "ovn", adopt: true, cidrs: true },
  { kind: "antrea", adopt: false, cidrs: false },
  { kind: "cilium", adopt: false, cidrs: false },
];

describe.each(cases)(
  "$kind as a user bound to exactly the documented ClusterRoles",
  ({ kind, adopt, cidrs }) => {
    const net = `10.71.${octet()}`;
    const subnet = `${net}.0/24`;
    const adoptedIp = `${net}.5`;
    const handMade = uniqueName("rbac-hand-made");
    const h = Harness.create(`rbac-${kind}`, { env: { KUBECONFIG: testKubeconfig() } });
    let w: SdnWorld<"a1" | "b1", "x" | "y">;
    let granted: { revoke(): Promise<void> } | undefined;

    const sdn = kind === "ocp-static" || kind === "ocp-dynamic";
    const provisioner = () => ({
      kind,
      context: "contract@test",
      nodeSelector: w.selector,
      ...(kind === "antrea" ? { externalIPPool: "egress-pool" } : {}),
    });
    const program = () => async () => {
      const { IpPool, EgressIp, CidrAssignment } = h.pkg<Pkg>("pulumi-egress-ipam");
      const pool = new IpPool("egress", { ranges: [{ subnet: `${net}.0/28` }] });
      const x = new EgressIp("team-x", {
        pool,
        namespace: w.ns.x,
        failureDomains: [w.zone("a"), w.zone("b")],
        provisioner: provisioner() as never,
      });
      const out: Record<string, unknown> = { ips: x.ips, hosts: x.hosts };
      if (adopt) {
        const y = new EgressIp("team-y", {
          pool,
          namespace: w.ns.y,
          failureDomains: [w.zone("a")],
          provisioner: provisioner() as never,
          adopt: true,
        });
        out.adopted = y.ips;
      }
      if (cidrs) {
        const c = new CidrAssignment("cidrs", {
          pool,
          provisioner: provisioner() as never,
          ...(kind === "ovn" ? { failureDomain: w.zone("a") } : { hosts: [w.node.a1, w.node.b1] }),
        });
        out.assigned = c.hosts;
      }
      return out;
    };

    beforeAll(async () => {
      const ipconfig = {
        "cloud.network.openshift.io/egress-ipconfig": JSON.stringify([
          { interface: "eth0", ifaddr: { ipv4: subnet }, capacity: { ipv4: 8 } },
        ]),
      };
      w = await sdnWorld(
        {
          a1: sdn ? { zone: "a" } : { zone: "a", hostSubnet: false, annotations: ipconfig },
          b1: sdn ? { zone: "b" } : { zone: "b", hostSubnet: false, annotations: ipconfig },
        },
        ["x", "y"],
        { netNamespaces: sdn },
      );
      // What the cluster already gives namespace y, as an administrator or the SDN left it.
      if (adopt && sdn) {
        const { objects } = kube();
        const ref = { apiVersion: sdnApi, kind: "NetNamespace", metadata: { name: w.ns.y } };
        const nn = (await objects.read(ref)) as Record<string, unknown>;
        await objects.replace({ ...nn, egressIPs: [adoptedIp] } as k8s.KubernetesObject);
        await setHostSubnetIps(w.node.a1, [adoptedIp]);
      }
      if (adopt && kind === "ovn") await handMadeEgressIp(handMade, w.ns.y, adoptedIp, w.node.a1);
      granted = await grant(rolesOf(kind));
      await h.program(program());
    });
    afterAll(async () => {
      if (granted) await h.destroy().catch(() => undefined);
      h.dispose();
      await granted?.revoke();
      await kube()
        .objects.delete({ apiVersion: ovnApi, kind: "EgressIP", metadata: { name: handMade } })
        .catch(() => undefined);
      await w?.cleanup();
    });

    it("preview plans every address and host (the adopted one where it is)", async () => {
      const preview = await h.preview();
      for (const d of ["a", "b"]) {
        const planned = preview.planned(`EgressIpAssignment::team-x-${w.zone(d)}`);
        expect(planned?.ip).toMatch(new RegExp(`^${net.replaceAll(".", "\\.")}\\.`));
        expect(planned?.host).toBeTruthy();
      }
      if (adopt) {
        expect(preview.planned(`IpAllocation::team-y-${w.zone("a")}`)?.ip).toBe(adoptedIp);
        expect(preview.planned(`EgressIpAssignment::team-y-${w.zone("a")}`)?.host).toBe(
          kind === "ocp-dynamic" ? "(automatic)" : w.node.a1,
        );
      }
    });

    it("up writes the namespace's addresses", async () => {
      const up = await h.up();
      const ips = up.outputs.ips!.value as string[];
      expect(ips).toHaveLength(2);
      expect((await addressesOf(kind, w.ns.x)).sort()).toEqual([...ips].sort());
      if (adopt) expect(up.outputs.adopted!.value).toEqual([adoptedIp]);
      if (cidrs) expect(up.outputs.assigned!.value).not.toEqual([]);
      // Antrea's agents report the Node of each address, where it was planned.
      if (kind === "antrea") {
        const hosts = up.outputs.hosts!.value as string[];
        for (const [i, ip] of ips.entries()) {
          await kube()
            .config.makeApiClient(k8s.CustomObjectsApi)
            .patchClusterCustomObjectStatus(
              {
                group: "crd.antrea.io",
                version: "v1beta1",
                plural: "egresses",
                name: antreaObjectName(w.ns.x, ip),
                body: { status: { egressNode: hosts[i] } },
              },
              k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
            );
        }
      }
    });

    it("refresh finds what was changed behind its back, and up puts it back", async () => {
      await tamper(kind, w.ns.x);
      expect(changesOf((await h.refresh()).summary.resourceChanges).update).toBeGreaterThan(0);
      await h.up();
      expect(changesOf((await h.refresh()).summary.resourceChanges)).toEqual({});
    });

    it("check, with the common role alone, reads every address back", async () => {
      await granted!.revoke();
      granted = undefined;
      const observe = await grant(rolesOf("check"));
      try {
        const run = await runCli(["check", "--stack", h.fqStackName, "--json"], h.env);
        expect(run.stderr).toBe("");
        const report = JSON.parse(run.stdout) as { findings: unknown[]; skipped?: unknown };
        expect(report.findings.filter((f) => (f as { kind?: string }).kind !== "misplaced")).toEqual([]);
      } finally {
        await observe.revoke();
        granted = await grant(rolesOf(kind));
      }
    });

    it("destroy takes off what it wrote", async () => {
      await h.destroy();
      expect(await addressesOf(kind, w.ns.x)).toEqual([]);
      if (adopt && sdn) expect(await addressesOf(kind, w.ns.y)).toEqual([]);
      if (adopt && kind === "ovn") expect(await egressIpIps(handMade)).toEqual([]);
      // ocp-dynamic: the SDN master (not running here) takes it off the HostSubnet.
      if (adopt && kind === "ocp-static") expect(await hostSubnetIps(w.node.a1)).toEqual([]);
    });
  },
);

// With cloud: aws the address is also an instance's secondary IP (moto's EC2): the Node's providerID
// names the instance, read with the extra role the docs give for `cloud`.
describe("ocp-static with cloud: aws as a user bound to exactly the documented ClusterRoles", () => {
  const region = "us-east-1";
  const zone = "us-east-1a";
  let moto: MotoServer;
  let w: SdnWorld<"a1", "x">;
  let subnetId = "";
  let granted: { revoke(): Promise<void> } | undefined;
  let h: Harness | undefined;

  beforeAll(async () => {
    moto = await startMoto();
    const world = await createWorld(ec2Client(moto.endpoint, region), {
      region,
      subnets: { [zone]: "10.0.1.0/24" },
      instances: { [zone]: [{}] },
    });
    subnetId = world.subnetIds[zone]!;
    w = await sdnWorld({ a1: { zone: "a", providerID: `aws:///${zone}/${world.instanceIds[zone]![0]}` } }, [
      "x",
    ]);
    granted = await grant(rolesOf("ocp-static", true));
  }, 120_000);
  afterAll(async () => {
    if (granted) await h?.destroy().catch(() => undefined);
    h?.dispose();
    await granted?.revoke();
    await w?.cleanup();
    await moto?.stop();
  });

  it("up makes the address a secondary IP of the Node's instance and puts it on its HostSubnet; destroy takes both off", async () => {
    h = Harness.create("rbac-ocp-static-aws", { env: { ...motoCredentials, KUBECONFIG: testKubeconfig() } });
    const harness = h;
    await h.program(async () => {
      const pkg = harness.pkg<Pkg>("pulumi-egress-ipam");
      const pool = new pkg.IpPool("egress", { ranges: [{ subnet: "10.0.1.0/24" }], cloudReserved: "aws" });
      const e = new pkg.EgressIp("team", {
        pool,
        namespace: w.ns.x,
        failureDomains: [w.zone("a")],
        provisioner: {
          kind: "ocp-static",
          context: "contract@test",
          nodeSelector: w.selector,
          cloud: { kind: "aws", region, endpoint: moto.endpoint },
        },
      });
      return { ips: e.ips };
    });
    await h.preview();
    const [ip] = (await h.up()).outputs.ips!.value as string[];
    const ec2 = ec2Client(moto.endpoint, region);
    expect(Object.values(await secondaryIps(ec2, [subnetId]))).toEqual([[ip]]);
    expect(await hostSubnetIps(w.node.a1)).toEqual([ip]);
    await h.refresh();

    // check, with the common role alone, reads the EC2 side too; the secondary IP taken off by hand
    // is missing there (before issue 54 it read the HostSubnets only, and found nothing).
    await granted!.revoke();
    granted = undefined;
    const observe = await grant(rolesOf("check"));
    try {
      const check = async () => {
        const run = await runCli(["check", "--stack", harness.fqStackName, "--json"], harness.env);
        expect(run.stderr).toBe("");
        const doc = JSON.parse(run.stdout) as {
          provisioners: { side?: string; seen?: number }[];
          findings: { kind: string; ip: string; side?: string }[];
        };
        return { code: run.code, seen: doc.provisioners.map((p) => [p.side ?? "kind", p.seen]), doc };
      };
      const clean = await check();
      expect([clean.code, clean.seen, clean.doc.findings]).toEqual([
        0,
        [
          ["kind", 1],
          ["cloud", 1],
        ],
        [],
      ]);
      const eni = (await interfacesIn(ec2, [subnetId]))[0]!.NetworkInterfaceId;
      await ec2.send(
        new UnassignPrivateIpAddressesCommand({ NetworkInterfaceId: eni, PrivateIpAddresses: [ip!] }),
      );
      const removed = await check();
      expect(removed.code).toBe(1);
      expect(removed.doc.findings).toEqual([expect.objectContaining({ kind: "missing", ip, side: "cloud" })]);
    } finally {
      await observe.revoke();
      granted = await grant(rolesOf("ocp-static", true));
    }
    await h.destroy();
    expect(await secondaryIps(ec2, [subnetId])).toEqual({});
    expect(await hostSubnetIps(w.node.a1)).toEqual([]);
  });
});
