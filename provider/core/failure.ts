import { isIpamError, type IpamErrorCode } from "./ipam-error";

/**
 * A `check` failure: the property path, what to do about it, and the stable code the engine shows
 * it with (`[INVALID_INPUT] …`; see {@link IpamErrorCode}).
 */
export interface Failure {
  property: string;
  reason: string;
  code: IpamErrorCode;
}

/** The text of a thrown value, for check failures and error messages. */
export const errorMessage = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/**
 * The failure of `property` for a caught error: an IpamError keeps its code; anything else gets
 * `fallback` (`INVALID_INPUT`: what `check` refuses is an input).
 */
export const failureOf = (
  property: string,
  err: unknown,
  fallback: IpamErrorCode = "INVALID_INPUT",
): Failure => ({
  property,
  reason: errorMessage(err),
  code: isIpamError(err) ? err.code : fallback,
});

/** A failure of `property` from text: an input's shape or meaning (`INVALID_INPUT` unless given). */
export const inputFailure = (
  property: string,
  reason: string,
  code: IpamErrorCode = "INVALID_INPUT",
): Failure => ({
  property,
  reason,
  code,
});
