// Every example is a project users copy: run as they run it — the Pulumi CLI in the example's own
// folder with the Node.js language host, this package installed from its packed tarball (a YAML or
// Python example: the plugin installed with `pulumi plugin install`, the Python SDK's wheel on
// PYTHONPATH, that language's host), the test cluster's kubeconfig where it talks to Kubernetes —
// it must preview the addresses `up` assigns, apply, stay still on a second `up`, apply each step,
// and destroy without leaving anything behind. How each runs here; examples.cluster.test.ts and
// examples-languages.cluster.test.ts run them.
import { loadYaml, type KubernetesObject } from "@kubernetes/client-node";
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ExampleProject, prepareExamplesProject, type ConfigRewrite } from "../support/example-project";
import { changesOf, type PreviewResult, type StateResource } from "../support/harness";
import {
  createHostSubnet,
  createNode,
  deleteClusterObjects,
  freshNamespace,
  kube,
  testKubeconfig,
  uniqueName,
} from "../support/kube";
import { documentedRoles, grantsOf } from "../support/documented-roles";
import { createWorld, ec2Client, motoCredentials, startMoto } from "../support/moto";
import { operatorWorld } from "../support/operator-world";
import { repoRoot } from "../../scripts/consumer.mjs";
import type { PoolQuotas } from "../../provider/index";

/** Planned addresses of the allocations, by URN, as preview showed them. */
function plannedIps(preview: PreviewResult): Record<string, unknown> {
  return Object.fromEntries(
    preview.events.flatMap((e) => {
      const m = e.resourcePreEvent?.metadata;
      return m?.type.endsWith(":IpAllocation") && m.op === "create" ? [[m.urn, m.new?.inputs?.ip]] : [];
    }),
  );
}

/** How the engine shows a value preview cannot know. */
const unknown = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

/** Addresses the allocations hold in state, by URN. */
const heldIps = (resources: StateResource[]) =>
  Object.fromEntries(
    resources.filter((r) => r.type.endsWith(":IpAllocation")).map((r) => [r.urn, r.outputs?.ip]),
  );

const userResources = (resources: StateResource[]) =>
  resources.filter((r) => r.type !== "pulumi:pulumi:Stack" && !r.type.startsWith("pulumi:providers:"));

/** How an example runs here: its stacks, and what the cluster must hold for it. */
interface ExampleSpec {
  /** Stacks to bring up, in order, each from its own copy of the folder (its Pulumi.<stack>.yaml). */
  stacks: string[];
  /** Talks to the test cluster (KUBECONFIG for our provider and @pulumi/kubernetes). */
  kube?: boolean;
  /** Prepares the cluster and returns how the test adapts the stack config to it. */
  prepare?: () => Promise<{
    config: ConfigRewrite;
    cleanup?: () => Promise<void>;
    /** More environment of the stack's commands (moto's credentials). */
    env?: Record<string, string>;
  }>;
  /** Checks across the stacks while all are up. */
  check?: (outputs: Record<string, Record<string, unknown>>) => void;
  /** Each stack is destroyed before the next comes up (variants that cannot share the cluster). */
  oneAtATime?: boolean;
  /**
   * The provisioners' kubeconfig is an output of a resource the first `up` makes: its preview
   * cannot know an address (every later preview plans them exactly).
   */
  kubeconfigFromUp?: boolean;
  /** Checks of one stack after its steps, before it is destroyed (the cluster, the stored state). */
  checkStack?: (project: ExampleProject, outputs: Record<string, unknown>) => Promise<void>;
}

/** Nodes (two per zone, Ready, with a run label) and, for OpenShift SDN, their HostSubnets. */
function clusterNodes(project: string, hostSubnets: boolean): ExampleSpec["prepare"] {
  return async () => {
    const run = uniqueName("ex");
    const octet = 100 + (parseInt(run.slice(-2), 16) % 100);
    const zones = (config: Record<string, unknown>) => config[`${project}:zones`] as string[];
    const nodes: string[] = [];
    const made = new Set<string>();
    const ensureNodes = async (zoneNames: string[]) => {
      for (const zone of zoneNames) {
        for (const i of [0, 1]) {
          const name = `${zone}-${i}`;
          if (made.has(name)) continue;
          made.add(name);
          nodes.push(name);
          await createNode(name, { zone, labels: { "egress-ipam.test/run": run } });
          if (hostSubnets) {
            await createHostSubnet(name, {
              hostIP: `10.1.${octet}.${nodes.length}`,
              subnet: `10.128.${nodes.length * 2}.0/23`,
            });
          }
        }
      }
    };
    const config: ConfigRewrite = (c) => {
      const out: Record<string, unknown> = { ...c };
      out[`${project}:zones`] = zones(c).map((z) => `${z}-${run}`);
      out[`${project}:tenants`] = (c[`${project}:tenants`] as string[]).map((t) => `${t}-${run}`);
      out[`${project}:nodeSelector`] = { "egress-ipam.test/run": run };
      // A subnet of its own, so addresses other tests put in the cluster never shift its plans.
      out[`${project}:egressSubnet`] = `10.${octet}.${parseInt(run.slice(-4, -2), 16)}.0/24`;
      delete out[`${project}:rangeStart`];
      delete out[`${project}:rangeEnd`];
      return out;
    };
    // The zones of the sample config (steps add none).
    await ensureNodes(["zone-a", "zone-b"].map((z) => `${z}-${run}`));
    const sdnMaster = hostSubnets ? netNamespacesFor(run) : undefined;
    return {
      config,
      cleanup: async () => {
        await sdnMaster?.stop();
        await deleteClusterObjects("v1", "Node", nodes);
        if (hostSubnets) await deleteClusterObjects("network.openshift.io/v1", "HostSubnet", nodes);
      },
    };
  };
}

/**
 * What the OpenShift SDN master does that the test cluster lacks: a NetNamespace for every new
 * namespace (here: those of this run, named `*-<run>`), polled every 200 ms until stopped.
 */
function netNamespacesFor(run: string): { stop: () => Promise<void> } {
  const made = new Set<string>();
  let netid = 1000 + (parseInt(run.slice(-3), 16) % 1000) * 1000;
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      // A failed round (the API server busy or restarting) is simply the next round's work.
      await kube()
        .core.listNamespace()
        .then(async ({ items }) => {
          for (const ns of items) {
            const name = ns.metadata?.name ?? "";
            if (!name.endsWith(`-${run}`) || made.has(name) || ns.status?.phase === "Terminating") continue;
            await kube().objects.create({
              apiVersion: "network.openshift.io/v1",
              kind: "NetNamespace",
              metadata: { name },
              netname: name,
              netid: netid++,
            } as KubernetesObject);
            made.add(name);
          }
        })
        .catch(() => undefined);
      await new Promise((r) => setTimeout(r, 200));
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await loop;
      await deleteClusterObjects("network.openshift.io/v1", "NetNamespace", [...made]);
    },
  };
}

/** A namespace of its own for a shared ledger. */
function ledgerNamespace(project: string): ExampleSpec["prepare"] {
  return async () => {
    const ns = await freshNamespace("ledger");
    return {
      config: (c) => ({ ...c, [`${project}:ledgerNamespace`]: ns }),
      cleanup: () =>
        kube()
          .core.deleteNamespace({ name: ns })
          .then(() => undefined),
    };
  };
}

/**
 * The cluster as the egressip-ipam-operator left it for the sample tenants: the Nodes and
 * HostSubnets of {@link clusterNodes}, the tenants' namespaces (with NetNamespaces), and one address
 * per zone's CIDR on each, written as the operator writes them. `assigned` is filled in for `check`.
 */
function operatorCluster(project: string, assigned: Record<string, string[]>): ExampleSpec["prepare"] {
  return async () => {
    const base = (await clusterNodes(project, true)!())!;
    const sample = base.config({
      [`${project}:zones`]: ["zone-a", "zone-b"],
      [`${project}:tenants`]: ["team-a", "team-b"],
    });
    const zones = sample[`${project}:zones`] as string[];
    const tenants = sample[`${project}:tenants`] as string[];
    const [a, b, c] = (sample[`${project}:egressSubnet`] as string).split(".");
    const cidrs = zones.map((_, i) => `${a}.${b}.${c}.${16 * i}/28`);
    const reserved = [`${a}.${b}.${c}.1`];
    for (const tenant of tenants) await kube().core.createNamespace({ body: { metadata: { name: tenant } } });
    // The SDN master's NetNamespaces (netNamespacesFor makes them within a round or two).
    for (const tenant of tenants)
      await expect
        .poll(() => listObjectNames("network.openshift.io/v1", "NetNamespace"), { timeout: 15_000 })
        .toContain(tenant);
    const op = await operatorWorld({
      name: `${tenants[0]}-ipam`,
      topologyLabel: "topology.kubernetes.io/zone",
      nodeSelector: sample[`${project}:nodeSelector`] as Record<string, string>,
      cidrs: zones.map((zone, i) => ({
        cidr: cidrs[i]!,
        labelValue: zone,
        ...(i === 0 ? { reservedIPs: reserved } : {}),
        nodes: [`${zone}-0`, `${zone}-1`],
      })),
      namespaces: tenants,
    });
    for (const [ns, { ips }] of Object.entries(op.assigned)) assigned[ns] = ips;
    return {
      config: (cfg) => {
        const out = base.config(cfg);
        delete out[`${project}:egressSubnet`];
        return { ...out, [`${project}:cidrs`]: cidrs, [`${project}:reserved`]: reserved };
      },
      cleanup: async () => {
        await op.cleanup();
        await Promise.all(
          tenants.map((name) =>
            kube()
              .core.deleteNamespace({ name })
              .catch(() => undefined),
          ),
        );
        await base.cleanup?.();
      },
    };
  };
}

/**
 * EKS as cilium-eks needs it, against moto's EC2: two instances per availability zone, each a Node
 * (providerID, a per-run zone label and run label), and the stack reaching moto through the
 * example's `awsEndpoint`.
 */
function eksNodes(project: string): ExampleSpec["prepare"] {
  return async () => {
    const run = uniqueName("ex");
    const region = "us-east-1";
    const moto = await startMoto();
    const ec2 = ec2Client(moto.endpoint, region);
    const azs = ["us-east-1a", "us-east-1b"];
    const aws = await createWorld(ec2, {
      region,
      subnets: { "us-east-1a": "10.0.1.0/24", "us-east-1b": "10.0.2.0/24" },
      instances: { "us-east-1a": [{}, {}], "us-east-1b": [{}, {}] },
    });
    const nodes: string[] = [];
    for (const az of azs)
      for (const [i, id] of aws.instanceIds[az]!.entries()) {
        const name = `${az}-${i}-${run}`;
        nodes.push(name);
        await createNode(name, {
          zone: `${az}-${run}`,
          labels: { "egress-ipam.test/run": run },
          providerID: `aws:///${az}/${id}`,
        });
      }
    return {
      env: motoCredentials,
      config: (c) => ({
        ...c,
        [`${project}:zones`]: azs.map((az) => `${az}-${run}`),
        [`${project}:tenants`]: (c[`${project}:tenants`] as string[]).map((t) => `${t}-${run}`),
        [`${project}:nodeSelector`]: { "egress-ipam.test/run": run },
        [`${project}:awsEndpoint`]: moto.endpoint,
      }),
      cleanup: async () => {
        await deleteClusterObjects("v1", "Node", nodes);
        await moto.stop();
      },
    };
  };
}

/**
 * The Nodes of {@link clusterNodes} and the test cluster's API server as the example's `server`,
 * once the cluster is seen filling in service-account tokens (its token controller runs): without
 * it, pulumi-kubernetes gives up on the token Secret after 5 s with a less telling message.
 */
function tokenIssuingCluster(project: string): ExampleSpec["prepare"] {
  return async () => {
    const ns = await freshNamespace("token");
    try {
      await kube().core.createNamespacedServiceAccount({
        namespace: ns,
        body: { metadata: { name: "probe" } },
      });
      await kube().core.createNamespacedSecret({
        namespace: ns,
        body: {
          metadata: { name: "probe", annotations: { "kubernetes.io/service-account.name": "probe" } },
          type: "kubernetes.io/service-account-token",
        },
      });
      await expect
        .poll(
          async () => (await kube().core.readNamespacedSecret({ name: "probe", namespace: ns })).data?.token,
          {
            timeout: 15_000,
            message:
              "the test cluster fills in no service-account tokens: it was started before " +
              "scripts/kube-test-cluster.sh ran the token controller; stop it and start it again",
          },
        )
        .toBeTruthy();
    } finally {
      await kube().core.deleteNamespace({ name: ns });
    }
    const base = (await clusterNodes(project, false)!())!;
    const server = kube().config.getCurrentCluster()!.server;
    return { ...base, config: (c) => ({ ...base.config(c), [`${project}:server`]: server }) };
  };
}

/**
 * After step2 (kind ovn): ovnkube places an EgressIP's addresses only on Nodes labelled
 * `k8s.ovn.org/egress-assignable`, so every Node the stack says carries one has the label.
 */
async function egressNodesAssignable(_project: ExampleProject, outputs: Record<string, unknown>) {
  const hosts = [...new Set(Object.values(outputs.egressHosts as Record<string, string[]>).flat())].sort();
  expect(hosts.length, "hosts of the tenants' addresses").toBeGreaterThan(0);
  for (const name of hosts) {
    const labels = (await kube().core.readNode({ name })).metadata?.labels ?? {};
    expect(labels, `Node ${name}: ovnkube places egress IPs only on labelled Nodes`).toHaveProperty(
      ["k8s.ovn.org/egress-assignable"],
      "",
    );
  }
}

/**
 * The example's writer did the writing, holds exactly the documented grants, and its token is
 * nowhere in clear text in the state the backend stores (the checkpoint file: `pulumi stack export`
 * decrypts secrets). The API server marks a token Secret `kubernetes.io/legacy-token-last-used`
 * when its token authenticates a request, and only the egress IP resources hold this one.
 */
async function writerUsedAndKeptSecret(project: ExampleProject, outputs: Record<string, unknown>) {
  const [namespace, name] = (outputs.tokenSecret as string).split("/") as [string, string];
  const secret = await kube().core.readNamespacedSecret({ name, namespace });
  const encoded = secret.data?.token;
  expect(encoded, `token of ${namespace}/${name}`).toBeTruthy();
  expect(
    secret.metadata?.labels?.["kubernetes.io/legacy-token-last-used"],
    "the token was used",
  ).toBeTruthy();
  // Least privilege: bound to exactly what the docs give ovn (and every kind), nothing else.
  const [, , saNamespace, saName] = (outputs.egressWriter as string).split(":");
  const roleNames = (await kube().rbac.listClusterRoleBinding()).items
    .filter((b) =>
      b.subjects?.some(
        (s) => s.kind === "ServiceAccount" && s.namespace === saNamespace && s.name === saName,
      ),
    )
    .map((b) => b.roleRef.name);
  const bound = await Promise.all(roleNames.map((name) => kube().rbac.readClusterRole({ name })));
  const documented = documentedRoles();
  expect(
    grantsOf(bound.flatMap((r) => r.rules ?? [])),
    `grants of ${outputs.egressWriter as string}`,
  ).toEqual(grantsOf(["egress-ipam-observe", "egress-ipam-ovn"].flatMap((n) => documented.get(n) ?? [])));
  const token = Buffer.from(encoded!, "base64").toString();
  const stored = fs.readFileSync(project.harness.checkpointFile, "utf8");
  expect(stored.length).toBeGreaterThan(0);
  // The token (a JWT: nothing in it that JSON escapes) and its base64 form, as the Secret has it.
  for (const [what, text] of Object.entries({ token, "the token in base64": encoded! }))
    expect(stored.includes(text), `${what} in ${project.harness.checkpointFile}`).toBe(false);
}

const listObjectNames = async (apiVersion: string, kind: string) =>
  ((await kube().objects.list(apiVersion, kind)).items as KubernetesObject[]).map((o) => o.metadata?.name);

const operatorAssigned: Record<string, string[]> = {};

/**
 * The quota shared-pool's platform stack sets for tenant `stack` (its own limit, else the default),
 * as a reference shows it: from the platform's config after its steps.
 */
function sharedPoolQuota(stack: string): string {
  const project = "egress-ipam-shared-pool";
  const dir = path.join(repoRoot, "examples", "shared-pool");
  const file = [path.join(dir, "step2", "Pulumi.platform.yaml"), path.join(dir, "Pulumi.platform.yaml")].find(
    (f) => fs.existsSync(f),
  )!;
  const config = (loadYaml(fs.readFileSync(file, "utf8")) as { config: Record<string, unknown> }).config;
  const quotas = config[`${project}:quotas`] as PoolQuotas;
  return String(quotas.stacks?.[`${project}/${stack}`] ?? quotas.default);
}

/** What the quickstart's stack outputs after its steps, in every language it is written in. */
const quickstartOutputs = {
  dev: {
    poolSize: "179",
    natGateway: "10.0.8.50/24",
    teamIps: ["10.0.8.10", "10.0.8.11", "10.0.8.12", "10.0.8.14"],
  },
};
const sameAsQuickstart = (outputs: Record<string, Record<string, unknown>>) =>
  expect(outputs).toEqual(quickstartOutputs);

/** What the egress-ips stack outputs after its steps, in every language it is written in. */
const hosts = ["ip-10-0-8-5.ec2.internal", "ip-10-0-8-6.ec2.internal"];
const egressIpsOutputs = {
  dev: {
    teamAIps: ["10.0.8.10", "10.0.8.11"],
    teamAHosts: hosts,
    teamBIps: ["10.0.8.12", "10.0.8.13"],
    teamCIps: ["10.0.8.14", "10.0.8.15"],
  },
};
const sameAsEgressIps = (outputs: Record<string, Record<string, unknown>>) =>
  expect(outputs).toEqual(egressIpsOutputs);

export const specs: Record<string, ExampleSpec> = {
  antrea: { stacks: ["dev"], kube: true, prepare: clusterNodes("egress-ipam-antrea", false) },
  "cilium-eks": { stacks: ["dev"], kube: true, prepare: eksNodes("egress-ipam-cilium-eks") },
  "cluster-access": {
    stacks: ["dev"],
    kube: true,
    prepare: tokenIssuingCluster("egress-ipam-cluster-access"),
    kubeconfigFromUp: true,
    checkStack: writerUsedAndKeptSecret,
  },
  "migrate-from-operator": {
    stacks: ["dev"],
    kube: true,
    prepare: operatorCluster("egress-ipam-migrate-from-operator", operatorAssigned),
    // The operator's addresses, kept through the adoption and the switch to ovn (step2).
    check: (outputs) => expect(outputs.dev!.egressIps).toEqual(operatorAssigned),
    checkStack: egressNodesAssignable,
  },
  quickstart: { stacks: ["dev"], check: sameAsQuickstart },
  "quickstart-yaml": { stacks: ["dev"], check: sameAsQuickstart },
  "quickstart-python": { stacks: ["dev"], check: sameAsQuickstart },
  "egress-ips": { stacks: ["dev"], check: sameAsEgressIps },
  "egress-ips-yaml": { stacks: ["dev"], check: sameAsEgressIps },
  "egress-ips-python": { stacks: ["dev"], check: sameAsEgressIps },
  "openshift-sdn": {
    // The same tenants in manual and automatic mode: OpenShift SDN never mixes the two on a Node.
    stacks: ["dev", "dynamic"],
    oneAtATime: true,
    kube: true,
    prepare: clusterNodes("egress-ipam-openshift-sdn", true),
  },
  ovn: { stacks: ["dev"], kube: true, prepare: clusterNodes("egress-ipam-ovn", false) },
  "shared-pool": {
    // The owner stores the pool (and grows it, step2) before its tenants reference it.
    stacks: ["platform", "team-a", "team-b"],
    kube: true,
    prepare: ledgerNamespace("egress-ipam-shared-pool"),
    check: (outputs) => {
      const all = Object.values(outputs).flatMap((o) => Object.values(o.addresses as Record<string, string>));
      expect(new Set(all).size, `addresses of every stack: ${all.join(", ")}`).toBe(all.length);
      const platform = outputs.platform!;
      expect(platform.ownedBy).toMatch(/^stack organization\/egress-ipam-shared-pool\/platform \(urn:/);
      for (const tenant of ["team-a", "team-b"]) {
        const o = outputs[tenant]!;
        expect(o.quota, `${tenant}: quota`).toBe(sharedPoolQuota(tenant));
        expect(o.free, `${tenant}: free`).toMatch(/^\d+$/);
        expect([o.ownedBy, o.size], `${tenant}: owner and size`).toEqual([platform.ownedBy, platform.size]);
      }
    },
  },
  "mesh-nodes": {
    stacks: ["dev"],
    kube: true,
    prepare: ledgerNamespace("egress-ipam-mesh-nodes"),
    check: (outputs) => {
      const prefixes = outputs.dev!.nodePrefixes as Record<string, string>;
      expect(prefixes.gateway).toBe("10.42.0.1/32"); // the static assignment
      for (const p of Object.values(prefixes)) expect(p).toMatch(/^10\.42\.\d+\.\d+\/32$/);
    },
  },
};

// Examples that cannot run with plain `pulumi up` here, and where they are tested instead.
export const testedElsewhere: Record<string, string> = {
  // The AWS provider plugin is not served here.
  "aws-egress": "test/e2e/example-aws-egress.test.ts (mocks, and moto answering the lookups)",
  "vpc-subnets": "test/e2e/example-vpc-subnets.test.ts (mocks, and the engine with @pulumi/aws stood in)",
};

/**
 * The examples examples-languages.cluster.test.ts runs: the quick starts in each language, and two
 * of the cluster's (about 100 s of the other file's 430 s), so that the two files, which run side
 * by side, take about as long. examples.cluster.test.ts runs every other example.
 */
export const secondFileExamples = [
  "quickstart",
  "quickstart-yaml",
  "quickstart-python",
  "egress-ips",
  "egress-ips-yaml",
  "egress-ips-python",
  "openshift-sdn",
  "mesh-nodes",
];

async function destroy(project: ExampleProject): Promise<void> {
  await project.harness.destroy();
  expect(userResources(await project.harness.resources()), project.harness.stackName).toEqual([]);
}

/** Runs each named example as users run it, in a test of its own. */
export function runExamples(names: string[]): void {
  let examplesDir = "";
  beforeAll(() => {
    examplesDir = prepareExamplesProject();
  }, 600_000);

  describe.each([...names].sort())("example %s, with pulumi in its folder", (name) => {
    const spec = specs[name]!;
    const projects: ExampleProject[] = [];
    let cleanup: (() => Promise<void>) | undefined;
    afterAll(async () => {
      for (const p of projects) p.dispose();
      await cleanup?.();
    });

    it("previews what up assigns, applies, stays still, applies its steps and destroys", async () => {
      const prepared = await spec.prepare?.();
      cleanup = prepared?.cleanup;
      const env: Record<string, string> = {
        ...(spec.kube ? { KUBECONFIG: testKubeconfig() } : {}),
        ...prepared?.env,
      };
      const outputs: Record<string, Record<string, unknown>> = {};

      for (const stackName of spec.stacks) {
        const project = ExampleProject.create(examplesDir, name, {
          stackName,
          env,
          config: prepared?.config,
          // A YAML or Python example's plugin and SDK: those the cluster setup builds once per build.
          sdks: process.env.EGRESS_IPAM_CONSUMER,
        });
        projects.push(project);
        const h = project.harness;
        await h.project();

        const preview = await h.preview();
        expect(preview.changeSummary.create, stackName).toBeGreaterThan(1);
        const planned = plannedIps(preview);
        await h.up();
        const held = heldIps(await h.resources());
        expect(Object.keys(held).length, stackName).toBeGreaterThan(0);
        if (spec.kubeconfigFromUp) {
          expect(Object.keys(held).sort(), `${stackName}: up makes what preview showed`).toEqual(
            Object.keys(planned).sort(),
          );
          // Not planned (absent, or shown as unknown): the kubeconfig it is observed with is unknown.
          for (const [urn, ip] of Object.entries(planned)) expect([undefined, unknown], urn).toContain(ip);
        } else expect(held, `${stackName}: up holds what preview showed`).toEqual(planned);
        expect(changesOf((await h.up()).summary.resourceChanges), `${stackName}: second up`).toEqual({});

        for (const step of project.steps().filter((s) => project.stepChanges(s))) {
          project.applyStep(step);
          const stepPreview = await h.preview();
          expect(changesOf(stepPreview.changeSummary), `${stackName}: ${step} changes something`).not.toEqual(
            {},
          );
          const stepPlanned = plannedIps(stepPreview);
          await h.up();
          const after = heldIps(await h.resources());
          for (const [urn, ip] of Object.entries(stepPlanned)) expect(after[urn], urn).toBe(ip);
          expect(changesOf((await h.up()).summary.resourceChanges), `${stackName}: up after ${step}`).toEqual(
            {},
          );
        }
        outputs[stackName] = Object.fromEntries(
          Object.entries(await (await h.project()).outputs()).map(([k, v]) => [k, v.value]),
        );
        await spec.checkStack?.(project, outputs[stackName]);
        if (spec.oneAtATime) await destroy(project);
      }
      spec.check?.(outputs);
      if (!spec.oneAtATime) for (const project of [...projects].reverse()) await destroy(project);
      // An example is whole stacks with their steps (three for shared-pool), beside another file's:
      // the timeout only guards against a hang.
    }, 600_000);
  });
}
