import { errorMessage, failureOf, inputFailure, type Failure } from "../../core/failure";
import { holderName, holderOwners } from "./holder-name";
import type * as pulumi from "@pulumi/pulumi";
import { IpamError, isIpamError } from "../../allocator";
import { kubeKinds } from "../../provisioners/config/kube-provisioner-config";
import { labelProblems } from "../../provisioners/config/label-syntax";
import {
  withInstanceSettings,
  type ScopedProvisionerConfig,
} from "../../provisioners/config/provisioner-config";
import { withoutProvider, type Props, type ProviderImpl } from "../provider-props";
import { noUsableAnswer } from "../../provisioners/factory/no-usable-answer";
import { placementProblems } from "../../provisioners/factory/placement-problems";
import { placementRequest, type PlacementRequest } from "../../provisioners/placement-request";
import {
  callSignal,
  provisionerFailures,
  provisionerFor,
} from "../../provisioners/factory/provisioner-cache";
import { hasUnknown } from "../../core/unknowns";
import { newOwnerId } from "../../ledger/stack/owner-identity";
import {
  assertProvisionerCluster,
  pinProvisionerCluster,
  placementSettingsOfAddress,
} from "../provisioner-cluster";
import { shapeFailures } from "../input-shape";
import type { AdoptPresent, EgressIPProvisioner } from "../../provisioners/egress-ip-provisioner";
import { egressIpAssignmentInputs } from "../resource-inputs";
import { elasticIpFor } from "../../provisioners/config/aws-provisioner-config";
import { withTakenAdvice } from "./taken-address-advice";

const whatOf = (props: Props) => `EgressIpAssignment ${String(props.owner)} (egress IP ${String(props.ip)})`;

/**
 * What an address is written to by a provisioner config: the SDN kinds write the namespace's
 * NetNamespace (ocp-static also a HostSubnet, and with `cloud` an EC2 secondary IP); ovn writes the
 * namespace's EgressIP object and, on a cloud, OVN's CloudPrivateIPConfig makes the address an EC2
 * secondary IP of the node it picks (so it counts as writing that too); cilium writes the
 * namespace's CiliumEgressGatewayPolicy, and with `cloud` an EC2 secondary IP; antrea its Egress;
 * aws writes EC2.
 */
function writtenTo(config: Props | undefined): string[] {
  switch (config?.kind) {
    case "ocp-static":
      return ["NetNamespace", "HostSubnet", ...(config.cloud ? ["ec2"] : [])];
    case "ocp-dynamic":
      return ["NetNamespace"];
    case "ovn":
      return ["EgressIP", "ec2"];
    case "cilium":
      return ["CiliumEgressGatewayPolicy", ...(config.cloud ? ["ec2"] : [])];
    case "antrea":
      return ["Egress"];
    case "aws":
      return ["ec2"];
    default:
      return [];
  }
}

/** Whether two provisioner configs write an address to a common object (always for one kind). */
const sharesObjects = (a: Props | undefined, b: Props | undefined): boolean =>
  a?.kind === b?.kind || writtenTo(a).some((o) => writtenTo(b).includes(o));

/**
 * Whether what the provisioner settings give the address as its public side changed (aws: the
 * Elastic IP `elasticIps` gives it, compared for this address alone, so that an entry added for
 * one address leaves the others as they are). An update attaches or detaches it.
 */
const publicSideChanged = (olds: Props, news: Props): boolean =>
  olds.provisioner?.kind === "aws" &&
  news.provisioner?.kind === "aws" &&
  elasticIpFor(olds.provisioner.elasticIps, String(news.ip)) !==
    elasticIpFor(news.provisioner.elasticIps, String(news.ip));

/** The provisioner settings but the public side's (compared per address by {@link publicSideChanged}). */
const privateSideSettings = (provisioner: Props | undefined): string => {
  const { elasticIps: _elasticIps, ...rest } = provisioner ?? {};
  return JSON.stringify(rest);
};

/** Whether a provisioner kind writes per-namespace objects (and so needs the EgressIp's namespace). */
const usesNamespace = (config: Props | undefined): boolean =>
  kubeKinds.includes(config?.kind as (typeof kubeKinds)[number]);

/**
 * The provisioner config of one assignment: the user's settings plus the assignment's namespace
 * where the kind uses it (ocp-static, ocp-dynamic, ovn write the namespace's NetNamespace or
 * EgressIP object). The namespace reaches the provisioner as an instance setting rather than as an
 * argument, so the seed interface's methods keep their signatures; provisioners of one cluster
 * share their planning state whatever namespace they serve (see `plannerFor`). `adoptPresent`:
 * which addresses already present count as the assignment's (see `AdoptPresent`); by default,
 * everything with `adopt: true` (its create), else only what is recorded for it.
 */
export function assignmentConfig(
  props: Props,
  adoptPresent: AdoptPresent = props.adopt === true,
): ScopedProvisionerConfig {
  return withInstanceSettings(props.provisioner, {
    namespace: props.namespace || undefined,
    podSelector: (props.podSelector as Record<string, string> | undefined) || undefined,
    owner: typeof props.ownerId === "string" ? props.ownerId : undefined,
    ...(adoptPresent ? { adoptPresent } : {}),
  });
}

async function checkAssignment(olds: Props, news: Props): Promise<pulumi.dynamic.CheckResult> {
  const malformed = shapeFailures(news, egressIpAssignmentInputs);
  if (malformed.length > 0) return { inputs: news, failures: malformed };
  if (
    [news.ip, news.provisioner, news.pinnedHost, news.namespace, news.adopt, news.podSelector].some(
      hasUnknown,
    )
  )
    return { inputs: news };
  const failures: Failure[] = provisionerFailures(news.provisioner);
  if (usesNamespace(news.provisioner) && (typeof news.namespace !== "string" || news.namespace === "")) {
    failures.push(
      inputFailure(
        "namespace",
        `the ${news.provisioner.kind} provisioner gives the addresses to a namespace: set the EgressIp's namespace`,
      ),
    );
  }
  let request: PlacementRequest | undefined;
  try {
    // Its owner records: read when a provisioner asks (news.ownerId is made below, before it can).
    request = placementRequest(
      String(news.ip),
      holderName(String(news.owner), news.failureDomain),
      {
        namespace: (news.namespace as string | undefined) || undefined,
        podSelector: (news.podSelector as Record<string, string> | undefined) || undefined,
      },
      () =>
        holderOwners(
          String(news.stack),
          String(news.owner),
          news.failureDomain,
          typeof news.ownerId === "string" ? news.ownerId : undefined,
        ),
    );
  } catch (e) {
    failures.push(failureOf("ip", e));
  }
  const kind = news.provisioner?.kind;
  if (news.podSelector !== undefined && kind !== "ovn" && kind !== "cilium" && kind !== "antrea") {
    failures.push(
      inputFailure(
        "podSelector",
        `the ${String(kind)} provisioner gives addresses to a whole namespace: podSelector is for ovn, cilium ` +
          `and antrea, leave it out`,
      ),
    );
  }
  if (kind === "cilium" && news.podSelector && "io.kubernetes.pod.namespace" in news.podSelector) {
    failures.push(
      inputFailure(
        "podSelector",
        "io.kubernetes.pod.namespace is the label Cilium gives a pod for its namespace, which the EgressIp's " +
          "namespace sets: leave it out of podSelector",
      ),
    );
  }
  if (news.podSelector !== undefined && Object.keys(news.podSelector as object).length === 0) {
    failures.push(
      inputFailure("podSelector", "an empty podSelector selects every pod: leave it out for that"),
    );
  }
  // What the API server would refuse at up, or the platform store and never match.
  if (news.podSelector !== undefined) {
    for (const reason of labelProblems("podSelector", news.podSelector as Record<string, unknown>))
      failures.push(inputFailure("podSelector", reason));
  }
  if (request)
    for (const reason of placementProblems(kind, request)) failures.push(inputFailure("ip", reason));
  if (failures.length > 0 || !request) return { inputs: news, failures };
  const { ip } = request;
  if (news.provisioner?.kind !== "none") {
    // Who this assignment is in the owner records where it puts its address (the namespace's
    // NetNamespace or EgressIP object, the interface's tag on AWS): the stack's identity (never
    // its name alone) and the URN, made once and kept (`newOwnerId`: a name freed by a rename is another owner).
    try {
      news.ownerId =
        typeof olds.ownerId === "string" ? olds.ownerId : await newOwnerId(news.stack, news.owner);
    } catch (e) {
      return { inputs: news, failures: [failureOf("provisioner", e, "LEDGER_UNAVAILABLE")] };
    }
  }

  let provisioner: EgressIPProvisioner;
  try {
    provisioner = provisionerFor(assignmentConfig(news));
  } catch (e) {
    // A kubeconfig problem (unknown context, no kubeconfig) is the provisioner's.
    return { inputs: news, failures: [failureOf("provisioner.context", e, "INVALID_CONFIG")] };
  }
  // Before any call: the provisioner's context must still point at the cluster the address is on.
  const elsewhere = pinProvisionerCluster(olds, news, provisioner, whatOf({ ...news, ip }));
  if (elsewhere) return { inputs: news, failures: [elsewhere] };
  // What the platform cannot give the address, a hand-made object it cannot take over, what it may
  // not share (another EgressIp's pods, the other family of Antrea's Pods): the program's to change,
  // whatever room the hosts have; refused before a host is chosen, so the refusal does not hang on
  // which of two new assignments the engine checks first.
  try {
    await provisioner.validate?.(request, callSignal());
    await provisioner.adoptable?.(request, callSignal());
    await provisioner.conflicts?.(request, callSignal());
  } catch (e) {
    return { inputs: news, failures: [failureOf("provisioner", e, "PROVISIONER_FAILED")] };
  }
  const samePlace = olds.ip === ip && olds.failureDomain === news.failureDomain && Boolean(olds.host);
  let host: string | undefined = news.pinnedHost ?? (samePlace ? olds.host : undefined);
  try {
    // Adopted: where the cluster has the address now, while that host serves the domain.
    if (
      !host &&
      news.adopt === true &&
      provisioner.namespaceAddresses &&
      typeof news.namespace === "string"
    ) {
      const present = await provisioner.namespaceAddresses(news.namespace, callSignal());
      host = present.find((a) => a.ip === ip)?.host;
    }
    // A host that left the domain (terminated, untagged) is replaced now, so plain `up` moves the
    // address; a pinned host is the user's choice and stays.
    if (host && !news.pinnedHost && provisioner.hostServes) {
      if (!(await provisioner.hostServes(host, news.failureDomain, callSignal()))) host = undefined;
    }
    host ??= provisioner.findHostForIP
      ? await provisioner.findHostForIP(ip, news.failureDomain, callSignal())
      : await provisioner.findHostForNewIP(news.failureDomain, callSignal());
  } catch (e) {
    // A kubeconfig problem (unknown context, no kubeconfig) is the provisioner's, not the domain's.
    const property = isIpamError(e, "INVALID_CONFIG") ? "provisioner.context" : "failureDomain";
    return { inputs: news, failures: [failureOf(property, e, "PROVISIONER_FAILED")] };
  }
  // The public address where it is known before placement (an adopted Elastic IP), so preview
  // shows it; an adopted allocation that cannot be had is refused here, before anything changes.
  let publicIp: string | undefined;
  try {
    publicIp = await provisioner.plannedPublicAddress?.(ip, callSignal());
  } catch (e) {
    return { inputs: news, failures: [failureOf("provisioner.elasticIps", e, "PROVISIONER_FAILED")] };
  }
  const { publicIp: _unknown, ...checked } = news;
  return { inputs: { ...checked, ip, host, ...(publicIp ? { publicIp } : {}) } };
}

/** The outputs of a placed address but its `publicIp`, which is read from the provisioner, never taken from the plan. */
function outputsOf(inputs: Props) {
  const { publicIp: _planned, ...rest } = withoutProvider(inputs);
  return { ...rest, placement: { state: "assigned" } };
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
    if (placementSettingsOfAddress(olds.provisioner) !== placementSettingsOfAddress(news.provisioner))
      replaces.push("provisioner");
    if (olds.namespace !== news.namespace && usesNamespace(news.provisioner)) replaces.push("namespace");
    const selectorChanged =
      JSON.stringify(olds.podSelector ?? null) !== JSON.stringify(news.podSelector ?? null);
    if (selectorChanged) replaces.push("podSelector");
    // A cluster recorded or re-pinned (the provisioner's `cluster` setting) is an update that moves nothing.
    // An elasticIps change that gives this address what it had is no change of this assignment.
    const changes =
      replaces.length > 0 ||
      olds.host !== news.host ||
      olds.namespace !== news.namespace ||
      olds.cluster !== news.cluster ||
      publicSideChanged(olds, news) ||
      privateSideSettings(olds.provisioner) !== privateSideSettings(news.provisioner);
    // The same address on a new resource: where the old one and the new one write the same
    // objects, the old must let go of it first, or its delete would take the address off what the
    // new one just put it on. Where they share none (ocp-static or ocp-dynamic → ovn), the new one
    // goes first: the namespace is never without its address.
    const deleteBeforeReplace =
      replaces.length > 0 &&
      olds.ip === news.ip &&
      (olds.namespace !== news.namespace ||
        selectorChanged ||
        sharesObjects(olds.provisioner, news.provisioner));
    return { changes, replaces, ...(deleteBeforeReplace ? { deleteBeforeReplace } : {}) };
  },

  async create(inputs) {
    const provisioner = provisionerFor(assignmentConfig(inputs));
    await withTakenAdvice(inputs, provisioner.addSpecifiedIP(inputs.ip, inputs.host, callSignal()));
    return {
      id: inputs.ip,
      outs: { ...outputsOf(inputs), ...(await publicIpOf(provisioner, inputs.ip)) },
    };
  },

  async read(id, props) {
    if (!props.host) return { id, props };
    const provisioner = provisionerFor(assignmentConfig(props));
    assertProvisionerCluster(props, provisioner, whatOf(props), "nothing was recorded");
    try {
      await provisioner.checkIP(props.ip, props.host, callSignal());
      const { publicIp: _before, ...rest } = props;
      return { id, props: { ...rest, ...(await publicIpOf(provisioner, props.ip)) } };
    } catch (e) {
      // A check that could not be made (API unreachable, refused, throttled, failing) says nothing
      // about the address: fail the refresh rather than record it missing.
      const why = noUsableAnswer(e);
      if (why) {
        throw new IpamError(
          "PROVISIONER_FAILED",
          `could not check egress IP ${props.ip} on host ${props.host} (${why}): ${errorMessage(e)}; ` +
            `nothing was recorded: make the ${props.provisioner?.kind} provisioner's platform reachable ` +
            `with valid credentials (AWS: the default credential chain; Kubernetes: the kubeconfig context) ` +
            `and run pulumi refresh again`,
          { cause: e },
        );
      }
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
    // The address is this assignment's (its state says so) unless another owner's record names it
    // (an adopter's): where it is listed already (put back after drift, moved), an entry recorded
    // for this assignment or for nobody (an earlier version recorded nobody) is taken over, one
    // recorded for another owner is refused.
    const provisioner = provisionerFor(assignmentConfig(news, "unrecorded"));
    const from = olds.host || olds.placement?.from;
    // A new public side: the old settings' comes off first (an allocated Elastic IP is released),
    // unless the new settings use it again (adopting the allocation the address has); the new one
    // goes on with the placement, or by itself where the address stays.
    const publicChanged = publicSideChanged(olds, news);
    if (publicChanged) {
      const before = provisionerFor(assignmentConfig(olds, "unrecorded"));
      const keep = elasticIpFor(news.provisioner.elasticIps, String(news.ip));
      await before.detachPublicAddress?.(news.ip, callSignal(), keep);
    }
    if (from && from !== news.host) {
      await withTakenAdvice(news, provisioner.moveIP(news.ip, from, news.host, callSignal()));
    } else if (!olds.host) {
      await withTakenAdvice(news, provisioner.addSpecifiedIP(news.ip, news.host, callSignal()));
    } else if (publicChanged) {
      await provisioner.attachPublicAddress?.(news.ip, news.host, callSignal());
    }
    return { outs: { ...outputsOf(news), ...(await publicIpOf(provisioner, news.ip)) } };
  },

  async delete(_id, props) {
    const host = props.host || props.placement?.from;
    if (!host) return;
    const provisioner = provisionerFor(assignmentConfig(props));
    assertProvisionerCluster(props, provisioner, whatOf(props), "nothing was removed");
    await provisioner.removeIP(props.ip, host, callSignal());
  },
};

/**
 * `{ publicIp }`: the public address traffic from `ip` leaves from, where the provisioner gives it
 * one (aws with `elasticIps`); nothing otherwise, so the state of other assignments is as before.
 */
async function publicIpOf(provisioner: EgressIPProvisioner, ip: string): Promise<{ publicIp?: string }> {
  const publicIp = await provisioner.publicAddress?.(ip, callSignal());
  return publicIp ? { publicIp } : {};
}
