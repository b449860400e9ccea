import { describe, expect, it } from "vitest";
import { typeErrors } from "../support/compile-blocks";
import { codeBlocks, documentationFiles } from "../support/markdown";

// Blocks marked `<!-- not compiled: reason -->` (page: reason): listed so that they cannot grow unseen.
const notCompiled = ["docs/provisioners.md: a provisioner setting, a property of the EgressIp above"];

describe("TypeScript blocks of README.md and docs/", () => {
  const blocks = documentationFiles()
    .flatMap(codeBlocks)
    .filter((b) => b.lang === "ts" || b.lang === "typescript");
  const compiled = blocks.filter((b) => b.notCompiled === undefined);

  it("finds the blocks, and only the listed ones are marked not compiled", () => {
    expect(compiled.length).toBeGreaterThan(10);
    expect(blocks.filter((b) => b.notCompiled).map((b) => `${b.file}: ${b.notCompiled}`)).toEqual(
      notCompiled,
    );
  });

  it("compile against the package's public entry points", () => {
    expect(typeErrors(compiled)).toEqual([]);
  });

  it.each([
    [
      'import { IpPool } from "pulumi-egress-ipam";\nnew IpPool("p", { ranges: [{ subnet: 10 }] });',
      /number.*string/,
    ],
    ['import { IpPool } from "pulumi-egress-ipam/resources/ip-pool";', /Cannot find module/],
    ["new IpPool('p', {});", /Cannot find name 'IpPool'/],
    [
      'import { IpAllocator } from "pulumi-egress-ipam/allocator";\nexport const a: typeof IpAllocator = IpAllocator;',
      null,
    ],
  ])("judges %j", (code, error) => {
    const errors = typeErrors([{ file: "x.md", line: 10, code }]);
    if (error === null) expect(errors).toEqual([]);
    else expect(errors.join("\n")).toMatch(error);
  });
});
