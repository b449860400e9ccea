// `pulumi-egress-ipam report --ledger` and `check` for the Kubernetes provisioners, run as a user
// runs them (spawned CLI) on stacks the real engine made against the real kube-apiserver.
import * as k8s from "@kubernetes/client-node";
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli";
import { Harness } from "../support/harness";
import { svgCells } from "../support/svg-cells";
import { freshNamespace, kube, testKubeconfig, uniqueName } from "../support/kube";
import { kubectlPatch } from "../support/kubectl-patch";
import {
  hostSubnetIps,
  netNamespaceIps,
  sdnWorld,
  setHostSubnetIps,
  type SdnWorld,
} from "../support/sdn-world";

type Pkg = typeof import("../../provider/index");

interface Finding {
  kind: string;
  ip: string;
  expectedHost?: string;
  actualHost?: string;
  urn?: string;
  fix: string[];
}

/** The stack's identity, as its owner records name it: the first word of an assignment's ownerId. */
const stackIdentity = async (h: Harness) => {
  const r = (await h.resources()).find((x) => x.type.endsWith("EgressIpAssignment"));
  return String(r?.outputs?.ownerId).split(" ")[0]!;
};

const oneLineError = (run: { code: number | null; stdout: string; stderr: string }, code: number) => {
  expect(run.code).toBe(code);
  expect(run.stdout).toBe("");
  expect(run.stderr.trimEnd().split("\n")).toHaveLength(1);
  expect(run.stderr).toMatch(/^error: \[[A-Z][A-Z_]*[A-Z]\] /);
};

describe("report --ledger, on a pool shared by three stacks", () => {
  const env = { KUBECONFIG: testKubeconfig() };
  const pool = uniqueName("cli");
  let ns = "";
  let ref = "";
  const stacks = ["a", "b", "c"].map((s) => Harness.create(`cli-ledger-${s}`, { env }));
  const [a, b, c] = stacks as [Harness, Harness, Harness];
  const program = (h: Harness, allocations: Record<string, string | undefined>) => {
    const { IpPool, IpAllocation } = h.pkg<Pkg>("pulumi-egress-ipam");
    return async () => {
      const p = new IpPool("egress", {
        ranges: [{ subnet: "10.52.0.0/28" }],
        exclude: ["10.52.0.5"],
        reserved: ["10.52.0.14"],
        ledger: { kind: "kubernetes", name: pool, namespace: ns, context: "admin@test" },
      });
      for (const [name, ip] of Object.entries(allocations)) new IpAllocation(name, { pool: p, ip });
    };
  };
  const report = (...args: string[]) => runCli(["report", "--ledger", ref, ...args], env);
  let planned = "";

  beforeAll(async () => {
    ns = await freshNamespace("cli");
    ref = `kubernetes:${ns}/${pool}`;
    await a.program(program(a, { "a-0": undefined, "a-1": undefined }));
    await a.up();
    await b.program(program(b, { "b-0": "10.52.0.14" }));
    await b.up();
    // A preview holds its planned address in the ledger: planned, not created.
    await c.program(program(c, { "c-0": undefined }));
    planned = String((await c.preview()).planned("c-0")?.ip);
  });
  afterAll(async () => {
    for (const h of stacks) h.dispose();
    await kube().core.deleteNamespace({ name: ns });
  });

  it("--json: counts, and every stack's holders with their state", async () => {
    const run = await report("--json");
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const doc = JSON.parse(run.stdout);
    expect(doc.ledger).toBe(ref);
    expect(doc.pools).toHaveLength(1);
    // .1 gateway, .5 excluded, .14 reserved: 11 handed out automatically.
    expect(doc.pools[0]).toMatchObject({
      pool: ref,
      name: pool,
      size: "11",
      held: "3",
      planned: "1",
      free: "8",
      reserved: "1",
      excluded: "1",
    });
    const holders = doc.pools[0].holders.map(
      (x: { ip: string; state: string; stack: string; owner: string }) => [
        x.ip,
        x.state,
        x.stack,
        x.owner.split("::").pop(),
      ],
    );
    expect(holders).toEqual(
      [
        ["10.52.0.2", "held", a.fqStackName, "a-0"],
        ["10.52.0.3", "held", a.fqStackName, "a-1"],
        [planned, "planned", c.fqStackName, "c-0"],
        ["10.52.0.14", "held", b.fqStackName, "b-0"],
      ].sort((x, y) => Number(x[0]!.split(".")[3]) - Number(y[0]!.split(".")[3])),
    );
    // .2 .3 held, .4 planned, .5 excluded, .14 reserved and held, .15 broadcast (outside the range).
    expect(planned).toBe("10.52.0.4");
    expect(doc.pools[0].maps[0].lines[0].cells).toBe("-G##+x........#-");
  });

  it("prints the map and a holders table with a STACK column; the SVG has a held cell per claim", async () => {
    const file = path.join(a.workDir, "shared.svg");
    const run = await report("--svg", file);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`pool ${pool}  ${ref}`);
    expect(run.stdout).toMatch(/size 11 {2}held 3 {2}free 8 {2}planned-not-created 1/);
    expect(run.stdout).toMatch(/ADDRESS +STATE +SINCE +STACK +HOLDER \(URN\)/);
    expect(run.stdout).toMatch(
      new RegExp(`10\\.52\\.0\\.14 +held +\\d{4}-\\d\\d-\\d\\d [\\d:]+ UTC +${b.fqStackName} +urn:\\S+::b-0`),
    );
    const cells = svgCells(file);
    expect(cells).toHaveLength(16);
    expect(cells.filter((s) => s === "held")).toHaveLength(3);
    expect(cells.filter((s) => s === "planned")).toHaveLength(1);
  });

  it.each([
    [
      "a pool the namespace does not have",
      () => ["report", "--ledger", `kubernetes:${ns}/nope`],
      2,
      /no shared pool "nope" in namespace/,
    ],
    [
      "a context without access: exit 3 naming the permission",
      () => ["report", "--ledger", ref, "--context", "limited@test"],
      3,
      /User "limited" cannot (get|list) resource "configmaps"/,
    ],
    ["an unknown context", () => ["report", "--ledger", ref, "--context", "nope@test"], 2, /nope@test/],
  ])("%s: one line on stderr", async (_, args, code, why) => {
    const run = await runCli(args(), env);
    oneLineError(run, code);
    expect(run.stderr).toMatch(why);
  });
});

describe("check with the ocp-static provisioner, against kube-apiserver", () => {
  const net = `10.26.${1 + Math.floor(Math.random() * 250)}`;
  const h = Harness.create("cli-check-ocp", { env: { KUBECONFIG: testKubeconfig() } });
  const { IpPool, EgressIp } = h.pkg<Pkg>("pulumi-egress-ipam");
  let w: SdnWorld<"a1" | "a2" | "a3", "x" | "y" | "z">;
  let hosts: Record<string, string> = {};
  const check = (...args: string[]) => runCli(["check", "--stack", h.fqStackName, ...args], h.env);

  beforeAll(async () => {
    w = await sdnWorld({ a1: { zone: "a" }, a2: { zone: "a" }, a3: { zone: "a" } }, ["x", "y", "z"]);
    await h.program(async () => {
      const provisioner = { kind: "ocp-static" as const, nodeSelector: w.selector };
      const pool = new IpPool("egress", { ranges: [{ subnet: `${net}.0/24`, rangeStart: `${net}.10` }] });
      const out: Record<string, unknown> = {};
      for (const team of ["x", "y", "z"] as const) {
        const e = new EgressIp(`team-${team}`, {
          pool,
          namespace: w.ns[team],
          failureDomains: [w.zone("a")],
          provisioner,
        });
        out[team] = e.hosts.apply((l) => l[0]);
      }
      return out;
    });
    const up = await h.up();
    hosts = Object.fromEntries(Object.entries(up.outputs).map(([k, v]) => [k, String(v.value)]));
  });
  afterAll(async () => {
    h.dispose();
    await w?.cleanup();
  });

  it("finds no drift right after up", async () => {
    const run = await check();
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(
      new RegExp(`provisioner ocp-static: 3 addresses on hosts in ${net.replace(/\./g, "\\.")}\\.0/24`),
    );
    expect(run.stdout).toContain("no drift");
  });

  // A scheduled check whose job lost its kubeconfig (or whose kubeconfig lost the context) asked
  // nothing: before issue 54 it printed "no drift: the hosts carry what state says" and exited 0.
  it.each([
    [
      "no kubeconfig where KUBECONFIG points",
      () => path.join(h.workDir, "no-such-kubeconfig"),
      /no kubeconfig found \(looked in .*no-such-kubeconfig\)/,
    ],
    [
      "a kubeconfig whose current context it does not define",
      () => {
        const config = new k8s.KubeConfig();
        config.loadFromFile(testKubeconfig());
        config.setCurrentContext("gone@test");
        const file = path.join(h.workDir, "kubeconfig-without-context.json");
        fs.writeFileSync(file, config.exportConfig());
        return file;
      },
      /has no current context \(contexts: admin@test, /,
    ],
  ])(
    "%s: says what it did not check and exits 3 (not checked), never 'no drift'",
    async (_, kubeconfig, why) => {
      const env = { ...h.env, KUBECONFIG: kubeconfig() };
      const run = await runCli(["check", "--stack", h.fqStackName], env);
      expect(run.stderr).toBe("");
      const line = run.stdout.split("\n").find((l) => l.startsWith("provisioner ocp-static: "));
      expect(line).toMatch(/^provisioner ocp-static: not checked: \[INVALID_CONFIG\] /);
      expect(line).toMatch(why);
      expect(run.stdout).not.toContain("no drift");
      expect(run.stdout.trimEnd().split("\n").at(-1)).toBe(
        "not checked: 3 addresses of provisioner ocp-static (see above); nothing was compared with the hosts",
      );
      expect(run.code).toBe(3);
      const json = await runCli(["check", "--stack", h.fqStackName, "--json"], env);
      expect(json.code).toBe(3);
      const doc = JSON.parse(json.stdout) as { drift: boolean; unchecked: string[]; provisioners: unknown[] };
      expect(doc.drift).toBe(false);
      expect(doc.unchecked).toEqual([`${net}.10`, `${net}.11`, `${net}.12`]);
      expect(doc.provisioners).toEqual([expect.objectContaining({ code: "INVALID_CONFIG" })]);
    },
  );

  it("finds an address of the stack's left behind (leaked), one removed (missing) and one moved (misplaced), exit 1; one added by somebody else is in use by others", async () => {
    const [x, y] = [`${net}.10`, `${net}.11`];
    const [leaked, foreign] = [`${net}.100`, `${net}.101`];
    const otherThan = (host: string) =>
      [w.node.a1, w.node.a2, w.node.a3].find((n) => n !== host && n !== hosts.x)!;
    // Missing: x's address taken off its HostSubnet.
    await setHostSubnetIps(
      hosts.x!,
      (await hostSubnetIps(hosts.x!)).filter((ip) => ip !== x),
    );
    // Misplaced: y's address moved to another node's HostSubnet.
    const yTo = otherThan(hosts.y!);
    await setHostSubnetIps(
      hosts.y!,
      (await hostSubnetIps(hosts.y!)).filter((ip) => ip !== y),
    );
    await setHostSubnetIps(yTo, [...(await hostSubnetIps(yTo)), y]);
    // Leaked: an address of the pool on a HostSubnet and on z's NetNamespace, held by nobody in
    // state, its owner record naming this stack (a resource dropped by `pulumi state delete`).
    // In use by others: one beside it that nobody recorded (put there by hand, another tool).
    await setHostSubnetIps(hosts.x!, [...(await hostSubnetIps(hosts.x!)), leaked, foreign]);
    const { objects } = kube();
    const nn = (await objects.read({
      apiVersion: "network.openshift.io/v1",
      kind: "NetNamespace",
      metadata: { name: w.ns.z },
    })) as k8s.KubernetesObject & { egressIPs?: string[] };
    const record = JSON.parse(nn.metadata?.annotations?.["egress-ipam/owners"] ?? "{}");
    record[leaked] = [`${await stackIdentity(h)} urn:pulumi:test::cli-check-ocp::gone`];
    await objects.replace({
      ...nn,
      metadata: { ...nn.metadata, annotations: { "egress-ipam/owners": JSON.stringify(record) } },
      egressIPs: [...(nn.egressIPs ?? []), leaked, foreign],
    } as k8s.KubernetesObject);

    const run = await check("--json");
    expect(run.stderr).toBe("");
    expect(run.code).toBe(1);
    const refreshUp = [`pulumi refresh --stack ${h.fqStackName}`, `pulumi up --stack ${h.fqStackName}`];
    const patch = (resource: string, name: string, index: number, ip: string) =>
      `kubectl --context admin@test patch ${resource} ${name} --type=json -p ` +
      `'[{"op":"test","path":"/egressIPs/${index}","value":"${ip}"},{"op":"remove","path":"/egressIPs/${index}"}]'`;
    const hs = "hostsubnet.network.openshift.io";
    expect((JSON.parse(run.stdout) as { findings: Finding[] }).findings).toEqual([
      {
        kind: "missing",
        ip: x,
        expectedHost: hosts.x,
        urn: expect.stringMatching(/EgressIpAssignment::team-x-/),
        fix: refreshUp,
      },
      {
        kind: "misplaced",
        ip: y,
        expectedHost: hosts.y,
        actualHost: yTo,
        urn: expect.stringMatching(/EgressIpAssignment::team-y-/),
        fix: [patch(hs, yTo, (await hostSubnetIps(yTo)).indexOf(y), y), ...refreshUp],
      },
      {
        kind: "leaked",
        ip: leaked,
        actualHost: hosts.x,
        fix: [
          `${patch(hs, hosts.x!, (await hostSubnetIps(hosts.x!)).indexOf(leaked), leaked)} && ` +
            patch("netnamespace.network.openshift.io", w.ns.z, 1, leaked),
        ],
      },
    ]);
    // Before issue 44: leaked too, with the patches that remove it.
    expect(JSON.parse(run.stdout).others).toEqual([{ ip: foreign, host: hosts.x }]);
    expect(run.stdout).not.toContain(`"value":"${foreign}"`);
  });

  it("the printed commands and refresh + up repair it all; a removal command never runs twice", async () => {
    const doc = JSON.parse((await check("--json")).stdout) as { findings: Finding[] };
    const kubectl = doc.findings.flatMap((f) => f.fix.filter((c) => c.startsWith("kubectl ")));
    expect(kubectl).toHaveLength(2);
    for (const command of kubectl) {
      expect((await kubectlPatch(command)).map((a) => a.status)).toEqual(
        command.includes(" && ") ? [200, 200] : [200],
      );
    }
    expect(await netNamespaceIps(w.ns.z)).toEqual([`${net}.12`, `${net}.101`]);
    // The list changed since: the test operation refuses, nothing else is removed.
    const again = await kubectlPatch(kubectl[0]!);
    expect(again[0]!.status).toBe(422);
    await h.refresh();
    await h.up();
    const run = await check();
    expect(run.stdout).toContain("no drift");
    // Somebody else's address stays where it is, listed and never counted as drift.
    expect(run.stdout).toContain(
      `in use by others (on a host, inside a pool, not this stack's: left alone): 1`,
    );
    expect(run.stdout).toContain(`  ${net}.101  on ${hosts.x}`);
    expect(run.code).toBe(0);
  });
});

describe("check with the ovn provisioner, against kube-apiserver", () => {
  const net = `10.27.${1 + Math.floor(Math.random() * 250)}`;
  const h = Harness.create("cli-check-ovn", { env: { KUBECONFIG: testKubeconfig() } });
  const { IpPool, EgressIp, CidrAssignment } = h.pkg<Pkg>("pulumi-egress-ipam");
  let w: SdnWorld<"a1" | "a2", "x">;
  const foreign = uniqueName("foreign");
  let planned = { ip: "", host: "" };
  const check = (...args: string[]) => runCli(["check", "--stack", h.fqStackName, ...args], h.env);
  const ovn = (name: string) => ({ apiVersion: "k8s.ovn.org/v1", kind: "EgressIP", metadata: { name } });
  const ipconfig = {
    "cloud.network.openshift.io/egress-ipconfig": JSON.stringify([
      { interface: "eth0", ifaddr: { ipv4: `${net}.0/24` }, capacity: { ipv4: 8 } },
    ]),
  };

  beforeAll(async () => {
    const node = { zone: "a", hostSubnet: false as const, annotations: ipconfig };
    w = await sdnWorld({ a1: node, a2: node }, ["x"], { netNamespaces: false });
    await h.program(async () => {
      const provisioner = { kind: "ovn" as const, nodeSelector: w.selector };
      const pool = new IpPool("egress", { ranges: [{ subnet: `${net}.0/24`, rangeStart: `${net}.10` }] });
      new CidrAssignment("assignable", { pool, provisioner, failureDomain: w.zone("a") });
      const x = new EgressIp("team-x", {
        pool,
        namespace: w.ns.x,
        failureDomains: [w.zone("a")],
        provisioner,
      });
      return { ip: x.ips.apply((l) => l[0]), host: x.hosts.apply((l) => l[0]) };
    });
    const up = await h.up();
    planned = { ip: String(up.outputs.ip!.value), host: String(up.outputs.host!.value) };
  });
  afterAll(async () => {
    h.dispose();
    await kube()
      .objects.delete(ovn(foreign))
      .catch(() => undefined);
    await w?.cleanup();
  });

  it("an address ovnkube has not placed yet is no drift", async () => {
    const run = await check();
    expect(run.stderr).toBe("");
    expect(run.stdout).toContain("no drift");
    expect(run.code).toBe(0);
  });

  it("placed by ovnkube on another node: misplaced, fixed by refresh and up alone; the stack's address left behind: leaked; a foreign EgressIP's pool address: in use by others", async () => {
    const other = planned.host === w.node.a1 ? w.node.a2 : w.node.a1;
    const { objects } = kube();
    const mine = (await objects.read(ovn(`egress-ipam-${w.ns.x}`))) as k8s.KubernetesObject & {
      spec: { egressIPs: string[] };
    };
    // What ovnkube writes (there is no status subresource); and an address of the stack's that its
    // state lost (`pulumi state delete`), still recorded for it.
    const record = JSON.parse(mine.metadata?.annotations?.["egress-ipam/owners"] ?? "{}");
    record[`${net}.201`] = [`${await stackIdentity(h)} urn:pulumi:test::cli-check-ovn::gone`];
    await objects.replace({
      ...mine,
      metadata: { ...mine.metadata, annotations: { "egress-ipam/owners": JSON.stringify(record) } },
      spec: { ...mine.spec, egressIPs: [...mine.spec.egressIPs, `${net}.201`] },
      status: { items: [{ node: other, egressIP: planned.ip }] },
    } as k8s.KubernetesObject);
    await objects.create({
      ...ovn(foreign),
      spec: { egressIPs: [`${net}.200`], namespaceSelector: { matchLabels: { team: "elsewhere" } } },
    } as k8s.KubernetesObject);

    const run = await check("--json");
    expect(run.code).toBe(1);
    expect((JSON.parse(run.stdout) as { findings: Finding[] }).findings).toEqual([
      {
        kind: "misplaced",
        ip: planned.ip,
        expectedHost: planned.host,
        actualHost: other,
        urn: expect.stringMatching(/EgressIpAssignment::team-x-/),
        fix: [`pulumi refresh --stack ${h.fqStackName}`, `pulumi up --stack ${h.fqStackName}`],
      },
      {
        kind: "leaked",
        ip: `${net}.201`,
        actualHost: "(not placed yet)",
        fix: [
          `kubectl --context admin@test patch egressip.k8s.ovn.org egress-ipam-${w.ns.x} --type=json -p ` +
            `'[{"op":"test","path":"/spec/egressIPs/1","value":"${net}.201"},{"op":"remove","path":"/spec/egressIPs/1"}]'`,
        ],
      },
    ]);
    // Before issue 44: leaked, with the patch that removes it from somebody else's object.
    expect(JSON.parse(run.stdout).others).toEqual([{ ip: `${net}.200`, host: "(not placed yet)" }]);

    const [leak] = (JSON.parse(run.stdout) as { findings: Finding[] }).findings.filter(
      (f) => f.kind === "leaked",
    );
    expect((await kubectlPatch(leak!.fix[0]!)).map((a) => a.status)).toEqual([200]);
    await h.refresh();
    const up = await h.up();
    expect(up.outputs.host!.value).toBe(other);
    expect(
      ((await objects.read(ovn(`egress-ipam-${w.ns.x}`))) as { spec: { egressIPs: string[] } }).spec
        .egressIPs,
    ).toEqual([planned.ip]);
    const after = await check();
    expect(after.stdout).toContain("no drift");
    expect(after.code).toBe(0);
  });

  it("an EgressIP labelled as this package's whose record names another stack is in use by others: exit 0, no command", async () => {
    const { objects } = kube();
    await objects.patch(
      {
        ...ovn(foreign),
        metadata: {
          name: foreign,
          labels: { "app.kubernetes.io/managed-by": "pulumi-egress-ipam" },
          annotations: {
            "egress-ipam/owners": JSON.stringify({
              [`${net}.200`]: ["stack-000000000000000000000000 urn:x"],
            }),
          },
        },
      } as k8s.KubernetesObject,
      undefined,
      undefined,
      undefined,
      undefined,
      "application/merge-patch+json" as never,
    );
    const run = await check("--json");
    expect(run.stderr).toBe("");
    const doc = JSON.parse(run.stdout);
    expect(doc.findings).toEqual([]);
    expect(doc.others).toEqual([
      { ip: `${net}.200`, host: "(not placed yet)", recordedFor: ["stack-000000000000000000000000 urn:x"] },
    ]);
    expect(run.code).toBe(0);
  });
});

describe("check of two stacks sharing an ocp-static pool through a ledger", () => {
  const net = `10.27.${1 + Math.floor(Math.random() * 250)}`;
  const pool = uniqueName("chk");
  let ns = "";
  const stacks = ["a", "b"].map((s) =>
    Harness.create(`cli-shared-${s}`, { env: { KUBECONFIG: testKubeconfig() } }),
  );
  let w: SdnWorld<"a1" | "a2", "x" | "y">;
  const ips: string[][] = [];

  beforeAll(async () => {
    ns = await freshNamespace("chk");
    w = await sdnWorld({ a1: { zone: "a" }, a2: { zone: "a" } }, ["x", "y"]);
    for (const [i, h] of stacks.entries()) {
      const { IpPool, EgressIp } = h.pkg<Pkg>("pulumi-egress-ipam");
      await h.program(async () => {
        const p = new IpPool("egress", {
          ranges: [{ subnet: `${net}.0/24`, rangeStart: `${net}.10` }],
          ledger: { kind: "kubernetes", name: pool, namespace: ns, context: "admin@test" },
        });
        const e = new EgressIp(`team-${i}`, {
          pool: p,
          namespace: w.ns[i === 0 ? "x" : "y"],
          failureDomains: [w.zone("a")],
          provisioner: { kind: "ocp-static", nodeSelector: w.selector },
        });
        return { ips: e.ips };
      });
      ips.push((await h.up()).outputs.ips!.value as string[]);
    }
  });
  afterAll(async () => {
    for (const h of stacks) {
      await h.destroy().catch(() => undefined);
      h.dispose();
    }
    await w?.cleanup();
    await kube().core.deleteNamespace({ name: ns });
  });

  it("of each stack exits 0 and names none of the other's addresses", async () => {
    expect(new Set(ips.flat()).size).toBe(2);
    for (const [i, h] of stacks.entries()) {
      const run = await runCli(["check", "--stack", h.fqStackName], h.env);
      const others = ips[1 - i]!;
      expect(run.stdout).toContain("no drift");
      for (const ip of others) expect(run.stdout).not.toContain(ip);
      expect(run.code).toBe(0);
    }
  });

  it("report --stack counts the other stack's addresses as held, naming its stack", async () => {
    const [a, b] = stacks as [Harness, Harness];
    const run = await runCli(["report", "--stack", a.fqStackName, "--json"], a.env);
    expect(run.stderr).toBe("");
    const doc = JSON.parse(run.stdout);
    expect(doc.pools[0].held).toBe("2");
    const holders = doc.pools[0].holders as { ip: string; stack?: string }[];
    expect(holders.find((x) => x.ip === ips[1]![0])?.stack).toBe(b.fqStackName);
    expect(holders.find((x) => x.ip === ips[0]![0])?.stack).toBeUndefined();
    expect(doc.pools[0].stale).toEqual([]);
  });

  it("report --stack names a claim of the stack that its state does not hold, with the command that frees it", async () => {
    const [a, b] = stacks as [Harness, Harness];
    // As `pulumi state delete` leaves it: the resource is gone from state, its claim is not.
    const alloc = (await a.resources()).find((r) => r.type.endsWith("IpAllocation"))!;
    const urn = alloc.urn;
    // The program is not run again: a no-op one gives access to the stack for export and import.
    const stackA = await a.program(async () => undefined);
    const exported = await stackA.exportStack();
    const kept = exported.deployment.resources.filter(
      (r: { urn: string; type: string }) => r.urn !== urn && !r.type.endsWith("EgressIpAssignment"),
    );
    await stackA.importStack({ ...exported, deployment: { ...exported.deployment, resources: kept } });
    const run = await runCli(["report", "--stack", a.fqStackName], a.env);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(
      "stale claims (claimed for this stack in the ledger, held by no resource in its state): 1",
    );
    const fix = `kubectl delete configmap ${pool}.${ips[0]![0]} --namespace ${ns}`;
    expect(run.stdout).toContain(fix);
    expect(run.stdout).toContain(urn);
    // The other stack has none: its claim is its own and held.
    const other = await runCli(["report", "--stack", b.fqStackName, "--json"], b.env);
    expect(JSON.parse(other.stdout).pools[0].stale).toEqual([]);

    // The ledger's report, with a's backend: a's claim is stale; b's stack is on another backend,
    // so its claims cannot be told stale or held here, and the report says so.
    const ledger = await runCli(["report", "--ledger", `kubernetes:${ns}/${pool}`, "--json"], a.env);
    expect(ledger.stderr).toBe("");
    const doc = JSON.parse(ledger.stdout).pools[0];
    expect(doc.stale).toEqual([{ ip: ips[0]![0], owner: urn, fix }]);
    expect(doc.unchecked).toEqual([b.fqStackName]);
    const text = await runCli(["report", "--ledger", `kubernetes:${ns}/${pool}`], a.env);
    expect(text.stdout).toContain("stale claims (held by no resource in their stack's state): 1");
    expect(text.stdout).toContain(
      `not checked for stale claims (state not readable with this backend and login): ${b.fqStackName}`,
    );
  });
});
