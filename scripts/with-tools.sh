#!/usr/bin/env bash
# Runs a command with the project's toolchain (Node >= 22, Pulumi CLI, npm binaries) first on PATH,
# installing it first when missing.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/setup.sh"
export PATH="$root/.tools/bin:$root/node_modules/.bin:$PATH"
export PULUMI_SKIP_UPDATE_CHECK=true PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION=true
exec "$@"
