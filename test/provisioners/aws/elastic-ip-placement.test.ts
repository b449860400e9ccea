import { describe, expect, it } from "vitest";
import type { IpamError } from "../../../provider/core/ipam-error";
import type { Ec2, ElasticIp, Eni } from "../../../provider/provisioners/aws/ec2";
import {
  eipAddressTag,
  eipOwnerTag,
  elasticIpPlacement,
  publicAddresses,
} from "../../../provider/provisioners/aws/elastic-ips";

// What `check` reports about one address's public side, from the region's Elastic IPs: the one
// associated with it on its interface, and whether it is the one the setting gives it.
const ip = "10.0.1.4";
const where = ["--region", "us-east-1"];
const eip = (id: string, over: Partial<ElasticIp> = {}): ElasticIp => ({
  allocationId: id,
  publicIp: `198.51.100.${id.slice(-1)}`,
  tags: {},
  ...over,
});
const on = (eni: string, privateIp: string) => ({
  associationId: `eipassoc-${eni}`,
  networkInterfaceId: eni,
  privateIp,
});
const ours = { [eipOwnerTag]: "sha256:owner", [eipAddressTag]: ip };

describe("elasticIpPlacement", () => {
  it.each<[string, Parameters<typeof elasticIpPlacement>[0], ElasticIp[], Record<string, unknown>]>([
    ["no setting, nothing associated: nothing to say", undefined, [], {}],
    [
      "no setting: one associated by somebody is shown, never a problem",
      undefined,
      [eip("eipalloc-1", on("eni-a", ip))],
      { publicIp: "198.51.100.1", publicId: "eipalloc-1" },
    ],
    [
      "allocate: ours, associated there",
      "allocate",
      [eip("eipalloc-1", { ...on("eni-a", ip), tags: ours })],
      { publicIp: "198.51.100.1", publicId: "eipalloc-1" },
    ],
    [
      "allocate: ours, associated with nothing",
      "allocate",
      [eip("eipalloc-1", { tags: ours })],
      { publicProblem: "its Elastic IP eipalloc-1 (198.51.100.1) is associated with nothing" },
    ],
    [
      "allocate: ours gone, another's associated there",
      "allocate",
      [eip("eipalloc-2", on("eni-a", ip))],
      {
        publicIp: "198.51.100.2",
        publicId: "eipalloc-2",
        publicProblem: `the Elastic IP this package allocated for it (tagged ${eipOwnerTag}, ${eipAddressTag}=${ip}) is gone`,
      },
    ],
    [
      "adopt: associated there",
      { adopt: { [ip]: "eipalloc-1" } },
      [eip("eipalloc-1", on("eni-a", ip))],
      { publicIp: "198.51.100.1", publicId: "eipalloc-1" },
    ],
    [
      "adopt: missing",
      { adopt: { [ip]: "eipalloc-1" } },
      [],
      { publicProblem: "the Elastic IP eipalloc-1 that elasticIps.adopt gives it does not exist" },
    ],
    [
      "adopt: with the address on another interface (misplaced): up moves it, no command",
      { adopt: { [ip]: "eipalloc-1" } },
      [eip("eipalloc-1", on("eni-b", ip))],
      { publicProblem: `its Elastic IP eipalloc-1 (198.51.100.1) is associated with ${ip} on eni-b` },
    ],
    [
      "adopt: with another address: freed by hand first",
      { adopt: { [ip]: "eipalloc-1" } },
      [eip("eipalloc-1", on("eni-b", "10.0.1.9"))],
      {
        publicProblem: "its Elastic IP eipalloc-1 (198.51.100.1) is associated with 10.0.1.9 on eni-b",
        publicFix: "aws ec2 disassociate-address --region us-east-1 --association-id eipassoc-eni-b",
      },
    ],
    [
      "adopt: taken over by another owner (its tag names them) and on their address: theirs, no command",
      { adopt: { [ip]: "eipalloc-1" } },
      [eip("eipalloc-1", { ...on("eni-b", "10.0.1.9"), tags: { [eipOwnerTag]: "sha256:other" } })],
      {
        publicProblem:
          "its Elastic IP eipalloc-1 (198.51.100.1) is associated with 10.0.1.9 on eni-b, and recorded for " +
          "sha256:other (taken over): nothing is disassociated; give this address another allocation in " +
          "elasticIps.adopt, or take it back from that owner first",
      },
    ],
    [
      "adopt: recorded for this owner, on another address: freed by hand first",
      { adopt: { [ip]: "eipalloc-1" } },
      [eip("eipalloc-1", { ...on("eni-b", "10.0.1.9"), tags: { [eipOwnerTag]: "sha256:owner" } })],
      {
        publicProblem: "its Elastic IP eipalloc-1 (198.51.100.1) is associated with 10.0.1.9 on eni-b",
        publicFix: "aws ec2 disassociate-address --region us-east-1 --association-id eipassoc-eni-b",
      },
    ],
  ])("%s", (_what, setting, eips, expected) => {
    expect(elasticIpPlacement(setting, eips, "eni-a", ip, "sha256:owner", where)).toEqual(expected);
  });

  it("says nothing about an IPv6 address (it gets no Elastic IP)", () => {
    expect(elasticIpPlacement("allocate", [], "eni-a", "2600:1f18::4", "sha256:owner", where)).toEqual({});
  });
});

// The refusal `up` gives an adopted Elastic IP associated with another address: a command that
// frees it only where nobody else has taken it over (its owner tag names another owner).
describe("attaching an adopted Elastic IP associated with another address", () => {
  const refusal = async (tags: Record<string, string>) => {
    const taken = eip("eipalloc-1", { ...on("eni-b", "10.0.1.9"), tags });
    const ec2 = { elasticIps: async () => [taken] } as unknown as Ec2;
    const addresses = publicAddresses(ec2, { adopt: { [ip]: "eipalloc-1" } }, "sha256:owner", "us-east-1");
    const e = (await addresses
      .attach(ip, { id: "eni-a" } as Eni, false)
      .catch((err: unknown) => err)) as IpamError;
    expect(e.code).toBe("ADDRESS_IN_USE");
    return e.message;
  };

  it("says how to free it when nobody took it over", async () => {
    expect(await refusal({})).toMatch(
      /cannot give 10\.0\.1\.4 the Elastic IP eipalloc-1 .*disassociate it there \(aws ec2 disassociate-address --association-id eipassoc-eni-b\)/,
    );
  });

  it("names the owner that took it over, and prints no command that frees it from them", async () => {
    const text = await refusal({ [eipOwnerTag]: "sha256:other" });
    expect(text).toMatch(
      /it is recorded for sha256:other, who took it over: give 10\.0\.1\.4 another allocation/,
    );
    expect(text).not.toContain("disassociate-address");
  });
});
