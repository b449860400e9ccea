import * as fs from "node:fs";
import { createRequire } from "node:module";
import * as os from "node:os";
import * as path from "node:path";
import type * as automation from "@pulumi/pulumi/automation";
import { uncodedErrors } from "./coded-diagnostics";

/** A resource as `pulumi stack export` shows it. */
export interface StateResource {
  urn: string;
  type: string;
  id?: string;
  inputs?: Record<string, unknown>;
  outputs?: Record<string, unknown>;
  delete?: boolean;
  pendingReplacement?: boolean;
}

/** A Pulumi program as the Automation API runs it inline. */
export type Program = () => Promise<Record<string, unknown> | void>;

/** What a preview planned, read from its engine events. */
export interface PreviewResult {
  changeSummary: Record<string, number>;
  events: automation.EngineEvent[];
  /** Operations planned, by URN. */
  ops: Record<string, string>;
  /** The planned (checked) inputs of the resource with this logical name, as `preview` shows them. */
  planned(name: string): Record<string, unknown> | undefined;
  /** The operation (`create`, `same`, `update`, `replace`, …) planned for the resource with this name. */
  op(name: string): string | undefined;
}

/**
 * Runs inline Pulumi programs with the real engine against a fresh `file://` backend, from the
 * consumer project that installed this package from its packed tarball. Every instance has its own
 * PULUMI_HOME, backend directory and stack, so tests do not share state.
 */
export class Harness {
  readonly auto: typeof automation;
  stackName = "test";
  readonly projectName: string;
  private readonly require: NodeRequire;
  private stack?: automation.Stack;

  private constructor(
    readonly consumerDir: string,
    readonly workDir: string,
    projectName: string,
  ) {
    this.projectName = projectName;
    this.require = createRequire(path.join(consumerDir, "package.json"));
    this.auto = this.require("@pulumi/pulumi/automation");
  }

  /** Extra environment of the Pulumi commands (and so of the provider process), e.g. AWS credentials. */
  private extraEnv: Record<string, string> = {};

  /**
   * A harness in a new temporary directory inside the consumer project (`options.consumerDir`, by
   * default the e2e run's). `options.env` is added to the environment of every Pulumi command,
   * where the dynamic provider reads it.
   */
  static create(
    projectName = "egress-ipam-test",
    options: { env?: Record<string, string>; consumerDir?: string; pulumiRoot?: string } = {},
  ): Harness {
    const consumerDir = options.consumerDir ?? process.env.EGRESS_IPAM_CONSUMER;
    if (!consumerDir)
      throw new Error("EGRESS_IPAM_CONSUMER is not set: run end-to-end tests through vitest's e2e project");
    const runs = path.join(consumerDir, "runs");
    fs.mkdirSync(runs, { recursive: true });
    const h = new Harness(consumerDir, fs.mkdtempSync(path.join(runs, `${projectName}-`)), projectName);
    h.extraEnv = { ...options.env };
    h.pulumiRoot = options.pulumiRoot;
    return h;
  }

  /** A folder whose `bin/pulumi` runs every command instead of the CLI on PATH (`options.pulumiRoot`). */
  private pulumiRoot?: string;

  /**
   * A harness for a Pulumi project folder (`Pulumi.yaml`, `index.ts`), run as a user runs it: the
   * CLI in that folder, with the Node.js language host, not an inline program. `projectDir` must
   * be inside `consumerDir`, whose node_modules the project resolves its imports from.
   */
  static forProject(
    consumerDir: string,
    projectDir: string,
    options: { env?: Record<string, string>; stackName?: string } = {},
  ): Harness {
    const name = /^name:\s*(\S+)/m.exec(fs.readFileSync(path.join(projectDir, "Pulumi.yaml"), "utf8"))?.[1];
    if (!name) throw new Error(`${projectDir}/Pulumi.yaml has no name`);
    const h = new Harness(consumerDir, projectDir, name);
    h.extraEnv = { ...options.env };
    h.localProject = true;
    if (options.stackName) h.stackName = options.stackName;
    return h;
  }

  private localProject = false;

  /** Selects (creating it on first use) the stack of a {@link forProject} harness. */
  async project(): Promise<automation.Stack> {
    if (!this.localProject) throw new Error("project() is for harnesses made with Harness.forProject");
    fs.mkdirSync(path.join(this.workDir, "backend"), { recursive: true });
    this.stack ??= await this.auto.LocalWorkspace.createOrSelectStack(
      { stackName: this.stackName, workDir: this.workDir },
      { envVars: this.env },
    );
    return this.stack;
  }

  /** Loads a module as the consumer project sees it, e.g. `pkg("pulumi-egress-ipam/testing")`. */
  pkg<T = Record<string, unknown>>(id: string): T {
    return this.require(id) as T;
  }

  /** Fully qualified stack name, as the program-side classes pass it to the provider. */
  get fqStackName(): string {
    return `organization/${this.projectName}/${this.stackName}`;
  }

  /** Environment of every Pulumi command this harness runs. */
  get env(): Record<string, string> {
    return {
      PULUMI_HOME: path.join(this.workDir, ".pulumi-home"),
      PULUMI_BACKEND_URL: `file://${path.join(this.workDir, "backend")}`,
      PULUMI_CONFIG_PASSPHRASE: "test",
      PULUMI_SKIP_UPDATE_CHECK: "true",
      PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
      ...this.extraEnv,
    };
  }

  /** Sets the program that the next operation runs, creating the stack on first use. */
  async program(program: Program): Promise<automation.Stack> {
    if (this.stack) {
      (this.stack.workspace as automation.LocalWorkspace).program = program;
      return this.stack;
    }
    fs.mkdirSync(path.join(this.workDir, "backend"), { recursive: true });
    this.stack = await this.auto.LocalWorkspace.createOrSelectStack(
      { stackName: this.stackName, projectName: this.projectName, program },
      {
        workDir: this.workDir,
        envVars: this.env,
        // The engine starts the dynamic-provider plugin in the project's `main` directory, and the
        // provider resolves `pulumi-egress-ipam/...` from there. The Automation API's default is
        // the test process's working directory; point it into the consumer project instead.
        projectSettings: { name: this.projectName, runtime: "nodejs", main: this.workDir },
        ...(this.pulumiRoot && {
          pulumiCommand: await this.auto.PulumiCommand.get({ root: this.pulumiRoot, skipVersionCheck: true }),
        }),
      },
    );
    return this.stack;
  }

  private get current(): automation.Stack {
    if (!this.stack) throw new Error("call harness.program(...) first");
    return this.stack;
  }

  /**
   * Runs one engine operation with `opts`, collecting its events (and passing each to `opts.onEvent`).
   * Whatever the outcome, every error the engine printed for this package's resources must carry its
   * code (`[IP_UNAVAILABLE] …`, docs/errors.md): so every e2e test of a refusal checks that too.
   */
  private async observed<O extends { onEvent?: (e: automation.EngineEvent) => void }, R>(
    opts: O,
    run: (opts: O) => Promise<R>,
    events: automation.EngineEvent[] = [],
  ): Promise<R> {
    const onEvent = (e: automation.EngineEvent) => {
      events.push(e);
      opts.onEvent?.(e);
    };
    const check = () => {
      const uncoded = uncodedErrors(events);
      if (uncoded.length > 0)
        throw new Error(`errors printed without their code (see docs/errors.md):\n  ${uncoded.join("\n  ")}`);
    };
    let result: R;
    try {
      result = await run({ ...opts, onEvent });
    } catch (err) {
      check();
      throw err;
    }
    check();
    return result;
  }

  /** `pulumi preview`, collecting engine events. */
  async preview(opts: automation.PreviewOptions = {}): Promise<PreviewResult> {
    const events: automation.EngineEvent[] = [];
    const result = await this.observed(opts, (o) => this.current.preview(o), events);
    // `name` is a logical name, or `Type::name` when children of several types share a name.
    const pre = (name: string) =>
      events.find((e) => {
        const urn = e.resourcePreEvent?.metadata.urn ?? "";
        return urn.endsWith(`::${name}`) || (name.includes("::") && urn.endsWith(`:${name}`));
      })?.resourcePreEvent?.metadata;
    return {
      changeSummary: result.changeSummary as Record<string, number>,
      events,
      ops: Object.fromEntries(
        events.flatMap((e) =>
          e.resourcePreEvent ? [[e.resourcePreEvent.metadata.urn, e.resourcePreEvent.metadata.op]] : [],
        ),
      ),
      planned: (name) => pre(name)?.new?.inputs,
      op: (name) => pre(name)?.op,
    };
  }

  /**
   * Runs `op` (an up, refresh or destroy of the Automation API) with its results read from the
   * operation's own engine events: the change summary from its summary event, the stack's outputs
   * from the outputs event of its root resource. The Automation API otherwise runs three more
   * commands after each (`stack output`, `stack output --show-secrets`, `stack history
   * --show-secrets`), each a start of the CLI and two of them a derivation of the passphrase's key
   * (a million PBKDF2 rounds): about 0.9 s of CPU per up, a third of a small stack's. Outputs that
   * hold a secret (masked in events) are still read with `stack output`.
   */
  private async eventResults<O extends { onEvent?: (e: automation.EngineEvent) => void }, R>(
    kind: automation.UpdateSummary["kind"],
    opts: O,
    op: (stack: automation.Stack, opts: O) => Promise<R>,
  ): Promise<R> {
    const events: automation.EngineEvent[] = [];
    const stack = this.current as automation.Stack & {
      outputs: automation.Stack["outputs"];
      info: automation.Stack["info"];
    };
    const { outputs, info } = stack;
    stack.info = async (showSecrets) => {
      const summary = [...events].reverse().find((e) => e.summaryEvent)?.summaryEvent;
      if (!summary) return info.call(stack, showSecrets);
      return {
        kind,
        startTime: new Date(),
        endTime: new Date(),
        message: "",
        environment: {},
        config: {},
        result: "succeeded",
        resourceChanges: summary.resourceChanges,
      } as automation.UpdateSummary;
    };
    stack.outputs = async () => {
      const root = [...events]
        .reverse()
        .find((e) => e.resOutputsEvent?.metadata.type === "pulumi:pulumi:Stack")?.resOutputsEvent;
      const values = root?.metadata.new?.outputs;
      if (!values || JSON.stringify(values).includes('"[secret]"')) return outputs.call(stack);
      return Object.fromEntries(Object.entries(values).map(([k, value]) => [k, { value, secret: false }]));
    };
    try {
      return await this.observed(opts, (o) => op(stack, o), events);
    } finally {
      // The prototype's methods again, for every other caller.
      delete (stack as Partial<typeof stack>).info;
      delete (stack as Partial<typeof stack>).outputs;
    }
  }

  /** `pulumi up`; the result carries outputs and the change summary (read as {@link eventResults} says). */
  async up(opts: automation.UpOptions = {}): Promise<automation.UpResult> {
    return this.eventResults("update", opts, (stack, o) => stack.up(o));
  }

  /** `pulumi refresh` (its summary read as {@link eventResults} says). */
  async refresh(opts: automation.RefreshOptions = {}): Promise<automation.RefreshResult> {
    return this.eventResults("refresh", opts, (stack, o) => stack.refresh(o));
  }

  /** `pulumi refresh --preview-only`: what a refresh would change, writing nothing to state. */
  async previewRefresh(opts: automation.RefreshOptions = {}): Promise<automation.PreviewResult> {
    return this.current.previewRefresh(opts);
  }

  /** `pulumi destroy` (its summary read as {@link eventResults} says). */
  async destroy(opts: automation.DestroyOptions = {}): Promise<automation.DestroyResult> {
    return this.eventResults("destroy", opts, (stack, o) => stack.destroy(o));
  }

  /** `pulumi stack rename <stackName>`; later operations run on the renamed stack. */
  async rename(stackName: string): Promise<void> {
    const workspace = this.current.workspace;
    await this.current.rename({ stackName });
    this.stackName = stackName;
    this.stack = await this.auto.Stack.select(stackName, workspace);
  }

  /** `pulumi cancel`: removes the lock a killed deployment left on the stack. */
  async cancel(): Promise<void> {
    await this.current.cancel();
  }

  /** `pulumi stack export`: the checkpoint's resources. */
  async resources(): Promise<StateResource[]> {
    const deployment = await this.current.exportStack();
    return deployment.deployment.resources ?? [];
  }

  /** Replaces the stack's state with `deployment` (what `pulumi stack export` printed), as `pulumi stack import` does. */
  async importState(deployment: automation.Deployment): Promise<void> {
    await this.current.importStack(deployment);
  }

  /**
   * Drops a resource from state without touching what it made, as `pulumi state delete` does (and as
   * an interrupted create leaves it: made, not recorded): `stack export`, the resource removed, `import`.
   */
  async forget(urn: string): Promise<void> {
    const exported = await this.current.exportStack();
    const resources: StateResource[] = exported.deployment.resources ?? [];
    if (!resources.some((r) => r.urn === urn)) throw new Error(`no resource ${urn} in state`);
    exported.deployment.resources = resources.filter((r) => r.urn !== urn);
    await this.current.importStack(exported);
  }

  /**
   * The stack's checkpoint file in the file backend, for tests that edit state the way no Pulumi
   * command can (pending operations, state written by earlier versions).
   */
  get checkpointFile(): string {
    return path.join(
      this.workDir,
      "backend",
      ".pulumi",
      "stacks",
      this.projectName,
      `${this.stackName}.json`,
    );
  }

  /** Removes the stack's temporary directory. */
  dispose(): void {
    fs.rmSync(this.workDir, { recursive: true, force: true });
  }
}

/** Counts of a change summary other than `same`: empty when an operation changed nothing. */
export function changesOf(summary: Record<string, number> | undefined): Record<string, number> {
  return Object.fromEntries(Object.entries(summary ?? {}).filter(([op, n]) => op !== "same" && n > 0));
}

/** Temporary directory helper for tests that need scratch space outside any project. */
export function tempDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}
