import { describe, expect, it } from "vitest";
import { CliError } from "../../provider/cli/cli-error";
import { deploymentAt, parseExport, parseHistory } from "../../provider/cli/stack-snapshot";

const history = (versions: number[]) =>
  JSON.stringify(
    versions.map((version, i) => ({
      version,
      kind: i === 1 ? "refresh" : "update",
      startTime: `2026-01-0${i + 1}T10:00:00.000Z`,
      endTime: `2026-01-0${i + 1}T10:00:09.000Z`,
    })),
  );

describe("parseHistory", () => {
  it.each<[string, string, [number, string][]]>([
    [
      "Pulumi Cloud versions, newest first",
      JSON.stringify([
        { version: 3, kind: "update", startTime: "2026-01-03T10:00:00.000Z" },
        { version: 2, kind: "refresh", startTime: "2026-01-02T10:00:00.000Z" },
        { version: 1, kind: "update", startTime: "2026-01-01T10:00:00.000Z" },
      ]),
      [
        [1, "update"],
        [2, "refresh"],
        [3, "update"],
      ],
    ],
    [
      "the file backend's zeros, numbered in time order from 1",
      history([0, 0, 0]),
      [
        [1, "update"],
        [2, "refresh"],
        [3, "update"],
      ],
    ],
    ["not JSON: no history", "error: no history", []],
  ])("%s", (_name, text, expected) => {
    expect(parseHistory(text).map((d) => [d.version, d.kind])).toEqual(expected);
  });
});

describe("deploymentAt", () => {
  const deployments = parseHistory(history([0, 0, 0]));
  it.each<[string, string | undefined, number | undefined]>([
    ["during the second", "2026-01-02T10:00:05.123Z", 2],
    ["in the second's first second (history times are whole seconds)", "2026-01-02T09:59:59.800Z", 2],
    ["after the last", "2026-02-01T00:00:00Z", 3],
    ["before the first", "2025-12-31T00:00:00Z", undefined],
    ["no timestamp", undefined, undefined],
  ])("%s", (_name, when, version) => {
    expect(deploymentAt(deployments, when)?.version).toBe(version);
  });
});

describe("parseExport", () => {
  it("keeps live resources and interrupted creates apart", () => {
    const text = JSON.stringify({
      deployment: {
        resources: [{ urn: "urn:a", type: "t" }],
        pending_operations: [
          { type: "creating", resource: { urn: "urn:b", type: "t" } },
          { type: "updating", resource: { urn: "urn:a", type: "t" } },
        ],
      },
    });
    const { resources, pendingCreates } = parseExport(text, "o/p/s");
    expect(resources.map((r) => r.urn)).toEqual(["urn:a"]);
    expect(pendingCreates.map((r) => r.urn)).toEqual(["urn:b"]);
  });

  it.each([
    ["not JSON", "oops", /did not print JSON/],
    ["no deployment", "{}", /has no `deployment`/],
    ["resources not a list", '{"deployment":{"resources":{}}}', /is not a list/],
    ["a resource without urn", '{"deployment":{"resources":[{"type":"t"}]}}', /a resource has no urn/],
  ])("refuses %s with one CliError naming the stack", (_name, text, reason) => {
    const err = (() => {
      try {
        parseExport(text, "o/p/s");
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(CliError);
    // Exit 2, as docs/operating.md says for `check` (a usage error, not "not checked").
    expect((err as CliError).exitCode).toBe(2);
    expect((err as Error).message).toMatch(/^the checkpoint of stack "o\/p\/s" is unreadable: /);
    expect((err as Error).message).toMatch(reason);
    expect((err as Error).message).not.toContain("\n");
  });
});
