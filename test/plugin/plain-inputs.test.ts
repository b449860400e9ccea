import * as fs from "node:fs";
import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { describe, expect, it } from "vitest";
import { plainConstructInputs, plainInputs, unknownPlainInputs } from "../../provider/plugin/plain-inputs";
import { unknownValue } from "../../provider/plugin/wire-values";

const schema = fs.readFileSync(path.join(__dirname, "../../provider/plugin/schema.json"), "utf8");
const specs = plainInputs(schema);
const egressIp = specs.get("egress-ipam:index:EgressIp")!;
const rpcSecret = (value: unknown) => ({
  "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270",
  value,
});
/** An output as the SDK deserializes one not known at preview. */
const unknown = () => pulumi.output(pulumi.unknown as unknown as string);

describe("the plugin's plain inputs", () => {
  it("are the schema's plain ones: where TypeScript takes only a value", () => {
    const names = Object.fromEntries(
      [...specs].map(([token, props]) => [token.split(":")[2], Object.keys(props).sort()]),
    );
    expect(names).toEqual({
      IpAllocation: ["family", "pool"],
      PrefixAllocation: ["pool"],
      CidrAssignment: ["pool"],
      EgressIpAssignment: ["failureDomain"],
      EgressIp: ["adopt", "after", "failureDomains", "families", "ips", "pool"],
    });
    // A plain list of plain domains; a plain list of addresses that may be outputs.
    expect([egressIp.failureDomains!.items?.plain, egressIp.ips!.items?.plain]).toEqual([true, undefined]);
  });

  it.each([
    ["failureDomains", { failureDomains: unknown() }, "an output not known at preview"],
    ["failureDomains[0]", { failureDomains: [unknown(), "b"] }, "an output not known at preview"],
    ["failureDomains[1]", { failureDomains: ["a", pulumi.secret("b")] }, "a secret"],
    ["failureDomains[1]", { failureDomains: ["a", rpcSecret("b")] }, "a secret"],
    ["failureDomains[0]", { failureDomains: [unknownValue] }, "an output not known at preview"],
    ["families", { families: unknown() }, "an output not known at preview"],
    [
      "adopt",
      { adopt: pulumi.output(pulumi.unknown as unknown as boolean) },
      "an output not known at preview",
    ],
    ["adopt", { adopt: pulumi.secret(false) }, "a secret"],
    ["ips", { ips: unknown() }, "an output not known at preview"],
    ["pool.b", { pool: { a: "poolA", b: unknown() } }, "an output not known at preview"],
  ])("refuses %s given as %j, naming it, with INVALID_INPUT", async (at, inputs, what) => {
    const e = await plainConstructInputs("EgressIp", "team", inputs, egressIp).catch((e: unknown) => e);
    expect(e).toMatchObject({ code: "INVALID_INPUT" });
    expect(String((e as Error).message)).toMatch(
      `[INVALID_INPUT] EgressIp "team": ${at} is ${what}: it decides what the EgressIp is made of`,
    );
    expect(String((e as Error).message)).toContain("give it as a plain value");
  });

  it("takes an output known at preview and not secret by its value, and leaves the ips' addresses as given", async () => {
    const address = unknown();
    const given = await plainConstructInputs(
      "EgressIp",
      "team",
      {
        failureDomains: pulumi.output(["a", pulumi.output("b")]),
        adopt: pulumi.output(false),
        families: "ipv4",
        ips: [address, "10.0.0.2"],
        pool: pulumi.output({ a: "poolA" }),
        namespace: unknown(),
      },
      egressIp,
    );
    expect(given).toMatchObject({
      failureDomains: ["a", "b"],
      adopt: false,
      families: "ipv4",
      pool: { a: "poolA" },
    });
    expect((given.ips as unknown[])[0]).toBe(address);
    expect(pulumi.Output.isInstance(given.namespace)).toBe(true);
  });

  it("refuses a custom resource's plain input not known at preview at check, naming it", () => {
    const ipAllocation = specs.get("egress-ipam:index:IpAllocation");
    expect(
      unknownPlainInputs(
        "IpAllocation",
        { pool: "urn:p", family: unknownValue, ip: unknownValue },
        ipAllocation,
      ),
    ).toEqual([
      {
        property: "family",
        reason: expect.stringMatching(
          /^\[INVALID_INPUT\] family of IpAllocation is an output not known at preview: .* give it as a plain value/,
        ),
      },
    ]);
    expect(unknownPlainInputs("IpAllocation", { pool: "urn:p", family: "ipv6" }, ipAllocation)).toEqual([]);
  });
});
