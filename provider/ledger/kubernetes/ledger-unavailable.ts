import { IpamError } from "../../core/ipam-error";
import { kubeFailure } from "../../kube/kube-errors";

/** Where a shared pool's objects live, for messages. */
export interface LedgerPlace {
  /** The API server's URL. */
  server: string;
  /** The kubeconfig context. */
  context: string;
  /** The namespace of the pool's objects. */
  namespace: string;
}

/**
 * A failed Kubernetes call of a shared pool's ledger as IpamError `LEDGER_UNAVAILABLE`, naming what
 * was being done, the server, the context and the namespace; for 403 the API server's own message
 * names the missing permission (verb, resource, namespace). An IpamError passes through unchanged.
 */
export function ledgerUnavailable(doing: string, err: unknown, where: LedgerPlace): IpamError {
  if (err instanceof IpamError) return err;
  const failure = kubeFailure(`${doing} in namespace "${where.namespace}"`, err, where);
  return new IpamError("LEDGER_UNAVAILABLE", failure.message);
}
