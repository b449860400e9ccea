// The API server restarted while two processes allocate from one shared pool: allocations fail
// with LEDGER_UNAVAILABLE while it is down, are tried again by the same owner (as the next `up`
// would), and in the end every owner holds exactly one address: no duplicate, no leaked hold.
// A private cluster of its own (KUBE_TEST_CLUSTER_STATE), so the restart disturbs no other test.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kubeClients } from "../../../provider/kube/kube-config";
import { ClaimStore } from "../../../provider/ledger/kubernetes/claim-store";
import { uniqueName } from "../../support/kube";
import { LedgerWorker } from "../../support/ledger-worker";

const script = path.join(process.cwd(), "scripts", "kube-test-cluster.sh");
const state = fs.mkdtempSync(path.join(os.tmpdir(), "egress-ipam-restart-"));
const cluster = (verb: string) =>
  spawnSync("bash", [script, verb], {
    encoding: "utf8",
    env: { ...process.env, KUBE_TEST_CLUSTER_STATE: state },
  });

describe("kube-apiserver restarted mid-run", () => {
  let kubeconfig = "";
  const ns = uniqueName("restart");
  beforeAll(async () => {
    const started = cluster("start");
    expect(started.status, started.stderr).toBe(0);
    kubeconfig = started.stdout.trim().split("\n").at(-1)!;
    process.env.KUBECONFIG = kubeconfig;
    await kubeClients({ context: "admin@test" }).core.createNamespace({ body: { metadata: { name: ns } } });
  });
  afterAll(() => {
    cluster("stop");
    fs.rmSync(state, { recursive: true, force: true });
  });

  it("leaves no duplicate and no leaked hold", async () => {
    const pool = uniqueName("p");
    const count = 120;
    const [a, b] = await Promise.all([
      LedgerWorker.start("admin@test", kubeconfig),
      LedgerWorker.start("admin@test", kubeconfig),
    ]);
    try {
      const churn = { op: "churn", namespace: ns, pool, subnet: "10.70.0.0/23", count, attempts: 300 };
      const quarter = a.progress();
      const runs = Promise.all([
        a.send({ ...churn, stack: "o/p/a", signalAt: count / 4 }),
        b.send({ ...churn, stack: "o/p/b" }),
      ]);
      await quarter;
      const restart = cluster("restart-apiserver");
      expect(restart.status, restart.stderr).toBe(0);
      const [ra, rb] = await runs;
      expect(ra, JSON.stringify(ra)).toMatchObject({ ok: true });
      expect(rb, JSON.stringify(rb)).toMatchObject({ ok: true });
      // The restart did hit them: some calls failed as LEDGER_UNAVAILABLE and were tried again.
      const errors = { ...(ra.errors as Record<string, number>) };
      for (const [code, n] of Object.entries(rb.errors as Record<string, number>))
        errors[code] = (errors[code] ?? 0) + n;
      expect(errors.LEDGER_UNAVAILABLE ?? 0).toBeGreaterThan(0);

      process.env.KUBECONFIG = kubeconfig;
      const claims = await new ClaimStore(kubeClients({ context: "admin@test" }), ns, pool).list();
      const ips = [...(ra.ips as string[]), ...(rb.ips as string[])];
      expect(new Set(ips).size).toBe(2 * count);
      expect(claims.length).toBe(2 * count);
      expect(claims.every((c) => c.state === "claim")).toBe(true);
      expect(new Set(claims.map((c) => `${c.stack} ${c.owner}`)).size).toBe(2 * count);
      expect(new Set(claims.map((c) => c.ip))).toEqual(new Set(ips));
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });
});
