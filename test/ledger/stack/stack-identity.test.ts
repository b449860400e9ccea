import { describe, expect, it } from "vitest";
import {
  newIdentity,
  secretsFingerprint,
  storedIdentity,
  taggedIdentity,
} from "../../../provider/ledger/stack/stack-identity";

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

  it("is random: two stacks with one name, one backend URL and one salt get two", () => {
    const ids = new Set(Array.from({ length: 1000 }, newIdentity));
    expect(ids.size).toBe(1000);
    for (const id of ids) expect(id).toMatch(/^stack-[0-9a-f]{24}$/);
  });

  const salt = { type: "passphrase", state: { salt: "v1:abc" } };
  const mine = secretsFingerprint({ deployment: { secrets_providers: salt } });
  const other = secretsFingerprint({
    deployment: { secrets_providers: { ...salt, state: { salt: "v1:xyz" } } },
  });

  it("fingerprints the secrets provider state, or its absence", () => {
    expect(mine).toMatch(/^secrets [0-9a-f]{16}$/);
    expect(other).not.toBe(mine);
    expect(secretsFingerprint({ deployment: {} })).toBe("secrets none");
  });

  it.each([
    ["no tag", undefined, undefined],
    ["an empty tag", "", undefined],
    ["made for this stack's secrets", `stack-1 for ${mine}`, "stack-1"],
    [
      "made before the checkpoint had secrets (kept at the first update)",
      "stack-2 for secrets none",
      "stack-2",
    ],
    ["set by hand", "  team-a-prod ", "team-a-prod"],
    ["left behind by a stack renamed away (other secrets)", `stack-3 for ${other}`, undefined],
  ])("a tag: %s", (_, value, id) => {
    expect(taggedIdentity(value, mine)).toBe(id);
  });
});
