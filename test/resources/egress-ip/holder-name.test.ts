import { describe, expect, it } from "vitest";
import { holderName } from "../../../provider/resources/egress-ip/holder-name";

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
