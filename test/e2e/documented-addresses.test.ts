// The addresses the docs state in their examples' comments, e.g. `// also web.cidr ("10.0.8.10/24")`,
// are what running the example gives: each such block runs as a Pulumi program (one stack, one
// preview, one up) and every stated value is compared with the resource's outputs after up, and
// its planned inputs at preview where preview shows that property.
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { exampleProgram } from "../../scripts/consumer.mjs";
import { Harness } from "../support/harness";
import { codeBlocks, documentationFiles } from "../support/markdown";

/** A value a comment states: `variable.property ("value")`. */
interface Claim {
  variable: string;
  property: string;
  value: string;
}

function claims(code: string): Claim[] {
  return code.split("\n").flatMap((line) => {
    const comment = line.slice(line.indexOf("//") + 2);
    if (!line.includes("//")) return [];
    return [...comment.matchAll(/\b(\w+)\.(\w+) \("([^"]+)"\)/g)].map(([, variable, property, value]) => ({
      variable: variable!,
      property: property!,
      value: value!,
    }));
  });
}

/** Variable → logical name, from `const web = new IpAllocation("web", …)`. */
function logicalNames(code: string): Map<string, string> {
  return new Map([...code.matchAll(/\bconst (\w+) = new \w+\("([^"]+)"/g)].map((m) => [m[1]!, m[2]!]));
}

const stating = documentationFiles()
  .flatMap(codeBlocks)
  .filter((b) => (b.lang === "ts" || b.lang === "typescript") && !b.notCompiled && claims(b.code).length > 0);

describe("addresses the docs state", () => {
  it("are stated by the README's quick start", () => {
    expect(stating.map((b) => b.file)).toContain("README.md");
  });

  describe.each(stating.map((b) => [`${b.file}:${b.line}`, b] as const))("%s", (_, block) => {
    const h = Harness.create("documented");
    afterAll(() => h.dispose());
    const names = logicalNames(block.code);

    it("are what preview plans and up gives", async () => {
      const file = path.join(h.workDir, "index.ts");
      fs.writeFileSync(file, block.code);
      await h.program(exampleProgram(file, h.consumerDir));
      const preview = await h.preview();
      await h.up();
      const state = await h.resources();
      const stated = claims(block.code).map((c) => ({ ...c, name: names.get(c.variable) }));
      const found = stated.map(({ variable, property, name }) => {
        const resource = state.find((r) => name !== undefined && r.urn.endsWith(`::${name}`));
        const planned = name === undefined ? undefined : preview.planned(name);
        return {
          variable,
          property,
          value: resource?.outputs?.[property],
          ...(planned && property in planned && { planned: planned[property] }),
        };
      });
      const expected = stated.map(({ variable, property, value }, i) => ({
        variable,
        property,
        value,
        ...(found[i] && "planned" in found[i] && { planned: value }),
      }));
      expect(found).toEqual(expected);
    });
  });
});

// docs/resources/prefix-allocation.md contrasts its best-fit (lowest-free) block with what the
// default strategy would give: the same program under round-robin puts `small` at the start of the
// range, and `large` finds no /25.
describe("the prefix-allocation page's best-fit block under round-robin", () => {
  const page = "docs/resources/prefix-allocation.md";
  const h = Harness.create("documented-rr");
  afterAll(() => h.dispose());

  it("plans small at 10.9.1.0/27 and leaves no /25 for large, as the page says", async () => {
    const prose = fs.readFileSync(path.join(__dirname, "..", "..", page), "utf8").replace(/\s+/g, " ");
    expect(prose).toContain(
      "with `round-robin`, `small` would take `10.9.1.0/27` and `large` would find no /25 (`POOL_EXHAUSTED`)",
    );
    const block = stating.find((b) => b.file === page && b.code.includes('strategy: "lowest-free"'));
    expect(block, `${page}: the lowest-free block`).toBeDefined();
    const roundRobin = block!.code.replace(', strategy: "lowest-free"', "");
    expect(roundRobin).not.toContain("lowest-free");
    const run = async (code: string) => {
      const file = path.join(h.workDir, "index.ts");
      fs.writeFileSync(file, code);
      await h.program(exampleProgram(file, h.consumerDir));
      return h.preview();
    };
    // Without large, small's plan; with it, large's refusal (its check plans small ahead of it).
    const withoutLarge = roundRobin
      .split("\n")
      .filter((l) => !l.includes('new PrefixAllocation("large"'))
      .join("\n");
    expect((await run(withoutLarge)).planned("small")?.cidr).toBe("10.9.1.0/27");
    const failed = await run(roundRobin).then(
      () => "",
      (e: Error) => String(e),
    );
    expect(failed).toContain("[POOL_EXHAUSTED] no free /25 block left");
  });
});
