import { defineConfig } from "vitest/config";

// End-to-end tests that need what scripts/setup-kube.sh and scripts/setup-examples.sh build (the
// Kubernetes test cluster; the language host and plugins of example projects run with plain
// `pulumi up`) are the `cluster` and `examples` projects'; scripts/test.sh runs the others while
// those build, and `cluster` while the examples' Kubernetes provider plugin builds.
const examples = ["test/e2e/example*.test.ts"];
const needsClusterBuilds = ["test/**/*.cluster.test.ts", ...examples];

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
          // As many as `e2e` (vitest runs the two projects as one group, which needs one figure).
          maxWorkers: 2,
        },
      },
      {
        test: {
          name: "e2e",
          include: ["test/e2e/**/*.test.ts"],
          exclude: needsClusterBuilds,
          globalSetup: ["test/support/global-setup-local.ts"],
          // Each file in its own process: an inline Pulumi program owns process-wide runtime state.
          pool: "forks",
          // Two files at once: one at a time left 40 % of 2 cores idle (vmstat, 2026-12-07), each
          // file mostly waiting on the engine; every file works in stacks, moto servers and
          // folders of its own.
          maxWorkers: 2,
          testTimeout: 180_000,
          hookTimeout: 180_000,
        },
      },
      {
        test: {
          name: "cluster",
          // *.cluster.test.ts: tests against the real kube-apiserver the global setup starts.
          include: needsClusterBuilds,
          exclude: examples,
          globalSetup: ["test/support/global-setup.ts"],
          pool: "forks",
          // Two files at once on the shared cluster (each works in namespaces, Nodes and subnets of
          // its own): most of their time is spent waiting on the engine and the API server, and
          // vitest's default, one fewer than the cores, is one file at a time on 2 cores.
          maxWorkers: 2,
          testTimeout: 180_000,
          hookTimeout: 180_000,
        },
      },
      {
        test: {
          // `npm run explore` (scripts/explore.sh): the explorer's long sessions, never run by npm test.
          name: "explore",
          include: ["test/explore/**/*.explore.ts"],
          globalSetup: ["test/support/global-setup-local.ts"],
          pool: "forks",
          testTimeout: 0,
          hookTimeout: 180_000,
        },
      },
      {
        test: {
          // The example projects, run with plain `pulumi up` in their folders (some with
          // @pulumi/kubernetes, whose provider plugin is the last of the builds).
          name: "examples",
          include: examples,
          globalSetup: ["test/support/global-setup.ts"],
          pool: "forks",
          // Two files at once, as in `cluster` (the examples are split into two files for it).
          maxWorkers: 2,
          testTimeout: 180_000,
          hookTimeout: 180_000,
        },
      },
    ],
  },
});
