import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { exampleProgram, repoRoot } from "../../scripts/consumer.mjs";
import { changesOf, Harness } from "../support/harness";

// Every example is a project users copy: it must preview, apply, stay still and clean up.
const examples = fs
  .readdirSync(path.join(repoRoot, "examples"))
  .filter((d) => fs.existsSync(path.join(repoRoot, "examples", d, "index.ts")));

describe.each(examples)("example %s", (example) => {
  const h = Harness.create(`example-${example}`);
  afterAll(() => h.dispose());

  it("previews, applies, changes nothing on a second up, and destroys", async () => {
    await h.program(exampleProgram(path.join(repoRoot, "examples", example, "index.ts"), h.consumerDir));
    const preview = await h.preview();
    expect(preview.changeSummary.create).toBeGreaterThan(1);
    const up = await h.up();
    expect(Object.keys(up.outputs).length).toBeGreaterThan(0);
    expect(changesOf((await h.up()).summary.resourceChanges)).toEqual({});
    await h.destroy();
    expect((await h.resources()).filter((r) => r.type !== "pulumi:pulumi:Stack")).toEqual([]);
  });
});
