import { describe, expect, it } from "vitest";
import type { CheckpointResource } from "../../../provider/ledger/stack/stack-checkpoint";
import { holderName, holderOwners } from "../../../provider/resources/egress-ip/holder-name";

const child =
  "urn:pulumi:dev::shop::egress-ipam:index:EgressIp$pulumi-nodejs:dynamic/egress-ipam:EgressIpAssignment";
const alone = "urn:pulumi:dev::shop::pulumi-nodejs:dynamic/egress-ipam:EgressIpAssignment";

describe("holderName", () => {
  it.each([
    ["an EgressIp's assignment in a domain", `${child}::team-a-eu-west-1a`, "eu-west-1a", "EgressIp team-a"],
    ["an EgressIp's assignment without domains (pinned host)", `${child}::team-a`, "", "EgressIp team-a"],
    [
      "an EgressIp's IPv6 assignment in a domain",
      `${child}::team-a-eu-west-1a-ipv6`,
      "eu-west-1a",
      "EgressIp team-a",
    ],
    ["an EgressIp's IPv6 assignment on a pinned host", `${child}::team-a-ipv6`, "", "EgressIp team-a"],
    [
      "a name that does not end with its domain",
      `${child}::renamed`,
      "eu-west-1a",
      "EgressIpAssignment renamed",
    ],
    ["an assignment of its own", `${alone}::gw-eu-west-1a`, "eu-west-1a", "EgressIpAssignment gw-eu-west-1a"],
    [
      "under a component of another type",
      `urn:pulumi:dev::shop::my:Thing$${alone.split("::")[2]}::x-a`,
      "a",
      "EgressIpAssignment x-a",
    ],
  ])("%s", (_name, urn, domain, expected) => expect(holderName(urn, domain)).toBe(expected));
});

describe("holderOwners", () => {
  const assignment = (urn: string, failureDomain: string, ownerId: string): CheckpointResource => ({
    urn,
    type: urn.split("::")[2]!.split("$").at(-1)!,
    inputs: { failureDomain, ownerId },
    outputs: { failureDomain, ownerId },
  });
  const state: CheckpointResource[] = [
    assignment(`${child}::a-x`, "x", "s1 a-x"),
    assignment(`${child}::a-y-ipv6`, "y", "s1 a-y-ipv6"),
    // EgressIp a-b's domain x: its name starts like one of EgressIp a's, its domain says it is not.
    assignment(`${child}::a-b-x`, "x", "s1 a-b-x"),
    // The same name under another parent type, and an assignment of its own.
    assignment(
      `urn:pulumi:dev::shop::my:Team$egress-ipam:index:EgressIp$${child.split("$")[1]}::a-z`,
      "z",
      "s1 t",
    ),
    assignment(`${alone}::a-w`, "w", "s1 a-w"),
    { urn: `${child}::a-v`, type: "x", outputs: { failureDomain: "v" } },
  ];
  const load = () => Promise.resolve(state);

  it("takes this assignment's record and its EgressIp's other assignments', each read with its own domain", async () =>
    expect([...(await holderOwners("dev", `${child}::a-new`, "new", "s1 a-new", load))].sort()).toEqual([
      "s1 a-new",
      "s1 a-x",
      "s1 a-y-ipv6",
    ]));

  it("takes the siblings for an assignment not yet recorded (no ownerId)", async () =>
    expect([...(await holderOwners("dev", `${child}::a-b-y`, "y", undefined, load))]).toEqual(["s1 a-b-x"]));

  it("takes its own record alone for an assignment an EgressIp did not make, without reading the state", async () =>
    expect([
      ...(await holderOwners("dev", `${alone}::a-w`, "w", "s1 a-w", () => Promise.reject(new Error("read")))),
    ]).toEqual(["s1 a-w"]));
});
