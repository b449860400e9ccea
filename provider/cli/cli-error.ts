import { errorMessage } from "../core/failure";
import { boundaryCode, codedMessage, type IpamErrorCode } from "../core/ipam-error";
import { terminalSafe } from "../core/text";
/**
 * Exit codes of `pulumi-egress-ipam`, for CI. Listed in `--help`; changing one breaks users' scripts.
 */
export const exitCodes = {
  /** Done; `check` asked every provisioner and found no drift. */
  ok: 0,
  /** `check` found leaked, missing or misplaced addresses. */
  drift: 1,
  /** A usage or user error: bad option, unknown stack, unreadable checkpoint. */
  usage: 2,
  /**
   * Not checked: a provisioner or a shared pool's ledger could not be asked (no kubeconfig or
   * context, endpoint unreachable, credentials refused), or its kind cannot list its hosts. Wins
   * over `drift`: `check` still prints what it asked, findings included.
   */
  unreachable: 3,
} as const;

/**
 * An error the user can fix: printed as one line (its code, the value and what to do), never with
 * a stack trace, and the process exits with `exitCode`.
 */
export class CliError extends Error {
  /**
   * @param code - the stable reason (see docs/errors.md); by default `PROVISIONER_FAILED` for
   * `exitCodes.unreachable`, else `INVALID_INPUT` (a bad option).
   */
  constructor(
    message: string,
    readonly exitCode: number = exitCodes.usage,
    readonly code: IpamErrorCode = exitCode === exitCodes.unreachable
      ? "PROVISIONER_FAILED"
      : "INVALID_INPUT",
  ) {
    super(message);
    this.name = "CliError";
  }
}

/**
 * The one line printed for a failure: `error: [CODE] message`, the code a CliError's own, else as
 * {@link boundaryCode} says; a CliError's message as is, anything else on
 * one line.
 */
export function failureLine(err: unknown): string {
  // Messages quote values from state, clusters and clouds: one line, no control codes.
  if (err instanceof CliError) return `error: ${codedMessage(err.code, terminalSafe(err.message))}`;
  const text = errorMessage(err).replace(/\s*\n\s*/g, " ");
  return `error: ${codedMessage(boundaryCode(err), terminalSafe(text))}`;
}

/**
 * Commander's own error line (`error: unknown option '--colour'`) in the same form, coded
 * `INVALID_INPUT`: every one of them is a bad option or argument.
 */
export const commanderLine = (text: string): string =>
  text.replace(/^error: (?!\[)/, "error: [INVALID_INPUT] ");
