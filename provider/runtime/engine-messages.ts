import { errorMessage } from "../core/failure";
import { boundaryCode, codedMessage, IpamError, isIpamError, type IpamErrorCode } from "../core/ipam-error";
import { terminalSafe } from "../core/text";
import type * as pulumi from "@pulumi/pulumi";
import { aroundCalls, type ProviderImpl } from "../resources/provider-props";

/**
 * A thrown value as the engine shows it: `[CODE] message` (see {@link boundaryCode}), control
 * characters escaped. The original is the cause, and its stack is kept:
 * the dynamic-provider host prints it to the provider's log.
 */
export function engineError(err: unknown): Error {
  const code = boundaryCode(err);
  const message = codedMessage(code, terminalSafe(errorMessage(err)));
  if (!(err instanceof Error)) return new IpamError(code, message);
  if (message === err.message) return err;
  const out = isIpamError(err)
    ? new IpamError(code, message, { cause: err })
    : new Error(message, { cause: err });
  out.name = err.name;
  const header = `${err.name}: ${err.message}`;
  if (err.stack?.startsWith(header)) out.stack = `${out.name}: ${message}${err.stack.slice(header.length)}`;
  return out;
}

/**
 * The provider with every message it hands the engine made for the user, at this one boundary:
 * errors and `check` failures start with their code, `[IP_UNAVAILABLE] …` (a failure without one
 * is an input problem, `INVALID_INPUT`), so the failure in front of a user can be looked up in
 * docs/errors.md; and they are stripped of control characters: they quote values from state, the
 * cluster and EC2 (names, annotations, tags), and the engine prints them to a terminal and writes
 * them to logs, where an escape sequence or a line break could forge or hide output.
 */
export function engineMessages(impl: ProviderImpl): ProviderImpl {
  return aroundCalls(impl, async (method, call) => {
    let result: unknown;
    try {
      result = await call();
    } catch (err) {
      throw engineError(err);
    }
    const failures = method === "check" ? (result as pulumi.dynamic.CheckResult).failures : undefined;
    if (!failures?.length) return result;
    return {
      ...(result as object),
      failures: failures.map((f) => {
        const code = (f as { code?: IpamErrorCode }).code ?? "INVALID_INPUT";
        return { ...f, code, reason: codedMessage(code, terminalSafe(f.reason)) };
      }),
    };
  });
}
