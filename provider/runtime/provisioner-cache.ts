import { createProvisioner, type EgressIPProvisioner } from "../provisioners";
import type { ProvisionerConfig } from "../provisioners/provisioner-config";
import { shared } from "../state/process-registry";

/**
 * The provisioner for a config, one per distinct config per process, so in-process knowledge
 * (clients, caches, load counts) is shared by every resource using it.
 */
export function provisionerFor(config: ProvisionerConfig): EgressIPProvisioner {
  return shared("provisioner", JSON.stringify(config), () => createProvisioner(config));
}
