// `npm run explore -- --minutes N --seed S [--length L]`: a session of the explorer (docs/exploring.md),
// run by vitest's `explore` project, which npm test does not run. Its settings come from
// scripts/explore.sh as EXPLORE_* variables.
import * as path from "node:path";
import { expect, it } from "vitest";
import { explore } from "./session";

const minutes = Number(process.env.EXPLORE_MINUTES ?? "10");
const seed = Number(process.env.EXPLORE_SEED ?? "1");
const length = Number(process.env.EXPLORE_LENGTH ?? "10");
const shrinkMinutes = Number(process.env.EXPLORE_SHRINK_MINUTES ?? "10");
const cloud = (process.env.EXPLORE_CLOUD ?? "mixed") as "none" | "mixed" | "all";
const shared = (process.env.EXPLORE_SHARED ?? "mixed") as "none" | "mixed" | "all";
const yaml = (process.env.EXPLORE_YAML ?? "mixed") as "none" | "mixed" | "all";
const platform = (process.env.EXPLORE_PLATFORM ?? "mixed") as "none" | "mixed" | "all";
const kills = (process.env.EXPLORE_KILLS ?? "on") === "on";
const foundDir = process.env.EXPLORE_FOUND ?? path.join(__dirname, "..", "..", ".explore", "found");

it(
  `explores from seed ${seed} for ${minutes} minutes, ${length} edits a sequence`,
  async () => {
    const figures = await explore({
      seed,
      length,
      cloud,
      shared,
      yaml,
      platform,
      kills,
      budgetMs: minutes * 60_000,
      shrinkMs: shrinkMinutes * 60_000,
      foundDir,
      log: (line) => console.log(line),
    });
    console.log(`\nexplored: ${JSON.stringify(figures, null, 2)}`);
    expect(figures.failures).toEqual([]);
  },
  (minutes + shrinkMinutes * 4 + 10) * 60_000,
);
