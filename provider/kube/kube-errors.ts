import { IpamError } from "../core/ipam-error";

/** What the API server said about a failed request, read from a client error. */
export interface KubeStatus {
  /** HTTP status code (409 Conflict / AlreadyExists, 404, 403, …); 0 when no answer came. */
  code: number;
  /** The Status `reason` (`Conflict`, `AlreadyExists`, `NotFound`, `Forbidden`, …), when given. */
  reason?: string;
  /** The Status `message`, or the transport error's. */
  message: string;
}

/** Reads the HTTP code and Status body of an error thrown by @kubernetes/client-node. */
export function kubeStatus(err: unknown): KubeStatus {
  const e = err as { code?: unknown; body?: unknown; message?: unknown; cause?: unknown };
  const code = typeof e?.code === "number" ? e.code : 0;
  let body: { reason?: unknown; message?: unknown } | undefined;
  if (typeof e?.body === "string") {
    try {
      body = JSON.parse(e.body);
    } catch {
      body = { message: e.body };
    }
  } else if (e?.body && typeof e.body === "object") {
    body = e.body as typeof body;
  }
  const transport =
    e?.cause instanceof Error
      ? `${e.cause.message}`
      : typeof e?.message === "string"
        ? e.message
        : String(err);
  return {
    code,
    reason: typeof body?.reason === "string" ? body.reason : undefined,
    message: typeof body?.message === "string" ? body.message : transport,
  };
}

/** True for 409: a stale `resourceVersion` (Conflict) or a name already taken (AlreadyExists). */
export const isConflict = (err: unknown): boolean => kubeStatus(err).code === 409;
/** True for 409 AlreadyExists (a create of a name that exists). */
export const isAlreadyExists = (err: unknown): boolean => {
  const s = kubeStatus(err);
  return s.code === 409 && s.reason === "AlreadyExists";
};
/** True for 404 NotFound. */
export const isNotFound = (err: unknown): boolean => kubeStatus(err).code === 404;

/**
 * A Kubernetes failure rethrown as IpamError `PROVISIONER_FAILED` with what was being done, where,
 * and what to do: the server and context for an unreachable server or refused credentials, the
 * missing permission for 403. (A shared pool's ledger rethrows it as `LEDGER_UNAVAILABLE`.)
 */
export function kubeFailure(
  doing: string,
  err: unknown,
  where: { server: string; context: string },
): IpamError {
  const s = kubeStatus(err);
  const at = `${where.server} (kubeconfig context "${where.context}")`;
  let hint = "";
  if (s.code === 0) hint = "; check that the API server is reachable from where pulumi runs";
  else if (s.code === 401) hint = "; the credentials of the kubeconfig context were refused: log in again";
  else if (s.code === 403)
    hint =
      "; grant the permission named above to the context's user (see the RBAC rules in pulumi-egress-ipam's docs/provisioners.md)";
  const status = s.code ? `${s.code}${s.reason ? ` ${s.reason}` : ""}: ` : "";
  return new IpamError("PROVISIONER_FAILED", `${doing} on ${at} failed: ${status}${s.message}${hint}`, {
    cause: err,
  });
}
