import { errorMessage, type Failure } from "../../core/failure";
import type * as pulumi from "@pulumi/pulumi";
import { poolSubnets, resolvePool } from "../pool/pool-spec";
import { withoutProvider, type Props, type ProviderImpl } from "../provider-props";
import { callSignal, provisionerFailures, provisionerFor } from "../../provisioners/provisioner-cache";
import { hasUnknown } from "../../core/unknowns";
import { withInstanceSettings } from "../../provisioners/provisioner-config";

/** The provisioner of a CidrAssignment: the user's settings plus the pool's CIDRs where the kind uses them. */
const cidrProvisioner = (props: Props) =>
  provisionerFor(withInstanceSettings(props.provisioner, { cidrs: props.cidrs }));

async function checkCidrAssignment(olds: Props, news: Props): Promise<pulumi.dynamic.CheckResult> {
  if ([news.pool, news.provisioner, news.requestedHosts, news.failureDomain].some(hasUnknown)) {
    return { inputs: news };
  }
  const failures: Failure[] = provisionerFailures(news.provisioner);
  const { pool, failures: poolFailures } = resolvePool(news.pool ?? {}, "pool.");
  failures.push(...poolFailures);
  const byHosts = Array.isArray(news.requestedHosts) && news.requestedHosts.length > 0;
  if (byHosts === (typeof news.failureDomain === "string")) {
    failures.push({
      property: "hosts",
      reason: "give a non-empty list of hosts, or a failureDomain (not both)",
    });
  }
  if (failures.length > 0 || !pool) return { inputs: news, failures };

  const cidrs = poolSubnets(pool.rangeSets);
  let hosts: string[] = byHosts
    ? news.requestedHosts
    : olds.failureDomain === news.failureDomain
      ? olds.hosts
      : [];
  if (!hosts?.length) {
    try {
      const provisioner = cidrProvisioner({ ...news, cidrs });
      hosts = [await provisioner.findHostForNewIP(news.failureDomain, callSignal())];
    } catch (e) {
      return { inputs: news, failures: [{ property: "failureDomain", reason: errorMessage(e) }] };
    }
  }
  return { inputs: { ...news, hosts, cidrs } };
}

async function assign(news: Props, already: string[] = []) {
  const provisioner = cidrProvisioner(news);
  for (const host of news.hosts as string[]) {
    if (!already.includes(host)) await provisioner.assignCIDR(host, callSignal());
  }
}

/** Undoes the assignment on `hosts` where the provisioner can (ocp-dynamic, ovn); a no-op elsewhere. */
async function unassign(props: Props, hosts: string[]) {
  const provisioner = cidrProvisioner(props);
  for (const host of hosts) await provisioner.unassignCIDR?.(host, callSignal());
}

/**
 * Provider of CidrAssignment: `assignCIDR` for each host; hosts added later are assigned in
 * place and hosts dropped are unassigned (`unassignCIDR`, where the provisioner has it, as on
 * delete); a pool or provisioner change assigns again on a replacement.
 */
export const cidrAssignmentProvider: ProviderImpl = {
  check: checkCidrAssignment,

  async diff(_id, olds, news) {
    const replaces: string[] = [];
    if (JSON.stringify(olds.provisioner) !== JSON.stringify(news.provisioner)) replaces.push("provisioner");
    if (JSON.stringify(olds.cidrs) !== JSON.stringify(news.cidrs)) replaces.push("pool");
    const changes = replaces.length > 0 || JSON.stringify(olds.hosts) !== JSON.stringify(news.hosts);
    // The old assignment lets go first: on ovn its delete would take the label the new one just set.
    return { changes, replaces, ...(replaces.length > 0 ? { deleteBeforeReplace: true } : {}) };
  },

  async create(inputs) {
    await assign(inputs);
    return { id: inputs.cidrs.join(","), outs: withoutProvider(inputs) };
  },

  async read(id, props) {
    return { id, props };
  },

  async update(_id, olds, news) {
    await assign(news, olds.hosts);
    await unassign(
      olds,
      (olds.hosts as string[]).filter((h) => !news.hosts.includes(h)),
    );
    return { outs: withoutProvider(news) };
  },

  async delete(_id, props) {
    await unassign(props, props.hosts ?? []);
  },
};
