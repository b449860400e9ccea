import * as pulumi from "@pulumi/pulumi";
import type { ProvisionerConfig } from "../provisioners/config/provisioner-config";

/** A config whose `kubeconfig` setting a program may give as an output. */
type KubeconfigInput<C> = C extends { kind: string }
  ? "kubeconfig" extends keyof C
    ? Omit<C, "kubeconfig"> & { kubeconfig?: pulumi.Input<string> }
    : C
  : never;

/**
 * A provisioner config as a program gives it: a Kubernetes kind's `kubeconfig` may be an output,
 * e.g. of the cluster resource the same program creates.
 */
export type ProvisionerArgs = KubeconfigInput<ProvisionerConfig>;

// A kubeconfig given as a value holds credentials. The engine keeps a secret where the provider's
// results put it back (a dynamic provider sees plain values and returns them at the same path), so
// the setting is made a secret of its own there: the rest of the object stays readable in state,
// in previews and to the CLI, and only `kubeconfig` shows as [secret].

const hasKubeconfig = (value: unknown): value is { kubeconfig: unknown } =>
  typeof value === "object" && value !== null && (value as { kubeconfig?: unknown }).kubeconfig !== undefined;

/**
 * A provisioner config or a pool's `ledger` with its `kubeconfig` (when it has one) a secret. A
 * plain object keeps every other setting as it is; an object given as a whole as an output or a
 * promise becomes a secret as a whole when it has a kubeconfig (its parts cannot be told apart).
 */
export function withSecretKubeconfig<T>(value: pulumi.Input<T> | undefined): pulumi.Input<T> | undefined {
  if (value === undefined || value === null) return value;
  if (pulumi.Output.isInstance(value) || value instanceof Promise) {
    return pulumi.output(value).apply((v) => (hasKubeconfig(v) ? pulumi.secret(v) : v)) as pulumi.Output<T>;
  }
  if (!hasKubeconfig(value)) return value;
  return { ...value, kubeconfig: pulumi.secret(value.kubeconfig as pulumi.Input<string>) } as pulumi.Input<T>;
}
