import { IpamError } from "../../core/ipam-error";
import { awsProvisioner } from "../aws/aws-provisioner";
import type { EgressIPProvisioner } from "../egress-ip-provisioner";
import { antreaProvisioner } from "../kubernetes/antrea/antrea";
import { ciliumProvisioner } from "../kubernetes/cilium/cilium";
import type {
  AntreaProvisionerConfig,
  CiliumProvisionerConfig,
  OcpStaticProvisionerConfig,
  OvnProvisionerConfig,
} from "../config/kube-provisioner-config";
import { noneProvisioner } from "../none/none";
import { ocpDynamicProvisioner } from "../kubernetes/ocp-dynamic/ocp-dynamic";
import { ocpStaticProvisioner } from "../kubernetes/ocp-static/ocp-static";
import { ovnProvisioner } from "../kubernetes/ovn/ovn";
import {
  provisionerConfigProblems,
  withoutInstanceSettings,
  type AwsProvisionerConfig,
  type InstanceSettings,
  type ScopedProvisionerConfig,
} from "../config/provisioner-config";
import { shared } from "../../core/process-registry";

type Factory = (config: ScopedProvisionerConfig) => EgressIPProvisioner;

// The implementation of every kind.
const factories = new Map<string, Factory>([
  ["none", (c) => noneProvisioner(c as Parameters<typeof noneProvisioner>[0])],
  ["aws", (c) => awsFor(c as AwsProvisionerConfig & InstanceSettings)],
  ["ocp-static", (c) => ocpStaticProvisioner(c as OcpStaticProvisionerConfig & InstanceSettings)],
  ["ocp-dynamic", (c) => ocpDynamicProvisioner(c as Parameters<typeof ocpDynamicProvisioner>[0])],
  ["ovn", (c) => ovnProvisioner(c as OvnProvisionerConfig & InstanceSettings)],
  ["antrea", (c) => antreaProvisioner(c as AntreaProvisionerConfig & InstanceSettings)],
  ["cilium", (c) => ciliumProvisioner(c as CiliumProvisionerConfig & InstanceSettings)],
]);

/**
 * The aws provisioner of one assignment: a view of the process's one provisioner for these user
 * settings, so that every assignment shares its inventory and host load counts.
 */
function awsFor(config: AwsProvisionerConfig & InstanceSettings): EgressIPProvisioner {
  const { owner, adoptPresent, ...settings } = config;
  const base = shared("aws-provisioner", JSON.stringify(settings), () => awsProvisioner(settings));
  return owner === undefined ? base : base.forOwner(owner, adoptPresent);
}

/**
 * Builds the provisioner for `config.kind`. The config may carry the instance settings a resource
 * adds (`namespace`, `cidrs`; see `withInstanceSettings`); the rest is validated as user settings.
 * @throws IpamError (INVALID_CONFIG, VERSION_MISMATCH) listing every config problem, or naming a kind known but not available in this
 * version of the package.
 */
export function createProvisioner(config: ScopedProvisionerConfig): EgressIPProvisioner {
  const problems = provisionerConfigProblems(withoutInstanceSettings(config));
  if (problems.length > 0) {
    throw new IpamError(
      "INVALID_CONFIG",
      `invalid provisioner config: ${problems.map((p) => `${p.property || "config"}: ${p.reason}`).join("; ")}`,
    );
  }
  const factory = factories.get(config.kind);
  if (!factory) {
    throw new IpamError(
      "VERSION_MISMATCH",
      `the "${config.kind}" provisioner is not available in this version of pulumi-egress-ipam; ` +
        `available: ${[...factories.keys()].join(", ")}`,
    );
  }
  return factory(config);
}
