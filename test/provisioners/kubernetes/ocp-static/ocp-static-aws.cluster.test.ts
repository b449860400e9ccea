// ocp-static with cloud: { kind: "aws" } against moto's EC2 and the real kube-apiserver together:
// the address is a secondary IP of the node's instance and on its HostSubnet; a HostSubnet write
// that fails (injected: an impersonated user RBAC lets read but not update HostSubnets) undoes the
// EC2 step; an undo that fails too (injected by the EC2 fault proxy) is reported with both errors.
import type { EC2Client } from "@aws-sdk/client-ec2";
import * as k8s from "@kubernetes/client-node";
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createProvisioner } from "../../../../provider/provisioners/factory/create-provisioner";
import { startFaultProxy, type FaultProxy } from "../../../support/ec2-fault-proxy";
import { kube, testKubeconfig, uniqueName } from "../../../support/kube";
import {
  createWorld,
  ec2Client,
  motoCredentials,
  secondaryIps,
  startMoto,
  type MotoServer,
  type World,
} from "../../../support/moto";
import { tempDir } from "../../../support/harness";
import { hostSubnetIps, netNamespaceIps, sdnWorld, type SdnWorld } from "../../../support/sdn-world";
import { denyWrites } from "../../../support/write-denial";

const region = "us-east-1";
const zone = "us-east-1a";

/**
 * A kubeconfig with one more context, `readonly@test`: the admin's credentials impersonating a user
 * of this test only, whom a ClusterRole lets read everything the provisioner reads and update
 * NetNamespaces, but not update HostSubnets.
 */
async function readOnlyHostSubnets(): Promise<{ kubeconfig: string; cleanup: () => Promise<void> }> {
  const user = uniqueName("egress-test-user");
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(testKubeconfig());
  const admin = kc.getUsers().find((u) => u.name === kc.getContextObject("admin@test")!.user)!;
  kc.addUser({ ...admin, name: "readonly", impersonateUser: user });
  kc.addContext({
    name: "readonly@test",
    cluster: kc.getContextObject("admin@test")!.cluster,
    user: "readonly",
  });
  const kubeconfig = path.join(tempDir("kubeconfig-"), "config");
  fs.writeFileSync(kubeconfig, kc.exportConfig());
  const { rbac } = kube();
  const read = ["get", "list"];
  await rbac.createClusterRole({
    body: {
      metadata: { name: user },
      rules: [
        { apiGroups: [""], resources: ["nodes"], verbs: read },
        { apiGroups: ["network.openshift.io"], resources: ["hostsubnets"], verbs: read },
        { apiGroups: ["network.openshift.io"], resources: ["netnamespaces"], verbs: [...read, "update"] },
        { apiGroups: ["k8s.ovn.org"], resources: ["egressips"], verbs: read },
        { apiGroups: ["cloud.network.openshift.io"], resources: ["cloudprivateipconfigs"], verbs: read },
        // Every kind reads the other platforms' egress objects too (their addresses count as taken).
        { apiGroups: ["crd.antrea.io"], resources: ["egresses"], verbs: read },
        { apiGroups: ["cilium.io"], resources: ["ciliumegressgatewaypolicies"], verbs: read },
      ],
    },
  });
  await rbac.createClusterRoleBinding({
    body: {
      metadata: { name: user },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: user },
      subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: user }],
    },
  });
  return {
    kubeconfig,
    async cleanup() {
      await rbac.deleteClusterRoleBinding({ name: user });
      await rbac.deleteClusterRole({ name: user });
      fs.rmSync(path.dirname(kubeconfig), { recursive: true, force: true });
    },
  };
}

describe("ocp-static with cloud: aws (moto + kube-apiserver)", () => {
  let moto: MotoServer;
  let proxy: FaultProxy;
  let ec2: EC2Client;
  let aws: World;
  let w: SdnWorld<"n1" | "n2", "x">;
  let faulty: Awaited<ReturnType<typeof readOnlyHostSubnets>>;
  const onInstances = () => secondaryIps(ec2, [aws.subnetIds[zone]!]);
  const config = () => ({
    kind: "ocp-static" as const,
    nodeSelector: w.selector,
    cloud: { kind: "aws" as const, region, endpoint: proxy.endpoint },
    namespace: w.ns.x,
  });

  beforeAll(async () => {
    Object.assign(process.env, motoCredentials);
    moto = await startMoto();
    proxy = await startFaultProxy(moto.endpoint);
    ec2 = ec2Client(moto.endpoint, region);
    aws = await createWorld(ec2, {
      region,
      // A subnet of its own: the test cluster is shared, and ocp-static checks every NetNamespace for
      // an address (ocp-static.cluster and adopt.cluster use addresses of 10.0.1.0/24 at the same time).
      subnets: { [zone]: "10.0.91.0/24" },
      instances: { [zone]: [{}, {}] },
    });
    const [i1, i2] = aws.instanceIds[zone]!;
    w = await sdnWorld(
      {
        n1: { zone: "a", providerID: `aws:///${zone}/${i1}` },
        n2: { zone: "a", providerID: `aws:///${zone}/${i2}` },
      },
      ["x"],
    );
    faulty = await readOnlyHostSubnets();
  }, 120_000);
  afterAll(async () => {
    await w?.cleanup();
    await faulty?.cleanup();
    await proxy?.stop();
    await moto?.stop();
  });

  it("writes both sides: the instance's secondary IP and the HostSubnet, and moves and removes both", async () => {
    const [i1, i2] = aws.instanceIds[zone]!;
    const p = createProvisioner(config());
    await p.addSpecifiedIP("10.0.91.20", w.node.n1);
    expect(await onInstances()).toEqual({ [i1!]: ["10.0.91.20"] });
    expect(await hostSubnetIps(w.node.n1)).toEqual(["10.0.91.20"]);
    expect(await netNamespaceIps(w.ns.x)).toEqual(["10.0.91.20"]);
    await p.checkIP("10.0.91.20", w.node.n1);
    expect(await p.usedAddresses!(["10.0.91.0/24"])).toContain("10.0.91.20");

    await p.moveIP("10.0.91.20", w.node.n1, w.node.n2);
    expect(await onInstances()).toEqual({ [i2!]: ["10.0.91.20"] });
    expect(await hostSubnetIps(w.node.n1)).toEqual([]);
    expect(await hostSubnetIps(w.node.n2)).toEqual(["10.0.91.20"]);

    await p.removeIP("10.0.91.20", w.node.n2);
    expect(await onInstances()).toEqual({});
    expect(await hostSubnetIps(w.node.n2)).toEqual([]);
    expect(await netNamespaceIps(w.ns.x)).toEqual([]);
  });

  it("takes the secondary IP off again when the HostSubnet write fails (injected: RBAC forbids the update)", async () => {
    const saved = process.env.KUBECONFIG;
    process.env.KUBECONFIG = faulty.kubeconfig;
    try {
      const p = createProvisioner({ ...config(), context: "readonly@test" });
      const add = p.addSpecifiedIP("10.0.91.30", w.node.n1);
      await expect(add).rejects.toThrow(
        /putting 10\.0\.91\.30 on HostSubnet .* failed: .*403 Forbidden.*cannot update resource "hostsubnets".*the secondary IP 10\.0\.91\.30 was taken off instance i-[0-9a-f]+ again, so nothing is left behind/,
      );
      expect(await onInstances()).toEqual({});
      expect(await hostSubnetIps(w.node.n1)).toEqual([]);
    } finally {
      process.env.KUBECONFIG = saved;
    }
  });

  it("reports both errors, and where the address is left, when the undo fails too (injected: EC2 refuses the unassign)", async () => {
    const [i1] = aws.instanceIds[zone]!;
    const saved = process.env.KUBECONFIG;
    process.env.KUBECONFIG = faulty.kubeconfig;
    proxy.inject({ action: "UnassignPrivateIpAddresses", code: "UnauthorizedOperation", times: 5 });
    try {
      const p = createProvisioner({ ...config(), context: "readonly@test" });
      const add = p.addSpecifiedIP("10.0.91.31", w.node.n1);
      await expect(add).rejects.toThrow(/403 Forbidden.*cannot update resource "hostsubnets"/);
      await expect(add).rejects.toThrow(/undoing the step before it also failed: .*UnauthorizedOperation/);
      await expect(add).rejects.toThrow(
        `so 10.0.91.31 is still a secondary IP of instance ${i1} (node ${w.node.n1}) and on no HostSubnet`,
      );
      expect(await onInstances()).toEqual({ [i1!]: ["10.0.91.31"] });
    } finally {
      process.env.KUBECONFIG = saved;
      proxy.clear();
    }
    // The next attempt (pulumi up again) finishes the job with working permissions, then cleans up.
    const p = createProvisioner(config());
    await p.addSpecifiedIP("10.0.91.31", w.node.n1);
    expect(await hostSubnetIps(w.node.n1)).toEqual(["10.0.91.31"]);
    await p.removeIP("10.0.91.31", w.node.n1);
    expect(await onInstances()).toEqual({});
  });

  describe("a move with a cluster write refused (injected: a ValidatingAdmissionPolicy denies it)", () => {
    const ip = "10.0.91.40";
    const carriers = async () => {
      const nodes = [w.node.n1, w.node.n2];
      const lists = await Promise.all(nodes.map((n) => hostSubnetIps(n)));
      return nodes.filter((_, i) => lists[i]!.includes(ip));
    };
    let lift: (() => Promise<void>) | undefined;
    afterEach(async () => {
      await lift?.();
      lift = undefined;
      const p = createProvisioner(config());
      for (const node of [w.node.n1, w.node.n2]) await p.removeIP(ip, node);
    });

    it("the NetNamespace write: the address stays on the old instance and HostSubnet only", async () => {
      const [i1] = aws.instanceIds[zone]!;
      const p = createProvisioner(config());
      await p.addSpecifiedIP(ip, w.node.n1);
      const { objects } = kube();
      const nn = await objects.read({
        apiVersion: "network.openshift.io/v1",
        kind: "NetNamespace",
        metadata: { name: w.ns.x },
      });
      await objects.replace({ ...nn, egressIPs: [] } as k8s.KubernetesObject); // drifted: the move writes it
      lift = await denyWrites({ group: "network.openshift.io", resource: "netnamespaces", name: w.ns.x });
      const move = p.moveIP(ip, w.node.n1, w.node.n2);
      await expect(move).rejects.toThrow(/injected failure/);
      await expect(move).rejects.toThrow(`${ip} is on HostSubnet ${w.node.n1} only, as before`);
      expect(await carriers()).toEqual([w.node.n1]);
      expect(await onInstances()).toEqual({ [i1!]: [ip] });
    });

    it("the new HostSubnet's write: the address is moved back to the old instance and HostSubnet", async () => {
      const [i1] = aws.instanceIds[zone]!;
      const p = createProvisioner(config());
      await p.addSpecifiedIP(ip, w.node.n1);
      lift = await denyWrites({ group: "network.openshift.io", resource: "hostsubnets", name: w.node.n2 });
      const move = p.moveIP(ip, w.node.n1, w.node.n2);
      await expect(move).rejects.toThrow(/injected failure/);
      await expect(move).rejects.toThrow(
        `${ip} was moved back to instance ${i1} and HostSubnet ${w.node.n1}`,
      );
      expect(await carriers()).toEqual([w.node.n1]);
      expect(await onInstances()).toEqual({ [i1!]: [ip] });
      expect(await netNamespaceIps(w.ns.x)).toEqual([ip]);
    });
  });
});
