import { describe, expect, it } from "vitest";
import { deriveIdentity, storedIdentity } from "../../../provider/ledger/stack/stack-identity";

const exported = (resources: object[]) => ({ version: 3, deployment: { resources } });
const own = "pulumi-nodejs:dynamic/egress-ipam:IpAllocation";

describe("stack identity", () => {
  it.each([
    ["none in a fresh stack", [], undefined],
    ["kept in a holder's outputs", [{ urn: "u1", type: own, outputs: { stackId: "stack-a" } }], "stack-a"],
    [
      "kept in inputs only (a same step)",
      [{ urn: "u1", type: own, inputs: { stackId: "stack-b" } }],
      "stack-b",
    ],
    [
      "not from another package's resource",
      [{ urn: "u1", type: "aws:ec2/eip:Eip", outputs: { stackId: "x" } }],
      undefined,
    ],
  ])("%s", (_, resources, id) => {
    expect(storedIdentity(exported(resources), "o/p/s")).toBe(id);
  });

  it("differs for the same stack name on two backends, and for two stacks of one backend", () => {
    const salt = { type: "passphrase", state: { salt: "v1:abc" } };
    const a = deriveIdentity("file:///state/a", "organization/network/prod", salt);
    expect(a).toMatch(/^stack-[0-9a-f]{24}$/);
    expect(deriveIdentity("file:///state/a", "organization/network/prod", salt)).toBe(a);
    expect(deriveIdentity("file:///state/b", "organization/network/prod", salt)).not.toBe(a);
    expect(deriveIdentity("file:///state/a", "organization/network/dev", salt)).not.toBe(a);
    // The same Pulumi.<stack>.yaml (and so salt) copied to two backends still gives two identities.
    expect(deriveIdentity("s3://bucket-b", "organization/network/prod", salt)).not.toBe(
      deriveIdentity("s3://bucket-a", "organization/network/prod", salt),
    );
  });
});
