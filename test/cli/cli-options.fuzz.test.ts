// The CLI's options given arbitrary text, as a shell script or a CI variable can give them: the CLI
// never throws, prints one short line naming the problem, and exits non-zero; no crash text.
import * as fc from "fast-check";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, afterEach, beforeAll, expect, it, vi } from "vitest";
import { main } from "../../provider/cli/main";

// The stack is read through the CLI named by PULUMI_EGRESS_IPAM_CLI: here one that knows no stack.
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cli-fuzz-"));
fs.writeFileSync(
  path.join(dir, "pulumi"),
  `#!/bin/sh\necho "error: no stack named '$4' found" >&2\nexit 255\n`,
  {
    mode: 0o755,
  },
);
const env = { cli: process.env.PULUMI_EGRESS_IPAM_CLI, kube: process.env.KUBECONFIG };
beforeAll(() => {
  process.env.PULUMI_EGRESS_IPAM_CLI = path.join(dir, "pulumi");
  process.env.KUBECONFIG = path.join(dir, "no-kubeconfig");
});
afterAll(() => {
  process.env.PULUMI_EGRESS_IPAM_CLI = env.cli;
  process.env.KUBECONFIG = env.kube;
  fs.rmSync(dir, { recursive: true, force: true });
});
afterEach(() => vi.restoreAllMocks());

/** Runs the CLI on `args`, returning what it wrote to stderr and its exit code. */
async function run(args: string[]): Promise<{ stderr: string; code: number }> {
  let stderr = "";
  vi.spyOn(process.stderr, "write").mockImplementation((chunk) => ((stderr += String(chunk)), true));
  vi.spyOn(process.stdout, "write").mockImplementation(() => true);
  process.exitCode = 0;
  await main(["node", "pulumi-egress-ipam", ...args]);
  const code = Number(process.exitCode ?? 0);
  process.exitCode = 0;
  vi.restoreAllMocks();
  return { stderr, code };
}

const value = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.constantFrom(
    "x".repeat(100_000),
    "\u001b[2Jcleared",
    "kubernetes:",
    "kubernetes:ns/",
    "a/b/c",
    "-1",
    "0",
    "1e999",
  ),
);
const option = fc.constantFrom("--stack", "--ledger", "--context", "--pool", "--timeout");

it("never throws; a bad option value gets one short line and a non-zero exit code", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom("report", "check"),
      fc.array(fc.tuple(option, value), { minLength: 1, maxLength: 3 }),
      async (command, pairs) => {
        const { stderr, code } = await run([command, ...pairs.flatMap(([o, v]) => [o, v])]);
        if (code === 0) return;
        expect(stderr.trim().split("\n").length, stderr.slice(0, 300)).toBeLessThanOrEqual(2);
        expect(stderr.length, stderr.slice(0, 300)).toBeLessThanOrEqual(600);
        expect(stderr).not.toMatch(/TypeError|is not a function|Cannot read prop/);
        // Looked up by its code (docs/errors.md): commander's lines and ours alike.
        expect(stderr, stderr.slice(0, 300)).toMatch(/^error: \[[A-Z][A-Z_]*[A-Z]\] /);
        expect(stderr.includes("\u001b"), "an escape sequence reached the terminal").toBe(false);
      },
    ),
    { numRuns: 300 },
  );
});
