import { spawn } from "node:child_process";
import * as path from "node:path";

/** What a run of the CLI printed and how it exited. */
export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `pulumi-egress-ipam` as a user does: the bin that npm linked into the consumer project's
 * `node_modules/.bin` when it installed the packed package, as a child process with `env` added to
 * this process's environment (the harness's PULUMI_HOME and backend, moto's credentials).
 */
export function runCli(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  const consumer = process.env.EGRESS_IPAM_CONSUMER;
  if (!consumer)
    throw new Error("EGRESS_IPAM_CONSUMER is not set: run end-to-end tests through vitest's e2e project");
  const bin = path.join(consumer, "node_modules", ".bin", "pulumi-egress-ipam");
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, stdout, stderr }));
  });
}
