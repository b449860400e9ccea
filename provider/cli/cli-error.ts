import { errorMessage } from "../core/failure";
import { terminalSafe } from "../core/text";
/**
 * Exit codes of `pulumi-egress-ipam`, for CI. Listed in `--help`; changing one breaks users' scripts.
 */
export const exitCodes = {
  /** Done; `check` found no drift. */
  ok: 0,
  /** `check` found leaked, missing or misplaced addresses. */
  drift: 1,
  /** A usage or user error: bad option, unknown stack, unreadable checkpoint. */
  usage: 2,
  /** A provisioner or a shared pool's ledger could not be asked (endpoint unreachable, credentials refused). */
  unreachable: 3,
} as const;

/**
 * An error the user can fix: printed as one line (the value and what to do), never with a stack
 * trace, and the process exits with `exitCode`.
 */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = exitCodes.usage,
  ) {
    super(message);
    this.name = "CliError";
  }
}

/** The one line printed for a failure: a CliError's message as is, anything else prefixed. */
export function failureLine(err: unknown): string {
  // Messages quote values from state, clusters and clouds: one line, no control codes.
  if (err instanceof CliError) return `error: ${terminalSafe(err.message)}`;
  const text = errorMessage(err);
  return `error: ${terminalSafe(text.replace(/\s*\n\s*/g, " "))}`;
}
