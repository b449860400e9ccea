#!/usr/bin/env bash
# Builds what running the example projects with plain `pulumi up` needs, into the git-ignored
# .tools/ folder, keyed by version: the Node.js language host (pulumi-language-nodejs, next to the
# Pulumi CLI, where the engine looks for it) and the Kubernetes provider plugin for
# @pulumi/kubernetes (pulumi-resource-kubernetes). Only the example tests need them, so `npm run
# demo` never waits for this. Idempotent: a binary present at its version is not built again.
# --host stops after the language host (scripts/test.sh runs the cluster tests while the plugin builds).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tools="$root/.tools"
log() { printf 'setup-examples: %s\n' "$*" >&2; }
command -v go >/dev/null || { log "go is needed to build the language host (see README requirements)"; exit 1; }
pinned() { awk -v m="$2" '$1 == m { print $2; exit } $1 == "require" && $2 == m { print $3; exit }' "$1"; }

cli_dir="$(dirname "$(readlink -f "$tools/bin/pulumi")")"

# 1. pulumi-language-nodejs from github.com/pulumi/pulumi/sdk/v3 (the last versions that carry it).
lh_version="$(pinned "$root/toolchain/pulumi-language-nodejs/go.mod" github.com/pulumi/pulumi/sdk/v3)"
lh="$tools/pulumi-language-nodejs-$lh_version/pulumi-language-nodejs"
if [ ! -x "$lh" ]; then
  log "building pulumi-language-nodejs from sdk/v3 $lh_version (first time only; about a minute)"
  started=$SECONDS
  mkdir -p "$(dirname "$lh")"
  (cd "$root/toolchain/pulumi-language-nodejs" && go build -trimpath \
    -ldflags "-s -w -X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=$lh_version" \
    -o "$lh.tmp" github.com/pulumi/pulumi/sdk/v3/nodejs/cmd/pulumi-language-nodejs)
  mv "$lh.tmp" "$lh"
  log "pulumi-language-nodejs built in $((SECONDS - started)) s"
fi
# Next to the CLI the engine treats it as bundled (no "using pulumi-language-nodejs from \$PATH" warning).
ln -sf "$lh" "$cli_dir/pulumi-language-nodejs"
[ "${1:-}" = "--host" ] && exit 0

# 2. pulumi-resource-kubernetes, stamped with the version of the npm @pulumi/kubernetes the examples
# depend on (toolchain/pulumi-kubernetes/plugin-version), so the engine finds the plugin it asks for.
k8s_module="github.com/pulumi/pulumi-kubernetes/provider/v4"
k8s_version="$(tr -d '[:space:]' <"$root/toolchain/pulumi-kubernetes/plugin-version")"
plugin="$tools/pulumi-kubernetes-v$k8s_version/pulumi-resource-kubernetes"
if [ ! -x "$plugin" ]; then
  log "building pulumi-resource-kubernetes $k8s_version from Go (first time only; about 10 minutes)"
  started=$SECONDS
  wrapper="$root/toolchain/pulumi-kubernetes"
  src="$(cd "$wrapper" && go mod download -json "$k8s_module@$(pinned "$wrapper/go.mod" "$k8s_module")" |
    node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).Dir))')"
  install -m 0644 "$src/cmd/pulumi-resource-kubernetes/schema.json" "$wrapper/schema.json"
  install -m 0644 "$src/cmd/pulumi-resource-kubernetes/terraform-mapping.json" "$wrapper/terraform-mapping.json"
  mkdir -p "$(dirname "$plugin")"
  (cd "$wrapper" && go build -trimpath \
    -ldflags "-s -w -X $k8s_module/pkg/version.Version=$k8s_version" -o "$plugin.tmp" .)
  mv "$plugin.tmp" "$plugin"
  log "pulumi-resource-kubernetes built in $((SECONDS - started)) s"
fi
# The engine looks for resource plugins (other than bundled ones) in PULUMI_HOME and on PATH.
ln -sf "$plugin" "$tools/bin/pulumi-resource-kubernetes"
