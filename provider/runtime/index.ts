/**
 * Run-time side of the dynamic providers: what the serialized shims in state load by package name.
 * Not for use from programs; its shape may change between versions without notice.
 * @packageDocumentation
 */
import { cidrAssignmentProvider } from "../resources/cidr-assignment/cidr-assignment-provider";
import { egressIpAssignmentProvider } from "../resources/egress-ip/egress-ip-assignment-provider";
import { ipAllocationProvider } from "../resources/ip-allocation/ip-allocation-provider";
import { ipPoolProvider } from "../resources/ip-pool/ip-pool-provider";
import { prefixAllocationProvider } from "../resources/prefix-allocation/prefix-allocation-provider";
import type { ProviderImpl } from "../resources/provider-props";
import { engineMessages } from "./engine-messages";
import { codedMessage, IpamError } from "../core/ipam-error";
import { counted, exitWhenEngineGone } from "./engine-watch";
import { warnWhenStoredByValue } from "./stored-by-value";

export type { ProviderImpl };

// Every message of this package's providers reaches the engine's output with its code and with
// control characters escaped, every call is counted (for an exit after the engine is gone to wait for), and a provider
// stored by value (a linked package) is named in a warning.
const wrapped = (impl: ProviderImpl) => counted(engineMessages(warnWhenStoredByValue(impl)));
const safe = {
  IpPool: wrapped(ipPoolProvider),
  IpAllocation: wrapped(ipAllocationProvider),
  PrefixAllocation: wrapped(prefixAllocationProvider),
  EgressIpAssignment: wrapped(egressIpAssignmentProvider),
  CidrAssignment: wrapped(cidrAssignmentProvider),
};

// Loaded into a dynamic-provider process at its first call: from then on it ends with its engine.
exitWhenEngineGone();

const providers: Record<string, () => ProviderImpl> = {
  IpPool: () => safe.IpPool,
  IpAllocation: () => safe.IpAllocation,
  PrefixAllocation: () => safe.PrefixAllocation,
  EgressIpAssignment: () => safe.EgressIpAssignment,
  CidrAssignment: () => safe.CidrAssignment,
  // The test resources Echo and NoopAllocation live in the `testing` export, loaded only when one asks for it
  // (their shims, and the state of Echos written before the shim modules, name this table).
  echo: () => require("pulumi-egress-ipam/testing").echoProvider,
  "noop-allocation": () => require("pulumi-egress-ipam/testing").noopAllocationProvider,
};

/**
 * Returns the implementation for a resource kind.
 * @throws IpamError VERSION_MISMATCH when the kind is unknown, which means state was written by a
 * newer version of this package than the one installed. Thrown outside {@link engineMessages}, so
 * its message carries its code itself.
 */
export function providerFor(kind: string): ProviderImpl {
  const impl = providers[kind];
  if (!impl) {
    const known = Object.keys(providers).join(", ");
    throw new IpamError(
      "VERSION_MISMATCH",
      codedMessage(
        "VERSION_MISMATCH",
        `pulumi-egress-ipam has no provider "${kind}" (known: ${known}); ` +
          `the stack was written by a newer pulumi-egress-ipam: install that version`,
      ),
    );
  }
  return impl();
}
