// The quick starts in TypeScript, YAML and Python, as users run them (test/e2e/example-runs.ts),
// beside examples.cluster.test.ts, which runs the other examples.
import { languageExamples, runExamples } from "./example-runs";

runExamples(languageExamples);
