#!/usr/bin/env bash
# Builds what a program in a language other than TypeScript needs, from this checkout, into
# dist/sdks/ (no registry publication):
#   pulumi-resource-egress-ipam-v<version>-linux-x64.tar.gz   the plugin, for
#       pulumi plugin install resource egress-ipam <version> -f <that file>
#   python/  the Python SDK (a wheel in python/dist/), generated from provider/plugin/schema.json
#   go/      the Go SDK module, generated from the same schema
# YAML programs need the plugin only. The plugin runs this package on Node >= 22: `node` on PATH,
# or PULUMI_EGRESS_IPAM_NODE. Usage: npm run sdks [-- plugin|python|go ...] (default: all three);
# SDKS_OUT=<dir> writes there instead of dist/sdks; SDKS_SCHEMA=<file> generates the SDKs from that
# schema instead (the release's, with its pluginDownloadURL: scripts/release.mjs).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
# The release (scripts/release.sh) has set up the toolchain already.
[ -n "${SDKS_SETUP_DONE:-}" ] || bash scripts/setup.sh --no-pulumi >/dev/null
export PATH="$root/.tools/bin:$root/node_modules/.bin:$PATH"
log() { printf 'sdks: %s\n' "$*" >&2; }

version="$(node -p 'require("./package.json").version')"
out="${SDKS_OUT:-$root/dist/sdks}"
schema="${SDKS_SCHEMA:-provider/plugin/schema.json}"
what=("$@")
[ "${#what[@]}" -gt 0 ] || what=(plugin python go)
node scripts/plugin-schema.mjs --check >&2
mkdir -p "$out"

build_plugin() {
  local work tarball
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' RETURN
  log "packing pulumi-egress-ipam $version and installing it with its dependencies"
  node -e 'import("./scripts/consumer.mjs").then((m) => m.packPackage(process.argv[1]))' "$work/pack" >&2
  local pulumi_version
  pulumi_version="$(node -p 'require("@pulumi/pulumi/package.json").version')"
  mkdir -p "$work/plugin"
  echo '{ "private": true }' >"$work/plugin/package.json"
  (cd "$work/plugin" && npm install --omit=dev --no-audit --no-fund --loglevel=error \
    "$work"/pack/pulumi-egress-ipam-*.tgz "@pulumi/pulumi@$pulumi_version" >&2)
  cat >"$work/plugin/pulumi-resource-egress-ipam" <<'SH'
#!/bin/sh
# The egress-ipam resource plugin: this package's resources for programs in any Pulumi language.
here="$(dirname "$(readlink -f "$0")")"
exec "${PULUMI_EGRESS_IPAM_NODE:-node}" "$here/node_modules/pulumi-egress-ipam/dist/plugin/main.js" "$@"
SH
  chmod +x "$work/plugin/pulumi-resource-egress-ipam"
  tarball="$out/pulumi-resource-egress-ipam-v$version-linux-x64.tar.gz"
  tar -czf "$tarball.tmp" -C "$work/plugin" pulumi-resource-egress-ipam node_modules
  mv "$tarball.tmp" "$tarball"
  log "plugin: $tarball ($(du -h "$tarball" | cut -f1))"
}

codegen() {
  local lang="$1" dir="$out/$1"
  command -v pulumi-codegen >/dev/null || {
    log "pulumi-codegen is not built: run bash scripts/setup-languages.sh"
    exit 1
  }
  rm -rf "$dir"
  pulumi-codegen "$schema" "$lang" "$dir" >&2
  case "$lang" in
    python)
      # A wheel, for `pip install` into the program's virtualenv.
      local venv
      venv="$(ls -d "$root"/.tools/python-pulumi-* 2>/dev/null | tail -1 || true)"
      "${venv:+$venv/bin/}python3" -m pip wheel --quiet --no-deps --no-build-isolation -w "$dir/dist" "$dir" >&2
      log "python: $(ls "$dir"/dist/*.whl)"
      ;;
    go)
      # A module of its own: a program requires pulumi-egress-ipam/sdk/go and replaces it with this folder.
      local sdk
      sdk="$(node -p 'require("@pulumi/pulumi/package.json").version')"
      printf 'module pulumi-egress-ipam/sdk/go\n\ngo 1.26.0\n\nrequire github.com/pulumi/pulumi/sdk/v3 v%s\n' "$sdk" >"$dir/go.mod"
      cp "$root/toolchain/pulumi-cli/go.sum" "$dir/go.sum"
      (cd "$dir" && go mod tidy >&2)
      log "go: $dir (module pulumi-egress-ipam/sdk/go)"
      ;;
  esac
}

for w in "${what[@]}"; do
  case "$w" in
    plugin) build_plugin ;;
    python | go) codegen "$w" ;;
    *)
      log "unknown part $w: plugin, python or go"
      exit 2
      ;;
  esac
done
