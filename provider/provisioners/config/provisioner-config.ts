import { kubeConfigProblems, kubeKinds, type KubeProvisionerConfig } from "./kube-provisioner-config";
import { elasticIpsProblems, type AwsProvisionerConfig } from "./aws-provisioner-config";
import { shown } from "../../core/text";
import type { InstanceSettings } from "../egress-ip-provisioner";

export type { AwsProvisionerConfig, InstanceSettings };

/** Settings of the `none` provisioner: pure IPAM, hosts are opaque labels. */
export interface NoneProvisionerConfig {
  kind: "none";
  /** Hosts per failure domain. Without it, the failure domain's name is the host. */
  hosts?: Record<string, string[]>;
}

/**
 * Provisioner settings, stored in state as resource inputs: names and selectors, and no credential
 * but a Kubernetes kind's `kubeconfig`, which the resources keep a secret (AWS uses the default
 * credential chain; Kubernetes a kubeconfig context name, or the kubeconfig as a value).
 */
export type ProvisionerConfig = NoneProvisionerConfig | AwsProvisionerConfig | KubeProvisionerConfig;

/** A provisioner config with the instance settings its kind uses. */
export type ScopedProvisionerConfig = ProvisionerConfig & InstanceSettings;

const instanceKeys: Record<string, (keyof InstanceSettings)[]> = {
  aws: ["owner", "adoptPresent"],
  "ocp-static": ["namespace", "owner", "adoptPresent"],
  "ocp-dynamic": ["namespace", "cidrs", "owner", "adoptPresent"],
  ovn: ["namespace", "owner", "adoptPresent", "podSelector"],
  antrea: ["namespace", "owner", "adoptPresent", "podSelector"],
  cilium: ["namespace", "owner", "adoptPresent", "podSelector"],
};

/**
 * The config a resource builds its provisioner from: the user's settings plus those instance
 * settings the kind uses (none for `none`; only the owner for `aws`, whose assignments are views of
 * one provisioner per user settings, sharing its host load counts). A distinct config is a
 * distinct cached provisioner.
 */
export function withInstanceSettings(
  config: ProvisionerConfig,
  settings: InstanceSettings,
): ScopedProvisionerConfig {
  const keys = instanceKeys[config.kind] ?? [];
  const scoped: Record<string, unknown> = { ...config };
  for (const key of keys) if (settings[key] !== undefined) scoped[key] = settings[key];
  return scoped as unknown as ScopedProvisionerConfig;
}

/** The user's settings of a scoped config: the config without its instance settings. */
export function withoutInstanceSettings(config: ScopedProvisionerConfig): ProvisionerConfig {
  const {
    namespace: _namespace,
    cidrs: _cidrs,
    owner: _owner,
    adoptPresent: _adopt,
    podSelector: _podSelector,
    ...rest
  } = config;
  return rest as ProvisionerConfig;
}

/** Every provisioner kind this package knows. */
export const provisionerKinds = [
  "none",
  "aws",
  "ocp-static",
  "ocp-dynamic",
  "ovn",
  "antrea",
  "cilium",
] as const;

// Setting names that would carry a credential into state, where it is stored in clear text.
const secretLike =
  /(secret|password|passwd|token|credential|accesskey|privatekey|kubeconfig$|certificatedata|keydata)/i;

/**
 * Problems of a provisioner config, as `check` failures (`property` relative to the config).
 * Credentials are refused outright: state would keep them readable by anyone with the stack.
 */
export function provisionerConfigProblems(config: unknown): { property: string; reason: string }[] {
  if (!config || typeof config !== "object" || Array.isArray(config)) {
    return [
      { property: "", reason: `must be an object with a "kind" (one of ${provisionerKinds.join(", ")})` },
    ];
  }
  const c = config as Record<string, unknown>;
  const problems: { property: string; reason: string }[] = [];
  if (!provisionerKinds.includes(c.kind as (typeof provisionerKinds)[number])) {
    problems.push({
      property: "kind",
      reason: `unknown provisioner kind ${shown(c.kind)}; use one of ${provisionerKinds.join(", ")}`,
    });
  }
  const kube = kubeKinds.includes(c.kind as (typeof kubeKinds)[number]);
  for (const key of Object.keys(c)) {
    // A Kubernetes kind's kubeconfig is the one credential taken: the resources keep it a secret in state.
    if (secretLike.test(key) && !(kube && key === "kubeconfig")) {
      problems.push({
        property: key,
        reason:
          `"${key}" looks like a credential, and provisioner settings are stored in the stack in clear text; ` +
          `remove it: AWS uses the default credential chain, Kubernetes a kubeconfig context name or a kubeconfig setting`,
      });
    }
  }
  if (c.kind === "none" && c.hosts !== undefined) {
    const hosts = c.hosts as Record<string, unknown>;
    const ok =
      hosts &&
      typeof hosts === "object" &&
      Object.values(hosts).every(
        (l) => Array.isArray(l) && l.length > 0 && l.every((h) => typeof h === "string"),
      );
    if (!ok)
      problems.push({
        property: "hosts",
        reason: "must map each failure domain to a non-empty list of host names",
      });
  }
  if (c.kind === "aws") problems.push(...awsConfigProblems(c));
  if (kube) {
    problems.push(...kubeConfigProblems(c, provisionerConfigProblems, (key) => secretLike.test(key)));
  }
  return problems;
}

const awsKeys = new Set(["kind", "region", "endpoint", "hostTags", "elasticIps"]);

function awsConfigProblems(c: Record<string, unknown>): { property: string; reason: string }[] {
  const problems: { property: string; reason: string }[] = [];
  if (typeof c.region !== "string" || !/^[a-z]{2}(-[a-z0-9]+)+-\d+$/.test(c.region)) {
    problems.push({
      property: "region",
      reason: `must be an AWS region name such as "us-east-1" (got ${shown(c.region)})`,
    });
  }
  if (c.endpoint !== undefined && (typeof c.endpoint !== "string" || !isEndpointUrl(c.endpoint))) {
    problems.push({
      property: "endpoint",
      reason: `must be an http(s) URL such as "https://ec2.us-east-1.amazonaws.com" (got ${shown(c.endpoint)})`,
    });
  }
  if (c.hostTags !== undefined) {
    const tags = c.hostTags as Record<string, unknown>;
    const ok =
      tags &&
      typeof tags === "object" &&
      !Array.isArray(tags) &&
      Object.values(tags).every((v) => typeof v === "string");
    if (!ok)
      problems.push({ property: "hostTags", reason: 'must map tag keys to values, e.g. { role: "egress" }' });
  }
  problems.push(...elasticIpsProblems(c.elasticIps));
  for (const key of Object.keys(c)) {
    if (!awsKeys.has(key) && !secretLike.test(key)) {
      problems.push({
        property: key,
        reason: `unknown setting of the aws provisioner; it takes ${[...awsKeys].filter((k) => k !== "kind").join(", ")}`,
      });
    }
  }
  return problems;
}

/**
 * Whether `text` is an EC2 endpoint as the provisioner accepts it, as a whole: `http(s)://host`
 * with an optional port and a plain path, and nothing else — no credentials, query, fragment,
 * spaces or shell characters (the endpoint is stored in state and printed in fix commands).
 */
export function isEndpointUrl(text: string): boolean {
  if (!/^https?:\/\/[A-Za-z0-9.-]+(:\d{1,5})?(\/[A-Za-z0-9._~/-]*)?$/.test(text)) return false;
  try {
    const url = new URL(text);
    return (url.protocol === "http:" || url.protocol === "https:") && url.hostname !== "";
  } catch {
    return false;
  }
}
