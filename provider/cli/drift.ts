import { shellCommand } from "../core/text";
import { parseAddress } from "../allocator/address";
import type { Placement, PlatformStatus } from "../provisioners/egress-ip-provisioner";

/** An address placed by an EgressIpAssignment, as state records it. */
export interface StatePlacement {
  ip: string;
  /** The host state says carries it (the last known one when refresh marked it missing). */
  host: string;
  /** URN of the EgressIpAssignment. */
  urn: string;
}

/** One difference between state and the hosts, with the commands that fix it, in order. */
export interface Finding {
  /**
   * `leaked`, `missing`, `misplaced` (see {@link findDrift}), or `unassociated`: on its host, but
   * not leaving from the public address its settings give it (aws: its Elastic IP missing or
   * associated elsewhere); `unplaced`: listed where state says, but the platform reports it put it on
   * no node (see {@link Placement.platform}; `reason` says what it said).
   */
  kind: "leaked" | "missing" | "misplaced" | "unassociated" | "unplaced";
  ip: string;
  /** Where state says it is (missing, misplaced). */
  expectedHost?: string;
  /** Where it really is (leaked, misplaced). */
  actualHost?: string;
  /** The EgressIpAssignment that holds it in state (missing, misplaced, unassociated). */
  urn?: string;
  /** What is wrong with its public side (unassociated), or why the platform did not place it (unplaced), as the provisioner says it. */
  reason?: string;
  /**
   * Misplaced on a host where the owner record does not name this stack (a VPC CNI pod has it,
   * another stack took it over): nothing of it is the stack's to take off there, and `fix` has no
   * removal. `recordedFor` is whom the record names, when it names somebody.
   */
  heldBy?: { others: true; recordedFor?: string[] };
  /**
   * `cloud`: found on the cloud side of a Kubernetes kind (`cloud: { kind: "aws" }`: the secondary
   * IPs of the Nodes' EC2 instances), not in the objects the kind writes.
   */
  side?: "cloud";
  fix: string[];
}

/** The public address one of the stack's addresses leaves from, where state says it is. */
export interface PublicAddress {
  ip: string;
  host: string;
  /** The public address (aws: its Elastic IP). */
  publicIp: string;
  /** What the platform calls it (aws: the allocation ID), when it says. */
  publicId?: string;
  /** URN of the EgressIpAssignment. */
  urn: string;
}

/** What {@link findDrift} compares. */
export interface DriftInput {
  /** The fully qualified stack, for the fix commands. */
  stack: string;
  /** The stack's EgressIpAssignments that use this provisioner. */
  placed: StatePlacement[];
  /** What the provisioner sees on its hosts inside the pools' subnets. */
  seen: Placement[];
  /** Whether an address is one a pool of the stack may hand out (in a range, not excluded or a gateway). */
  inPool: (ip: string) => boolean;
  /** Whether any resource of the stack holds the address (an allocation record or an assignment). */
  heldInState: (ip: string) => boolean;
  /** Whether the owner record next to a placement names this stack: only then is it ever leaked. */
  isOurs: (p: Placement) => boolean;
  /**
   * Whether the record next to a placement, kept per host, names the assignment `urn` itself (aws:
   * the interface's tag): a move of its own, interrupted, left it there, and `pulumi refresh` and
   * `pulumi up` finish that move; absent: never.
   */
  namesAssignment?: (p: Placement, urn: string) => boolean;
}

/** An address inside a pool, on a host, that neither state nor the owner records say is this stack's. */
export interface OtherUse {
  ip: string;
  host: string;
  /** Whom its owner record names (as the provisioner writes it), when somebody is recorded. */
  recordedFor?: string[];
}

/** Whether a placement is where state says the address is (by the host's name or an alias, or not placed yet). */
const isWhereStateSays = (s: StatePlacement) => (p: Placement) =>
  p.awaitingHost === true || p.host === s.host || (p.aliases ?? []).includes(s.host);

/**
 * Compares state with what a provisioner sees: **leaked** (on a host, inside a pool, held by nobody
 * in state, and this stack's by its owner record), **missing** (in state, on no host),
 * **misplaced** (on another host than state says; copies on extra hosts count too; one the platform
 * has not placed yet is where state says; one whose owner record there is not this stack's is
 * {@link Finding.heldBy} others, with no removal; one an interrupted move of its own assignment
 * left there is fixed by refresh and up alone), **unassociated** (where state says, with a
 * {@link Placement.publicProblem}: `pulumi refresh` records it, `pulumi up` associates it again),
 * **unplaced** (where state says, but the platform reports it on no node: no command fixes it).
 * Findings come in address order, each with its fix. What is on a host, in a pool and nobody's in
 * state but not this stack's is {@link inUseByOthers}.
 */
export function findDrift(input: DriftInput): Finding[] {
  const refreshUp = [
    shellCommand("pulumi", "refresh", "--stack", input.stack),
    shellCommand("pulumi", "up", "--stack", input.stack),
  ];
  const byIp = new Map<string, Placement[]>();
  for (const p of input.seen) byIp.set(p.ip, [...(byIp.get(p.ip) ?? []), p]);
  const findings: Finding[] = [];
  const stated = new Set<string>();
  for (const s of input.placed) {
    stated.add(s.ip);
    const where = byIp.get(s.ip) ?? [];
    if (where.length === 0) {
      findings.push({ kind: "missing", ip: s.ip, expectedHost: s.host, urn: s.urn, fix: refreshUp });
      continue;
    }
    const isExpected = isWhereStateSays(s);
    // The platform's own word that it put the address on no node: nothing pulumi writes fixes that.
    const unplaced = where.find((p) => isExpected(p) && p.platform?.state === "unplaced");
    if (unplaced) {
      findings.push({
        kind: "unplaced",
        ip: s.ip,
        expectedHost: s.host,
        urn: s.urn,
        reason: unplaced.platform!.why ?? "",
        fix: [],
      });
    }
    const expected = where.find((p) => isExpected(p) && p.publicProblem !== undefined);
    if (expected) {
      findings.push({
        kind: "unassociated",
        ip: s.ip,
        expectedHost: s.host,
        urn: s.urn,
        reason: expected.publicProblem,
        fix: expected.publicFix ? [expected.publicFix, ...refreshUp] : refreshUp,
      });
    }
    for (const p of where.filter((p) => !isExpected(p))) {
      // Off the wrong host first: placing it on the right one would find it in use there. Where
      // the platform moves addresses itself, state only has to learn where it went. Where the
      // record there is not the stack's, whoever holds it now decides: nothing is taken off.
      const ours = input.isOurs(p);
      const leftByOwnMove = input.namesAssignment?.(p, s.urn) === true;
      const fix =
        !ours || leftByOwnMove || p.platformPlaced || p.repinnedInPlace
          ? refreshUp
          : [p.offHostCommand ?? removal(p), ...refreshUp];
      findings.push({
        kind: "misplaced",
        ip: s.ip,
        expectedHost: s.host,
        actualHost: p.host,
        urn: s.urn,
        ...(ours
          ? {}
          : { heldBy: { others: true as const, ...(p.owners ? { recordedFor: p.owners } : {}) } }),
        fix,
      });
    }
  }
  for (const p of unheld(input)) {
    if (input.isOurs(p)) findings.push({ kind: "leaked", ip: p.ip, actualHost: p.host, fix: [removal(p)] });
  }
  return findings.sort((a, b) => compare(a.ip, b.ip) || a.kind.localeCompare(b.kind));
}

/**
 * The public addresses of the stack's addresses where state says they are, as the provisioner sees
 * them (aws: their Elastic IPs), in address order.
 */
export function publicAddresses(input: Pick<DriftInput, "placed" | "seen">): PublicAddress[] {
  return input.placed
    .flatMap((s) => {
      const p = input.seen.find((p) => p.ip === s.ip && p.publicIp !== undefined && isWhereStateSays(s)(p));
      if (!p) return [];
      return [
        {
          ip: s.ip,
          host: s.host,
          publicIp: p.publicIp!,
          ...(p.publicId ? { publicId: p.publicId } : {}),
          urn: s.urn,
        },
      ];
    })
    .sort((a, b) => compare(a.ip, b.ip));
}

/** What the platform itself reports about one of the stack's addresses; see {@link platformReports}. */
export interface PlatformReport extends PlatformStatus {
  ip: string;
  /** Where state says it is. */
  host: string;
  /** URN of the EgressIpAssignment. */
  urn: string;
}

/**
 * What the platform reports about each of the stack's addresses listed where state says (placed on
 * a node, not placed and why, or nothing reported yet), for kinds whose platform reports (see
 * {@link Placement.platform}), in address order.
 */
export function platformReports(input: Pick<DriftInput, "placed" | "seen">): PlatformReport[] {
  return input.placed
    .flatMap((s) => {
      const p = input.seen.find((p) => p.ip === s.ip && p.platform !== undefined && isWhereStateSays(s)(p));
      return p ? [{ ip: s.ip, host: s.host, urn: s.urn, ...p.platform! }] : [];
    })
    .sort((a, b) => compare(a.ip, b.ip));
}

/**
 * What is on a host inside a pool, held by nobody in state, and not this stack's by its owner
 * record (a VPC CNI pod IP, another tool's or another stack's object): listed, in address order,
 * never with a command and never counted as drift.
 */
export function inUseByOthers(input: DriftInput): OtherUse[] {
  return unheld(input)
    .filter((p) => !input.isOurs(p))
    .map((p) => ({ ip: p.ip, host: p.host, ...(p.owners ? { recordedFor: p.owners } : {}) }))
    .sort((a, b) => compare(a.ip, b.ip) || a.host.localeCompare(b.host));
}

/** The placements inside a pool that no resource of the stack holds. */
function unheld(input: DriftInput): Placement[] {
  const stated = new Set(input.placed.map((s) => s.ip));
  return input.seen.filter((p) => !stated.has(p.ip) && !input.heldInState(p.ip) && input.inPool(p.ip));
}

function removal(p: Placement): string {
  return p.removeCommand ?? `remove ${p.ip} from host ${p.host} with your platform's tools`;
}

function compare(a: string, b: string): number {
  const x = parseAddress(a);
  const y = parseAddress(b);
  if (x.family !== y.family) return x.family - y.family;
  return x.value < y.value ? -1 : x.value > y.value ? 1 : 0;
}
