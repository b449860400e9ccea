import { IpamError, type IpamErrorCode } from "../../core/ipam-error";
import { errorMessage } from "../../core/failure";
import { ec2ErrorCode } from "./ec2-retry";

/**
 * An EC2 failure rethrown as IpamError (`PROVISIONER_FAILED` unless EC2 said why in a way another
 * code names) with what we were doing, the EC2 code and message, and what to do.
 */
export function ec2Failure(
  doing: string,
  err: unknown,
  hint = "",
  as: IpamErrorCode = "PROVISIONER_FAILED",
): IpamError {
  const code = ec2ErrorCode(err);
  const message = errorMessage(err);
  return new IpamError(
    as,
    `${doing} failed: ${code ? `${code}: ` : ""}${message}${hint ? `; ${hint}` : ""}`,
    { cause: err },
  );
}
