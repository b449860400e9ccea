import { errorMessage } from "../core/failure";
import { codedMessage, codeOf, type IpamErrorCode } from "../core/ipam-error";
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

/** The code and the one-line text of a failure: a CliError's message as is, anything else on one line. */
function described(err: unknown): { code: IpamErrorCode; message: string } {
  if (err instanceof CliError) return { code: err.code, message: terminalSafe(err.message) };
  return { code: codeOf(err), message: terminalSafe(errorMessage(err).replace(/\s*\n\s*/g, " ")) };
}

/**
 * The one line printed for a failure: `error: [CODE] message`, the code an IpamError's or a
 * CliError's own, `UNEXPECTED` for anything else.
 */
export function failureLine(err: unknown): string {
  // Messages quote values from state, clusters and clouds: one line, no control codes.
  const { code, message } = described(err);
  return `error: ${codedMessage(code, message)}`;
}

/**
 * What a command run with `--json` prints on stdout when it fails, so that a script reading the JSON
 * gets the failure too: `{ "error": { "code", "message", "exitCode" } }` (the message without the
 * `[CODE] ` prefix the stderr line has).
 */
export function failureJson(err: unknown, exitCode: number): string {
  return JSON.stringify({ error: { ...described(err), exitCode } }, null, 2);
}
