// The API server restarted while two processes allocate from one shared pool: allocations fail
// with LEDGER_UNAVAILABLE while it is down, are tried again by the same owner (as the next `up`
// would), and in the end every owner holds exactly one address: no duplicate, no leaked hold.
import { spawnSync } from "node:child_process";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClaimStore } from "../../provider/state/claim-store";
import { kubeClients } from "../../provider/kube/kube-config";
import { freshNamespace, kube, testKubeconfig, uniqueName } from "../support/kube";
import { LedgerWorker } from "../support/ledger-worker";

const script = path.join(process.cwd(), "scripts", "kube-test-cluster.sh");

describe("kube-apiserver restarted mid-run", () => {
  let ns = "";
  beforeAll(async () => {
    ns = await freshNamespace("restart");
  });
  afterAll(() => kube().core.deleteNamespace({ name: ns }));

  it("leaves no duplicate and no leaked hold", async () => {
    const pool = uniqueName("p");
    const count = 120;
    const [a, b] = await Promise.all([LedgerWorker.start(), LedgerWorker.start()]);
    try {
      const churn = { op: "churn", namespace: ns, pool, subnet: "10.70.0.0/23", count, attempts: 300 };
      const halfway = a.progress();
      const runs = Promise.all([
        a.send({ ...churn, stack: "o/p/a", signalAt: count / 4 }),
        b.send({ ...churn, stack: "o/p/b" }),
      ]);
      await halfway;
      const restart = spawnSync("bash", [script, "restart-apiserver"], { encoding: "utf8" });
      expect(restart.status, restart.stderr).toBe(0);
      const [ra, rb] = await runs;
      expect(ra, JSON.stringify(ra)).toMatchObject({ ok: true });
      expect(rb, JSON.stringify(rb)).toMatchObject({ ok: true });
      // The restart did hit them: some calls failed as LEDGER_UNAVAILABLE and were tried again.
      const errors = { ...(ra.errors as Record<string, number>) };
      for (const [code, n] of Object.entries(rb.errors as Record<string, number>))
        errors[code] = (errors[code] ?? 0) + n;
      expect(errors.LEDGER_UNAVAILABLE ?? 0).toBeGreaterThan(0);

      process.env.KUBECONFIG = testKubeconfig();
      const claims = await new ClaimStore(kubeClients("admin@test"), ns, pool).list();
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
