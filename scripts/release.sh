#!/usr/bin/env bash
# `npm run release`: what a release publishes, in dist/release/ (scripts/release.mjs says what and
# takes its options). Installs the toolchain first: the Pulumi CLI, and the code generator the
# Python and Go SDKs come from (scripts/setup-languages.sh; minutes the first time).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
node scripts/release/changelog.mjs # the refusal before minutes of builds
bash scripts/setup.sh >&2
bash scripts/setup-languages.sh >&2
export PATH="$root/.tools/bin:$root/node_modules/.bin:$PATH"
exec node scripts/release.mjs "$@"
