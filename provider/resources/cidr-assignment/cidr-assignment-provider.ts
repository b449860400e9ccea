import { failureOf, inputFailure, type Failure } from "../../core/failure";
import { resolvePoolRef } from "../pool/shared-pool-ref";
import type * as pulumi from "@pulumi/pulumi";
import { poolSubnets } from "../pool/pool-spec";
import { withoutProvider, type Props, type ProviderImpl } from "../provider-props";
import {
  callSignal,
  provisionerFailures,
  provisionerFor,
} from "../../provisioners/factory/provisioner-cache";
import { hasUnknown } from "../../core/unknowns";
import { withInstanceSettings } from "../../provisioners/config/provisioner-config";
import { newOwnerId } from "../../ledger/stack/owner-identity";
import { assertProvisionerCluster, pinProvisionerCluster, placementSettings } from "../provisioner-cluster";
import { shapeFailures } from "../input-shape";
import { cidrAssignmentInputs } from "../resource-inputs";

const whatOf = (props: Props) => `CidrAssignment ${String(props.owner)}`;

/** The kinds whose assignment changes objects others may share (HostSubnets, Nodes): they keep owner records. */
const recordsOwners = (props: Props) => ["ocp-dynamic", "ovn"].includes(props.provisioner?.kind);

/**
 * The provisioner of a CidrAssignment: the user's settings plus the pool's CIDRs and the
 * assignment's owner identity where the kind uses them. `adoptPresent`: for an assignment written
 * by an earlier version (no `ownerId` in its state), what is on its hosts counts as its own.
 */
const cidrProvisioner = (props: Props, adoptPresent?: boolean) =>
  provisionerFor(
    withInstanceSettings(props.provisioner, {
      cidrs: props.cidrs,
      owner: typeof props.ownerId === "string" ? props.ownerId : undefined,
      ...(adoptPresent ? { adoptPresent } : {}),
    }),
  );

async function checkCidrAssignment(olds: Props, news: Props): Promise<pulumi.dynamic.CheckResult> {
  const malformed = shapeFailures(news, cidrAssignmentInputs);
  if (malformed.length > 0) return { inputs: news, failures: malformed };
  if ([news.pool, news.provisioner, news.requestedHosts, news.failureDomain].some(hasUnknown)) {
    return { inputs: news };
  }
  const failures: Failure[] = provisionerFailures(news.provisioner);
  const { pool, failures: poolFailures } = await resolvePoolRef(news.pool ?? {});
  failures.push(...poolFailures);
  const byHosts = Array.isArray(news.requestedHosts) && news.requestedHosts.length > 0;
  if (byHosts === (typeof news.failureDomain === "string")) {
    failures.push(inputFailure("hosts", "give a non-empty list of hosts, or a failureDomain (not both)"));
  }
  if (failures.length > 0 || !pool) return { inputs: news, failures };

  const cidrs = poolSubnets(pool.rangeSets);
  // Before any call: the provisioner's context must still point at the cluster of its hosts.
  let elsewhere: Failure | undefined;
  try {
    elsewhere = pinProvisionerCluster(olds, news, cidrProvisioner({ ...news, cidrs }), whatOf(news));
  } catch (e) {
    // A kubeconfig problem (unknown context, no kubeconfig) is the provisioner's.
    elsewhere = failureOf("provisioner.context", e, "INVALID_CONFIG");
  }
  if (elsewhere) return { inputs: news, failures: [elsewhere] };
  // Who this assignment is on the objects it changes: the stack's identity (never its name alone:
  // same-named stacks of two backends are two owners) and the URN, made once and kept (`newOwnerId`:
  // a name freed by a rename is another owner).
  let ownerId: string | undefined = typeof olds.ownerId === "string" ? olds.ownerId : undefined;
  if (recordsOwners(news) && ownerId === undefined) {
    try {
      ownerId = await newOwnerId(news.stack, news.owner);
    } catch (e) {
      return { inputs: news, failures: [failureOf("provisioner", e, "LEDGER_UNAVAILABLE")] };
    }
  }
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
      return { inputs: news, failures: [failureOf("failureDomain", e, "PROVISIONER_FAILED")] };
    }
  }
  return { inputs: { ...news, hosts, cidrs, ...(ownerId === undefined ? {} : { ownerId }) } };
}

/** `assignCIDR` on each of `hosts`; `adoptPresent` as in {@link cidrProvisioner}. */
async function assign(news: Props, hosts: string[], adoptPresent = false) {
  const provisioner = cidrProvisioner(news, adoptPresent);
  for (const host of hosts) await provisioner.assignCIDR(host, callSignal());
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
    if (placementSettings(olds.provisioner) !== placementSettings(news.provisioner))
      replaces.push("provisioner");
    if (JSON.stringify(olds.cidrs) !== JSON.stringify(news.cidrs)) replaces.push("pool");
    // A cluster recorded or re-pinned (the provisioner's `cluster` setting) is an update that moves nothing.
    const changes =
      replaces.length > 0 ||
      JSON.stringify(olds.hosts) !== JSON.stringify(news.hosts) ||
      olds.ownerId !== news.ownerId ||
      olds.cluster !== news.cluster ||
      JSON.stringify(olds.provisioner) !== JSON.stringify(news.provisioner);
    // The old assignment lets go first: on ovn its delete would take the label the new one just set.
    return { changes, replaces, ...(replaces.length > 0 ? { deleteBeforeReplace: true } : {}) };
  },

  async create(inputs) {
    await assign(inputs, inputs.hosts);
    return { id: inputs.cidrs.join(","), outs: withoutProvider(inputs) };
  },

  async read(id, props) {
    return { id, props };
  },

  async update(_id, olds, news) {
    const kept = (news.hosts as string[]).filter((h) => olds.hosts.includes(h));
    // An assignment of an earlier version gets its owner record now on the hosts it had.
    if (olds.ownerId === undefined && news.ownerId !== undefined) await assign(news, kept, true);
    await assign(
      news,
      (news.hosts as string[]).filter((h) => !kept.includes(h)),
    );
    await unassign(
      olds,
      (olds.hosts as string[]).filter((h) => !news.hosts.includes(h)),
    );
    return { outs: withoutProvider(news) };
  },

  async delete(_id, props) {
    assertProvisionerCluster(props, cidrProvisioner(props), whatOf(props), "nothing was removed");
    await unassign(props, props.hosts ?? []);
  },
};
