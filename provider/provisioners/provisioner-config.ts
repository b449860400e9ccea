/** Settings of the `none` provisioner: pure IPAM, hosts are opaque labels. */
export interface NoneProvisionerConfig {
  kind: "none";
  /** Hosts per failure domain. Without it, the failure domain's name is the host. */
  hosts?: Record<string, string[]>;
}

/** Settings shared by provisioners that are not built into this version yet. */
export interface OtherProvisionerConfig {
  kind: "aws" | "ocp-static" | "ocp-dynamic" | "ovn";
  [setting: string]: unknown;
}

/**
 * Provisioner settings, stored in state as resource inputs: names and selectors only, never
 * credentials (AWS uses the default credential chain, Kubernetes a kubeconfig context name).
 */
export type ProvisionerConfig = NoneProvisionerConfig | OtherProvisionerConfig;

/** Every provisioner kind this package knows. */
export const provisionerKinds = ["none", "aws", "ocp-static", "ocp-dynamic", "ovn"] as const;

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
      reason: `unknown provisioner kind ${JSON.stringify(c.kind)}; use one of ${provisionerKinds.join(", ")}`,
    });
  }
  for (const key of Object.keys(c)) {
    if (secretLike.test(key)) {
      problems.push({
        property: key,
        reason:
          `"${key}" looks like a credential, and provisioner settings are stored in the stack in clear text; ` +
          `remove it: AWS uses the default credential chain, Kubernetes a kubeconfig context name`,
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
  return problems;
}
