#!/usr/bin/env bash
# `npm run example -- <name> <dir>`: with a supported Pulumi CLI already on PATH
# (scripts/supported-pulumi.mjs decides), installs only Node and the npm dependencies it needs to
# pack this checkout; otherwise the whole toolchain, the Pulumi CLI built into .tools/ included.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if node "$root/scripts/supported-pulumi.mjs"; then
  # The project runs on the user's node: @pulumi/pulumi needs 22 or newer.
  if [ "$(node -p 'process.versions.node.split(".")[0]')" -lt 22 ]; then
    echo "example: node $(node --version) on PATH is older than 22, which @pulumi/pulumi needs:" \
      "put $root/.tools/bin first on PATH to use the Node 24 that setup installs there" >&2
  fi
  bash "$root/scripts/setup.sh" --no-pulumi
  export PATH="$root/.tools/bin:$root/node_modules/.bin:$PATH"
  EGRESS_IPAM_EXAMPLE_PULUMI=path exec node "$root/scripts/example.mjs" "$@"
fi
EGRESS_IPAM_EXAMPLE_PULUMI=tools exec bash "$root/scripts/with-tools.sh" node "$root/scripts/example.mjs" "$@"
