import { describe, expect, it } from "vitest";
import { resolvePool } from "../../../provider/resources/pool/pool-spec";

describe("node network pools", () => {
  it("resolves a network with statics", () => {
    const { pool, failures } = resolvePool({
      network: "10.42.0.0/16",
      static: { b: "10.42.0.9", a: "10.42.0.5/32" },
    });
    expect(failures).toEqual([]);
    expect(pool?.node).toEqual({ network: "10.42.0.0/16", static: { a: "10.42.0.5/32", b: "10.42.0.9" } });
  });

  it.each([
    [{ network: "10.42.0.1/16" }, "network", /10\.42\.0\.0\/16/],
    [{ network: "10.42.0.0/16", ranges: [{ subnet: "10.0.0.0/24" }] }, "network", /not both/],
    [{ network: "10.42.0.0/16", static: { a: "10.43.0.1" } }, "static", /not in network 10\.42\.0\.0\/16/],
    [
      { network: "10.42.0.0/16", static: { a: "10.42.0.7", b: "10.42.0.7" } },
      "static",
      /given to both a and b/,
    ],
    [{ ranges: [{ subnet: "10.0.0.0/24" }], static: { a: "10.0.0.7" } }, "static", /need a node `network`/],
  ])("refuses %j at %s", (spec, property, reason) => {
    const { failures } = resolvePool(spec);
    expect(failures.map((f) => f.property)).toEqual([property]);
    expect(failures[0]?.reason).toMatch(reason);
  });
});
