import { describe, expect, it } from "vitest";
import { unknownValue, unwrap, toWire } from "../../provider/plugin/wire-values";

const sig = "4dabf18193072939515e22adb298388d";
const secret = (value: unknown) => ({ [sig]: "1b47061264138c4ac30d75fd1eb44270", value });
const output = (o: Record<string, unknown>) => ({ [sig]: "d0e6a833031e9bbcd3f4e8bde6ca49a4", ...o });
const ref = (urn: string, id?: string) => ({
  [sig]: "5cf8f73096256a8f31e491e813e4eb8e",
  urn,
  id,
  packageVersion: "",
});

describe("values as the engine sends them to the plugin are made plain in one place", () => {
  it.each([
    ["a plain value stays", { ip: "10.0.0.1", n: 2, ok: true }, { ip: "10.0.0.1", n: 2, ok: true }, [], []],
    ["a secret is its value", { k: secret("yaml") }, { k: "yaml" }, ["yaml"], []],
    [
      "a secret object makes every string in it secret",
      { ledger: secret({ kind: "kubernetes", kubeconfig: "cfg" }) },
      { ledger: { kind: "kubernetes", kubeconfig: "cfg" } },
      ["kubernetes", "cfg"],
      [],
    ],
    [
      "an output with a value is the value",
      { ip: output({ value: "10.0.0.2" }) },
      { ip: "10.0.0.2" },
      [],
      [],
    ],
    ["a secret output is a secret", { ip: output({ value: "s", secret: true }) }, { ip: "s" }, ["s"], []],
    [
      "an output without a value is unknown",
      { ip: output({ dependencies: [] }) },
      { ip: unknownValue },
      [],
      [],
    ],
    ["an unknown stays unknown and is no secret", { k: secret(unknownValue) }, { k: unknownValue }, [], []],
    [
      "a reference is its URN, recorded by path",
      { pool: ref("urn:pulumi:s::p::egress-ipam:index:IpPool::pool", "id1"), list: [ref("urn:b")] },
      { pool: "urn:pulumi:s::p::egress-ipam:index:IpPool::pool", list: ["urn:b"] },
      [],
      ["pool", "list[0]"],
    ],
  ])("%s", (_name, wire, plain, secrets, refs) => {
    const got = unwrap(wire);
    expect(got.value).toEqual(plain);
    expect([...got.secrets].sort()).toEqual([...secrets].sort());
    expect([...got.refs.keys()]).toEqual(refs);
  });

  it("a reference keeps its ID when known, not an unknown or empty one", () => {
    expect(unwrap({ a: ref("u", "id1"), b: ref("u", unknownValue), c: ref("u", "") }).refs).toEqual(
      new Map([
        ["a", { urn: "u", id: "id1" }],
        ["b", { urn: "u" }],
        ["c", { urn: "u" }],
      ]),
    );
  });

  it("secrets are wrapped again wherever the provider put them, and nothing else is", () => {
    const out = toWire(
      { pool: { ledger: { kubeconfig: "cfg", name: "n" } }, list: ["cfg", "x"] },
      new Set(["cfg"]),
    );
    expect(out).toEqual({
      pool: { ledger: { kubeconfig: secret("cfg"), name: "n" } },
      list: [secret("cfg"), "x"],
    });
    expect(toWire({ a: "cfg" }, new Set())).toEqual({ a: "cfg" });
  });

  it("keeps the top-level properties it is told plain (an allocation's record), the same value secret elsewhere", () => {
    expect(toWire({ ip: "10.0.0.5", ips: ["10.0.0.5"] }, new Set(["10.0.0.5"]), new Set(["ips"]))).toEqual({
      ip: secret("10.0.0.5"),
      ips: ["10.0.0.5"],
    });
  });

  it("leaves out what is undefined, which the wire has no value for", () => {
    expect(toWire({ a: undefined, b: [undefined, 1], c: { d: undefined, e: null } }, new Set())).toEqual({
      b: [null, 1],
      c: { e: null },
    });
  });
});
