#!/usr/bin/env bash
# Runs the demo (examples/quickstart) with the project's toolchain, installing it when missing.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
exec bash "$root/scripts/with-tools.sh" node "$root/scripts/demo.mjs"
