// The examples that talk to the cluster or to moto, as users run them (test/e2e/example-runs.ts);
// the quick starts in each language and two others run beside this file, in examples-languages.cluster.test.ts.
import { expect, it } from "vitest";
import { exampleNames } from "../support/example-project";
import { secondFileExamples, runExamples, specs, testedElsewhere } from "./example-runs";

it("has a way to run every example", () => {
  expect(Object.keys(specs).sort()).toEqual(exampleNames().filter((n) => !(n in testedElsewhere)));
  for (const name of secondFileExamples) expect(Object.keys(specs)).toContain(name);
});

runExamples(Object.keys(specs).filter((n) => !secondFileExamples.includes(n)));
