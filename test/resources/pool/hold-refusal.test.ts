// Whether a pool as it is now still hands out what a hold planned earlier (issue #56): the reasons
// a hold is not renewed, case by case.
import { describe, expect, it } from "vitest";
import { holdRefusal } from "../../../provider/resources/pool/hold-refusal";
import { resolvePool, type PoolSpec } from "../../../provider/resources/pool/pool-spec";

const pool = (spec: Partial<PoolSpec>) => resolvePool({ ranges: [{ subnet: "10.9.0.0/28" }], ...spec }).pool!;
const blocks = (spec: Partial<PoolSpec>) =>
  resolvePool({
    ranges: [{ subnet: "10.9.4.0/23", rangeStart: "10.9.5.0", rangeEnd: "10.9.5.255", gateway: "10.9.4.1" }],
    prefixLengths: { min: 24, max: 27 },
    ...spec,
  }).pool!;

describe("holdRefusal", () => {
  it.each([
    ["an address still handed out", pool({}), [], "10.9.0.5", undefined],
    ["an excluded address", pool({ exclude: ["10.9.0.5"] }), [], "10.9.0.5", /^10\.9\.0\.5 is excluded in /],
    [
      "an address outside smaller ranges",
      pool({ ranges: [{ subnet: "10.9.0.0/29" }] }),
      [],
      "10.9.0.9",
      /not in/,
    ],
    [
      "the gateway",
      pool({ ranges: [{ subnet: "10.9.0.0/28", gateway: "10.9.0.5" }] }),
      [],
      "10.9.0.5",
      /gateway/,
    ],
    ["a reserved address", pool({ reserved: ["10.9.0.5"] }), [], "10.9.0.5", /reserved in the pool/],
    ["an address in use outside Pulumi", pool({}), ["10.9.0.5"], "10.9.0.5", /in use outside Pulumi/],
    ["a block still handed out", blocks({}), [], "10.9.5.0/26", undefined],
    [
      "a block with an excluded address",
      blocks({ exclude: ["10.9.5.9"] }),
      [],
      "10.9.5.0/26",
      /10\.9\.5\.0\/26/,
    ],
    [
      "a block of a length the rule no longer allows",
      blocks({ prefixLengths: { min: 27, max: 28 } }),
      [],
      "10.9.5.0/26",
      /prefixLengths/,
    ],
  ])("%s", async (_, p, inUse, entry, reason) => {
    const got = await holdRefusal(p, inUse)(entry);
    if (reason === undefined) expect(got).toBeUndefined();
    else expect(got).toMatch(reason);
  });

  it("names the pool's owner when it is known", async () => {
    const got = await holdRefusal(pool({ exclude: ["10.9.0.5"] }), [], "stack o/p/owner (urn:x)")("10.9.0.5");
    expect(got).toMatch(/; the pool's owner, stack o\/p\/owner \(urn:x\), changed it since$/);
  });
});
