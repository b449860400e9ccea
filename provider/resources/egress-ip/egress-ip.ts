import { familyOfText } from "../../allocator/address";
import { codedMessage, IpamError } from "../../core/ipam-error";
import * as pulumi from "@pulumi/pulumi";
import type { ProvisionerArgs } from "../secret-kubeconfig";
import { IpAllocation, type IpAllocationArgs } from "../ip-allocation/ip-allocation";
import type { IpPool } from "../ip-pool/ip-pool";
import { EgressIpAssignment, type EgressIpAssignmentArgs } from "./egress-ip-assignment";

/** Inputs of {@link EgressIp}. */
export interface EgressIpArgs {
  /**
   * The pool the addresses come from, or one pool per failure domain (`{ "us-east-1a": poolA, … }`):
   * on AWS a subnet lives in one availability zone, so each zone needs a pool of its own subnet.
   */
  pool: IpPool | Record<string, IpPool>;
  /**
   * Where the addresses go: `{ kind: "none" }`, `{ kind: "aws", region }`, `{ kind: "ocp-static" }`,
   * `{ kind: "ocp-dynamic" }`, `{ kind: "ovn" }`, … No credentials, but a Kubernetes kind's `kubeconfig`
   * given as a value (an output of the cluster the program makes), which is kept a secret in state.
   */
  provisioner: pulumi.Input<ProvisionerArgs>;
  /**
   * The namespace the egress IPs serve: required by `ocp-static` and `ocp-dynamic` (its
   * NetNamespace gets the addresses), `ovn` (its EgressIP object selects it), `antrea` (its Egress
   * objects apply to it) and `cilium` (its policy selects it); informational for `none` and `aws`.
   * Changing it replaces the placements.
   */
  namespace?: pulumi.Input<string>;
  /**
   * One address per failure domain (AWS: availability zone), as the egress operators do. A plain
   * value, as `families` and `adopt` are (they name and count the children): an output is refused.
   */
  failureDomains?: string[];
  /** Pin the addresses to this host instead of letting the provisioner choose per domain. */
  host?: pulumi.Input<string>;
  /**
   * Specific addresses, one per failure domain, in the order of `failureDomains`; with `families:
   * "dual"`, one per failure domain and family: each domain's IPv4 address, then its IPv6 one.
   */
  ips?: pulumi.Input<string>[];
  /**
   * Take over the addresses the namespace already has, where they are: without `ips`, those the
   * cluster gives it (Kubernetes kinds: its NetNamespace's egressIPs, an EgressIP object selecting
   * it alone, the egressip-ipam-operator's annotation, a CiliumEgressGatewayPolicy or Antrea Egress
   * serving it alone), one per failure domain by the Node carrying
   * it; with `ips`, those. Preview shows exactly those addresses and hosts; `up` records this stack
   * as their owner and moves nothing. With `families`, one per domain and family (`"dual"`: the
   * namespace's IPv4 and IPv6 addresses; an address of a family not placed is refused). Refused at
   * preview, naming both, for an address outside the pool or held by another resource. Read at the
   * first plan only: later runs keep what state has.
   */
  adopt?: boolean;
  /**
   * The families placed per failure domain: `"ipv4"`, `"ipv6"`, or `"dual"` (one address of each, from
   * a dual-stack pool). Without it, the pool's one family; a dual-stack pool is then refused at
   * preview. `ocp-static` and `ocp-dynamic` take IPv4 only (OpenShift SDN); `cilium` writes a
   * policy per family, each with its family's `destinations`; `antrea` takes one family per
   * namespace's Pods (`"dual"` is refused: Antrea applies one Egress to a Pod).
   */
  families?: "ipv4" | "ipv6" | "dual";
  /**
   * Only the namespace's pods with these labels (`ovn`: an EgressIP object of their own, named
   * `egress-ipam-<namespace>-<hash>`; `cilium`: a policy of their own per family,
   * `egress-ipam-<namespace>.<hash>`; `antrea`: their Egresses' `appliedTo.podSelector`). An EgressIp
   * whose pods may overlap another's in the namespace (another stack's too, or another EgressIp of
   * the same program) is refused at preview, naming it; so is a key or value that is not Kubernetes
   * label syntax (`INVALID_INPUT`). Changing it replaces the placements.
   */
  podSelector?: pulumi.Input<Record<string, pulumi.Input<string>>>;
}

const isPool = (p: IpPool | Record<string, IpPool>): p is IpPool =>
  typeof (p as IpPool).enqueueHolder === "function";

/**
 * A refusal of the EgressIp's arguments, thrown in the program (no provider boundary codes it on the
 * way out), so its message carries its code itself: `[INVALID_INPUT] EgressIp "web": …`.
 */
const refusal = (message: string) => new IpamError("INVALID_INPUT", codedMessage("INVALID_INPUT", message));

/** An allocation as an EgressIp reads it. */
type AllocationParts = { ip: pulumi.Output<string>; ips: pulumi.Output<string[]> };
/** A placement as an EgressIp reads it (a resource: a zone's other families wait for it). */
type AssignmentParts = pulumi.Resource & {
  host: pulumi.Output<string>;
  publicIp: pulumi.Output<string | undefined>;
};

/** What an EgressIp's children are made of: the package's classes here, the plugin's resources in a multi-language program. */
export interface EgressIpChildren<P, A extends AllocationParts, S extends AssignmentParts> {
  /** Whether `pool` is one pool (else a map by failure domain). */
  isPool(pool: P | Record<string, P>): pool is P;
  /** An allocation of `pool` (an {@link IpAllocation}). */
  allocation(
    name: string,
    args: Omit<IpAllocationArgs, "pool"> & { pool: P },
    opts: pulumi.CustomResourceOptions,
  ): A;
  /** A placement (an {@link EgressIpAssignment}). */
  assignment(name: string, args: EgressIpAssignmentArgs, opts: pulumi.CustomResourceOptions): S;
}

/** What {@link egressIpChildren} made, and the component's outputs from them. */
export interface EgressIpParts<A, S> {
  allocations: A[];
  assignments: S[];
  ips: pulumi.Output<string[]>;
  hosts: pulumi.Output<string[]>;
  publicIps: pulumi.Output<(string | undefined)[]>;
  addresses: pulumi.Output<Record<string, FamilyAddresses>>;
}

/**
 * The children of the EgressIp `parent`: one allocation and one placement per failure domain and
 * family, in that order, and the component's outputs. The one definition of what an EgressIp is,
 * whether a TypeScript program makes it or the plugin constructs it for another language.
 * @throws IpamError INVALID_INPUT (coded in its message) for arguments no child can be made of.
 */
export function egressIpChildren<P, A extends AllocationParts, S extends AssignmentParts>(
  parent: pulumi.Resource,
  name: string,
  args: Omit<EgressIpArgs, "pool"> & { pool: P | Record<string, P> },
  kinds: EgressIpChildren<P, A, S>,
): EgressIpParts<A, S> {
  const domains = args.failureDomains ?? [""];
  if (new Set(domains).size !== domains.length) {
    throw refusal(`EgressIp "${name}": failureDomains lists a domain twice: ${domains.join(", ")}`);
  }
  const families = familiesOf(name, args);
  if (args.ips && args.ips.length !== domains.length * families.length) {
    throw refusal(
      families.length > 1
        ? `EgressIp "${name}": with families "dual", give two addresses in ips per failure domain, its IPv4 ` +
            `then its IPv6 one (${domains.length * families.length})`
        : `EgressIp "${name}": give one address in ips per failure domain (${domains.length})`,
    );
  }
  if (domains.length === 1 && domains[0] === "" && args.host === undefined) {
    throw refusal(`EgressIp "${name}": give failureDomains, or a host to pin the address to`);
  }
  if (args.adopt && !args.ips && args.namespace === undefined) {
    throw refusal(
      `EgressIp "${name}": adopt takes over the addresses a namespace has: set namespace, or give ips`,
    );
  }
  // Children are named by family, not by position, so a change of `families` keeps the addresses
  // of the families it keeps: `<name>-<domain>` for IPv4 (or the pool's one family), `-ipv6` added
  // for an IPv6 address the program asks for by family.
  const base = (domain: string) => (domain === "" ? name : `${name}-${domain}`);
  const child = (domain: string, family: "ipv4" | "ipv6" | undefined) =>
    `${base(domain)}${family === "ipv6" ? "-ipv6" : ""}`;
  // The name the same address had under the other naming: `families: "ipv6"` and an IPv6-only
  // pool without `families` place the same address, and stacks of 0.1 named a `families: "ipv6"`
  // address `<name>-<domain>`. An alias is only given where no sibling has that name.
  const formerNames = (domain: string, family: "ipv4" | "ipv6" | undefined): string[] =>
    family === "ipv6" && families.length === 1
      ? [base(domain)]
      : family === undefined
        ? [`${base(domain)}-ipv6`]
        : [];
  const childOpts = (domain: string, family: "ipv4" | "ipv6" | undefined): pulumi.CustomResourceOptions => {
    const former = formerNames(domain, family);
    return former.length === 0 ? { parent } : { parent, aliases: former.map((n) => ({ name: n })) };
  };
  const onePool = kinds.isPool(args.pool);
  const poolFor = (domain: string): P => {
    if (kinds.isPool(args.pool)) return args.pool;
    const pool = args.pool[domain];
    if (!pool) throw refusal(`EgressIp "${name}": no pool given for failure domain "${domain}"`);
    return pool;
  };
  const slots = domains.flatMap((domain) => families.map((family, k) => ({ domain, family, k })));
  const allocations = slots.map(({ domain, family }, n) =>
    kinds.allocation(
      child(domain, family),
      // The provisioner's view of addresses in use outside Pulumi keeps them out of the plan.
      {
        pool: poolFor(domain),
        ip: args.ips?.[n],
        observeWith: args.provisioner,
        ...(family ? { family } : {}),
        ...(args.adopt && args.ips ? { adopt: true } : {}),
        ...(args.adopt && !args.ips
          ? {
              adoptFrom: {
                namespace: args.namespace ?? "",
                failureDomain: domain,
                domains,
                onlyPool: onePool,
                ...(families[0] === undefined ? {} : { families: families as ("ipv4" | "ipv6")[] }),
              },
            }
          : {}),
      },
      childOpts(domain, family),
    ),
  );
  // A domain's later families are checked after its first is planned (dependsOn): a Node takes one
  // address of a platform object (ovn's EgressIP holds both families), so which family gets which
  // Node must not follow the order the engine happens to check them in (preview = up).
  const assignments: S[] = [];
  slots.forEach(({ domain, family, k }, n) => {
    const allocation = allocations[n]!;
    // Without families, the pool's one family: the allocation's check refuses a dual-stack pool.
    const assignment = kinds.assignment(
      child(domain, family),
      {
        ip: allocation.ip,
        provisioner: args.provisioner,
        failureDomain: domain,
        host: args.host,
        namespace: args.namespace,
        ...(args.podSelector ? { podSelector: args.podSelector } : {}),
        ...(args.adopt ? { adopt: true } : {}),
      },
      k === 0
        ? childOpts(domain, family)
        : { ...childOpts(domain, family), dependsOn: [assignments[n - k]!] },
    );
    assignments.push(assignment);
  });
  const first = slots.flatMap((slot, n) => (slot.k === 0 ? [n] : []));
  return {
    allocations,
    assignments,
    ips: pulumi.all(first.map((n) => allocations[n]!.ip)),
    hosts: pulumi.all(first.map((n) => assignments[n]!.host)),
    publicIps: pulumi.all(first.map((n) => assignments[n]!.publicIp)),
    addresses: pulumi
      .all(assignments.map((a, n) => pulumi.all([allocations[n]!.ip, a.host])))
      .apply((placed) => {
        const out: Record<string, FamilyAddresses> = {};
        placed.forEach(([ip, host], n) => {
          if (typeof ip !== "string") return; // not known yet: a preview of a config fed by outputs
          (out[slots[n]!.domain] ??= {})[familyOfText(ip)] = { ip, host };
        });
        return out;
      }),
  };
}

/**
 * Egress IPs for a namespace: one address per failure domain from a pool, each placed on a host by
 * the provisioner. Addresses are planned in program order and shown at preview; placement runs in
 * parallel. Built from one {@link IpAllocation} and one {@link EgressIpAssignment} per domain.
 */
export class EgressIp extends pulumi.ComponentResource {
  /** One address per failure domain, in the order of `failureDomains` (with `families: "dual"`, the IPv4 one). */
  public readonly ips: pulumi.Output<string[]>;
  /** The host carrying each address of `ips`, in the same order. */
  public readonly hosts: pulumi.Output<string[]>;
  /** The public address of each address of `ips` (aws with `elasticIps`), undefined where there is none. */
  public readonly publicIps: pulumi.Output<(string | undefined)[]>;
  /**
   * Every address and its host, by failure domain (`""` for an EgressIp pinned to a `host`) and
   * family: `{ "us-east-1a": { ipv4: { ip, host }, ipv6: { ip, host } } }`.
   */
  public readonly addresses: pulumi.Output<Record<string, FamilyAddresses>>;
  /** The allocations, per failure domain and then per family (IPv4 first). */
  public readonly allocations: IpAllocation[];
  /** The placements, in the order of `allocations`. */
  public readonly assignments: EgressIpAssignment[];

  constructor(name: string, args: EgressIpArgs, opts?: pulumi.ComponentResourceOptions) {
    super("egress-ipam:index:EgressIp", name, {}, opts);
    const parts = egressIpChildren(this, name, args, {
      isPool,
      allocation: (n, a, o) => new IpAllocation(n, a, o),
      assignment: (n, a, o) => new EgressIpAssignment(n, a, o),
    });
    this.allocations = parts.allocations;
    this.assignments = parts.assignments;
    this.ips = parts.ips;
    this.hosts = parts.hosts;
    this.publicIps = parts.publicIps;
    this.addresses = parts.addresses;
    this.registerOutputs({
      ips: this.ips,
      hosts: this.hosts,
      publicIps: this.publicIps,
      addresses: this.addresses,
    });
  }
}

/** An address and the host carrying it. */
export interface PlacedAddress {
  /** The address. */
  ip: string;
  /** The host carrying it. */
  host: string;
}

/** An EgressIp's address of each family in one failure domain, and the host carrying it. */
export interface FamilyAddresses {
  /** The IPv4 address, where the EgressIp places one. */
  ipv4?: PlacedAddress;
  /** The IPv6 address, where the EgressIp places one. */
  ipv6?: PlacedAddress;
}

/** The families an EgressIp places per domain (`[undefined]`: the pool's one family). */
function familiesOf(name: string, args: Pick<EgressIpArgs, "families">): ("ipv4" | "ipv6" | undefined)[] {
  const f = args.families;
  if (f === undefined) return [undefined];
  if (f !== "ipv4" && f !== "ipv6" && f !== "dual")
    throw refusal(`EgressIp "${name}": families ${JSON.stringify(f)} is not "ipv4", "ipv6" or "dual"`);
  return f === "dual" ? ["ipv4", "ipv6"] : [f];
}
