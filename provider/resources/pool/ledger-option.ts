import { errorMessage, failureOf, inputFailure, type Failure } from "../../core/failure";
import { IpamError } from "../../core/ipam-error";
import type * as pulumi from "@pulumi/pulumi";
import { kubeClients, kubeconfigSettingProblem } from "../../kube/kube-config";
import { clusterSettingProblem, clusterView, otherCluster, pinnedCluster } from "../../kube/cluster-identity";
import type { Props } from "../provider-props";
import { ledgerNameProblem, namespaceProblem, parseDuration } from "../../ledger/kubernetes/claim-names";
import { kubeLedger, type KubeLedger, type KubeLedgerConfig } from "../../ledger/kubernetes/kube-ledger";
import type { Ledger } from "../../ledger/ledger";
import { stackLedger, stateRecords } from "../../ledger/stack/stack-ledger";
import { shown } from "../../core/text";

/** The pool option `ledger` as the program gives it. */
export interface LedgerArgs {
  /** Where the ledger lives: `kubernetes` (ConfigMaps and a Lease in a namespace), the only kind. */
  kind: "kubernetes";
  /** The pool's name in the ledger: stacks naming the same namespace and name share the pool. */
  name: string;
  /** Namespace of the pool's Lease and ConfigMaps. */
  namespace: string;
  /** kubeconfig context (default: the current context). */
  context?: string;
  /**
   * The kubeconfig itself (its YAML or JSON text) instead of `$KUBECONFIG` / `~/.kube/config`: e.g.
   * the `kubeconfig` output of the cluster resource the same program creates. Kept secret in state
   * (give it as an output, or wrap it in `pulumi.secret`), never printed; changing it is an update.
   */
  kubeconfig?: pulumi.Input<string>;
  /**
   * The cluster the ledger must be on, as state records it (`ca sha256:<16 hex>` of its CA, or
   * `server <url>` for a kubeconfig without a CA). Default: the cluster of the first `up`, kept.
   * Declaring it refuses any other cluster from the start, and re-pins after a CA rotation.
   */
  cluster?: string;
  /** How long a planner keeps the pool's Lease without renewing it (default "10s"). */
  lockDuration?: string;
  /** How long planning waits for the Lease before failing (default "30s"). */
  lockAcquireTimeout?: string;
}

const defaults = { lockDuration: "10s", lockAcquireTimeout: "30s" } as const;

/**
 * Validates the pool option `ledger` (undefined: the stack's own state). Every problem comes back
 * as a failure under `<at>ledger.<field>`.
 */
export function resolveLedger(value: unknown, at = ""): { config?: KubeLedgerConfig; failures: Failure[] } {
  if (value === undefined || value === null) return { failures: [] };
  const failures: Failure[] = [];
  const fail = (field: string, reason: string) => failures.push(inputFailure(`${at}ledger.${field}`, reason));
  const v = value as Partial<LedgerArgs>;
  if (v.kind !== "kubernetes") fail("kind", `unknown ledger kind ${shown(v.kind)}; use "kubernetes"`);
  const nameProblem = ledgerNameProblem(v.name);
  if (nameProblem) fail("name", nameProblem);
  const nsProblem = namespaceProblem(v.namespace);
  if (nsProblem) fail("namespace", nsProblem);
  if (v.context !== undefined && (typeof v.context !== "string" || v.context === "")) {
    fail("context", "give a kubeconfig context name, or leave context out for the current one");
  }
  const kubeconfigProblem = kubeconfigSettingProblem(v.kubeconfig);
  if (kubeconfigProblem) fail("kubeconfig", kubeconfigProblem);
  const clusterProblem = v.cluster === undefined ? undefined : clusterSettingProblem(v.cluster);
  if (clusterProblem) fail("cluster", clusterProblem);
  const durations = { lockDuration: 0, lockAcquireTimeout: 0 };
  for (const key of ["lockDuration", "lockAcquireTimeout"] as const) {
    try {
      durations[key] = parseDuration(v[key] ?? defaults[key], key);
    } catch (e) {
      failures.push(failureOf(`${at}ledger.${key}`, e));
    }
  }
  if (failures.length > 0) return { failures };
  const config: KubeLedgerConfig = { name: v.name!, namespace: v.namespace!, ...durations };
  if (v.context !== undefined) config.context = v.context;
  if (typeof v.kubeconfig === "string") config.kubeconfig = v.kubeconfig;
  if (v.cluster !== undefined) config.cluster = v.cluster;
  return { config, failures };
}

/**
 * What identifies a pool's ledger: kind, namespace and name of a shared one (its lock settings
 * and context may change), "" for the stack's own state.
 */
export function ledgerKey(ledger: unknown): string {
  const { config } = resolveLedger(ledger);
  return config ? JSON.stringify(["kubernetes", config.namespace, config.name]) : "";
}

/** Whether the pool option `ledger` puts the pool in a shared (Kubernetes) ledger. */
export const isShared = (ledger: unknown): boolean => resolveLedger(ledger).config !== undefined;

/**
 * The ledger of a pool: the Kubernetes ledger when the pool has a valid `ledger` option, the
 * stack's own state otherwise.
 * @param props - the asking resource's `stack` (`<org>/<project>/<stack>`) and, for a shared
 *   pool, its `stackId` (which decides what is the stack's own there).
 * @param ledger - the pool's `ledger` option (already validated by the pool's check).
 * @param holder - who is asking, for lock-timeout messages.
 */
export function ledgerFor(
  props: { stack?: unknown; stackId?: unknown },
  ledger: unknown,
  holder: string,
): Ledger {
  return sharedLedgerFor(props, ledger, holder) ?? stackLedger({ stack: String(props.stack), holder });
}

/** The Kubernetes ledger of a shared pool (as {@link ledgerFor}); undefined for a stack-local pool. */
export function sharedLedgerFor(
  props: { stack?: unknown; stackId?: unknown },
  ledger: unknown,
  holder: string,
): KubeLedger | undefined {
  const { config } = resolveLedger(ledger);
  if (!config) return undefined;
  const stackId = typeof props.stackId === "string" ? props.stackId : undefined;
  const stack = String(props.stack);
  return kubeLedger({
    stack,
    ...(stackId === undefined ? {} : { stackId }),
    ledger: config,
    holder,
    records: (pool) => stateRecords(stack, pool),
  });
}

/**
 * For a shared pool's resource at `check`: records in `news.cluster` which cluster its ledger is on
 * (kept from `olds` once recorded), and says why not when the ledger's context now points at
 * another cluster than the one recorded. Undefined when fine, or when the pool is stack-local.
 */
export function pinCluster(olds: Props, news: Props, ledger: unknown, what: string): string | undefined {
  const { config } = resolveLedger(ledger);
  if (!config) return undefined;
  try {
    const pin = pinnedCluster(clusterView(kubeClients(config)), olds.cluster, config.cluster, what, "ledger");
    if (pin.problem !== undefined) return pin.problem;
    news.cluster = pin.cluster;
    return undefined;
  } catch (e) {
    return errorMessage(e);
  }
}

/**
 * For a shared pool's resource at `delete` or `read` (which run no check): refuses when the
 * ledger's context points at another cluster than the one its state recorded.
 * @param outcome - what the refusal leaves, e.g. `nothing was released`.
 * @throws IpamError INVALID_CONFIG naming both clusters.
 */
export function assertSameCluster(props: Props, ledger: unknown, what: string, outcome: string): void {
  const { config } = resolveLedger(ledger);
  if (!config || props.cluster === undefined) return;
  const problem = otherCluster(clusterView(kubeClients(config)), props.cluster, what);
  if (problem) throw new IpamError("INVALID_CONFIG", `${problem}; ${outcome}`);
}
