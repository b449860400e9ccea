import { describe, expect, it } from "vitest";
import { HolderOrder } from "../../provider/plugin/holder-order";

const urn = (name: string) => `urn:pulumi:s::p::egress-ipam:index:IpAllocation::${name}`;
/** A resource checked: new to `pool` (null: one the stack has), referring to `refs` (the first is its `after`). */
type Step = [holder: string, pool: string | null, refs: string[], refused: RegExp | null];

describe("new holders of one pool must be ordered by references, whatever order the engine checks them in", () => {
  it.each<[string, Step[]]>([
    ["one new holder needs no after", [["a", "p", [], null]]],
    [
      "a chain is accepted",
      [
        ["a", "p", [], null],
        ["b", "p", ["a"], null],
        ["c", "p", ["b"], null],
      ],
    ],
    [
      "the first may follow an existing holder",
      [
        ["a", "p", ["old"], null],
        ["b", "p", ["a"], null],
      ],
    ],
    [
      "new holders separated by existing ones are ordered through them",
      [
        ["a1", null, [], null],
        ["a2", "p", ["a1"], null],
        ["b1", null, ["a2"], null],
        ["b2", "p", ["b1"], null],
      ],
    ],
    [
      "new holders ordered through a holder of another pool",
      [
        ["a", "p", [], null],
        ["q1", "q", ["a"], null],
        ["b", "p", ["q1"], null],
      ],
    ],
    [
      "two first holders are refused, naming the other",
      [
        ["a", "p", [], null],
        ["b", "p", [], /b and a both take a new address from pool p.*Set after: a on b/],
      ],
    ],
    [
      "two following one are refused",
      [
        ["a", "p", [], null],
        ["b", "p", ["a"], null],
        ["c", "p", ["a"], /c and b both.*a is followed by b already/],
      ],
    ],
    [
      "following an existing holder while another is new is refused",
      [
        ["a", "p", [], null],
        ["b", "p", ["old"], /b and a both.*a is new too/],
      ],
    ],
    [
      "an existing holder after a new one orders only what follows it",
      [
        ["a", "p", [], null],
        ["old", null, ["a"], null],
        ["b", "p", ["old2"], /b and a both.*a is new too/],
      ],
    ],
    [
      "pools are ordered apart",
      [
        ["a", "p", [], null],
        ["b", "q", [], null],
      ],
    ],
    [
      "a holder checked twice (a replacement) keeps its place",
      [
        ["a", "p", [], null],
        ["a", "p", [], null],
        ["b", "p", ["a"], null],
      ],
    ],
  ])("%s", (_name, steps) => {
    const order = new HolderOrder();
    for (const [holder, pool, refs, refused] of steps) {
      const call = () => {
        order.refers(urn(holder), refs.map(urn));
        if (pool !== null) order.next(`pool::${pool}`, urn(holder), refs[0] && urn(refs[0]));
      };
      if (refused) expect(call).toThrow(refused);
      else expect(call).not.toThrow();
    }
  });
});

describe("a new holder whose plan waits for up", () => {
  it("makes the new holders of its pool checked after it wait too, not those of another pool", () => {
    const order = new HolderOrder();
    order.refers(urn("a"), []);
    order.next("p", urn("a"), undefined);
    expect(order.waitingAhead("p", urn("a"))).toBeUndefined();
    order.waits("p", urn("a"));
    expect(order.waitingAhead("p", urn("a"))).toBeUndefined(); // not ahead of itself
    order.refers(urn("b"), [urn("a")]);
    order.next("p", urn("b"), urn("a"));
    expect(order.waitingAhead("p", urn("b"))).toBe(urn("a"));
    order.refers(urn("x"), []);
    order.next("q", urn("x"), undefined);
    expect(order.waitingAhead("q", urn("x"))).toBeUndefined();
  });
});
