/**
 * The explorer's regression cases (test/explore/cases/*.json), replayed: sequences it once found
 * breaking a promise, shrunk, each run with the real engine and checked after every step as the
 * explorer checks them (runner.ts). A case passes when every promise holds.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCloud, type CloudServers } from "./cloud";
import { describeFailure, type ExploreCase } from "./report";
import { runSequence } from "./runner";

/**
 * The case files, by name: `onCluster`, those that need the cluster project's builds (a shared or
 * platform world's test cluster, a YAML world's language host and plugin); else the others.
 */
export function exploreCases(onCluster: boolean): (readonly [string, ExploreCase])[] {
  const dir = path.join(__dirname, "cases");
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((f) => [f, JSON.parse(fs.readFileSync(path.join(dir, f), "utf8")) as ExploreCase] as const)
    .filter(([, c]) => Boolean(c.shared || c.yaml || c.platform) === onCluster);
}

/** A test per case of `cases`, each replayed and required to keep every promise at every step. */
export function replayCases(cases: (readonly [string, ExploreCase])[]): void {
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
      const plan = {
        edits: c.edits,
        cloud: Boolean(c.cloud),
        shared: Boolean(c.shared),
        yaml: Boolean(c.yaml),
        ...(c.platform ? { platform: c.platform } : {}),
      };
      const result = await runSequence(plan, () => {}, servers);
      expect(result.violation ? describeFailure(result) : undefined).toBeUndefined();
      expect(result.steps.map((s) => s.outcome)).not.toContain("skipped");
    });
  });
}
