import { awsProvisioner } from "./aws-provisioner";
import type { EgressIPProvisioner } from "./egress-ip-provisioner";
import { noneProvisioner } from "./none";
import {
  provisionerConfigProblems,
  type AwsProvisionerConfig,
  type ProvisionerConfig,
} from "./provisioner-config";

type Factory = (config: ProvisionerConfig) => EgressIPProvisioner;

// Provisioners register here as they are built (ocp-static, ocp-dynamic and ovn are still to come).
const factories = new Map<string, Factory>([
  ["none", (c) => noneProvisioner(c as Parameters<typeof noneProvisioner>[0])],
  ["aws", (c) => awsProvisioner(c as AwsProvisionerConfig)],
]);

/**
 * Registers the implementation of a provisioner kind; the last registration wins.
 * This is the seam the aws, ocp-static, ocp-dynamic and ovn provisioners plug into.
 */
export function registerProvisioner(kind: ProvisionerConfig["kind"], factory: Factory): void {
  factories.set(kind, factory);
}

/**
 * Builds the provisioner for `config.kind`.
 * @throws Error listing every config problem, or naming a kind known but not available in this
 * version of the package.
 */
export function createProvisioner(config: ProvisionerConfig): EgressIPProvisioner {
  const problems = provisionerConfigProblems(config);
  if (problems.length > 0) {
    throw new Error(
      `invalid provisioner config: ${problems.map((p) => `${p.property || "config"}: ${p.reason}`).join("; ")}`,
    );
  }
  const factory = factories.get(config.kind);
  if (!factory) {
    throw new Error(
      `the "${config.kind}" provisioner is not available in this version of pulumi-egress-ipam; ` +
        `available: ${[...factories.keys()].join(", ")}`,
    );
  }
  return factory(config);
}
