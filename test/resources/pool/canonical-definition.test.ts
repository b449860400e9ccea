import { describe, expect, it } from "vitest";
import { poolDefinition, poolOfDefinition } from "../../../provider/resources/pool/canonical-definition";
import { poolSize, resolvePool, type PoolSpec } from "../../../provider/resources/pool/pool-spec";

const cases: [string, PoolSpec][] = [
  [
    "one IPv4 range with exclusions and a reserved address",
    {
      ranges: [{ subnet: "10.0.8.0/24", rangeStart: "10.0.8.10", rangeEnd: "10.0.8.200" }],
      exclude: ["10.0.8.16/30", "10.0.8.100"],
      reserved: ["10.0.8.50"],
      strategy: "lowest-free",
    },
  ],
  [
    "two ranges of one set, cloud-reserved addresses",
    {
      ranges: [{ subnet: "10.1.0.0/28" }, { subnet: "10.1.1.0/28", gateway: "10.1.1.14" }],
      cloudReserved: "aws",
    },
  ],
  [
    "dual stack from a CNI config",
    {
      cniConfig: JSON.stringify({
        cniVersion: "1.0.0",
        ipam: { type: "host-local", ranges: [[{ subnet: "10.2.0.0/24" }], [{ subnet: "fd00:2::/64" }]] },
      }),
      exclude: ["fd00:2::10"],
    },
  ],
  ["a node network with a static node", { network: "100.64.0.0/24", static: { gw: "100.64.0.1/32" } }],
];

describe("the canonical definition of a shared pool", () => {
  it.each(cases)("reads back what it wrote: %s", (_, spec) => {
    const { pool, failures } = resolvePool(spec);
    expect(failures).toEqual([]);
    const text = poolDefinition(pool!);
    const back = poolOfDefinition(text);
    expect(poolDefinition(back)).toBe(text);
    expect(poolSize(back)).toBe(poolSize(pool!));
  });

  it.each([
    ["not JSON", "{ranges", /not a pool definition \(not JSON\)/],
    ["no ranges", JSON.stringify({ exclude: [], strategy: "round-robin" }), /cniConfig/],
    [
      "a bad strategy",
      JSON.stringify({ ranges: [[{ subnet: "10.0.0.0/24" }]], strategy: "random" }),
      /strategy/,
    ],
  ])("refuses %s, naming why", (_, text, why) => {
    expect(() => poolOfDefinition(text)).toThrow(why);
  });
});
