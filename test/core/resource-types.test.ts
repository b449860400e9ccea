import { describe, expect, it } from "vitest";
import { ownKind } from "../../provider/core/resource-types";

describe("which resources of a checkpoint are this package's, served either way", () => {
  it.each([
    ["pulumi-nodejs:dynamic/egress-ipam:IpAllocation", "IpAllocation"],
    ["egress-ipam:index:IpAllocation", "IpAllocation"],
    ["egress-ipam:index:EgressIp", "EgressIp"],
    ["pulumi-nodejs:dynamic:Resource", undefined],
    ["aws:ec2/eip:Eip", undefined],
    ["pulumi:providers:egress-ipam", undefined],
  ])("%s is %s", (type, kind) => expect(ownKind(type)).toBe(kind));
});
