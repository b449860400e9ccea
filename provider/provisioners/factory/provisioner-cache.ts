import { createProvisioner } from "./create-provisioner";
import type { EgressIPProvisioner } from "../egress-ip-provisioner";
import { provisionerConfigProblems, type ScopedProvisionerConfig } from "../config/provisioner-config";
import { inputFailure, type Failure } from "../../core/failure";
import { shared } from "../../core/process-registry";

/**
 * The provisioner for a config, one per distinct config per process, so in-process knowledge
 * (clients, caches, load counts) is shared by every resource using it. A config scoped with
 * instance settings (an EgressIp's namespace) is a distinct provisioner; the Kubernetes ones share
 * their planning state across namespaces themselves.
 */
export function provisionerFor(config: ScopedProvisionerConfig): EgressIPProvisioner {
  return shared("provisioner", JSON.stringify(config), () => createProvisioner(config));
}

/** Upper bound for one provisioner call, so a hung cloud API fails the step instead of the deployment. */
const callTimeoutMs = 300_000;

/** The abort signal for one provisioner call. */
export const callSignal = (): AbortSignal => AbortSignal.timeout(callTimeoutMs);

/** Problems of a resource's `provisioner` input, as `check` failures under `provisioner.<setting>`. */
export function provisionerFailures(config: unknown, at = "provisioner"): Failure[] {
  return provisionerConfigProblems(config).map((p) =>
    inputFailure(p.property ? `${at}.${p.property}` : at, p.reason, "INVALID_CONFIG"),
  );
}
