// A stack's identity in shared ledgers, with the real CLI, engine and kube-apiserver: two users'
// `file://~` backends (the same URL string on every machine) with one committed stack config, and a
// first preview against the first up.
import * as fs from "node:fs";
import * as path from "node:path";
import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Harness, tempDir } from "../support/harness";
import { freshNamespace, kube, testKubeconfig, uniqueName } from "../support/kube";

type Pkg = typeof import("../../provider/index");

/**
 * A folder whose `bin/pulumi` runs the real CLI as a user whose home directory is `home`: the CLI
 * resolves `file://~` from the passwd entry, not `$HOME`, so each "user" gets a private mount
 * namespace with its own /etc/passwd. The engine and the provider it starts run inside it too.
 */
function userCli(home: string): string {
  const root = tempDir("egress-ipam-user-cli-");
  const passwd = fs
    .readFileSync("/etc/passwd", "utf8")
    .replace(/^root:x:0:0:([^:]*):[^:]*:/m, `root:x:0:0:$1:${home}:`);
  fs.writeFileSync(path.join(root, "passwd"), passwd);
  const real = execFileSync("sh", ["-c", "command -v pulumi"], { encoding: "utf8" }).trim();
  fs.mkdirSync(path.join(root, "bin"));
  fs.writeFileSync(
    path.join(root, "bin", "pulumi"),
    `#!/bin/sh\nexec unshare --user --map-root-user --mount sh -c ` +
      `'mount --bind "$0" /etc/passwd && exec "$@"' ${root}/passwd ${real} "$@"\n`,
    { mode: 0o755 },
  );
  return root;
}

describe("stack identity", () => {
  let ns = "";
  const harnesses: Harness[] = [];
  const dirs: string[] = [];
  const ledgerOf = (name: string) => ({
    kind: "kubernetes" as const,
    name,
    namespace: ns,
    context: "admin@test",
    lockDuration: "5s",
  });
  const allocations = (h: Harness, pool: string) => {
    const { IpPool, IpAllocation } = h.pkg<Pkg>("pulumi-egress-ipam");
    return async () => {
      const p = new IpPool("egress", { ranges: [{ subnet: "10.61.0.0/28" }], ledger: ledgerOf(pool) });
      return Object.fromEntries(["a", "b", "c"].map((n) => [n, new IpAllocation(n, { pool: p }).ip]));
    };
  };
  const ipsOf = (outputs: Record<string, { value: unknown }>) =>
    Object.values(outputs).map((o) => String(o.value));
  const stackIdsOf = async (h: Harness) =>
    new Set((await h.resources()).flatMap((r) => (r.outputs?.stackId ? [String(r.outputs.stackId)] : [])));
  /** A user on their own machine: `file://~` is their home's `.pulumi`. */
  const user = () => {
    const home = tempDir("egress-ipam-home-");
    dirs.push(home);
    const pulumiRoot = userCli(home);
    dirs.push(pulumiRoot);
    const h = Harness.create("network", {
      env: { KUBECONFIG: testKubeconfig(), HOME: home, PULUMI_BACKEND_URL: "file://~" },
      pulumiRoot,
    });
    harnesses.push(h);
    return { h, home };
  };

  beforeAll(async () => {
    ns = await freshNamespace("stackid");
  });
  afterAll(async () => {
    for (const h of harnesses) h.dispose();
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
    await kube().core.deleteNamespace({ name: ns });
  });

  it("two users' network/test on `file://~`, with the committed Pulumi.test.yaml, get two identities and disjoint addresses", async () => {
    const pool = uniqueName("homes");
    const alice = user();
    const bob = user();
    expect(alice.h.fqStackName).toBe(bob.h.fqStackName);
    await alice.h.program(allocations(alice.h, pool));
    const one = ipsOf((await alice.h.up()).outputs);
    // Each user's state is in their own home, as `file://~` means.
    expect(fs.existsSync(path.join(alice.home, ".pulumi", "stacks", "network", "test.json"))).toBe(true);
    // Bob clones the project: its stack config, with the passphrase provider's salt, comes along.
    fs.copyFileSync(
      path.join(alice.h.workDir, "Pulumi.test.yaml"),
      path.join(bob.h.workDir, "Pulumi.test.yaml"),
    );
    await bob.h.program(allocations(bob.h, pool));
    const two = ipsOf((await bob.h.up()).outputs);
    expect(fs.existsSync(path.join(bob.home, ".pulumi", "stacks", "network", "test.json"))).toBe(true);

    expect(new Set([...one, ...two]).size).toBe(6);
    const [idA] = await stackIdsOf(alice.h);
    const [idB] = await stackIdsOf(bob.h);
    expect(idA).toMatch(/^stack-[0-9a-f]{24}$/);
    expect(idB).not.toBe(idA);
    await bob.h.destroy();
    await alice.h.destroy();
  });

  it.each([
    ["a fresh stack", false],
    ["a stack whose checkpoint has no secrets provider yet (as a fresh Pulumi Cloud stack)", true],
  ])("%s: the first preview shows the addresses the first up gets", async (_, withoutSecrets) => {
    const pool = uniqueName("first");
    const h = Harness.create("network", { env: { KUBECONFIG: testKubeconfig() } });
    harnesses.push(h);
    const stack = await h.program(allocations(h, pool));
    if (withoutSecrets) {
      const exported = await stack.exportStack();
      delete (exported.deployment as { secrets_providers?: unknown }).secrets_providers;
      await stack.importStack(exported);
    }
    const preview = await h.preview();
    const planned = ["a", "b", "c"].map((n) => String(preview.planned(n)?.ip));
    const up = await h.up();
    expect(["a", "b", "c"].map((n) => String(up.outputs[n]?.value))).toEqual(planned);
    expect((await stackIdsOf(h)).size).toBe(1);
    await h.destroy();
  });
});
