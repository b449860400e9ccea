#!/usr/bin/env node
import { Command, CommanderError, Option } from "commander";
import { IpamError } from "../core/ipam-error";
import { shown } from "../core/text";
import { CliError, commanderLine, exitCodes, failureLine } from "./cli-error";
import { programLanguages, type ProgramLanguage } from "./import-text";
import type { PoolUsage } from "./pool-usage";
import { stackPools } from "./stack-pools";
import { progressOn } from "./progress";
import { report, stackUsages, type ReportScope } from "./report-command";
import { readStack } from "./stack-snapshot";
import { styleFor } from "./style";

const exitHelp = `
Exit codes:
  0  done; check asked every provisioner and found no drift
  1  check found leaked, missing or misplaced addresses; import left out something it lists
  2  usage or user error (bad option, unknown stack, unreadable checkpoint)
  3  not checked: a provisioner or a shared pool's ledger could not be asked (no kubeconfig or
     context, endpoint unreachable, credentials refused), or its kind cannot list its hosts (none);
     wins over 1: what check did ask is still printed, drift included

The stack is read with \`pulumi stack export\`: pulumi must be on PATH (or named by
PULUMI_EGRESS_IPAM_CLI), with the backend and credentials of the stack (PULUMI_BACKEND_URL, ...).
A shared pool (--ledger) is read from the Kubernetes API with the kubeconfig of KUBECONFIG or
~/.kube/config, as kubectl reads it.
Colours only when stdout is a terminal and NO_COLOR is unset (FORCE_COLOR=1 forces them); a progress
indicator on stderr only when stderr is a terminal.`;

const stackOption = () =>
  new Option(
    "-s, --stack <org/project/stack>",
    "the stack, fully qualified (see `pulumi stack ls --all`)",
  ).argParser(stackName);

interface ReportCommandOptions {
  stack?: string;
  ledger?: string;
  context?: string;
  pool?: string;
  svg?: string;
  json?: boolean;
}

/** The pools `report` covers: the stack's (read with the Pulumi CLI), or a shared pool's ledger. */
async function reportSource(
  opts: ReportCommandOptions,
): Promise<{ scope: ReportScope; usages: PoolUsage[] }> {
  if (opts.ledger !== undefined) {
    // Loaded here: a stack report never needs the Kubernetes client.
    const { ledgerId, ledgerUsage, parseLedgerRef, staleClaims } =
      require("./ledger-usage") as typeof import("./ledger-usage");
    const { kubeClients } = require("../kube/kube-config") as typeof import("../kube/kube-config");
    const ref = parseLedgerRef(opts.ledger);
    const clients = userError(() => kubeClients({ context: opts.context }));
    const usage = await ledgerUsage(ref, clients);
    // Stale: claims no resource of their stack holds; only the stacks readable here can tell.
    Object.assign(usage, await staleClaims(ref, clients, (stack) => readStack(stack), opts.context));
    return { scope: { kind: "ledger", name: ledgerId(ref) }, usages: [usage] };
  }
  if (opts.context !== undefined)
    throw new CliError("--context goes with --ledger; a stack's kubeconfig contexts are in its state");
  const stack = opts.stack;
  if (stack === undefined)
    throw new CliError("give --stack <org/project/stack> (or --ledger kubernetes:<namespace>/<name>)");
  const snapshot = await readStack(stack);
  // A shared pool's other stacks hold addresses too: without them the map would call those free.
  const pools = stackPools(snapshot);
  let shared;
  if (pools.some((p) => p.ledger)) {
    const { sharedHolders, stackRefOf } = require("./ledger-usage") as typeof import("./ledger-usage");
    shared = await sharedHolders(pools, stackRefOf(snapshot));
  }
  return { scope: { kind: "stack", name: stack }, usages: stackUsages(snapshot, opts.pool, shared) };
}

/** Runs `f`; an IpamError it throws (a user's bad input, e.g. an unknown kubeconfig context) becomes a CliError. */
function userError<T>(f: () => T): T {
  try {
    return f();
  } catch (e) {
    if (e instanceof IpamError) throw new CliError(e.message, exitCodes.usage, e.code);
    throw e;
  }
}

/** The `pulumi-egress-ipam` program; `main` parses and runs it. Exported for tests of the wiring. */
export function program(): Command {
  const cli = new Command("pulumi-egress-ipam")
    .description(
      "Reports on the IP pools of a Pulumi stack, checks its egress IPs against the hosts, and collects a shared pool's lapsed holds.",
    )
    .addHelpText("after", exitHelp)
    .showSuggestionAfterError()
    // Commander's own error lines carry a code too; its subcommands inherit this.
    .configureOutput({ outputError: (text, write) => write(commanderLine(text)) })
    .exitOverride();

  cli
    .command("report")
    .description(
      "Per pool: ranges, size, held, free, planned-not-created, holders (URN, address, since which deployment) " +
        "and a map of the address space (one cell per address, or per block for large pools). " +
        "Of a stack's pools (--stack), or of one pool shared by stacks, from its Kubernetes ledger (--ledger), " +
        "with its owner and each stack's held and planned addresses against the quota the owner set.",
    )
    .addOption(stackOption().conflicts("ledger"))
    .addOption(
      new Option(
        "--ledger <kubernetes:namespace/name>",
        "a shared pool: the namespace and name of its IpPool's `ledger` (holders of every stack, usage per stack against its quota)",
      ).conflicts(["stack", "pool"]),
    )
    .option("--context <name>", "with --ledger: the kubeconfig context (default: the current one)")
    .option("--pool <name>", "only this pool (logical name or URN)")
    .option("--svg <file>", "also write the map as a standalone SVG file")
    .option("--json", "print JSON only (counts are decimal strings)")
    .addHelpText("after", exitHelp)
    .exitOverride()
    .action(async (opts: ReportCommandOptions) => {
      const { scope, usages } = await reportSource(opts);
      process.stdout.write(`${report(scope, usages, opts, styleFor(process.stdout))}\n`);
    });

  cli
    .command("collect")
    .description(
      "Deletes the holds of a shared pool that lapsed over a minute ago (planned at a preview or a check, " +
        "never claimed), with their marker and quota counter registrations; each delete is preconditioned " +
        "on what was read, so a hold renewed meanwhile stays. Plans of other stacks do this a few at a time.",
    )
    .requiredOption(
      "--ledger <kubernetes:namespace/name>",
      "the shared pool: the namespace and name of its IpPool's `ledger`",
    )
    .option("--context <name>", "the kubeconfig context (default: the current one)")
    .option("--json", "print JSON only")
    .addHelpText("after", exitHelp)
    .exitOverride()
    .action(async (opts: { ledger: string; context?: string; json?: boolean }) => {
      const { parseLedgerRef } = require("./ledger-usage") as typeof import("./ledger-usage");
      const { collectLapsed, collectText } =
        require("./collect-command") as typeof import("./collect-command");
      const { kubeClients } = require("../kube/kube-config") as typeof import("../kube/kube-config");
      const ref = parseLedgerRef(opts.ledger);
      const clients = userError(() => kubeClients({ context: opts.context }));
      const result = await collectLapsed(ref, clients);
      process.stdout.write(`${opts.json ? JSON.stringify(result, null, 2) : collectText(result)}
`);
    });

  cli
    .command("check")
    .description(
      "Read only: asks each provisioner the stack's egress IPs use what is really on the hosts, and lists " +
        "leaked, missing and misplaced addresses with the commands that fix them.",
    )
    .addOption(stackOption().makeOptionMandatory())
    .option("--json", "print JSON only")
    .addOption(
      new Option("--timeout <seconds>", "give up on the provisioners after this long")
        .default(300)
        .argParser(seconds),
    )
    .addHelpText("after", exitHelp)
    .exitOverride()
    .action(async (opts: { stack: string; json?: boolean; timeout: number }) => {
      const snapshot = await readStack(opts.stack);
      // Loaded here: `report` never needs the provisioners (nor the AWS SDK they load).
      const { checkStack } = require("./check-command") as typeof import("./check-command");
      const { checkText } = require("./check-text") as typeof import("./check-text");
      const progress = progressOn(process.stderr);
      const result = await checkStack(snapshot, progress, AbortSignal.timeout(opts.timeout * 1000)).finally(
        () => progress.stop(),
      );
      const text = opts.json
        ? JSON.stringify({ ...result, drift: result.findings.length > 0 }, null, 2)
        : checkText(result, styleFor(process.stdout));
      process.stdout.write(`${text}\n`);
      // What was not asked may hide anything: "not checked" wins over the drift found elsewhere.
      if (result.unchecked.length > 0) process.exitCode = exitCodes.unreachable;
      else if (result.findings.length > 0) process.exitCode = exitCodes.drift;
    });
  cli
    .command("import")
    .description(
      "Read only: reads a cluster's egress IPs (the egressip-ipam-operator's EgressIPAMs and namespace " +
        "annotations, NetNamespaces, HostSubnets, EgressIP objects, CloudPrivateIPConfigs) and writes a Pulumi " +
        "program (TypeScript, YAML or Python) that adopts each where it is: a pool per CIDR, an EgressIp with adopt: true per " +
        "namespace, CidrAssignments where hosts carry egressCIDRs or the egress-assignable label.",
    )
    .option("--context <name>", "the kubeconfig context (default: the current one)")
    .option(
      "--cidr <cidr>",
      "also make a pool of this subnet, for addresses no EgressIPAM or egressCIDRs names (repeatable)",
      (value: string, all: string[]) => [...all, value],
      [] as string[],
    )
    .option(
      "--namespace <name>",
      "only this namespace and the pools it uses (repeatable; default: every namespace with egress IPs)",
      (value: string, all: string[]) => [...all, value],
      [] as string[],
    )
    .option(
      "--zone-label <key>",
      "the Node label naming the failure domain of addresses no EgressIPAM manages (default topology.kubernetes.io/zone)",
    )
    .addOption(
      new Option(
        "--language <name>",
        "the program's language: typescript (index.ts), yaml (a Pulumi.yaml) or python (__main__.py); the last two use the egress-ipam plugin",
      )
        .default("typescript")
        .argParser(programLanguage),
    )
    .option("-o, --out <file>", "write the program to this file (default: stdout)")
    .option("--json", "print what was found and planned as JSON instead of the program")
    .addHelpText("after", exitHelp)
    .exitOverride()
    .action(
      async (opts: {
        context?: string;
        cidr: string[];
        namespace: string[];
        zoneLabel?: string;
        language: ProgramLanguage;
        out?: string;
        json?: boolean;
      }) => {
        const { runImport } = require("./import-command") as typeof import("./import-command");
        await runImport({ ...opts, cidrs: opts.cidr, namespaces: opts.namespace });
      },
    );
  return cli;
}

// Option values are checked here, not by commander, whose message would quote a value whole.
function seconds(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0)
    throw new CliError(`--timeout ${shown(value)}: give a number of seconds, e.g. 60`);
  return n;
}

function programLanguage(value: string): ProgramLanguage {
  if ((programLanguages as readonly string[]).includes(value)) return value as ProgramLanguage;
  throw new CliError(`--language ${shown(value)}: give one of ${programLanguages.join(", ")}`);
}

// Pulumi's names: letters, digits, "-", "_" and "."; a stack name has at most 100 characters. As
// for `pulumi --stack`, the organization and project may be left out (then the current project's).
const stackPart = /^[A-Za-z0-9_.-]{1,100}$/;

function stackName(value: string): string {
  const parts = value.split("/");
  if (parts.length <= 3 && parts.every((p) => stackPart.test(p))) return value;
  throw new CliError(
    `--stack ${shown(value)}: give the stack as pulumi names it, <org>/<project>/<stack> (e.g. ` +
      "organization/network/prod; see `pulumi stack ls --all`)",
  );
}

/** Runs the CLI on `argv`; never throws: failures become one line on stderr and an exit code. */
export async function main(argv: string[] = process.argv): Promise<void> {
  try {
    await program().parseAsync(argv);
  } catch (e) {
    if (e instanceof CommanderError) {
      // Commander printed its one line already (or the help, which exits 0).
      process.exitCode = e.exitCode === 0 ? exitCodes.ok : exitCodes.usage;
      return;
    }
    const hint =
      e instanceof CliError ? "" : " (unexpected; set PULUMI_EGRESS_IPAM_DEBUG=1 for the stack trace)";
    process.stderr.write(`${failureLine(e)}${hint}\n`);
    if (process.env.PULUMI_EGRESS_IPAM_DEBUG && e instanceof Error) process.stderr.write(`${e.stack}\n`);
    process.exitCode = e instanceof CliError ? e.exitCode : exitCodes.usage;
  }
}

if (require.main === module) void main();
