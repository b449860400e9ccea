import { describe, expect, it } from "vitest";
import {
  decodeHolders,
  encodeHolder,
  urnPrefix,
  type QueuedHolder,
} from "../../provider/runtime/pool-queue-codec";

const urn = (name: string) =>
  `urn:pulumi:dev::proj::egress-ipam:index:EgressIp$pulumi-nodejs:dynamic/egress-ipam:IpAllocation::${name}`;

describe("pool queue lines", () => {
  it.each<[string, QueuedHolder, string]>([
    [
      "an automatic holder",
      { owner: urn("a") },
      `["egress-ipam:index:EgressIp$pulumi-nodejs:dynamic/egress-ipam:IpAllocation::a"]`,
    ],
    [
      "a requested address",
      { owner: urn("b"), ip: "10.0.0.5" },
      `[${JSON.stringify(urn("b").slice(22))},"10.0.0.5"]`,
    ],
    [
      "an address from another resource",
      { owner: urn("c"), ip: null },
      `[${JSON.stringify(urn("c").slice(22))},"?"]`,
    ],
    ["an observer", { owner: urn("d"), observer: 2 }, `[${JSON.stringify(urn("d").slice(22))},"",2]`],
    ["a name with quotes, newlines and ::", { owner: urn('x "y"\n::z'), ip: "2001:db8::1", observer: 0 }, ""],
  ])("round-trips %s", (_what, holder, line) => {
    const encoded = encodeHolder(holder, urnPrefix(holder.owner));
    if (line !== "") expect(encoded).toBe(line);
    expect(encoded).not.toContain("\n");
    expect(decodeHolders(encoded, urn("someone"))).toEqual([holder]);
  });

  it("keeps a URN of another stack whole", () => {
    const other = "urn:pulumi:prod::proj::t::a";
    expect(decodeHolders(encodeHolder({ owner: other }, urnPrefix(urn("a"))), urn("a"))).toEqual([
      { owner: other },
    ]);
  });

  it.each(["[]", "[1]", '["a",5]', "not json"])("refuses the line %j", (line) => {
    expect(() => decodeHolders(line, urn("a"))).toThrow();
  });
});
