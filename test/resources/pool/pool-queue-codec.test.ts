import { describe, expect, it } from "vitest";
import {
  decodeHolders,
  encodeHolder,
  urnPrefix,
  type QueuedHolder,
} from "../../../provider/resources/pool/pool-queue-codec";

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
    [
      "one family of a dual-stack pool",
      { owner: urn("e"), family: "ipv6" },
      `[${JSON.stringify(urn("e").slice(22))},"",-1,0,"ipv6"]`,
    ],
    [
      "one family, adopting",
      { owner: urn("f"), observer: 1, adopt: { namespace: "team-a" }, family: "ipv4" },
      `[${JSON.stringify(urn("f").slice(22))},"",1,{"namespace":"team-a"},"ipv4"]`,
    ],
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

  it("writes only the name of a holder with the previous holder's type, and reads it back", () => {
    const top = (name: string) =>
      `urn:pulumi:dev::proj::pulumi-nodejs:dynamic/egress-ipam:IpAllocation::${name}`;
    const holders: QueuedHolder[] = [
      { owner: top("a") },
      { owner: top("b::c"), ip: "10.0.0.5" },
      { owner: urn("d") },
      { owner: urn("e"), observer: 1 },
      { owner: top("f") },
    ];
    const lines = holders.map((h, i) => encodeHolder(h, urnPrefix(h.owner), holders[i - 1]?.owner));
    expect(lines).toEqual([
      `["pulumi-nodejs:dynamic/egress-ipam:IpAllocation::a"]`,
      `[":b::c","10.0.0.5"]`,
      `[${JSON.stringify(urn("d").slice(22))}]`,
      `[":e","",1]`,
      `["pulumi-nodejs:dynamic/egress-ipam:IpAllocation::f"]`,
    ]);
    expect(decodeHolders(lines.join("\n"), top("someone"))).toEqual(holders);
    // Read in two parts (as a queue file is, a check at a time), the second after the holder before it.
    const [first, rest] = [lines.slice(0, 4), lines.slice(4)];
    const before = decodeHolders(first.join("\n"), top("someone"));
    expect([...before, ...decodeHolders(rest.join("\n"), top("x"), before.at(-1)!.owner)]).toEqual(holders);
    expect(decodeHolders(`[":g"]`, top("x"), urn("e"))).toEqual([{ owner: urn("g") }]);
  });

  it("refuses a name-only line with no holder before it", () => {
    expect(() => decodeHolders(`[":a"]`, urn("a"))).toThrow(/names no type/);
  });

  it.each(["[]", "[1]", '["a",5]', "not json"])("refuses the line %j", (line) => {
    expect(() => decodeHolders(line, urn("a"))).toThrow();
  });
});
