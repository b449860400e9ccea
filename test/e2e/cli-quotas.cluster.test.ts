// `pulumi-egress-ipam report --ledger` of a pool with quotas, run as a user runs it (spawned CLI)
// against the real kube-apiserver. The ledger's objects are written here with the Kubernetes
// client, as the provider writes them: the definition with its owner and quotas, claims and holds
// of three tenant stacks and the owner, and objects that count for no stack (a node address, a
// lapsed hold, a quota counter).
import type * as k8s from "@kubernetes/client-node";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli";
import { freshNamespace, kube, testKubeconfig, uniqueName } from "../support/kube";

const OWNER_URN = "urn:pulumi:prod::net::pulumi-nodejs:dynamic/egress-ipam:IpPool::egress";
const urn = (project: string, name: string) =>
  `urn:pulumi:dev::${project}::pulumi-nodejs:dynamic/egress-ipam:IpAllocation::${name}`;
// Canonical, as the owner's IpPool stores it (see canonical-definition.ts).
const definition = JSON.stringify({
  ranges: [
    [{ subnet: "10.61.0.0/24", rangeStart: "10.61.0.1", rangeEnd: "10.61.0.254", gateway: "10.61.0.1" }],
  ],
  exclude: [],
  reserved: [],
  strategy: "round-robin",
});

describe("report --ledger of a pool with quotas, on the real kube-apiserver", () => {
  const pool = uniqueName("quota");
  const broken = uniqueName("badquota");
  let ns = "";
  let ref = "";
  // No stack the claims name exists in this backend: each is listed as not checked for stale claims.
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "cli-quotas-"));
  const env = {
    KUBECONFIG: testKubeconfig(),
    PULUMI_HOME: path.join(home, "home"),
    PULUMI_BACKEND_URL: `file://${home}`,
    PULUMI_CONFIG_PASSPHRASE: "",
  };
  const report = (...args: string[]) => runCli(["report", "--ledger", ref, ...args], env);

  const configMap = (
    name: string,
    role: string,
    of: string,
    data: Record<string, string>,
  ): k8s.V1ConfigMap => ({
    metadata: { name, namespace: ns, labels: { "egress-ipam/pool": of, "egress-ipam/role": role } },
    data,
  });
  /** A claim (or hold, with `expires`) of `entry`, named as the ledger names it. */
  const claim = (entry: string, stack: string, stackId: string, extra: Record<string, string> = {}) => {
    const [address, length] = entry.split("/");
    const name = `${pool}.${address}${length ? `-${length}` : ""}`;
    const project = stack.split("/")[1]!;
    return configMap(name, "claim", pool, {
      address: entry,
      state: extra.expires ? "hold" : "claim",
      stack,
      stackId,
      owner: urn(project, `a-${address!.split(".").pop()}`),
      seq: "1",
      ...extra,
    });
  };
  const inTenMinutes = () => new Date(Date.now() + 600_000).toISOString();

  beforeAll(async () => {
    ns = await freshNamespace("quotas");
    ref = `kubernetes:${ns}/${pool}`;
    const objects = [
      configMap(`${pool}.pool`, "pool", pool, {
        definition,
        stack: "organization/net/prod",
        owner: OWNER_URN,
        ownerStackId: "stack-owner",
        quotas: JSON.stringify({ default: 4, stacks: { "team-a/*": 12 } }),
      }),
      claim("10.61.0.2", "organization/net/prod", "stack-owner"),
      claim("10.61.0.3", "organization/team-a/dev", "stack-dev"),
      claim("10.61.0.8/29", "organization/team-a/dev", "stack-dev"),
      claim("10.61.0.4", "organization/team-a/dev", "stack-dev", { expires: inTenMinutes() }),
      claim("10.61.0.5", "organization/team-a/test", "stack-test"),
      claim("10.61.0.6", "organization/web/prod", "stack-web"),
      claim("10.61.0.7", "organization/web/prod", "stack-web"),
      // Count for no stack: a lapsed hold, a node address, and the ledger's quota counter.
      claim("10.61.0.20", "organization/web/prod", "stack-web", { expires: "2020-01-01T00:00:00.000Z" }),
      claim("10.61.0.21", "organization/web/prod", "stack-web", { nodeId: "node-a" }),
      configMap(`${pool}.quota.team-a`, "quota", pool, { used: "11" }),
      // Another pool whose stored quotas this package did not write.
      configMap(`${broken}.pool`, "pool", broken, {
        definition,
        stack: "organization/net/prod",
        owner: OWNER_URN,
        quotas: "{default: 4",
      }),
    ];
    for (const body of objects) await kube().core.createNamespacedConfigMap({ namespace: ns, body });
  });
  afterAll(async () => {
    fs.rmSync(home, { recursive: true, force: true });
    if (ns) await kube().core.deleteNamespace({ name: ns });
  });

  it("prints the owner, the quotas and a line per stack with its rule, held and planned, and the pattern's total", async () => {
    const run = await report();
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const lines = run.stdout.split("\n");
    expect(lines.slice(0, 6)).toEqual([
      `pool ${pool}  ${ref}`,
      `  owner     stack organization/net/prod (${OWNER_URN})`,
      "  range     10.61.0.1-10.61.0.254 in 10.61.0.0/24, gateway 10.61.0.1",
      "  strategy  round-robin",
      '  quotas    default 4, "team-a/*" 12',
      // .2 .3 .5 .6 .7 .21 and the /29: 14 held; .4 planned.
      "  size 253  held 14  free 238  planned-not-created 1  reserved 0  excluded 0",
    ]);
    // The definition, 9 claims and holds, the counter; the definition is the largest.
    expect(lines[6]).toMatch(
      new RegExp(
        `^  objects   11 in the ledger, the largest definition ${pool}\\.pool \\d+ bytes of 1048576 \\(0\\.\\d %, 5 keys\\)$`,
      ),
    );
    expect(lines.slice(8, 14)).toEqual([
      "  STACK                          QUOTA                     HELD  PLANNED  LEFT",
      "  organization/net/prod (owner)  default 4                 1     0        3",
      '  organization/team-a/dev        "team-a/*" 12 (together)  9     1        1',
      '  organization/team-a/test       "team-a/*" 12 (together)  1     0        1',
      "  organization/web/prod          default 4                 2     0        2",
      '  "team-a/*" together (2 stacks): held 10  planned 1  of 12  left 1',
    ]);
    expect(run.stdout).toContain(
      "  lapsed holds (planned, never claimed; plans of other stacks delete them 15 minutes after they lapsed, " +
        "pulumi-egress-ipam collect after a minute): 1\n" +
        `    10.61.0.20  organization/web/prod  ${urn("web", "a-20")}  lapsed 2020-01-01T00:00:00.000Z\n`,
    );
    expect(run.stdout).toMatch(
      /not checked for stale claims \(state not readable with this backend and login\): organization\/net\/prod, organization\/team-a\/dev/,
    );
  });

  it("--json: ownedBy, the quotas as set, and every stack with counts as decimal strings", async () => {
    const run = await report("--json");
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const [p] = JSON.parse(run.stdout).pools;
    expect(p.ownedBy).toEqual({ stack: "organization/net/prod", stackId: "stack-owner", pool: OWNER_URN });
    expect(p.quotas).toEqual({ default: 4, stacks: { "team-a/*": 12 } });
    expect(p.stacks).toEqual([
      {
        stack: "organization/net/prod",
        stackId: "stack-owner",
        owner: true,
        held: "1",
        planned: "0",
        quota: { limit: "4", used: "1" },
      },
      {
        stack: "organization/team-a/dev",
        stackId: "stack-dev",
        held: "9",
        planned: "1",
        quota: { pattern: "team-a/*", limit: "12", used: "11" },
      },
      {
        stack: "organization/team-a/test",
        stackId: "stack-test",
        held: "1",
        planned: "0",
        quota: { pattern: "team-a/*", limit: "12", used: "11" },
      },
      {
        stack: "organization/web/prod",
        stackId: "stack-web",
        held: "2",
        planned: "0",
        quota: { limit: "4", used: "2" },
      },
    ]);
    // The quota counter is no holder; the node address is, as before.
    const entries = [...p.holders, ...p.blocks].map((h: { ip: string }) => h.ip);
    expect(entries.sort()).toEqual(
      [
        "10.61.0.2",
        "10.61.0.3",
        "10.61.0.4",
        "10.61.0.5",
        "10.61.0.6",
        "10.61.0.7",
        "10.61.0.8/29",
        "10.61.0.21",
      ].sort(),
    );
  });

  it("stored quotas this package did not write: one line, exit 2, INVALID_STATE", async () => {
    const run = await runCli(["report", "--ledger", `kubernetes:${ns}/${broken}`], env);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr.trimEnd().split("\n")).toHaveLength(1);
    expect(run.stderr).toMatch(
      /^error: \[INVALID_STATE\] the quotas stored with pool "badquota-[0-9a-f]+" .* are not valid/,
    );
  });
});
