import { kubeStatus } from "../../kube/kube-errors";
import { classify, ec2ErrorCode } from "../aws/ec2-retry";

/** EC2 (and STS) codes that mean the caller's credentials or permissions were refused. */
const ec2AccessCodes = new Set([
  "AuthFailure",
  "UnauthorizedOperation",
  "InvalidClientTokenId",
  "ExpiredToken",
  "RequestExpired",
  "SignatureDoesNotMatch",
  "OptInRequired",
  "Blocked",
  "AccessDenied",
  "AccessDeniedException",
]);

/** Why an EC2 SDK error carries no answer about the address, or undefined when EC2 answered. */
function ec2NoAnswer(err: unknown): string | undefined {
  const code = ec2ErrorCode(err);
  const status = (err as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;
  const said = [status, code].filter((x) => x !== undefined).join(" ");
  if (code === "CredentialsProviderError") return "no AWS credentials could be loaded from the default chain";
  if ((code !== undefined && ec2AccessCodes.has(code)) || status === 401 || status === 403) {
    return `EC2 refused the credentials or permission (${said})`;
  }
  const kind = classify(err);
  if (kind === "throttled") return `EC2 kept throttling the calls (${said})`;
  if (kind === "transient") return `EC2 gave no usable answer (${said || "no response"})`;
  return undefined;
}

/**
 * The one classification of provisioner errors, for every kind: the reason a platform call got no
 * usable answer — unreachable, credentials or permission refused (401/403, AuthFailure), throttled
 * or failing (429, 5xx) after the retries, timed out — or undefined when the platform did answer,
 * so that what the error says (an address not on its host) is drift. Refresh and `check` fail on
 * the first kind rather than record an address as missing: an outage is not drift.
 *
 * Kubernetes failures are recognised by their cause (the client error kubeFailure wraps), EC2 ones
 * by the SDK error itself or its cause.
 */
export function noUsableAnswer(err: unknown): string | undefined {
  const cause = (err as { cause?: unknown })?.cause;
  const ec2 = ec2NoAnswer(err) ?? (cause === undefined ? undefined : ec2NoAnswer(cause));
  if (ec2) return ec2;
  // An EC2 answer wrapped by another error was classified above; only a Kubernetes cause is left.
  if (cause === undefined || (cause as { $metadata?: unknown }).$metadata !== undefined) return undefined;
  const { code } = kubeStatus(cause);
  if (code === 0) return "the Kubernetes API server could not be reached";
  if (code === 401 || code === 403)
    return `the Kubernetes API server refused the credentials or permission (${code})`;
  if (code === 429 || code >= 500) return `the Kubernetes API server gave no usable answer (${code})`;
  return undefined;
}
