import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { isIpamError } from "../../../provider/allocator";
import { checkpointResources, exportStackResources } from "../../../provider/ledger/stack/stack-checkpoint";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "fake-pulumi-"));
// A stand-in for the CLI that records its arguments and answers as told.
const fakeCli = (name: string, body: string) => {
  const file = path.join(dir, name);
  fs.writeFileSync(file, `#!/bin/sh\necho "$@" > "${file}.args"\n${body}\n`, { mode: 0o755 });
  return file;
};
const exported = {
  version: 3,
  deployment: {
    resources: [{ urn: "urn:a", type: "t", outputs: { x: 1 } }],
    pending_operations: [{ type: "creating", resource: { urn: "urn:b", type: "t", inputs: { y: 2 } } }],
  },
};

describe("reading the stack's checkpoint", () => {
  it("runs `pulumi stack export --stack <fq>` and returns resources and pending operations", async () => {
    const cli = fakeCli("ok", `cat <<'JSON'\n${JSON.stringify(exported)}\nJSON`);
    const resources = await exportStackResources("org/proj/dev", { cli });
    expect(resources.map((r) => r.urn)).toEqual(["urn:a", "urn:b"]);
    expect(fs.readFileSync(`${cli}.args`, "utf8").trim()).toBe("stack export --stack org/proj/dev");
  });

  it.each([
    ["a missing CLI", () => path.join(dir, "does-not-exist"), /not found: put pulumi on PATH/],
    [
      "a failing CLI",
      () => fakeCli("fail", "echo 'error: no stack named dev' >&2; exit 255"),
      /no stack named dev/,
    ],
    ["output that is not JSON", () => fakeCli("garbage", "echo 'Welcome!'"), /not JSON: Welcome!/],
    ["JSON that is not an export", () => fakeCli("notexport", "echo '{\"hello\":1}'"), /no `deployment`/],
  ])("fails clearly on %s, naming the stack", async (_what, cli, why) => {
    const err = await exportStackResources("org/proj/dev", { cli: cli(), retryDelaysMs: [1] }).catch(
      (e: unknown) => e,
    );
    expect(isIpamError(err, "LEDGER_UNAVAILABLE")).toBe(true);
    expect((err as Error).message).toMatch(why);
    expect((err as Error).message).toContain('stack "org/proj/dev"');
  });

  it("runs the CLI without the engine's telemetry endpoints, and with the rest of its environment", async () => {
    // A CLI given the engine's endpoint waits 5 s at its exit to send its logs there once the engine
    // is gone (a killed `up`): the export would hold up the provider process's exit.
    const seen = path.join(dir, "env.seen");
    const cli = fakeCli(
      "env",
      `env > "${seen}"
cat <<'JSON'
${JSON.stringify(exported)}
JSON`,
    );
    const env = {
      ...process.env,
      PULUMI_LOG_OTLP_ENDPOINT: "localhost:1",
      PULUMI_OTEL_EXPORTER_OTLP_ENDPOINT: "localhost:1",
      PULUMI_BACKEND_URL: "file:///nowhere",
    };
    await exportStackResources("org/proj/dev", { cli, env });
    const lines = fs.readFileSync(seen, "utf8").split("\n");
    expect(lines).toContain("PULUMI_BACKEND_URL=file:///nowhere");
    expect(lines.filter((l) => l.includes("OTLP"))).toEqual([]);
  });

  it("tries again when the export fails while the engine rewrites the checkpoint", async () => {
    // Fails twice the way the file backend does when it reads a checkpoint mid-write, then answers.
    const count = path.join(dir, "torn.count");
    const cli = fakeCli(
      "torn",
      `echo x >> "${count}"\nif [ "$(wc -l < "${count}")" -le 2 ]; then echo 'error: failed to load checkpoint: EOF' >&2; exit 255; fi\n` +
        `cat <<'JSON'\n${JSON.stringify(exported)}\nJSON`,
    );
    const resources = await exportStackResources("org/proj/dev", { cli, retryDelaysMs: [1, 1, 1] });
    expect(resources.map((r) => r.urn)).toEqual(["urn:a", "urn:b"]);
    expect(fs.readFileSync(count, "utf8").split("\n").filter(Boolean)).toHaveLength(3);
  });

  it("gives up after the last attempt, saying how many it made", async () => {
    const count = path.join(dir, "broken.count");
    const cli = fakeCli(
      "broken",
      `echo x >> "${count}"; echo 'error: failed to load checkpoint: EOF' >&2; exit 255`,
    );
    const err = await exportStackResources("org/proj/dev", { cli, retryDelaysMs: [1, 1] }).catch(
      (e: unknown) => e,
    );
    expect(isIpamError(err, "LEDGER_UNAVAILABLE")).toBe(true);
    expect((err as Error).message).toMatch(/failed to load checkpoint: EOF \(3 attempts\)/);
    expect(fs.readFileSync(count, "utf8").split("\n").filter(Boolean)).toHaveLength(3);
  });

  it("rejects an export whose resources have no urn rather than skipping them", () => {
    expect(() => checkpointResources({ deployment: { resources: [{ type: "t" }] } }, "s")).toThrow(/no urn/);
  });

  it("accepts an empty stack", () => {
    expect(checkpointResources({ version: 3, deployment: {} }, "s")).toEqual([]);
  });
});
