// A change of an EgressIp's `families` keeps the addresses of the families it keeps (children are
// named by family: `<name>-<domain>` for IPv4 or the pool's one family, `-ipv6` added for an IPv6
// address asked for by family), and a holder renamed with an alias is released by destroy. Both were
// found by the explorer (docs/exploring.md) before they were fixed.
import { afterAll, describe, expect, it } from "vitest";
import { changesOf, Harness } from "../support/harness";

type Pkg = typeof import("../../provider/index");

const dualStack = JSON.stringify({
  cniVersion: "1.0.0",
  ipam: { type: "host-local", ranges: [[{ subnet: "10.61.0.0/24" }], [{ subnet: "fd00:61::/120" }]] },
});
const provisioner = { kind: "none" as const, hosts: { za: ["a1"], zb: ["b1"] } };
type Addresses = Record<string, { ipv4?: { ip: string }; ipv6?: { ip: string } }>;

describe("EgressIp families changes", () => {
  const h = Harness.create("egress-families");
  const { IpPool, EgressIp } = h.pkg<Pkg>("pulumi-egress-ipam");
  const program =
    (families: "ipv4" | "ipv6" | "dual" | undefined, pool: "dual" | "ipv6" = "dual") =>
    async () => {
      const p =
        pool === "dual"
          ? new IpPool("pool", { cniConfig: dualStack })
          : new IpPool("pool6", { ranges: [{ subnet: "fd00:62::/120" }] });
      const e = new EgressIp("team", {
        pool: p,
        namespace: "team",
        failureDomains: ["za", "zb"],
        provisioner,
        ...(families ? { families } : {}),
      });
      return { addresses: e.addresses };
    };
  afterAll(() => h.dispose());
  const v6Of = (a: Addresses) => ["za", "zb"].map((d) => a[d]?.ipv6?.ip);
  let v6: (string | undefined)[] = [];

  it('places IPv6 only with families: "ipv6"', async () => {
    await h.program(program("ipv6"));
    const up = await h.up();
    v6 = v6Of(up.outputs.addresses!.value as Addresses);
    expect(v6).toEqual(["fd00:61::2", "fd00:61::3"]);
  });

  it('"ipv6" → "dual" adds the IPv4 addresses and keeps the IPv6 ones (preview shows no replace)', async () => {
    await h.program(program("dual"));
    const preview = await h.preview();
    expect(changesOf(preview.changeSummary)).toEqual({ create: 4 });
    const up = await h.up();
    const addresses = up.outputs.addresses!.value as Addresses;
    expect(v6Of(addresses)).toEqual(v6);
    expect(["za", "zb"].map((d) => addresses[d]?.ipv4?.ip)).toEqual(["10.61.0.2", "10.61.0.3"]);
    expect(changesOf((await h.preview()).changeSummary)).toEqual({});
  });

  it('"dual" → "ipv6" removes the IPv4 addresses and keeps the IPv6 ones', async () => {
    await h.program(program("ipv6"));
    const preview = await h.preview();
    expect(changesOf(preview.changeSummary)).toEqual({ delete: 4 });
    const up = await h.up();
    expect(v6Of(up.outputs.addresses!.value as Addresses)).toEqual(v6);
  });

  it('an IPv6-only pool\'s address is the same without families and with "ipv6", both ways', async () => {
    await h.program(program(undefined, "ipv6"));
    const first = v6Of((await h.up()).outputs.addresses!.value as Addresses);
    // The allocations record their new `family` input (an update); nothing is replaced or moved.
    await h.program(program("ipv6", "ipv6"));
    const preview = await h.preview();
    expect(changesOf(preview.changeSummary)).toEqual({ update: 2 });
    expect(v6Of((await h.up()).outputs.addresses!.value as Addresses)).toEqual(first);
    await h.program(program(undefined, "ipv6"));
    expect(changesOf((await h.preview()).changeSummary)).toEqual({ update: 2 });
    expect(v6Of((await h.up()).outputs.addresses!.value as Addresses)).toEqual(first);
    await h.destroy();
    expect((await h.resources()).filter((r) => r.type !== "pulumi:pulumi:Stack")).toEqual([]);
  });
});

describe("a holder renamed with an alias", () => {
  const h = Harness.create("renamed-holder");
  const { IpPool, IpAllocation } = h.pkg<Pkg>("pulumi-egress-ipam");
  const program = (names: { name: string; aliases?: string[] }[]) => async () => {
    const pool = new IpPool("pool", { ranges: [{ subnet: "10.63.0.0/24" }] });
    return Object.fromEntries(
      names.map(({ name, aliases }) => [
        name,
        new IpAllocation(name, { pool }, aliases ? { aliases: aliases.map((a) => ({ name: a })) } : {}).ip,
      ]),
    );
  };
  afterAll(() => h.dispose());

  it("keeps its address, a new holder under its old name gets another, and destroy releases both", async () => {
    await h.program(program([{ name: "web" }]));
    const web = (await h.up()).outputs.web!.value;
    await h.program(program([{ name: "web2", aliases: ["web"] }]));
    expect((await h.up()).outputs.web2!.value).toBe(web);
    // The engine refuses the old name in the update that renames; the next update may give it anew.
    await h.program(program([{ name: "web2", aliases: ["web"] }, { name: "web" }]));
    const up = await h.up();
    expect(up.outputs.web2!.value).toBe(web);
    expect(up.outputs.web!.value).not.toBe(web);
    await h.destroy();
    expect((await h.resources()).filter((r) => r.type !== "pulumi:pulumi:Stack")).toEqual([]);
  });
});

// A dual-stack pool from `ranges` of both families (an AWS subnet's IPv4 and IPv6 blocks), no CNI
// config: one range set per family, the pool a cniConfig with those two range sets gives.
describe('EgressIp families "dual" from pools whose ranges hold both families', () => {
  const h = Harness.create("egress-mixed-ranges");
  const { IpPool, EgressIp } = h.pkg<Pkg>("pulumi-egress-ipam");
  const subnets = { za: ["10.63.1.0/24", "fd00:63:1::/120"], zb: ["10.63.2.0/24", "fd00:63:2::/120"] };
  const program = (form: "ranges" | "cniConfig") => async () => {
    const pools = Object.fromEntries(
      Object.entries(subnets).map(([zone, [v4, v6]]) => [
        zone,
        new IpPool(
          `egress-${zone}`,
          form === "ranges"
            ? { ranges: [{ subnet: v4! }, { subnet: v6! }], cloudReserved: "aws" }
            : {
                cniConfig: JSON.stringify({
                  cniVersion: "1.0.0",
                  ipam: { type: "host-local", ranges: [[{ subnet: v4 }], [{ subnet: v6 }]] },
                }),
                cloudReserved: "aws",
              },
        ),
      ]),
    );
    const e = new EgressIp("team", {
      pool: pools,
      namespace: "team",
      failureDomains: ["za", "zb"],
      provisioner,
      families: "dual",
    });
    return { addresses: e.addresses };
  };
  const expected = {
    // After the first four addresses of each subnet, which AWS keeps (cloudReserved), in both families.
    za: { ipv4: "10.63.1.4", ipv6: "fd00:63:1::4" },
    zb: { ipv4: "10.63.2.4", ipv6: "fd00:63:2::4" },
  };
  const ipsOf = (a: Addresses) =>
    Object.fromEntries(Object.entries(a).map(([d, f]) => [d, { ipv4: f.ipv4?.ip, ipv6: f.ipv6?.ip }]));
  afterAll(() => h.dispose());

  it("plans an IPv4 and an IPv6 address per zone at preview, and up places exactly those", async () => {
    await h.program(program("ranges"));
    const preview = await h.preview();
    for (const zone of ["za", "zb"] as const) {
      expect(preview.planned(`EgressIpAssignment::team-${zone}`)).toMatchObject({ ip: expected[zone].ipv4 });
      expect(preview.planned(`EgressIpAssignment::team-${zone}-ipv6`)).toMatchObject({
        ip: expected[zone].ipv6,
      });
    }
    const up = await h.up();
    expect(ipsOf(up.outputs.addresses!.value as Addresses)).toEqual(expected);
    expect(changesOf((await h.up()).summary.resourceChanges)).toEqual({});
  });

  it("is the pool the equivalent cniConfig gives: writing it that way moves no address", async () => {
    await h.program(program("cniConfig"));
    const preview = await h.preview();
    expect(
      Object.values(preview.ops).filter((op) => op === "replace" || op === "create-replacement"),
    ).toEqual([]);
    const up = await h.up();
    expect(ipsOf(up.outputs.addresses!.value as Addresses)).toEqual(expected);
    await h.destroy();
  });
});

// Adding the other family's range to a pool makes it dual-stack: a holder that names its family
// keeps its address; one that takes no family takes one address per family from then on, which the
// preview shows as a replace with a new IPv4 address too.
describe("a pool given a range of the other family", () => {
  const h = Harness.create("pool-grows-family");
  const { IpPool, IpAllocation } = h.pkg<Pkg>("pulumi-egress-ipam");
  const program = (v6: boolean) => async () => {
    const pool = new IpPool("p", {
      ranges: [{ subnet: "10.64.0.0/24" }, ...(v6 ? [{ subnet: "fd00:64::/120" }] : [])],
    });
    const named = new IpAllocation("named", { pool, family: "ipv4" });
    const any = new IpAllocation("any", { pool });
    return { named: named.ips, any: any.ips };
  };
  afterAll(() => h.dispose());

  it("keeps the address of a holder of one family; one of no family is shown replaced at preview", async () => {
    await h.program(program(false));
    const before = (await h.up()).outputs;
    expect([before.named!.value, before.any!.value]).toEqual([["10.64.0.2"], ["10.64.0.3"]]);
    await h.program(program(true));
    const preview = await h.preview();
    expect(preview.op("IpAllocation::named")).toBe("same");
    expect(preview.op("IpAllocation::any")).toBe("create-replacement");
    const after = (await h.up()).outputs;
    expect(after.named!.value).toEqual(["10.64.0.2"]);
    expect(after.any!.value).toEqual([preview.planned("IpAllocation::any")?.ips].flat());
    expect((after.any!.value as string[]).map((ip) => ip.includes(":"))).toEqual([false, true]);
    await h.destroy();
  });
});

// An EgressIp without `families` places the pool's one family: on a dual-stack pool it is refused
// by its allocation's check at preview (the resource's own refusal, coded, naming the EgressIp and
// the way), never by an exception of the program; a pool that becomes dual-stack under it moves nothing.
describe("an EgressIp without families on a dual-stack pool", () => {
  const h = Harness.create("egress-no-families");
  const { IpPool, EgressIp } = h.pkg<Pkg>("pulumi-egress-ipam");
  const program = (v6: boolean) => async () => {
    const pool = new IpPool("p", {
      ranges: [{ subnet: "10.65.0.0/24" }, ...(v6 ? [{ subnet: "fd00:65::/120" }] : [])],
    });
    const e = new EgressIp("team", { pool, namespace: "team", failureDomains: ["za"], provisioner });
    return { ips: e.ips };
  };
  afterAll(() => h.dispose());

  it("is refused at preview by the allocation, naming the EgressIp and its pool, and a later edit moves nothing", async () => {
    await h.program(program(false));
    expect((await h.up()).outputs.ips!.value).toEqual(["10.65.0.2"]);
    await h.program(program(true));
    const err = String(await h.preview().catch((e: Error) => e));
    expect(err).not.toMatch(/Unhandled exception|error serializing/);
    expect(err).toMatch(
      /IpAllocation resource 'team-za'[\s\S]*\[INVALID_INPUT\] an EgressIp without families places the pool's one family, and pool "p" is dual-stack \(ipv4 and ipv6\): set families: "dual"/,
    );
    await expect(h.up()).rejects.toThrow(/\[INVALID_INPUT\] an EgressIp without families/);
    // The refused up had updated the pool (checked before its holder); going back updates it again.
    await h.program(program(false));
    const back = await h.up();
    expect(changesOf(back.summary.resourceChanges)).toEqual({ update: 1 });
    expect(back.outputs.ips!.value).toEqual(["10.65.0.2"]);
    expect(changesOf((await h.up()).summary.resourceChanges)).toEqual({});
    await h.destroy();
  });
});
