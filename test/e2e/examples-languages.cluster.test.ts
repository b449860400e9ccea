// The quick starts in TypeScript, YAML and Python and two cluster examples, as users run them
// (test/e2e/example-runs.ts), beside examples.cluster.test.ts, which runs the other examples.
import { secondFileExamples, runExamples } from "./example-runs";

runExamples(secondFileExamples);
