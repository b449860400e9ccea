// The host-choice rule shared by the AWS and Kubernetes provisioners.
import { describe, expect, it } from "vitest";
import { leastLoaded } from "../../provider/provisioners/least-loaded";

const hosts = (loads: Record<string, number>) =>
  Object.entries(loads).map(([name, load]) => ({ name, load }));
const pick = (loads: Record<string, number>, ip?: string) =>
  leastLoaded(
    hosts(loads),
    (h) => h.load,
    (h) => h.name,
    ip,
  ).name;

describe("leastLoaded", () => {
  it.each([
    [{ a: 2, b: 1, c: 3 }, undefined, "b"],
    [{ c: 0, a: 0, b: 0 }, undefined, "a"], // no address: the lowest name
    [{ "i-2": 1, "i-1": 1, "i-3": 0 }, undefined, "i-3"],
  ])("%j (address %s) → %s", (loads, ip, want) => {
    expect(pick(loads, ip)).toBe(want);
  });

  it("breaks ties by address and name: the same host for the same address in any order", () => {
    const loads = { n1: 0, n2: 0, n3: 0, n4: 0 };
    for (let i = 0; i < 50; i++) {
      const ip = `10.0.0.${i}`;
      const reversed = Object.fromEntries(Object.entries(loads).reverse());
      expect(pick(reversed, ip)).toBe(pick(loads, ip));
    }
  });

  it("spreads addresses over equally loaded hosts when they are known", () => {
    const loads = { n1: 0, n2: 0, n3: 0, n4: 0 };
    const chosen = new Set(Array.from({ length: 40 }, (_, i) => pick(loads, `10.0.1.${i}`)));
    expect(chosen.size).toBe(4);
  });

  it("never picks a more loaded host over a less loaded one", () => {
    for (let i = 0; i < 50; i++) expect(pick({ busy: 1, idle: 0, full: 5 }, `10.0.2.${i}`)).toBe("idle");
  });

  it("refuses an empty list", () => {
    expect(() => leastLoaded([], () => 0, String)).toThrow(/no candidate/);
  });
});
