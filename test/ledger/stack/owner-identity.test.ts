import { describe, expect, it, vi } from "vitest";
import { newOwnerId } from "../../../provider/ledger/stack/owner-identity";
import type { CheckpointResource } from "../../../provider/ledger/stack/stack-checkpoint";

const state: CheckpointResource[] = [];
vi.mock("../../../provider/ledger/stack/stack-identity", () => ({
  stackIdentity: async () => "stack-me",
}));
vi.mock("../../../provider/ledger/stack/stack-ledger", () => ({ stackResources: async () => state }));

const urn = (name: string) =>
  `urn:pulumi:dev::shop::pulumi-nodejs:dynamic/egress-ipam:CidrAssignment::${name}`;
const carrying = (at: string, ownerId: string, where: "inputs" | "outputs" = "outputs"): CheckpointResource =>
  ({
    urn: at,
    type: "pulumi-nodejs:dynamic/egress-ipam:CidrAssignment",
    [where]: { ownerId },
  }) as CheckpointResource;

describe("newOwnerId", () => {
  it.each<[string, CheckpointResource[], string]>([
    ["a new name: identity and URN", [], `stack-me ${urn("web")}`],
    [
      "the retry of its own interrupted create: the same",
      [carrying(urn("web"), `stack-me ${urn("web")}`, "inputs")],
      `stack-me ${urn("web")}`,
    ],
    [
      "a name a resource renamed with an alias had: another owner",
      [carrying(urn("web2"), `stack-me ${urn("web")}`)],
      `stack-me ${urn("web")} #2`,
    ],
    [
      "freed twice: the next free suffix",
      [carrying(urn("web2"), `stack-me ${urn("web")}`), carrying(urn("web3"), `stack-me ${urn("web")} #2`)],
      `stack-me ${urn("web")} #3`,
    ],
    [
      "another stack's text for the URN is no conflict",
      [carrying(urn("web2"), `stack-other ${urn("web")}`)],
      `stack-me ${urn("web")}`,
    ],
  ])("%s", async (_name, resources, expected) => {
    state.splice(0, state.length, ...resources);
    expect(await newOwnerId("org/shop/dev", urn("web"))).toBe(expected);
  });
});
