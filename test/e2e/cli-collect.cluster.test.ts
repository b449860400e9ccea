// `report --ledger` shows a shared pool's lapsed holds and its largest object against a ConfigMap's
// limit, and `collect --ledger` deletes the lapsed holds with their marker tokens and quota counter
// keys (issue #56 item 4), run as a user runs the CLI against the real kube-apiserver. The holds
// are written by the ledger itself (a stack's preview that never ran up), then aged.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kubeClients } from "../../provider/kube/kube-config";
import type { Claim } from "../../provider/ledger/kubernetes/claim-store";
import { kubeLedger, type KubeLedger } from "../../provider/ledger/kubernetes/kube-ledger";
import { MarkerStore } from "../../provider/ledger/kubernetes/marker-store";
import { PoolDefinitions } from "../../provider/ledger/kubernetes/pool-definition";
import { canonicalQuotas } from "../../provider/ledger/quota-rules";
import { poolDefinition } from "../../provider/resources/pool/canonical-definition";
import { poolChooser, resolvePool } from "../../provider/resources/pool/pool-spec";
import { runCli } from "../support/cli";
import { freshNamespace, kube, testKubeconfig, uniqueName } from "../support/kube";

const resolved = resolvePool({
  ranges: [{ subnet: "10.54.0.0/16" }],
  prefixLengths: { min: 24, max: 27 },
}).pool!;
const choose = poolChooser(resolved);
const urn = (name: string) => `urn:pulumi:dev::web::egress-ipam:IpAllocation::${name}`;

/** `c` lapsed at `at` (its registrations stay: they are by its uid). */
async function age(l: KubeLedger, c: Claim, at: number): Promise<void> {
  const { ip: _ip, resourceVersion: _rv, uid: _uid, created: _c, malformed: _m, ...fields } = c;
  await l.store.replace(c, { ...fields, expires: at });
}

describe("lapsed holds in report --ledger, and collect --ledger", () => {
  const pool = uniqueName("collect");
  let ns = "";
  let ref = "";
  let ledger: KubeLedger;
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "cli-collect-"));
  const env = {
    KUBECONFIG: testKubeconfig(),
    PULUMI_HOME: path.join(home, "home"),
    PULUMI_BACKEND_URL: `file://${home}`,
    PULUMI_CONFIG_PASSPHRASE: "",
  };
  const longAgo = Date.parse("2026-01-01T00:00:00.000Z");

  beforeAll(async () => {
    ns = await freshNamespace("collect");
    ref = `kubernetes:${ns}/${pool}`;
    process.env.KUBECONFIG = testKubeconfig();
    const clients = kubeClients({ context: "admin@test" });
    const config = { name: pool, namespace: ns, lockDuration: 10_000, lockAcquireTimeout: 60_000 };
    await new PoolDefinitions(config, clients).agree({
      definition: poolDefinition(resolved),
      stack: "organization/net/prod",
      owner: "urn:pool",
      quotas: canonicalQuotas({ default: 10 })!,
    });
    ledger = kubeLedger({ stack: "organization/web/dev", stackId: "stack-dev", clients, ledger: config });
    // Three previews that never ran up (.2 to .4; .1 is the gateway), and one that did (.5).
    for (const name of ["a", "b", "c", "d"]) await ledger.plan({ pool: "p", owner: urn(name), choose });
    const claimed = (await ledger.store.read("10.54.0.5"))!;
    await ledger.reserve("p", urn("d"), { ips: [claimed.ip], seq: claimed.seq }, false, "i-d");
    for (const ip of ["10.54.0.2", "10.54.0.3"]) await age(ledger, (await ledger.store.read(ip))!, longAgo);
  }, 120_000);
  afterAll(async () => {
    fs.rmSync(home, { recursive: true, force: true });
    if (ns) await kube().core.deleteNamespace({ name: ns });
  });

  it("report --ledger lists the lapsed holds and the largest object against the 1 MiB limit", async () => {
    const run = await runCli(["report", "--ledger", ref], env);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    // The definition, 4 claims and holds, 4 markers (/24 to /27 around them) and the quota counter;
    // the /24's marker lists all 4 entries.
    expect(run.stdout).toMatch(
      /^ {2}objects {3}10 in the ledger, the largest .+ \d+ bytes of 1048576 \(0\.\d %, \d+ keys\)$/m,
    );
    expect(run.stdout).toContain(
      "  lapsed holds (planned, never claimed; plans of other stacks delete them 15 minutes after they lapsed, " +
        "pulumi-egress-ipam collect after a minute): 2\n" +
        `    10.54.0.2  organization/web/dev  ${urn("a")}  lapsed 2026-01-01T00:00:00.000Z\n` +
        `    10.54.0.3  organization/web/dev  ${urn("b")}  lapsed 2026-01-01T00:00:00.000Z\n`,
    );
    const json = JSON.parse((await runCli(["report", "--ledger", ref, "--json"], env)).stdout);
    const [p] = json.pools;
    expect(p.lapsed.map((h: { ip: string }) => h.ip)).toEqual(["10.54.0.2", "10.54.0.3"]);
    expect(p.largest).toMatchObject({ limit: 1048576, objects: 10 });
    expect(p.largest.bytes).toBeGreaterThan(0);
  });

  it("collect --ledger deletes the lapsed holds with their registrations, and nothing else", async () => {
    const before = await new MarkerStore(ledger.store).list();
    expect(before.map((m) => Object.keys(m.children).length).sort()).toEqual([4, 4, 4, 4]);
    const run = await runCli(["collect", "--ledger", ref], env);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(
      `collected 2 lapsed holds of ${ref}\n` +
        `  10.54.0.2  organization/web/dev  ${urn("a")}  lapsed 2026-01-01T00:00:00.000Z\n` +
        `  10.54.0.3  organization/web/dev  ${urn("b")}  lapsed 2026-01-01T00:00:00.000Z\n`,
    );
    const left = await ledger.store.list();
    expect(left.map((c) => [c.ip, c.state]).sort()).toEqual([
      ["10.54.0.4", "hold"],
      ["10.54.0.5", "claim"],
    ]);
    const markers = await new MarkerStore(ledger.store).list();
    for (const m of markers) expect(Object.keys(m.children).sort()).toEqual(["10.54.0.4", "10.54.0.5"]);
    const counter = (
      await kube().core.listNamespacedConfigMap({ namespace: ns, labelSelector: "egress-ipam/role=quota" })
    ).items[0]!;
    expect(
      Object.keys(counter.data ?? {})
        .filter((k) => k.startsWith(`${pool}.`))
        .sort(),
    ).toEqual([`${pool}.10.54.0.4`, `${pool}.10.54.0.5`]);
    const report = await runCli(["report", "--ledger", ref], env);
    expect(report.stdout).not.toContain("lapsed holds");
    expect(report.stdout).toMatch(/^ {2}objects {3}8 in the ledger/m);

    const again = await runCli(["collect", "--ledger", ref, "--json"], env);
    expect(JSON.parse(again.stdout)).toEqual({ ledger: ref, collected: [], left: [] });
  });
});
