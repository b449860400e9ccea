#!/usr/bin/env bash
# The whole test suite: toolchain setup (with the test cluster's servers), format and lint checks,
# typecheck, unit and end-to-end tests (the e2e global setup starts and stops the test cluster).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/setup.sh
bash scripts/setup-moto.sh
bash scripts/setup-kube.sh
bash scripts/setup-examples.sh
export PATH="$root/.tools/bin:$root/node_modules/.bin:$PATH"
export PULUMI_SKIP_UPDATE_CHECK=true PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION=true
echo "== format, lint, typecheck" >&2
prettier --check --log-level warn .
eslint .
tsc --noEmit -p tsconfig.json
node scripts/check-api-docs.mjs
node scripts/api-docs.mjs --check
node scripts/check-import-graph.mjs
echo "== tests" >&2
vitest run "$@"
