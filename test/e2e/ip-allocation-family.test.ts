// IpAllocation's `family`: one family of a dual-stack pool, with the real engine. Holders of one
// family, of both and of the other mixed in one pool plan in program order, whatever order the
// engine checks them in (preview = up with --parallel); a family the pool lacks is refused at
// preview, naming the property; a change of family replaces the allocation.
import { afterAll, describe, expect, it } from "vitest";
import { changesOf, Harness } from "../support/harness";

type Pkg = typeof import("../../provider/index");

const cniConfig = JSON.stringify({
  cniVersion: "1.0.0",
  ipam: {
    type: "host-local",
    ranges: [
      [{ subnet: "10.0.9.0/24", rangeStart: "10.0.9.10" }],
      [{ subnet: "fd00:9::/64", rangeStart: "fd00:9::10" }],
    ],
  },
});

describe("IpAllocation of one family", () => {
  const h = Harness.create("alloc-family");
  const { IpPool, IpAllocation } = h.pkg<Pkg>("pulumi-egress-ipam");
  type Family = "ipv4" | "ipv6" | undefined;
  const program = (holders: [string, Family][]) => async () => {
    const pool = new IpPool("pool", { cniConfig });
    return Object.fromEntries(
      holders.map(([name, family]) => [
        name,
        new IpAllocation(name, { pool, ...(family ? { family } : {}) }).ips,
      ]),
    );
  };
  const holders: [string, Family][] = Array.from({ length: 12 }, (_, i) => [
    `h${i}`,
    (["ipv4", "ipv6", undefined] as const)[i % 3],
  ]);
  afterAll(() => h.dispose());

  it("plans each holder's family in program order at preview, and up with --parallel assigns exactly those", async () => {
    await h.program(program(holders));
    const preview = await h.preview({ parallel: 16 });
    const planned = holders.map(([n]) => preview.planned(n)?.ips);
    // v4 holders take .10, .11, … in order, v6 holders ::10, ::11, …; a holder of both takes one of each.
    let [a, b] = [10, 16];
    const expected = holders.map(([, f]) => {
      const out: string[] = [];
      if (f !== "ipv6") out.push(`10.0.9.${a++}`);
      if (f !== "ipv4") out.push(`fd00:9::${(b++).toString(16)}`);
      return out;
    });
    expect(planned).toEqual(expected);
    const up = await h.up({ parallel: 16 });
    expect(holders.map(([n]) => up.outputs[n]?.value)).toEqual(expected);
    expect(changesOf((await h.up()).summary.resourceChanges)).toEqual({});
  });

  it("replaces an allocation whose family changes, and keeps the others", async () => {
    const changed = holders.map(([n, f]): [string, Family] => [n, n === "h1" ? "ipv4" : f]);
    await h.program(program(changed));
    const preview = await h.preview();
    expect(preview.op("h1")).toBe("create-replacement");
    expect(holders.filter(([n]) => n !== "h1").every(([n]) => preview.op(n) === "same")).toBe(true);
    const up = await h.up();
    expect(String((up.outputs.h1?.value as string[])[0])).toMatch(/^10\.0\.9\.\d+$/);
  });

  it("refuses at preview a family the pool has no range set of, naming the property", async () => {
    const bad = Harness.create("alloc-family-bad");
    try {
      const pkg = bad.pkg<Pkg>("pulumi-egress-ipam");
      await bad.program(async () => {
        const pool = new pkg.IpPool("v4only", { ranges: [{ subnet: "10.0.10.0/24" }] });
        return { ip: new pkg.IpAllocation("v6", { pool, family: "ipv6" }).ip };
      });
      const err = String(await bad.preview().catch((e: Error) => e));
      expect(err).toContain(
        "property family value {ipv6} has a problem: [INVALID_INPUT] the pool has no ipv6 range set (it has ipv4)",
      );
    } finally {
      bad.dispose();
    }
  });
});
