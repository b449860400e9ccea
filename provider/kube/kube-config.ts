import * as fs from "node:fs";
import * as path from "node:path";
import type * as k8s from "@kubernetes/client-node" with { "resolution-mode": "import" };
import { IpamError } from "../core/ipam-error";
import { retryingThrottled } from "./throttle-retry";
import { reuseConnections } from "./reused-connections";
import { shared } from "../core/process-registry";

// @kubernetes/client-node is an ES module (require() of it works from Node 22.12 on) and takes a
// second or more to load, so it is loaded only when something talks to Kubernetes.
const lib = () => require("@kubernetes/client-node") as typeof k8s;

/** The clients of one kubeconfig context, shared by everything in the process that uses it. */
export interface KubeClients {
  /** The loaded kubeconfig, switched to the context. */
  config: k8s.KubeConfig;
  /** Generic client for any kind, built-in or custom (create/read/replace/patch/delete/list). */
  objects: k8s.KubernetesObjectApi;
  /** Core v1 (Nodes, Namespaces). */
  core: k8s.CoreV1Api;
  /** coordination.k8s.io/v1 (Leases). */
  coordination: k8s.CoordinationV1Api;
  /** The context's name. */
  context: string;
  /** The API server's URL, for messages. */
  server: string;
}

/** The kubeconfig files the environment names: `$KUBECONFIG` (a path list), else `~/.kube/config`. */
export function kubeconfigFiles(env: NodeJS.ProcessEnv = process.env): string[] {
  if (env.KUBECONFIG) return env.KUBECONFIG.split(path.delimiter).filter((f) => f.length > 0);
  const home = env.HOME ?? env.USERPROFILE;
  return home ? [path.join(home, ".kube", "config")] : [];
}

/**
 * Loads the kubeconfig as kubectl and pulumi-kubernetes do (`$KUBECONFIG` files merged in order,
 * else `~/.kube/config`) and switches to `context` when given (else the current context).
 * Credentials stay in the kubeconfig: only the context name is ever stored in Pulumi state.
 * @throws IpamError `INVALID_CONFIG` naming the files read and the contexts they define when no
 * kubeconfig is found or the context is not one of them.
 */
export function loadKubeConfig(context?: string): k8s.KubeConfig {
  const { KubeConfig } = lib();
  const files = kubeconfigFiles().filter((f) => fs.existsSync(f));
  if (files.length === 0) {
    throw new IpamError(
      "INVALID_CONFIG",
      `no kubeconfig found (looked in ${kubeconfigFiles().join(", ") || "$KUBECONFIG and ~/.kube/config"}); ` +
        `set KUBECONFIG to the kubeconfig of the cluster, as for kubectl`,
    );
  }
  const config = new KubeConfig();
  config.loadFromFile(files[0]!);
  for (const file of files.slice(1)) {
    const more = new KubeConfig();
    more.loadFromFile(file);
    config.mergeConfig(more, true);
  }
  const names = config.getContexts().map((c) => c.name);
  if (context !== undefined) {
    if (!names.includes(context)) {
      throw new IpamError(
        "INVALID_CONFIG",
        `kubeconfig context "${context}" not found in ${files.join(", ")} (contexts: ${names.join(", ") || "none"}); ` +
          `give one of those, or leave context out to use the current one`,
      );
    }
    config.setCurrentContext(context);
  } else if (!config.getCurrentCluster()) {
    throw new IpamError(
      "INVALID_CONFIG",
      `the kubeconfig ${files.join(", ")} has no current context (contexts: ${names.join(", ") || "none"}); ` +
        `give a context name, or set one with kubectl config use-context`,
    );
  }
  return config;
}

/**
 * The clients for a kubeconfig context, created once per process and context.
 * @throws IpamError `INVALID_CONFIG` as {@link loadKubeConfig}.
 */
export function kubeClients(context?: string): KubeClients {
  return shared("kube-clients", `${process.env.KUBECONFIG ?? ""}\u0000${context ?? ""}`, () => {
    const k = lib();
    const config = loadKubeConfig(context);
    reuseConnections(config);
    return {
      config,
      // Every call retries the API server's 429 (throttled, or CRD storage still initializing).
      objects: retryingThrottled(k.KubernetesObjectApi.makeApiClient(config)),
      core: retryingThrottled(config.makeApiClient(k.CoreV1Api)),
      coordination: retryingThrottled(config.makeApiClient(k.CoordinationV1Api)),
      context: config.getCurrentContext(),
      server: config.getCurrentCluster()?.server ?? "(no server)",
    };
  });
}
