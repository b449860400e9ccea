import { describe, expect, it } from "vitest";
import { stackOwnership } from "../../provider/cli/stack-ownership";
import type { StackSnapshot } from "../../provider/cli/stack-snapshot";
import { ownerTagValue } from "../../provider/provisioners/aws/aws-provisioner";
import type { Placement } from "../../provider/provisioners/egress-ip-provisioner";

const id = "stack-aaaaaaaaaaaaaaaaaaaaaaaa";
const other = "stack-bbbbbbbbbbbbbbbbbbbbbbbb";
const base = "urn:pulumi:dev::shop::egress-ipam:index:EgressIp";
const assignment = (team: string) =>
  `${base}$pulumi-nodejs:dynamic/egress-ipam:EgressIpAssignment::team-${team}-us-east-1a`;
const snapshot: StackSnapshot = {
  stack: "org/shop/dev",
  resources: [
    { urn: `${base}::team-a`, type: "egress-ipam:index:EgressIp" },
    { urn: `${base}::team-b`, type: "egress-ipam:index:EgressIp" },
    {
      urn: assignment("a"),
      type: "pulumi-nodejs:dynamic/egress-ipam:EgressIpAssignment",
      inputs: { failureDomain: "us-east-1a" },
      outputs: { ownerId: `${id} ${assignment("a")}` },
    },
    {
      // A new team-c given the name a renamed EgressIp had: its owner text has a suffix.
      urn: assignment("c"),
      type: "pulumi-nodejs:dynamic/egress-ipam:EgressIpAssignment",
      inputs: { failureDomain: "us-east-1a" },
      outputs: { ownerId: `${id} ${assignment("c")} #2` },
    },
  ],
  pendingCreates: [],
  deployments: [],
} as unknown as StackSnapshot;
const at = (owners?: string[]): Placement => ({ ip: "10.0.1.7", host: "i-a", ...(owners ? { owners } : {}) });

describe("stackOwnership", () => {
  const ours = stackOwnership(snapshot);
  it("reads the stack's identity from ownerId", () => expect([...ours.identities]).toEqual([id]));
  it.each<[string, Placement, "named" | "hashed", boolean]>([
    ["named: the stack's identity with any URN", at([`${id} urn:pulumi:dev::shop::x::gone`]), "named", true],
    ["named: another stack's", at([`${other} ${assignment("a")}`]), "named", false],
    ["named: nobody recorded", at(), "named", false],
    ["named: an unreadable record", at(["(there before)"]), "named", false],
    ["hashed: an assignment in state", at([ownerTagValue(`${id} ${assignment("a")}`)]), "hashed", true],
    [
      "hashed: an assignment dropped from state whose EgressIp is still there",
      at([ownerTagValue(`${id} ${assignment("b")}`)]),
      "hashed",
      true,
    ],
    [
      "hashed: the same URN for another stack",
      at([ownerTagValue(`${other} ${assignment("a")}`)]),
      "hashed",
      false,
    ],
    [
      "hashed: an owner text with a suffix in state",
      at([ownerTagValue(`${id} ${assignment("c")} #2`)]),
      "hashed",
      true,
    ],
    [
      "hashed: a suffix state does not keep",
      at([ownerTagValue(`${id} ${assignment("c")} #3`)]),
      "hashed",
      false,
    ],
    [
      "hashed: the IPv6 assignment of a dual-stack EgressIp, dropped from state",
      at([ownerTagValue(`${id} ${assignment("b")}-ipv6`)]),
      "hashed",
      true,
    ],
    [
      "hashed: a plugin EgressIp's assignment (another language), dropped from state",
      at([ownerTagValue(`${id} ${base}$egress-ipam:index:EgressIpAssignment::team-b-us-east-1a`)]),
      "hashed",
      true,
    ],
    [
      "hashed: a child of an EgressIp the state does not have",
      at([ownerTagValue(`${id} ${base}$egress-ipam:index:EgressIpAssignment::team-z-us-east-1a`)]),
      "hashed",
      false,
    ],
    ["hashed: untagged (a VPC CNI pod IP)", at(), "hashed", false],
  ])("%s", (_name, p, style, expected) => expect(ours.isOurs(p, style)).toBe(expected));
});

describe("stackOwnership.namesAssignment: a per-host record naming the assignment itself", () => {
  const ours = stackOwnership(snapshot);
  it.each<[string, Placement, "named" | "hashed", string, boolean]>([
    [
      "hashed: the tag of the assignment's identity and URN",
      at([ownerTagValue(`${id} ${assignment("a")}`)]),
      "hashed",
      assignment("a"),
      true,
    ],
    [
      "hashed: the tag of its owner text as state keeps it",
      at([ownerTagValue(`${id} ${assignment("c")} #2`)]),
      "hashed",
      assignment("c"),
      true,
    ],
    [
      "hashed: another assignment's of the stack",
      at([ownerTagValue(`${id} ${assignment("a")}`)]),
      "hashed",
      assignment("c"),
      false,
    ],
    [
      "hashed: another stack's for the same URN",
      at([ownerTagValue(`${other} ${assignment("a")}`)]),
      "hashed",
      assignment("a"),
      false,
    ],
    ["hashed: nobody recorded", at(), "hashed", assignment("a"), false],
    [
      "named: the object's record, whichever host lists it",
      at([`${id} ${assignment("a")}`]),
      "named",
      assignment("a"),
      false,
    ],
  ])("%s", (_name, p, style, urn, expected) => {
    expect(ours.namesAssignment(p, style, urn)).toBe(expected);
  });
});
