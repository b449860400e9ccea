import { describe, expect, it } from "vitest";
import { loadIpamConfig } from "../../provider/allocator";

type Json = { [key: string]: unknown };
const net = (ipam: Json, extra: Json = {}): string =>
  JSON.stringify({
    cniVersion: "0.3.1",
    name: "mynet",
    type: "ipvlan",
    master: "foo0",
    ipam: { type: "host-local", ...ipam },
    ...extra,
  });

/** The canonical ranges of a loaded config, as plain data. */
const rangesOf = (text: string, env?: string): unknown =>
  loadIpamConfig(text, env).config.ranges.map((s) => s.toJSON());

describe("loadIpamConfig", () => {
  it("parses an old-style config", () => {
    const { config, cniVersion } = loadIpamConfig(
      net({ subnet: "10.1.2.0/24", rangeStart: "10.1.2.9", rangeEnd: "10.1.2.20", gateway: "10.1.2.30" }),
    );
    expect(cniVersion).toBe("0.3.1");
    expect(config.name).toBe("mynet");
    expect(config.type).toBe("host-local");
    expect(config.ipArgs).toEqual([]);
    expect(config.ranges.map((s) => s.toJSON())).toEqual([
      [{ subnet: "10.1.2.0/24", rangeStart: "10.1.2.9", rangeEnd: "10.1.2.20", gateway: "10.1.2.30" }],
    ]);
  });

  it("parses a new-style config, filling defaults", () => {
    const text = net({
      ranges: [
        [
          { subnet: "10.1.2.0/24", rangeStart: "10.1.2.9", rangeEnd: "10.1.2.20", gateway: "10.1.2.30" },
          { subnet: "10.1.4.0/24" },
        ],
        [{ subnet: "11.1.2.0/24", rangeStart: "11.1.2.9", rangeEnd: "11.1.2.20", gateway: "11.1.2.30" }],
        [{ subnet: "2001:DB8:1::/64" }],
      ],
    });
    expect(rangesOf(text)).toEqual([
      [
        { subnet: "10.1.2.0/24", rangeStart: "10.1.2.9", rangeEnd: "10.1.2.20", gateway: "10.1.2.30" },
        { subnet: "10.1.4.0/24", rangeStart: "10.1.4.1", rangeEnd: "10.1.4.254", gateway: "10.1.4.1" },
      ],
      [{ subnet: "11.1.2.0/24", rangeStart: "11.1.2.9", rangeEnd: "11.1.2.20", gateway: "11.1.2.30" }],
      [
        {
          subnet: "2001:db8:1::/64",
          rangeStart: "2001:db8:1::1",
          rangeEnd: "2001:db8:1:0:ffff:ffff:ffff:ffff",
          gateway: "2001:db8:1::1",
        },
      ],
    ]);
  });

  it("orders runtimeConfig.ipRanges, then the legacy range, then ipam.ranges", () => {
    const text = net(
      { subnet: "10.1.2.0/24", rangeStart: "10.1.2.9", ranges: [[{ subnet: "11.1.2.0/24" }]] },
      { runtimeConfig: { irrelevant: "a", ipRanges: [[{ subnet: "12.1.3.0/24" }]] } },
    );
    expect(loadIpamConfig(text).config.ranges.map(String)).toEqual([
      "12.1.3.1-12.1.3.254",
      "10.1.2.9-10.1.2.254",
      "11.1.2.1-11.1.2.254",
    ]);
  });

  it.each<[string, string | Uint8Array]>([
    ["a string", net({ subnet: "10.0.0.0/24" })],
    ["a Buffer", Buffer.from(net({ subnet: "10.0.0.0/24" }))],
    ["a Uint8Array", new TextEncoder().encode(net({ subnet: "10.0.0.0/24" }))],
  ])("reads %s", (_name, bytes) => {
    expect(loadIpamConfig(bytes).config.ranges.map(String)).toEqual(["10.0.0.1-10.0.0.254"]);
  });

  it("treats empty or null bounds as not set, as Go does", () => {
    const text = net({ ranges: [[{ subnet: "10.0.0.0/29", rangeStart: "", rangeEnd: null, gateway: "" }]] });
    expect(rangesOf(text)).toEqual([
      [{ subnet: "10.0.0.0/29", rangeStart: "10.0.0.1", rangeEnd: "10.0.0.6", gateway: "10.0.0.1" }],
    ]);
  });

  it("passes routes, dataDir and resolvConf through", () => {
    const { config } = loadIpamConfig(
      net({
        subnet: "10.0.0.0/24",
        routes: [{ dst: "0.0.0.0/0" }, { dst: "192.168.0.0/16", gw: "10.0.0.1" }],
        dataDir: "/run/ipam",
        resolvConf: "/etc/resolv.conf",
      }),
    );
    expect(config.routes).toEqual([{ dst: "0.0.0.0/0" }, { dst: "192.168.0.0/16", gw: "10.0.0.1" }]);
    expect(config.dataDir).toBe("/run/ipam");
    expect(config.resolvConf).toBe("/etc/resolv.conf");
  });

  describe("requested IPs", () => {
    const threeSets = {
      ranges: [[{ subnet: "10.1.2.0/24" }], [{ subnet: "11.1.2.0/24" }], [{ subnet: "2001:db8:1::/64" }]],
    };
    it.each<[string, string, string | undefined, string[]]>([
      ["CNI_ARGS IP without prefix", net(threeSets), "IP=10.1.2.10", ["10.1.2.10"]],
      ["CNI_ARGS IP with prefix", net(threeSets), "IP=10.1.2.11/24", ["10.1.2.11"]],
      [
        "CNI_ARGS with IgnoreUnknown and other keys",
        net(threeSets),
        "IgnoreUnknown=1;K8S_POD_NAME=web;IP=10.1.2.12",
        ["10.1.2.12"],
      ],
      ["an empty CNI_ARGS IP", net(threeSets), "IP=", []],
      [
        "CNI_ARGS first, then args.cni.ips",
        net(threeSets, { args: { cni: { ips: ["10.1.2.11", "11.11.11.11", "2001:db8:1::11"] } } }),
        "IP=10.1.2.10",
        ["10.1.2.10", "10.1.2.11", "11.11.11.11", "2001:db8:1::11"],
      ],
      [
        "args.cni.ips with prefixes",
        net(threeSets, { args: { cni: { ips: ["10.1.2.11/24", "11.11.11.11/24", "2001:DB8:1::11/64"] } } }),
        "IP=10.1.2.10/24",
        ["10.1.2.10", "10.1.2.11", "11.11.11.11", "2001:db8:1::11"],
      ],
      [
        "runtimeConfig.ips last",
        net(threeSets, {
          args: { cni: { ips: ["10.1.2.11"] } },
          runtimeConfig: { ips: ["192.168.0.1", "192.168.0.5/24", "2001:db8::1/64", "::ffff:10.9.9.9"] },
        }),
        "IP=10.1.2.10",
        ["10.1.2.10", "10.1.2.11", "192.168.0.1", "192.168.0.5", "2001:db8::1", "10.9.9.9"],
      ],
    ])("%s", (_name, text, env, expected) => {
      expect(loadIpamConfig(text, env).config.ipArgs).toEqual(expected);
    });
  });

  describe("errors", () => {
    it.each<[string, string, string | undefined, string, RegExp]>([
      ["not JSON", "{", undefined, "INVALID_CONFIG", /not valid JSON/],
      ["not an object", "[]", undefined, "INVALID_CONFIG", /not a JSON object/],
      [
        "no ipam key",
        JSON.stringify({ cniVersion: "0.3.1", name: "n" }),
        undefined,
        "INVALID_CONFIG",
        /no 'ipam'/,
      ],
      ["no ranges", net({}), undefined, "INVALID_CONFIG", /no IP ranges specified/],
      [
        "ranges not a list",
        net({ ranges: { subnet: "10.0.0.0/24" } }),
        undefined,
        "INVALID_CONFIG",
        /ipam\.ranges is not a list/,
      ],
      [
        "a range set not a list",
        net({ ranges: [{ subnet: "10.0.0.0/24" }] }),
        undefined,
        "INVALID_CONFIG",
        /range set 0 is not a list/,
      ],
      [
        "a bad requested IP",
        net({ subnet: "10.0.0.0/24" }, { args: { cni: { ips: ["10.0.0.300"] } } }),
        undefined,
        "INVALID_CONFIG",
        /args\.cni\.ips: "10\.0\.0\.300"/,
      ],
      [
        "a bad CNI_ARGS IP",
        net({ subnet: "10.0.0.0/24" }),
        "IP=banana",
        "INVALID_CONFIG",
        /CNI_ARGS IP: "banana"/,
      ],
      [
        "unknown CNI_ARGS",
        net({ subnet: "10.0.0.0/24" }),
        "K8S_POD_NAME=web;IP=10.0.0.5",
        "INVALID_CONFIG",
        /unknown args K8S_POD_NAME=web/,
      ],
      [
        "a malformed CNI_ARGS pair",
        net({ subnet: "10.0.0.0/24" }),
        "IP",
        "INVALID_CONFIG",
        /invalid pair "IP"/,
      ],
      [
        "a bad IgnoreUnknown",
        net({ subnet: "10.0.0.0/24" }),
        "IgnoreUnknown=yes",
        "INVALID_CONFIG",
        /IgnoreUnknown=yes/,
      ],
      [
        "overlap within a set",
        net({ ranges: [[{ subnet: "10.1.0.0/22" }, { subnet: "10.1.2.0/24" }]] }),
        undefined,
        "OVERLAPPING_RANGES",
        /^invalid range set 0: ranges 10\.1\.0\.1-10\.1\.3\.254 and 10\.1\.2\.1-10\.1\.2\.254 overlap/,
      ],
      [
        "overlap between sets",
        net({
          ranges: [
            [{ subnet: "10.1.2.0/24" }, { subnet: "10.2.2.0/24" }],
            [{ subnet: "10.1.4.0/24" }, { subnet: "10.1.2.0/24" }],
          ],
        }),
        undefined,
        "OVERLAPPING_RANGES",
        /^range set 1 overlaps with 0/,
      ],
      [
        "overlap between the runtime set and the legacy range",
        net({ subnet: "10.1.2.0/24" }, { runtimeConfig: { ipRanges: [[{ subnet: "10.1.0.0/16" }]] } }),
        undefined,
        "OVERLAPPING_RANGES",
        /^range set 1 overlaps with 0/,
      ],
      [
        "mixed families",
        net({ ranges: [[{ subnet: "10.1.0.0/22" }, { subnet: "2001:db8:5::/64" }]] }),
        undefined,
        "MIXED_FAMILIES",
        /^invalid range set 0: range set mixes/,
      ],
      [
        "an empty set",
        net({ ranges: [[{ subnet: "10.1.0.0/22" }], []] }),
        undefined,
        "EMPTY_RANGE_SET",
        /^invalid range set 1: /,
      ],
      [
        "host bits in the legacy range",
        net({ subnet: "10.1.2.3/24" }),
        undefined,
        "HOST_BITS_SET",
        /^invalid range set 0: .*network address is 10\.1\.2\.0/,
      ],
      [
        "a too small network",
        net({ ranges: [[{ subnet: "10.1.2.0/31" }]] }),
        undefined,
        "NETWORK_TOO_SMALL",
        /^invalid range set 0: /,
      ],
      [
        "a missing subnet",
        net({ ranges: [[{ rangeStart: "10.1.2.5" }]] }),
        undefined,
        "INVALID_RANGE",
        /^invalid range set 0: range has no subnet/,
      ],
      [
        "two IPv4 sets before CNI 0.3.0",
        JSON.stringify({
          cniVersion: "0.2.0",
          name: "n",
          ipam: { ranges: [[{ subnet: "10.1.2.0/24" }], [{ subnet: "11.1.2.0/24" }]] },
        }),
        undefined,
        "INVALID_CONFIG",
        /CNI version "0\.2\.0" does not support more than one address per family/,
      ],
      [
        "two IPv6 sets without a version (0.1.0)",
        JSON.stringify({
          name: "n",
          ipam: { ranges: [[{ subnet: "2001:db8:1::/64" }], [{ subnet: "2001:db8:2::/64" }]] },
        }),
        undefined,
        "INVALID_CONFIG",
        /does not support more than one address per family/,
      ],
    ])("%s", (_name, text, env, code, message) => {
      expect(() => loadIpamConfig(text, env)).toThrow(
        expect.objectContaining({ name: "IpamError", code, message: expect.stringMatching(message) }),
      );
    });

    it.each(["0.2.0", "0.1.0", ""])("allows one IPv4 and one IPv6 set with CNI version %j", (cniVersion) => {
      const text = JSON.stringify({
        cniVersion,
        name: "n",
        ipam: { ranges: [[{ subnet: "10.1.2.0/24" }], [{ subnet: "2001:db8:1::/48" }]] },
      });
      const { config, cniVersion: version } = loadIpamConfig(text);
      expect(config.ranges).toHaveLength(2);
      expect(version).toBe(cniVersion);
    });

    it.each(["0.3.0", "0.4.0", "1.0.0", "1.1"])(
      "allows several sets per family with CNI version %s",
      (cniVersion) => {
        const text = JSON.stringify({
          cniVersion,
          name: "n",
          ipam: { ranges: [[{ subnet: "10.1.2.0/24" }], [{ subnet: "11.1.2.0/24" }]] },
        });
        expect(loadIpamConfig(text).config.ranges).toHaveLength(2);
      },
    );
  });
});
