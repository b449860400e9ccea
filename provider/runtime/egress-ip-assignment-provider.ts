import type * as pulumi from "@pulumi/pulumi";
import { canonicalAddress } from "../allocator";
import type { ProviderImpl } from "./index";
import type { Failure } from "./pool-spec";
import { errorMessage, withoutProvider, type Props } from "./props";
import { callSignal, provisionerFailures, provisionerFor } from "./provisioner-cache";
import { hasUnknown } from "./unknowns";

async function checkAssignment(olds: Props, news: Props): Promise<pulumi.dynamic.CheckResult> {
  if (hasUnknown(news.ip) || hasUnknown(news.provisioner) || hasUnknown(news.pinnedHost))
    return { inputs: news };
  const failures: Failure[] = provisionerFailures(news.provisioner);
  let ip = news.ip;
  try {
    ip = canonicalAddress(String(news.ip));
  } catch (e) {
    failures.push({ property: "ip", reason: errorMessage(e) });
  }
  if (failures.length > 0) return { inputs: news, failures };

  const provisioner = provisionerFor(news.provisioner);
  const samePlace = olds.ip === ip && olds.failureDomain === news.failureDomain && Boolean(olds.host);
  let host: string | undefined = news.pinnedHost ?? (samePlace ? olds.host : undefined);
  try {
    // A host that left the domain (terminated, untagged) is replaced now, so plain `up` moves the
    // address; a pinned host is the user's choice and stays.
    if (host && !news.pinnedHost && provisioner.hostServes) {
      if (!(await provisioner.hostServes(host, news.failureDomain, callSignal()))) host = undefined;
    }
    host ??= await provisioner.findHostForNewIP(news.failureDomain, callSignal());
  } catch (e) {
    return { inputs: news, failures: [{ property: "failureDomain", reason: errorMessage(e) }] };
  }
  return { inputs: { ...news, ip, host } };
}

function outputsOf(inputs: Props) {
  return { ...withoutProvider(inputs), placement: { state: "assigned" } };
}

/**
 * Provider of EgressIpAssignment: places one address on one host through the provisioner.
 * `check` plans the host (pinned, kept, or the provisioner's least-loaded choice), so preview
 * shows it; refresh marks an address missing from its host, and the next `up` moves it back.
 */
export const egressIpAssignmentProvider: ProviderImpl = {
  check: checkAssignment,

  async diff(_id, olds, news) {
    const replaces: string[] = [];
    if (olds.ip !== news.ip) replaces.push("ip");
    if (JSON.stringify(olds.provisioner) !== JSON.stringify(news.provisioner)) replaces.push("provisioner");
    const changes = replaces.length > 0 || olds.host !== news.host || olds.namespace !== news.namespace;
    return { changes, replaces };
  },

  async create(inputs) {
    await provisionerFor(inputs.provisioner).addSpecifiedIP(inputs.ip, inputs.host, callSignal());
    return { id: inputs.ip, outs: outputsOf(inputs) };
  },

  async read(id, props) {
    if (!props.host) return { id, props };
    try {
      await provisionerFor(props.provisioner).checkIP(props.ip, props.host, callSignal());
      return { id, props };
    } catch (e) {
      // Drift: record where the address should have been; the next check plans a host again.
      const missing = {
        ...props,
        host: "",
        placement: { state: "missing", from: props.host, reason: errorMessage(e) },
      };
      const { placement: _placement, ...inputs } = withoutProvider(missing);
      return { id, props: missing, inputs };
    }
  },

  async update(_id, olds, news) {
    const provisioner = provisionerFor(news.provisioner);
    const from = olds.host || olds.placement?.from;
    if (from && from !== news.host) {
      await provisioner.moveIP(news.ip, from, news.host, callSignal());
    } else if (!olds.host) {
      await provisioner.addSpecifiedIP(news.ip, news.host, callSignal());
    }
    return { outs: outputsOf(news) };
  },

  async delete(_id, props) {
    const host = props.host || props.placement?.from;
    if (host) await provisionerFor(props.provisioner).removeIP(props.ip, host, callSignal());
  },
};
