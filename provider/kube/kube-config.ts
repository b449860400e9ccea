import { createHash } from "node:crypto";
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
 * Where a provisioner or a ledger reaches its cluster: a context of the kubeconfig files the
 * environment names, or a kubeconfig given as a value (an output of the program that made the
 * cluster, kept secret in state) and, optionally, one of its contexts.
 */
export interface KubeTarget {
  /** A context name; default: the kubeconfig's current context. */
  context?: string | undefined;
  /** The kubeconfig itself (YAML or JSON text) instead of `$KUBECONFIG` / `~/.kube/config`. */
  kubeconfig?: string | undefined;
}

/** The problem of a `kubeconfig` setting's shape, or undefined: a non-empty text. Never quotes it. */
export function kubeconfigSettingProblem(value: unknown): string | undefined {
  if (value === undefined || (typeof value === "string" && value.trim() !== "")) return undefined;
  return (
    `must be the text of a kubeconfig (YAML or JSON), e.g. a cluster resource's kubeconfig output; got ` +
    (typeof value === "string"
      ? "an empty text"
      : value === null
        ? "null"
        : Array.isArray(value)
          ? "a list"
          : typeof value === "object"
            ? "an object"
            : `a ${typeof value}`)
  );
}

/**
 * Loads the kubeconfig of `target`: the text given as a value, else the files kubectl and
 * pulumi-kubernetes read (`$KUBECONFIG` files merged in order, else `~/.kube/config`), and switches
 * to its `context` when given (else the current context). Messages never quote a kubeconfig given
 * as a value: it holds credentials.
 * @throws IpamError `INVALID_CONFIG` naming the files read (or "the kubeconfig given as a value") and
 * the contexts they define when no kubeconfig is found, it does not parse, or the context is not one of them.
 */
export function loadKubeConfig(target: KubeTarget = {}): k8s.KubeConfig {
  const { KubeConfig } = lib();
  const config = new KubeConfig();
  let source: string;
  if (target.kubeconfig !== undefined) {
    source = "the kubeconfig given as a value";
    try {
      config.loadFromString(target.kubeconfig);
    } catch (e) {
      // The parser's message may quote the text: name the kind of problem only.
      throw new IpamError(
        "INVALID_CONFIG",
        `${source} does not parse as a kubeconfig (${e instanceof Error ? e.name : "error"}); ` +
          `give the kubeconfig's YAML or JSON text, e.g. a cluster resource's kubeconfig output`,
      );
    }
  } else {
    const files = kubeconfigFiles().filter((f) => fs.existsSync(f));
    if (files.length === 0) {
      throw new IpamError(
        "INVALID_CONFIG",
        `no kubeconfig found (looked in ${kubeconfigFiles().join(", ") || "$KUBECONFIG and ~/.kube/config"}); ` +
          `set KUBECONFIG to the kubeconfig of the cluster, as for kubectl, or give the kubeconfig as a value`,
      );
    }
    source = files.join(", ");
    config.loadFromFile(files[0]!);
    for (const file of files.slice(1)) {
      const more = new KubeConfig();
      more.loadFromFile(file);
      config.mergeConfig(more, true);
    }
  }
  const names = config.getContexts().map((c) => c.name);
  if (target.context !== undefined) {
    if (!names.includes(target.context)) {
      throw new IpamError(
        "INVALID_CONFIG",
        `kubeconfig context "${target.context}" not found in ${source} (contexts: ${names.join(", ") || "none"}); ` +
          `give one of those, or leave context out to use the current one`,
      );
    }
    config.setCurrentContext(target.context);
  } else if (!config.getCurrentCluster()) {
    throw new IpamError(
      "INVALID_CONFIG",
      `${source} has no current context (contexts: ${names.join(", ") || "none"}); ` +
        `give a context name, or set the kubeconfig's current-context`,
    );
  }
  return config;
}

/**
 * What tells two {@link KubeTarget}s apart, for per-process caches: the kubeconfig files or the
 * digest of the kubeconfig given as a value (never the value itself), and the context.
 */
export function kubeTargetKey(target: KubeTarget): string {
  const source =
    target.kubeconfig === undefined
      ? `files ${process.env.KUBECONFIG ?? ""}`
      : `value ${createHash("sha256").update(target.kubeconfig).digest("hex")}`;
  return `${source}\u0000${target.context ?? ""}`;
}

/**
 * The clients for a {@link KubeTarget}, created once per process and target (a kubeconfig given as
 * a value is keyed by its digest, never kept as a key).
 * @throws IpamError `INVALID_CONFIG` as {@link loadKubeConfig}.
 */
export function kubeClients(target: KubeTarget = {}): KubeClients {
  return shared("kube-clients", kubeTargetKey(target), () => {
    const k = lib();
    const config = loadKubeConfig(target);
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
