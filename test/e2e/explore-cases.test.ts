// The explorer's regression cases (test/explore/cases/*.json): sequences it once found breaking a
// promise, shrunk, each replayed with the real engine and checked after every step as the
// explorer checks them (test/explore/runner.ts). A case passes when every promise holds.
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCloud, type CloudServers } from "../explore/cloud";
import type { ExploreCase } from "../explore/report";
import { describeFailure } from "../explore/report";
import { runSequence } from "../explore/runner";

const dir = path.join(__dirname, "..", "explore", "cases");
const cases = fs
  .readdirSync(dir)
  .filter((f) => f.endsWith(".json"))
  .sort()
  .map((f) => [f, JSON.parse(fs.readFileSync(path.join(dir, f), "utf8")) as ExploreCase] as const);

describe("the explorer's regression cases", () => {
  let servers: CloudServers | undefined;
  beforeAll(async () => {
    if (cases.some(([, c]) => c.cloud)) servers = await startCloud();
  });
  afterAll(async () => servers?.stop());

  it("has cases to replay", () => {
    expect(cases.length).toBeGreaterThan(0);
  });

  it.each(cases)("%s", async (_, c) => {
    const result = await runSequence(
      { edits: c.edits, cloud: Boolean(c.cloud), shared: Boolean(c.shared) },
      () => {},
      servers,
    );
    expect(result.violation ? describeFailure(result) : undefined).toBeUndefined();
    expect(result.steps.map((s) => s.outcome)).not.toContain("skipped");
  });
});
