import { describe, expect, it } from "vitest";
import { HolderOrder } from "../../provider/plugin/holder-order";

const urn = (name: string) => `urn:pulumi:s::p::egress-ipam:index:IpAllocation::${name}`;
type Step = [holder: string, pool: string, after: string | undefined, refused: RegExp | null];

describe("new holders of one pool must form one chain, whatever order the engine checks them in", () => {
  it.each<[string, Step[]]>([
    ["one new holder needs no after", [["a", "p", undefined, null]]],
    [
      "a chain is accepted",
      [
        ["a", "p", undefined, null],
        ["b", "p", "a", null],
        ["c", "p", "b", null],
      ],
    ],
    [
      "the first may follow an existing holder",
      [
        ["a", "p", "old", null],
        ["b", "p", "a", null],
      ],
    ],
    [
      "two first holders are refused, naming the other",
      [
        ["a", "p", undefined, null],
        ["b", "p", undefined, /b and a both take a new address from pool p.*Set after: a on b/],
      ],
    ],
    [
      "two following one are refused",
      [
        ["a", "p", undefined, null],
        ["b", "p", "a", null],
        ["c", "p", "a", /c and b both.*a is followed by b already/],
      ],
    ],
    [
      "following an existing holder while another is new is refused",
      [
        ["a", "p", undefined, null],
        ["b", "p", "old", /b and a both.*a is new too/],
      ],
    ],
    [
      "pools are ordered apart",
      [
        ["a", "p", undefined, null],
        ["b", "q", undefined, null],
      ],
    ],
    [
      "a holder checked twice (a replacement) keeps its place",
      [
        ["a", "p", undefined, null],
        ["a", "p", undefined, null],
        ["b", "p", "a", null],
      ],
    ],
  ])("%s", (_name, steps) => {
    const order = new HolderOrder();
    for (const [holder, pool, after, refused] of steps) {
      const call = () =>
        order.next(`pool::${pool}`, urn(holder), after === undefined ? undefined : urn(after));
      if (refused) expect(call).toThrow(refused);
      else expect(call).not.toThrow();
    }
  });
});
