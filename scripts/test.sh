#!/usr/bin/env bash
# The whole test suite: toolchain setup, format and lint checks, typecheck, unit and end-to-end
# tests. The test cluster's servers, the example projects' language host and plugin, and the
# YAML, Python and Go language hosts with pulumi-codegen (tens of minutes of Go builds from empty
# caches) build in the background, at low priority, while the checks, the unit tests and the
# end-to-end tests that need none of them run; the `cluster` vitest project (its global setup
# starts and stops the test cluster) runs once all but the examples' Kubernetes provider plugin are
# built, while that one builds, and the `examples` project once it is.
# With arguments (`npm test -- test/allocator`), everything is built first and vitest gets them.
set -euo pipefail
# Each phase says when it starts, so a run's log shows where its time went.
phase() { echo "== $* (at ${SECONDS}s)" >&2; }
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/setup.sh
bash scripts/setup-moto.sh
export PATH="$root/.tools/bin:$root/node_modules/.bin:$PATH"
export PULUMI_SKIP_UPDATE_CHECK=true PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION=true

builds_log="$root/.tools/cluster-builds.log"
# Written by the builds once everything but the Kubernetes provider plugin is built.
cluster_ready="$root/.tools/cluster-builds.ready"
rm -f "$cluster_ready"
# In a session of its own, so its process group (the Go builds under it) can be stopped together.
setsid nice -n 10 bash -c 'bash scripts/setup-kube.sh && bash scripts/setup-examples.sh --host &&
  bash scripts/setup-languages.sh && touch "$0" && bash scripts/setup-examples.sh' \
  "$cluster_ready" >"$builds_log" 2>&1 &
builds=$!
# Stopped by its recorded PID if this script ends first (a failed check): never left building.
trap 'kill -- "-$builds" 2>/dev/null || true' EXIT
wait_for_builds() {
  phase "waiting for the test cluster and example builds (log: $builds_log)"
  if ! wait "$builds"; then
    cat "$builds_log" >&2
    echo "test: building the test cluster or the example tools failed (above)" >&2
    exit 1
  fi
  trap - EXIT
}
# Until all but the Kubernetes provider plugin are built (polled: the builds go on after that).
wait_for_cluster_builds() {
  phase "waiting for the test cluster builds (log: $builds_log)"
  while [ ! -e "$cluster_ready" ]; do
    if ! kill -0 "$builds" 2>/dev/null; then wait_for_builds; return; fi
    sleep 2
  done
}

if [ "$#" -gt 0 ]; then
  wait_for_builds
  vitest run "$@"
  exit 0
fi

phase "format, lint, typecheck"
prettier --check --log-level warn .
eslint .
tsc --noEmit -p tsconfig.json
node scripts/check-api-docs.mjs
node scripts/api-docs.mjs --check
node scripts/check-import-graph.mjs
node scripts/plugin-schema.mjs --check
phase "unit tests, and end-to-end tests without the cluster"
vitest run --project unit --project e2e
wait_for_cluster_builds
phase "end-to-end tests with the test cluster"
vitest run --project cluster
wait_for_builds
phase "the example projects"
vitest run --project examples
phase "done"
