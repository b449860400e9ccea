// The settings of a shared pool's ledger, as the pool option `ledger` resolves to them.

/** Where a shared pool lives: the pool option `ledger` with durations in milliseconds. */
export interface KubeLedgerConfig {
  /** The pool's ledger name: stacks naming the same namespace and name share the pool. */
  name: string;
  namespace: string;
  /** kubeconfig context; default the current one. */
  context?: string;
  /** The kubeconfig as a value, instead of the environment's files (see `KubeTarget`). */
  kubeconfig?: string;
  /** The cluster the ledger must be on (the `cluster` setting), checked at `check`. */
  cluster?: string;
  /** Lease duration (default 10 s). */
  lockDuration: number;
  /** How long planning waits for the Lease (default 30 s). */
  lockAcquireTimeout: number;
}
