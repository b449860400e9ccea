import { describe, expect, it } from "vitest";
import {
  findDrift,
  inUseByOthers,
  platformReports,
  publicAddresses,
  type Finding,
  type OtherUse,
  type StatePlacement,
} from "../../provider/cli/drift";
import type { Placement } from "../../provider/provisioners/egress-ip-provisioner";

const stack = "org/proj/dev";
const refreshUp = [`pulumi refresh --stack ${stack}`, `pulumi up --stack ${stack}`];
const on = (ip: string, host: string, extra: Partial<Placement> = {}): Placement => ({
  ip,
  host,
  removeCommand: `rm ${ip} ${host}`,
  ...extra,
});
const state = (ip: string, host: string): StatePlacement => ({ ip, host, urn: `urn:${ip}` });
// The pool is 10.0.1.4-10.0.1.254; 10.0.1.9 is held by an IpAllocation without an assignment.
const inPool = (ip: string) => /^10\.0\.1\.\d+$/.test(ip) && Number(ip.split(".")[3]) >= 4;
const heldInState = (ip: string) => ip === "10.0.1.9";
// The records name "ours" or somebody else; a placement without one is nobody's.
const isOurs = (p: Placement) => (p.owners ?? []).includes("ours");
const mine: Partial<Placement> = { owners: ["ours"] };

describe("findDrift", () => {
  it.each<[string, StatePlacement[], Placement[], Partial<Finding>[]]>([
    ["nothing when the hosts carry what state says", [state("10.0.1.4", "i-a")], [on("10.0.1.4", "i-a")], []],
    [
      "a host named by its DNS name in state matches its alias",
      [state("10.0.1.4", "ip-10-0-1-200.ec2.internal")],
      [on("10.0.1.4", "i-a", { aliases: ["ip-10-0-1-200.ec2.internal"] })],
      [],
    ],
    [
      "unplaced: listed, but the platform reports it on no node (its reason, no command)",
      [state("10.0.1.4", "node-a")],
      [
        on("10.0.1.4", "(not placed yet)", {
          awaitingHost: true,
          platformPlaced: true,
          platform: { state: "unplaced", why: "status.items: none" },
        }),
      ],
      [{ kind: "unplaced", ip: "10.0.1.4", expectedHost: "node-a", reason: "status.items: none", fix: [] }],
    ],
    [
      "not confirmed by the platform (no status yet): no drift",
      [state("10.0.1.4", "node-a")],
      [
        on("10.0.1.4", "(not placed yet)", {
          awaitingHost: true,
          platformPlaced: true,
          platform: { state: "unreported", why: "no status.items" },
        }),
      ],
      [],
    ],
    [
      "missing: in state, on no host; fixed by refresh then up",
      [state("10.0.1.4", "i-a")],
      [],
      [{ kind: "missing", ip: "10.0.1.4", expectedHost: "i-a", fix: refreshUp }],
    ],
    [
      "misplaced: on another host, recorded for the stack there; take it off there first",
      [state("10.0.1.4", "i-a")],
      [on("10.0.1.4", "i-b", mine)],
      [
        {
          kind: "misplaced",
          ip: "10.0.1.4",
          expectedHost: "i-a",
          actualHost: "i-b",
          fix: ["rm 10.0.1.4 i-b", ...refreshUp],
        },
      ],
    ],
    [
      "misplaced: only its off-host command, when the provisioner has one (SDN: the NetNamespace stays)",
      [state("10.0.1.4", "node-a")],
      [on("10.0.1.4", "node-b", { offHostCommand: "off 10.0.1.4 node-b", ...mine })],
      [{ kind: "misplaced", fix: ["off 10.0.1.4 node-b", ...refreshUp] }],
    ],
    [
      "misplaced: a second copy on another host",
      [state("10.0.1.4", "i-a")],
      [on("10.0.1.4", "i-a", mine), on("10.0.1.4", "i-b", mine)],
      [{ kind: "misplaced", actualHost: "i-b", fix: ["rm 10.0.1.4 i-b", ...refreshUp] }],
    ],
    [
      "leaked: in the pool, held by nobody, recorded for the stack",
      [],
      [on("10.0.1.7", "i-a", { owners: ["ours"] })],
      [{ kind: "leaked", ip: "10.0.1.7", actualHost: "i-a", fix: ["rm 10.0.1.7 i-a"] }],
    ],
    [
      "not missing: the platform has it and has not placed it yet (OVN without status)",
      [state("10.0.1.4", "node-a")],
      [on("10.0.1.4", "(not placed yet)", { awaitingHost: true, platformPlaced: true })],
      [],
    ],
    [
      "misplaced by the platform: refresh and up record where it went, nothing is taken off",
      [state("10.0.1.4", "node-a")],
      [on("10.0.1.4", "node-b", { platformPlaced: true })],
      [{ kind: "misplaced", expectedHost: "node-a", actualHost: "node-b", fix: refreshUp }],
    ],
    [
      "leaked although the platform placed it: taken off with its command",
      [],
      [on("10.0.1.7", "node-b", { platformPlaced: true, owners: ["ours"] })],
      [{ kind: "leaked", ip: "10.0.1.7", fix: ["rm 10.0.1.7 node-b"] }],
    ],
    ["not leaked: held by an allocation of the stack", [], [on("10.0.1.9", "i-a")], []],
    [
      "not leaked: outside the pool (an AWS-reserved or foreign address)",
      [],
      [on("10.0.1.2", "i-a"), on("10.0.2.5", "i-a")],
      [],
    ],
    [
      "unassociated: on its host without the public address its settings give it; fixed by refresh then up",
      [state("10.0.1.4", "i-a")],
      [
        on("10.0.1.4", "i-a", {
          publicProblem: "its Elastic IP eipalloc-1 (198.51.100.1) is associated with nothing",
        }),
      ],
      [
        {
          kind: "unassociated",
          ip: "10.0.1.4",
          expectedHost: "i-a",
          urn: "urn:10.0.1.4",
          reason: "its Elastic IP eipalloc-1 (198.51.100.1) is associated with nothing",
          fix: refreshUp,
        },
      ],
    ],
    [
      "misplaced, not unassociated: the wrong host's public side is not the address's (up moves both)",
      [state("10.0.1.4", "i-a")],
      [
        on("10.0.1.4", "i-b", {
          publicProblem: "its Elastic IP eipalloc-1 (198.51.100.1) is associated with nothing",
        }),
      ],
      [{ kind: "misplaced", actualHost: "i-b" }],
    ],
    [
      "findings in address order",
      [state("10.0.1.20", "i-a"), state("10.0.1.100", "i-a")],
      [on("10.0.1.5", "i-b", { owners: ["ours"] })],
      [{ ip: "10.0.1.5" }, { ip: "10.0.1.20" }, { ip: "10.0.1.100" }],
    ],
  ])("%s", (_name, placed, seen, expected) => {
    const found = findDrift({ stack, placed, seen, inPool, heldInState, isOurs });
    expect(found).toHaveLength(expected.length);
    expected.forEach((e, i) => expect(found[i]).toMatchObject(e));
  });
});

describe("findDrift and inUseByOthers with owner records", () => {
  it.each<[string, StatePlacement[], Placement[], Partial<Finding>[], OtherUse[]]>([
    [
      "leaked: recorded for this stack, held by nobody in state",
      [],
      [on("10.0.1.7", "i-a", { owners: ["ours"] })],
      [{ kind: "leaked", ip: "10.0.1.7", fix: ["rm 10.0.1.7 i-a"] }],
      [],
    ],
    [
      "in use by others: nobody recorded (a VPC CNI pod IP), no finding, no command",
      [],
      [on("10.0.1.7", "i-a")],
      [],
      [{ ip: "10.0.1.7", host: "i-a" }],
    ],
    [
      "in use by others: recorded for another owner, named in the listing",
      [],
      [on("10.0.1.8", "i-a", { owners: ["theirs"] })],
      [],
      [{ ip: "10.0.1.8", host: "i-a", recordedFor: ["theirs"] }],
    ],
    [
      "neither: held by an allocation of the stack, whoever the record names",
      [],
      [on("10.0.1.9", "i-a"), on("10.0.1.9", "i-b", { owners: ["theirs"] })],
      [],
      [],
    ],
    ["neither: outside the pool", [], [on("10.0.1.2", "i-a"), on("10.0.2.5", "i-a")], [], []],
    [
      "a stated address recorded for the stack where it is: misplaced, taken off there",
      [state("10.0.1.4", "i-a")],
      [on("10.0.1.4", "i-b", mine)],
      [{ kind: "misplaced", fix: ["rm 10.0.1.4 i-b", ...refreshUp] }],
      [],
    ],
    [
      "a stated address nobody is recorded for where it is (a VPC CNI pod has it): misplaced, held by others, nothing taken off",
      [state("10.0.1.4", "i-a")],
      [on("10.0.1.4", "i-b")],
      [{ kind: "misplaced", actualHost: "i-b", heldBy: { others: true }, fix: refreshUp }],
      [],
    ],
    [
      "a stated address recorded for another owner where it is (taken over): misplaced, naming them, nothing taken off",
      [state("10.0.1.4", "i-a")],
      [on("10.0.1.4", "i-b", { owners: ["theirs"], offHostCommand: "off 10.0.1.4 i-b" })],
      [{ kind: "misplaced", heldBy: { others: true, recordedFor: ["theirs"] }, fix: refreshUp }],
      [],
    ],
    [
      "a copy held by others beside the stack's own: only the copy is misplaced, with no removal",
      [state("10.0.1.4", "i-a")],
      [on("10.0.1.4", "i-a", mine), on("10.0.1.4", "i-b", { owners: ["theirs"] })],
      [
        {
          kind: "misplaced",
          actualHost: "i-b",
          heldBy: { others: true, recordedFor: ["theirs"] },
          fix: refreshUp,
        },
      ],
      [],
    ],
    [
      "misplaced where an interrupted move of its own assignment left it (its per-host record names it): refresh and up finish the move, nothing taken off",
      [state("10.0.1.4", "i-a")],
      [on("10.0.1.4", "i-b", { owners: ["ours", "urn:10.0.1.4"] })],
      [{ kind: "misplaced", actualHost: "i-b", fix: refreshUp }],
      [],
    ],
    [
      "misplaced, recorded for another assignment of the stack: taken off there first",
      [state("10.0.1.4", "i-a")],
      [on("10.0.1.4", "i-b", { owners: ["ours", "urn:10.0.1.5"] })],
      [{ kind: "misplaced", actualHost: "i-b", fix: ["rm 10.0.1.4 i-b", ...refreshUp] }],
      [],
    ],
    [
      "misplaced where up re-pins in place (cilium's shared policy): refresh and up, nothing deleted",
      [state("10.0.1.4", "node-a")],
      [on("10.0.1.4", "node-b", { repinnedInPlace: true, owners: ["ours"] })],
      [{ kind: "misplaced", expectedHost: "node-a", actualHost: "node-b", fix: refreshUp }],
      [],
    ],
    [
      "in use by others in address order",
      [],
      [on("10.0.1.100", "i-a"), on("10.0.1.20", "i-b"), on("10.0.1.5", "i-c")],
      [],
      [
        { ip: "10.0.1.5", host: "i-c" },
        { ip: "10.0.1.20", host: "i-b" },
        { ip: "10.0.1.100", host: "i-a" },
      ],
    ],
  ])("%s", (_name, placed, seen, expected, others) => {
    // A per-host record names the assignment itself when its owners list the assignment's URN.
    const namesAssignment = (p: Placement, urn: string) => (p.owners ?? []).includes(urn);
    const input = { stack, placed, seen, inPool, heldInState, isOurs, namesAssignment };
    const found = findDrift(input);
    expect(found).toHaveLength(expected.length);
    expected.forEach((e, i) => expect(found[i]).toMatchObject(e));
    expect(inUseByOthers(input)).toEqual(others);
  });
});

describe("publicAddresses", () => {
  it("lists the public address of each stated address where state says it is, in address order", () => {
    const placed = [state("10.0.1.20", "i-a"), state("10.0.1.4", "i-a"), state("10.0.1.5", "i-a")];
    const seen = [
      on("10.0.1.20", "i-a", { publicIp: "198.51.100.2" }),
      on("10.0.1.4", "i-a", { publicIp: "198.51.100.1", publicId: "eipalloc-1" }),
      // On another host than state says: misplaced, and not the address's public side.
      on("10.0.1.5", "i-b", { publicIp: "198.51.100.3" }),
      // Nobody's in state: not the stack's.
      on("10.0.1.30", "i-a", { publicIp: "198.51.100.4" }),
    ];
    expect(publicAddresses({ placed, seen })).toEqual([
      { ip: "10.0.1.4", host: "i-a", publicIp: "198.51.100.1", publicId: "eipalloc-1", urn: "urn:10.0.1.4" },
      { ip: "10.0.1.20", host: "i-a", publicIp: "198.51.100.2", urn: "urn:10.0.1.20" },
    ]);
  });
});

describe("platformReports", () => {
  it("lists what the platform says of each stated address where state says it is, in address order", () => {
    const placed = [state("10.0.1.20", "node-a"), state("10.0.1.4", "node-a"), state("10.0.1.5", "node-a")];
    const seen = [
      on("10.0.1.20", "(not placed yet)", {
        awaitingHost: true,
        platform: { state: "unreported", why: "none yet" },
      }),
      on("10.0.1.4", "node-a", { platform: { state: "placed", node: "node-a" } }),
      // On another host: misplaced, reported by findDrift; no report of the platform here.
      on("10.0.1.5", "node-b", { platform: { state: "placed", node: "node-b" } }),
      // No report of the kind (ocp-static): nothing listed.
      on("10.0.1.30", "node-a"),
    ];
    expect(platformReports({ placed, seen })).toEqual([
      { ip: "10.0.1.4", host: "node-a", urn: "urn:10.0.1.4", state: "placed", node: "node-a" },
      { ip: "10.0.1.20", host: "node-a", urn: "urn:10.0.1.20", state: "unreported", why: "none yet" },
    ]);
  });
});
