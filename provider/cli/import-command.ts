import * as fs from "node:fs";
import { errorMessage } from "../core/failure";
import { codeOf } from "../core/ipam-error";
import { terminalSafe } from "../core/text";
import { CliError, exitCodes } from "./cli-error";
import { readClusterFacts } from "./import-facts";
import { importPlan, type ImportOptions } from "./import-plan";
import { importProgram } from "./import-program";
import { importProgramPython } from "./import-program-python";
import { importProgramYaml } from "./import-program-yaml";
import type { ProgramLanguage } from "./import-text";

/** Options of `pulumi-egress-ipam import`. */
export interface ImportCommandOptions extends ImportOptions {
  context?: string;
  /** The program's language (default `typescript`). */
  language?: ProgramLanguage;
  out?: string;
  json?: boolean;
}

/**
 * Reads the cluster of `opts.context` (read only), writes the program (to `opts.out`, else stdout)
 * or, with `json`, the plan; each problem is one line on stderr. Exit code 1 when something the
 * cluster has could not be put into the program.
 */
export async function runImport(opts: ImportCommandOptions): Promise<void> {
  // Loaded here: `report` of a stack never needs the Kubernetes client.
  const { kubeClients } = require("../kube/kube-config") as typeof import("../kube/kube-config");
  const { IpamError } = require("../core/ipam-error") as typeof import("../core/ipam-error");
  let kube;
  try {
    kube = kubeClients({ context: opts.context });
  } catch (e) {
    if (e instanceof IpamError) throw new CliError(e.message, exitCodes.usage, e.code);
    throw e;
  }
  const facts = await readClusterFacts(kube).catch((e: unknown) => {
    throw new CliError(errorMessage(e), exitCodes.unreachable, codeOf(e, "PROVISIONER_FAILED"));
  });
  const plan = importPlan(facts, opts);
  if (opts.json) {
    process.stdout.write(`${JSON.stringify(plan, null, 2)}\n`);
  } else {
    const program = { typescript: importProgram, yaml: importProgramYaml, python: importProgramPython }[
      opts.language ?? "typescript"
    ](plan);
    if (opts.out === undefined) process.stdout.write(program);
    else {
      fs.writeFileSync(opts.out, program);
      const n = plan.egressIps.reduce((k, e) => k + e.addresses.length, 0);
      process.stderr.write(
        `wrote ${opts.out}: ${plan.pools.length} pool(s), ${plan.egressIps.length} EgressIp(s) adopting ${n} address(es), ${plan.cidrAssignments.length} CidrAssignment(s)\n`,
      );
    }
  }
  for (const s of plan.skipped) process.stderr.write(`skipped: ${terminalSafe(s)}\n`);
  for (const p of plan.problems) process.stderr.write(`not imported: ${terminalSafe(p)}\n`);
  if (plan.problems.length > 0) process.exitCode = exitCodes.drift;
}
