import * as path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import type { ClusterFacts, NodeFacts } from "../../provider/cli/import-facts";
import { importPlan, type ImportOptions } from "../../provider/cli/import-plan";
import { importProgram } from "../../provider/cli/import-program";
import { IpAllocator, MemoryStore, RangeSet } from "../../provider/allocator";
import type { OvnEgressIp } from "../../provider/provisioners/kubernetes/egress-view";
import type { NamespaceFacts } from "../../provider/provisioners/kubernetes/namespace-addresses";
import { readCiliumPolicyFacts } from "../../provider/provisioners/kubernetes/cilium/cilium-namespaces";
import { readAntreaEgressFacts } from "../../provider/provisioners/kubernetes/antrea/antrea-namespaces";
import type { KubeObject } from "../../provider/kube/object-edit";

const ipamAnnotation = "egressip-ipam-operator.redhat-cop.io/egressipam";
const ipsAnnotation = "egressip-ipam-operator.redhat-cop.io/egressips";

interface World {
  nodes?: NodeFacts[];
  namespaces?: NamespaceFacts[];
  hostSubnets?: Record<string, { egressIPs?: string[]; egressCIDRs?: string[] }>;
  netNamespaces?: Record<string, string[]>;
  egressIps?: Partial<OvnEgressIp>[];
  managed?: Record<string, string>;
  operator?: boolean;
  /** CiliumEgressGatewayPolicy and Egress objects by name: their spec (and an Egress's egressNode). */
  ciliumPolicies?: Record<string, Record<string, unknown>>;
  antreaEgresses?: Record<
    string,
    { spec: Record<string, unknown>; node?: string; labels?: Record<string, string> }
  >;
}

const node = (
  name: string,
  labels: Record<string, string>,
  addresses: string[] = [],
  providerID?: string,
) => ({
  name,
  labels,
  addresses,
  ...(providerID ? { providerID } : {}),
});
const ns = (name: string, annotations: Record<string, string> = {}) => ({
  name,
  labels: { "kubernetes.io/metadata.name": name },
  annotations,
});

/** A cluster as the egressip-ipam-operator leaves it (two CIDRs, one per egress-zone), plus `w`. */
function facts(w: World): ClusterFacts {
  return {
    context: "test",
    server: "https://127.0.0.1:6443",
    egressIpams:
      w.operator === false
        ? []
        : [
            {
              name: "egress",
              topologyLabel: "egress-zone",
              nodeSelector: { matchLabels: { "node-role.kubernetes.io/worker": "" } },
              cidrs: [
                { cidr: "10.0.1.0/24", labelValue: "zone-a", reservedIPs: ["10.0.1.10"] },
                { cidr: "10.0.2.0/24", labelValue: "zone-b", reservedIPs: [] },
              ],
            },
          ],
    nodes: w.nodes ?? [
      node("n1", { "egress-zone": "zone-a", "topology.kubernetes.io/zone": "az1" }, ["10.0.1.5"]),
      node("n2", { "egress-zone": "zone-b", "topology.kubernetes.io/zone": "az2" }, ["192.168.0.2"]),
    ],
    namespaces: w.namespaces ?? [],
    view: {
      hostSubnets: new Map(
        Object.entries(w.hostSubnets ?? {}).map(([k, v]) => [
          k,
          { egressIPs: v.egressIPs ?? [], egressCIDRs: v.egressCIDRs ?? [] },
        ]),
      ),
      netNamespaces: new Map(Object.entries(w.netNamespaces ?? {})),
      egressIps: (w.egressIps ?? []).map((e) => ({
        name: "",
        labels: {},
        ips: [],
        selects: {},
        namespaceSelector: {},
        annotations: {},
        ...e,
      })),
      cloudPrivateIps: [],
      antreaEgresses: [],
      ciliumPolicies: [],
    },
    ciliumPolicies: Object.entries(w.ciliumPolicies ?? {}).map(([name, spec]) =>
      readCiliumPolicyFacts({ metadata: { name }, spec } as KubeObject),
    ),
    antreaEgresses: Object.entries(w.antreaEgresses ?? {}).map(([name, e]) =>
      readAntreaEgressFacts({
        metadata: { name, labels: e.labels ?? {} },
        spec: e.spec,
        ...(e.node ? { status: { egressNode: e.node } } : {}),
      } as KubeObject),
    ),
    cloudPrivateIps: [],
    managed: new Map(Object.entries(w.managed ?? {})),
  };
}

const operatorNamespace = (name: string, ips: string) =>
  ns(name, { [ipamAnnotation]: "egress", [ipsAnnotation]: ips });
const operatorWorld: World = {
  namespaces: [operatorNamespace("team-a", "10.0.1.1,10.0.2.1"), ns("other")],
  netNamespaces: { "team-a": ["10.0.1.1", "10.0.2.1"], other: [] },
  hostSubnets: { n1: { egressIPs: ["10.0.1.1"] }, n2: { egressIPs: ["10.0.2.1"] } },
};

describe("import's plan of a cluster", () => {
  it("the operator's cluster: a pool per CIDR (reserved and node addresses excluded), its addresses where they are", () => {
    const plan = importPlan(facts(operatorWorld));
    expect(plan.problems).toEqual([]);
    expect(plan.pools).toEqual([
      {
        name: "egress-zone-a",
        subnet: "10.0.1.0/24",
        exclude: ["10.0.1.5", "10.0.1.10"],
        from: "EgressIPAM egress (egress-zone=zone-a)",
      },
      {
        name: "egress-zone-b",
        subnet: "10.0.2.0/24",
        exclude: [],
        from: "EgressIPAM egress (egress-zone=zone-b)",
      },
    ]);
    expect(plan.egressIps).toEqual([
      {
        name: "team-a",
        namespace: "team-a",
        provisioner: {
          kind: "ocp-static",
          zoneLabel: "egress-zone",
          nodeSelector: { "node-role.kubernetes.io/worker": "" },
        },
        addresses: [
          {
            domain: "zone-a",
            pool: "egress-zone-a",
            ip: "10.0.1.1",
            node: "n1",
            source: "NetNamespace team-a",
          },
          {
            domain: "zone-b",
            pool: "egress-zone-b",
            ip: "10.0.2.1",
            node: "n2",
            source: "NetNamespace team-a",
          },
        ],
      },
    ]);
    expect(plan.cidrAssignments).toEqual([]);
  });

  it("the operator's single CIDR on bare metal (HostSubnet egressCIDRs): ocp-dynamic with a CidrAssignment", () => {
    const w: World = {
      namespaces: [operatorNamespace("team-a", "10.0.1.1")],
      netNamespaces: { "team-a": ["10.0.1.1"] },
      hostSubnets: { n1: { egressCIDRs: ["10.0.1.0/24"], egressIPs: ["10.0.1.1"] }, n2: {} },
    };
    const f = facts(w);
    f.egressIpams[0]!.cidrs.pop();
    const plan = importPlan(f);
    expect(plan.problems).toEqual([]);
    expect(plan.egressIps[0]!.provisioner.kind).toBe("ocp-dynamic");
    expect(plan.cidrAssignments).toEqual([
      {
        name: "egress-zone-a-hosts",
        pool: "egress-zone-a",
        provisioner: plan.egressIps[0]!.provisioner,
        hosts: ["n1"],
      },
    ]);
  });

  it("a hand-made EgressIP object with --cidr: ovn, domain by the zone label, egress-assignable nodes kept", () => {
    const w: World = {
      operator: false,
      nodes: [
        node("n1", { "topology.kubernetes.io/zone": "az1", "k8s.ovn.org/egress-assignable": "" }),
        node("n2", { "topology.kubernetes.io/zone": "az1" }),
      ],
      namespaces: [ns("web")],
      egressIps: [
        {
          name: "web-egress",
          ips: ["172.16.0.7"],
          namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "web" } },
          status: [{ node: "n1", egressIP: "172.16.0.7" }],
        },
      ],
    };
    const plan = importPlan(facts(w), { cidrs: ["172.16.0.0/24"] });
    expect(plan.problems).toEqual([]);
    expect(plan.pools.map((p) => [p.name, p.from])).toEqual([["egress-172.16.0.0-24", "--cidr"]]);
    expect(plan.egressIps[0]).toMatchObject({
      provisioner: { kind: "ovn" },
      addresses: [{ domain: "az1", ip: "172.16.0.7", node: "n1", source: "EgressIP web-egress" }],
    });
    expect(plan.cidrAssignments.map((c) => [c.name, c.hosts])).toEqual([
      ["egress-172.16.0.0-24-hosts", ["n1"]],
    ]);
  });

  it("nodes on AWS: ocp-static gets cloud aws in the nodes' region, pools keep AWS's reserved addresses", () => {
    const f = facts({
      ...operatorWorld,
      nodes: [
        node("n1", { "egress-zone": "zone-a" }, [], "aws:///us-east-2a/i-0123"),
        node("n2", { "egress-zone": "zone-b" }, [], "aws:///us-east-2b/i-0456"),
      ],
    });
    const plan = importPlan(f);
    expect(plan.egressIps[0]!.provisioner.cloud).toEqual({ kind: "aws", region: "us-east-2" });
    expect(plan.pools.every((p) => p.cloudReserved === "aws")).toBe(true);
  });

  const gateway = (ip: string, matchLabels: Record<string, string>) => ({
    egressIP: ip,
    nodeSelector: { matchLabels },
  });
  const pods = (name: string) => [{ podSelector: { matchLabels: { "io.kubernetes.pod.namespace": name } } }];
  const applied = (name: string) => ({
    namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": name } },
  });
  const cniNodes = [
    node("n1", { "topology.kubernetes.io/zone": "az1", gw: "yes" }),
    node("n2", { "topology.kubernetes.io/zone": "az2" }),
    node("n0", { "topology.kubernetes.io/zone": "az1" }),
  ];

  it("a hand-made CiliumEgressGatewayPolicy with --cidr: cilium with its destinations and excluded, each gateway on its Node", () => {
    const w: World = {
      operator: false,
      nodes: cniNodes,
      namespaces: [ns("web")],
      ciliumPolicies: {
        "web-egress": {
          selectors: pods("web"),
          destinationCIDRs: ["0.0.0.0/0"],
          excludedCIDRs: ["10.0.0.0/8"],
          egressGateways: [
            gateway("172.16.0.9", { "kubernetes.io/hostname": "n2" }),
            gateway("172.16.0.7", { gw: "yes" }),
          ],
        },
      },
    };
    const plan = importPlan(facts(w), { cidrs: ["172.16.0.0/24"] });
    expect(plan.problems).toEqual([]);
    expect(plan.egressIps).toEqual([
      {
        name: "web",
        namespace: "web",
        provisioner: { kind: "cilium", destinations: ["0.0.0.0/0"], excluded: ["10.0.0.0/8"] },
        addresses: [
          {
            domain: "az1",
            pool: "egress-172.16.0.0-24",
            ip: "172.16.0.7",
            node: "n1",
            source: "CiliumEgressGatewayPolicy web-egress",
          },
          {
            domain: "az2",
            pool: "egress-172.16.0.0-24",
            ip: "172.16.0.9",
            node: "n2",
            source: "CiliumEgressGatewayPolicy web-egress",
          },
        ],
      },
    ]);
    expect(plan.cidrAssignments).toEqual([]);
    expect(importProgram(plan)).toContain(
      `provisioner: { kind: "cilium", destinations: ["0.0.0.0/0"], excluded: ["10.0.0.0/8"] },`,
    );
  });

  it("hand-made Antrea Egresses with --cidr: antrea with their externalIPPool, each on its status.egressNode", () => {
    const w: World = {
      operator: false,
      nodes: cniNodes,
      namespaces: [ns("web"), ns("api")],
      antreaEgresses: {
        "web-a": {
          spec: { appliedTo: applied("web"), egressIP: "172.16.0.5", externalIPPool: "pool" },
          node: "n0",
        },
        "web-b": {
          spec: { appliedTo: applied("web"), egressIP: "172.16.0.6", externalIPPool: "pool" },
          node: "n2",
        },
        "api-a": { spec: { appliedTo: applied("api"), egressIP: "172.16.0.8" }, node: "n1" },
        // A stack of this package holds it: skipped.
        "api-ours": {
          spec: { appliedTo: applied("api"), egressIP: "172.16.0.10" },
          node: "n2",
          labels: { "app.kubernetes.io/managed-by": "pulumi-egress-ipam" },
        },
      },
      managed: { "172.16.0.10": "Egress api-ours (app.kubernetes.io/managed-by=pulumi-egress-ipam)" },
    };
    const plan = importPlan(facts(w), { cidrs: ["172.16.0.0/24"] });
    expect(plan.problems).toEqual([]);
    expect(plan.skipped).toEqual([
      "172.16.0.10 of namespace api: a stack holds it already (Egress api-ours (app.kubernetes.io/managed-by=pulumi-egress-ipam))",
    ]);
    expect(
      plan.egressIps.map((e) => [
        e.namespace,
        e.provisioner,
        e.addresses.map((a) => [a.domain, a.ip, a.node]),
      ]),
    ).toEqual([
      [
        "web",
        { kind: "antrea", externalIPPool: "pool" },
        [
          ["az1", "172.16.0.5", "n0"],
          ["az2", "172.16.0.6", "n2"],
        ],
      ],
      ["api", { kind: "antrea" }, [["az1", "172.16.0.8", "n1"]]],
    ]);
    expect(importProgram(plan)).toContain(`provisioner: { kind: "antrea", externalIPPool: "pool" },`);
  });

  type Case = [string, World, ImportOptions, RegExp];
  const refused: Case[] = [
    [
      "an address in no CIDR the cluster names",
      {
        operator: false,
        namespaces: [ns("x")],
        netNamespaces: { x: ["10.9.9.9"] },
        hostSubnets: { n1: { egressIPs: ["10.9.9.9"] } },
      },
      {},
      /^10\.9\.9\.9 of namespace x \(NetNamespace x\): no pool contains it .*give --cidr/,
    ],
    [
      "a node without the zone label",
      {
        operator: false,
        namespaces: [ns("x")],
        netNamespaces: { x: ["10.9.9.9"] },
        hostSubnets: { n1: { egressIPs: ["10.9.9.9"] } },
      },
      { cidrs: ["10.9.9.0/24"], zoneLabel: "rack" },
      /its node n1 has no label rack: give --zone-label/,
    ],
    [
      "an address no node carries yet",
      { operator: false, namespaces: [ns("x")], netNamespaces: { x: ["10.9.9.9"] } },
      { cidrs: ["10.9.9.0/24"] },
      /no node carries it yet/,
    ],
    [
      "two addresses in one failure domain",
      {
        operator: false,
        namespaces: [ns("x")],
        netNamespaces: { x: ["10.9.9.9", "10.9.9.8"] },
        hostSubnets: { n1: { egressIPs: ["10.9.9.9", "10.9.9.8"] } },
      },
      { cidrs: ["10.9.9.0/24"] },
      /namespace x has two addresses in failure domain az1 \(10\.9\.9\.9 and 10\.9\.9\.8\)/,
    ],
    [
      "an EgressIP object selecting two namespaces",
      {
        operator: false,
        namespaces: [
          { ...ns("x"), labels: { env: "prod" } },
          { ...ns("y"), labels: { env: "prod" } },
        ],
        egressIps: [
          {
            name: "prod",
            ips: ["10.9.9.9"],
            namespaceSelector: { matchLabels: { env: "prod" } },
            status: [{ node: "n1", egressIP: "10.9.9.9" }],
          },
        ],
      },
      { cidrs: ["10.9.9.0/24"] },
      /^10\.9\.9\.9 of namespace x \(EgressIP prod\): the cluster gives it to namespaces x, y; an EgressIp serves one namespace/,
    ],
    [
      "a namespace's gateways in two Cilium policies",
      {
        operator: false,
        nodes: cniNodes,
        namespaces: [ns("x")],
        ciliumPolicies: {
          p1: {
            selectors: pods("x"),
            destinationCIDRs: ["0.0.0.0/0"],
            egressGateway: gateway("10.9.9.9", { "kubernetes.io/hostname": "n1" }),
          },
          p2: {
            selectors: pods("x"),
            destinationCIDRs: ["0.0.0.0/0"],
            egressGateway: gateway("10.9.9.8", { "kubernetes.io/hostname": "n2" }),
          },
        },
      },
      { cidrs: ["10.9.9.0/24"] },
      /^namespace x: its gateways are in CiliumEgressGatewayPolicies p1, p2; .*merge them into one/,
    ],
    [
      "Egresses of one namespace with two externalIPPools",
      {
        operator: false,
        nodes: cniNodes,
        namespaces: [ns("x")],
        antreaEgresses: {
          e1: { spec: { appliedTo: applied("x"), egressIP: "10.9.9.9", externalIPPool: "a" }, node: "n1" },
          e2: { spec: { appliedTo: applied("x"), egressIP: "10.9.9.8", externalIPPool: "b" }, node: "n2" },
        },
      },
      { cidrs: ["10.9.9.0/24"] },
      /^namespace x: its Egresses use externalIPPools a, b; one EgressIp has one externalIPPool/,
    ],
    [
      "a namespace with an Egress and a NetNamespace address",
      {
        operator: false,
        nodes: cniNodes,
        namespaces: [ns("x")],
        netNamespaces: { x: ["10.9.9.7"] },
        hostSubnets: { n1: { egressIPs: ["10.9.9.7"] } },
        antreaEgresses: { e1: { spec: { appliedTo: applied("x"), egressIP: "10.9.9.9" }, node: "n2" } },
      },
      { cidrs: ["10.9.9.0/24"] },
      /^namespace x: its addresses come from 10\.9\.9\.7 \(NetNamespace x\), 10\.9\.9\.9 \(Egress e1\); an EgressIp has one provisioner kind/,
    ],
    [
      "an Egress applied to two namespaces",
      {
        operator: false,
        nodes: cniNodes,
        namespaces: [
          { ...ns("x"), labels: { env: "prod" } },
          { ...ns("y"), labels: { env: "prod" } },
        ],
        antreaEgresses: {
          prod: {
            spec: {
              appliedTo: { namespaceSelector: { matchLabels: { env: "prod" } } },
              egressIP: "10.9.9.9",
            },
            node: "n1",
          },
        },
      },
      { cidrs: ["10.9.9.0/24"] },
      /^10\.9\.9\.9 of namespace x \(Egress prod\): the cluster gives it to namespaces x, y/,
    ],
    [
      "a CIDR that is no network",
      { operator: false },
      { cidrs: ["10.9.9.1/24"] },
      /--cidr: "10\.9\.9\.1\/24" is not a CIDR/,
    ],
  ];
  it.each(refused)("%s: one problem line, the namespace left out", (_, w, options, problem) => {
    const plan = importPlan(facts(w), options);
    expect(plan.problems[0]).toMatch(problem);
    expect(plan.egressIps).toEqual([]);
  });

  it("--namespace: only those namespaces and the pools they use; one that does not exist is a problem", () => {
    const w: World = {
      ...operatorWorld,
      namespaces: [...operatorWorld.namespaces!, operatorNamespace("team-b", "10.0.1.2")],
      netNamespaces: { ...operatorWorld.netNamespaces, "team-b": ["10.0.1.2"] },
      hostSubnets: { n1: { egressIPs: ["10.0.1.1", "10.0.1.2"] }, n2: { egressIPs: ["10.0.2.1"] } },
    };
    const plan = importPlan(facts(w), { namespaces: ["team-b", "gone"] });
    expect(plan.egressIps.map((e) => e.namespace)).toEqual(["team-b"]);
    expect(plan.pools.map((p) => p.name)).toEqual(["egress-zone-a"]);
    expect(plan.problems).toEqual(["namespace gone (--namespace) does not exist on https://127.0.0.1:6443"]);
  });

  it("an address a stack already holds is skipped, not imported twice", () => {
    const plan = importPlan(
      facts({ ...operatorWorld, managed: { "10.0.1.1": "egress-ipam/owners of NetNamespace team-a" } }),
    );
    expect(plan.skipped).toEqual([
      "10.0.1.1 of namespace team-a: a stack holds it already (egress-ipam/owners of NetNamespace team-a)",
    ]);
    expect(plan.egressIps[0]!.addresses.map((a) => a.ip)).toEqual(["10.0.2.1"]);
  });
});

describe("import's program", () => {
  /** Type-checks `program` as a project that depends on this package (mapped to provider/). */
  function typeErrors(program: string): string[] {
    const root = path.resolve(__dirname, "../..");
    const file = path.join(root, "imported-index.ts");
    const options: ts.CompilerOptions = {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2023,
      lib: ["lib.es2023.d.ts"],
      types: ["node"],
      module: ts.ModuleKind.CommonJS,
      moduleResolution: ts.ModuleResolutionKind.Node10,
      esModuleInterop: true,
      skipLibCheck: true,
      baseUrl: root,
      paths: { "pulumi-egress-ipam": ["provider/index.ts"] },
    };
    const host = ts.createCompilerHost(options);
    const read = host.getSourceFile;
    host.getSourceFile = (name, lang, ...rest) =>
      name === file ? ts.createSourceFile(name, program, lang) : read.call(host, name, lang, ...rest);
    const p = ts.createProgram([file], options, host);
    return ts.getPreEmitDiagnostics(p).map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"));
  }

  it(
    "declares the plan's pools and EgressIps as literals, and type-checks against the package",
    { timeout: 60_000 },
    () => {
      const w: World = {
        ...operatorWorld,
        namespaces: [...operatorWorld.namespaces!, operatorNamespace("default", "10.0.1.2,10.0.2.2")],
        netNamespaces: { ...operatorWorld.netNamespaces, default: ["10.0.1.2", "10.0.2.2"] },
        hostSubnets: {
          n1: { egressIPs: ["10.0.1.1", "10.0.1.2"] },
          n2: { egressIPs: ["10.0.2.1", "10.0.2.2"] },
        },
      };
      const program = importProgram(importPlan(facts(w)));
      expect(program).toContain(`ranges: [{ subnet: "10.0.1.0/24", gateway: "10.0.1.0" }],`);
      expect(program).toContain(`exclude: ["10.0.1.5","10.0.1.10"],`);
      expect(program).toContain(`export const defaultIps = new ipam.EgressIp("default", {`);
      expect(program).toContain(`// 10.0.2.2 in zone-b on n2: NetNamespace default`);
      expect(typeErrors(program)).toEqual([]);
      // The check can fail: a program that misuses the package does not pass it.
      expect(typeErrors(`${program}\nnew ipam.EgressIp("x", { adopt: "yes" });\n`)).not.toEqual([]);
    },
  );

  it("its pools hand out the subnet's first host address, as the operator does (the gateway is the network address)", async () => {
    const program = importProgram(importPlan(facts(operatorWorld)));
    const gateway = /subnet: "10\.0\.1\.0\/24", gateway: "([^"]+)"/.exec(program)![1]!;
    const allocator = new IpAllocator(
      new RangeSet([{ subnet: "10.0.1.0/24", gateway }]),
      new MemoryStore(),
      0,
      { strategy: "lowest-free", exclude: ["10.0.1.5", "10.0.1.10"] },
    );
    expect((await allocator.get("first")).address).toBe("10.0.1.1/24");
    expect((await allocator.get("second")).address).toBe("10.0.1.2/24");
  });

  it("cluster text with line breaks stays inside its comment", () => {
    const f = facts(operatorWorld);
    f.egressIpams[0]!.cidrs[0]!.labelValue = "a\nprocess.exit(1)";
    const program = importProgram(importPlan(f));
    expect(program.split("\n").filter((l) => l.startsWith("process.exit"))).toEqual([]);
  });
});
