// Child processes for the shared-pool tests (test/support/ledger-worker.cjs), tracked by PID:
// tests SIGKILL, SIGSTOP and SIGCONT only the processes they spawned here. Erasable TypeScript
// without relative imports, so the benchmarks load it too.
import { spawn, type ChildProcess } from "node:child_process";
import * as path from "node:path";
import * as readline from "node:readline";

const script = path.join(process.cwd(), "test", "support", "ledger-worker.cjs");

/** One answer of the worker. */
export type WorkerReply = { ok: boolean; code?: string; message?: string } & Record<string, unknown>;

/** A worker process and a way to send it commands. */
export class LedgerWorker {
  private readonly replies: ((r: WorkerReply) => void)[] = [];
  private readonly progressed: (() => void)[] = [];
  private readonly child: ChildProcess;
  readonly exited: Promise<void>;

  private constructor(context: string, kubeconfig: string | undefined) {
    this.child = spawn(process.execPath, [script], {
      env: { ...process.env, KUBECONFIG: kubeconfig, KUBE_CONTEXT: context },
      stdio: ["pipe", "pipe", "inherit"],
    });
    readline.createInterface({ input: this.child.stdout! }).on("line", (line) => {
      const message = JSON.parse(line) as WorkerReply;
      if ("progress" in message) this.progressed.shift()?.();
      else this.replies.shift()?.(message);
    });
    this.exited = new Promise((resolve) => this.child.once("exit", () => resolve()));
  }

  /** Starts a worker (on the test cluster unless another kubeconfig is given) and waits until it is ready. */
  static async start(
    context = "admin@test",
    kubeconfig = process.env.EGRESS_IPAM_KUBECONFIG,
  ): Promise<LedgerWorker> {
    const w = new LedgerWorker(context, kubeconfig);
    await new Promise<WorkerReply>((resolve) => w.replies.push(resolve));
    return w;
  }

  /** The worker's PID. */
  get pid(): number {
    return this.child.pid!;
  }

  /** Sends a command; resolves with its answer. */
  send(command: Record<string, unknown>): Promise<WorkerReply> {
    const reply = new Promise<WorkerReply>((resolve) => this.replies.push(resolve));
    this.child.stdin!.write(JSON.stringify(command) + "\n");
    return reply;
  }

  /** Resolves at the worker's next progress line (a command's milestone). */
  progress(): Promise<void> {
    return new Promise((resolve) => this.progressed.push(resolve));
  }

  /** Sends a signal to this worker (by its PID). */
  signal(sig: NodeJS.Signals): void {
    process.kill(this.pid, sig);
  }

  /** Kills the worker if it still runs (SIGCONT first, in case it was stopped). */
  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      try {
        process.kill(this.pid, "SIGCONT");
        process.kill(this.pid, "SIGKILL");
      } catch {
        // gone already
      }
    }
    await this.exited;
  }
}
