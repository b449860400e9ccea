import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { minimumOf, nodeRefusal, satisfies } from "../../provider/plugin/supported-node";

const engines = (
  JSON.parse(fs.readFileSync(path.join(__dirname, "../../package.json"), "utf8")) as {
    engines: { node: string };
  }
).engines.node;

describe("the Node.js the plugin runs on", () => {
  it("reads the package's engines.node", () => {
    expect(() => minimumOf(engines)).not.toThrow();
  });

  it.each([
    ["v20.20.2", ">=22", false],
    ["v22.0.0", ">=22", true],
    ["v24.22.3", ">=22", true],
    ["v22.11.0", ">=22.12", false],
    ["v22.12.0", ">=22.12.0", true],
    ["22.12.1", ">= 22.12.0", true],
  ])("%s satisfies %s: %s", (version, range, ok) => {
    expect(satisfies(version, range)).toBe(ok);
  });

  it.each([["^22"], ["22.x"], [">=22 <26"], [""]])(
    "a range of another form (%j) is refused by name",
    (range) => {
      expect(() => minimumOf(range)).toThrow(`engines.node "${range}"`);
    },
  );

  it("the refusal is one line naming both versions and the node it ran", () => {
    expect(nodeRefusal("v24.1.0", "/usr/bin/node", ">=22")).toBeUndefined();
    expect(nodeRefusal("v20.20.2", "/usr/bin/node", ">=22")).toBe(
      "pulumi-resource-egress-ipam needs Node.js >=22, and this is Node.js v20.20.2 (/usr/bin/node): " +
        "put a newer node first on PATH, or name it in PULUMI_EGRESS_IPAM_NODE",
    );
  });
});
