import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          include: ["test/**/*.test.ts"],
          exclude: ["test/e2e/**", "test/**/*.cluster.test.ts"],
          // Timeouts only guard against hangs (speed is checked by `npm run bench`): the moto tests
          // take about a second each alone and several times that on 2 cores shared with the e2e run.
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
      {
        test: {
          name: "e2e",
          // *.cluster.test.ts: tests against the real kube-apiserver the global setup starts.
          include: ["test/e2e/**/*.test.ts", "test/**/*.cluster.test.ts"],
          globalSetup: ["test/support/global-setup.ts"],
          // Each file in its own process: an inline Pulumi program owns process-wide runtime state.
          pool: "forks",
          testTimeout: 180_000,
          hookTimeout: 180_000,
        },
      },
    ],
  },
});
