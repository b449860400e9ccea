#!/usr/bin/env bash
# Builds what running this package from YAML, Python and Go Pulumi programs needs, into the
# git-ignored .tools/ folder, keyed by version (issue #39). Each language host goes next to the
# Pulumi CLI, where the engine looks for bundled language hosts:
#   pulumi-language-yaml    github.com/pulumi/pulumi-yaml v1.25.0 (toolchain/pulumi-language-yaml),
#                           at the pulumi pkg/sdk v3.206.0 it asks for: at the CLI's v3.276.0 it
#                           does not compile.
#   pulumi-language-python  github.com/pulumi/pulumi/sdk/v3 v3.68.0, the last to carry it, with its
#                           pulumi-language-python-exec script (toolchain/pulumi-language-python),
#                           and a venv with the pulumi Python SDK (.tools/python-pulumi-<version>).
#   pulumi-language-go      github.com/pulumi/pulumi/sdk/v3 v3.66.0, the last to carry it
#                           (toolchain/pulumi-language-go); it builds programs with the `go` on PATH.
#   pulumi-codegen          .tools/bin: a schema's Python or Go SDK (toolchain/pulumi-codegen, at
#                           the CLI's pkg/v3 version, whose Go build cache it reuses).
# Idempotent: a binary or venv present at its version is not built again.
#
# Build times in seconds, 2026-12-05, on this 2-core machine while others used it (load 5-10, so
# ±50 %). "After the CLI" is CI's case: fresh GOCACHE, GOMODCACHE and pip cache, in which the
# Pulumi CLI (532 s) and pulumi-language-nodejs (52 s) were built first; "alone" is each build in
# empty caches of its own; "warm" is a rebuild, its output removed and every cache kept.
#   build                     after the CLI   alone   warm
#   pulumi-language-yaml            136         193      3
#   pulumi-language-python            1         140      2
#   pulumi venv (pip)                23          11     18
#   pulumi-language-go               37         120      2
#   pulumi-codegen                   19         296      5
#   the whole script                216         330     39   (0.2 s when everything is built)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tools="$root/.tools"
log() { printf 'setup-languages: %s\n' "$*" >&2; }
command -v go >/dev/null || { log "go is needed to build the language hosts (see README requirements)"; exit 1; }
command -v python3 >/dev/null || { log "python3 is needed for the Python SDK's venv"; exit 1; }
[ -x "$tools/bin/pulumi" ] || { log "run scripts/setup.sh first: the language hosts go next to its Pulumi CLI"; exit 1; }
pinned() { awk -v m="$2" '$1 == m { print $2; exit } $1 == "require" && $2 == m { print $3; exit }' "$1"; }

cli_dir="$(dirname "$(readlink -f "$tools/bin/pulumi")")"
# The Python SDK the venv gets: the newest on PyPI that is not newer than the CLI (v3.276.0).
python_sdk_version="3.272.0"
setuptools_version="84.2.1"

sdk_stamp="github.com/pulumi/pulumi/sdk/v3/go/common/version.Version"

# go_build <wrapper folder> <output> <package> <version variable>=<version>: a timed build into
# <output>, stamped with its version (what GetPluginInfo reports).
go_build() {
  local started=$SECONDS
  mkdir -p "$(dirname "$2")"
  (cd "$root/toolchain/$1" && go build -trimpath -ldflags "-s -w -X $4" -o "$2.tmp" "$3")
  mv "$2.tmp" "$2"
  log "$(basename "$2") built in $((SECONDS - started)) s"
}

# 1. pulumi-language-yaml.
yaml_version="$(pinned "$root/toolchain/pulumi-language-yaml/go.mod" github.com/pulumi/pulumi-yaml)"
yaml_host="$tools/pulumi-language-yaml-$yaml_version/pulumi-language-yaml"
if [ ! -x "$yaml_host" ]; then
  log "building pulumi-language-yaml $yaml_version from Go (first time only; 2-3 minutes)"
  go_build pulumi-language-yaml "$yaml_host" github.com/pulumi/pulumi-yaml/cmd/pulumi-language-yaml \
    "github.com/pulumi/pulumi-yaml/pkg/version.Version=$yaml_version"
fi
ln -sf "$yaml_host" "$cli_dir/pulumi-language-yaml"

# 2. pulumi-language-python, its exec script beside it (where the host looks for it), and a venv
# with the Python SDK. The engine no longer hands a host the runtime options of Pulumi.yaml as
# flags (since v3.1xx they come in each request, which a v3.68.0 host does not read), so the
# `virtualenv` option is ignored: programs run with $PULUMI_PYTHON_CMD, which the wrapper next to
# the CLI sets to the venv's python unless it is set already.
py_version="$(pinned "$root/toolchain/pulumi-language-python/go.mod" github.com/pulumi/pulumi/sdk/v3)"
py_dir="$tools/pulumi-language-python-$py_version"
if [ ! -x "$py_dir/pulumi-language-python" ] || [ ! -x "$py_dir/pulumi-language-python-exec" ]; then
  log "building pulumi-language-python from sdk/v3 $py_version (first time only; seconds after pulumi-language-nodejs)"
  go_build pulumi-language-python "$py_dir/pulumi-language-python" \
    github.com/pulumi/pulumi/sdk/v3/python/cmd/pulumi-language-python "$sdk_stamp=$py_version"
  src="$(cd "$root/toolchain/pulumi-language-python" && go list -m -f '{{.Dir}}' github.com/pulumi/pulumi/sdk/v3)"
  install -m 0755 "$src/python/cmd/pulumi-language-python-exec" "$py_dir/pulumi-language-python-exec"
fi
venv="$tools/python-pulumi-$python_sdk_version"
if [ "$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("pulumi"))' 2>/dev/null)" != "$python_sdk_version" ]; then
  log "installing the pulumi Python SDK $python_sdk_version into $venv (first time only)"
  started=$SECONDS
  rm -rf "$venv"
  python3 -m venv "$venv"
  # setuptools, so `pip wheel --no-build-isolation` builds a generated SDK without the network.
  "$venv/bin/pip" install --quiet --disable-pip-version-check \
    "pulumi==$python_sdk_version" "setuptools==$setuptools_version" >&2
  log "pulumi Python SDK installed in $((SECONDS - started)) s"
fi
# Written beside it and renamed, so a host started meanwhile never reads half a script.
cat >"$cli_dir/pulumi-language-python.$$" <<SH
#!/usr/bin/env bash
# pulumi-language-python $py_version (scripts/setup-languages.sh): runs programs with
# \$PULUMI_PYTHON_CMD, by default the python of $venv.
export PULUMI_PYTHON_CMD="\${PULUMI_PYTHON_CMD:-$venv/bin/python}"
exec "$py_dir/pulumi-language-python" "\$@"
SH
chmod +x "$cli_dir/pulumi-language-python.$$"
mv -f "$cli_dir/pulumi-language-python.$$" "$cli_dir/pulumi-language-python"

# 3. pulumi-language-go.
go_version="$(pinned "$root/toolchain/pulumi-language-go/go.mod" github.com/pulumi/pulumi/sdk/v3)"
go_host="$tools/pulumi-language-go-$go_version/pulumi-language-go"
if [ ! -x "$go_host" ]; then
  log "building pulumi-language-go from sdk/v3 $go_version (first time only; under a minute)"
  go_build pulumi-language-go "$go_host" github.com/pulumi/pulumi/sdk/v3/go/pulumi-language-go \
    "$sdk_stamp=$go_version"
fi
ln -sf "$go_host" "$cli_dir/pulumi-language-go"

# 4. pulumi-codegen, keyed by the pkg/v3 version and by its own source.
codegen_src="$root/toolchain/pulumi-codegen"
codegen_version="$(pinned "$codegen_src/go.mod" github.com/pulumi/pulumi/pkg/v3)"
codegen_key="$codegen_version-$(cat "$codegen_src/main.go" "$codegen_src/go.mod" | sha256sum | cut -c1-12)"
codegen="$tools/pulumi-codegen-$codegen_key/pulumi-codegen"
if [ ! -x "$codegen" ]; then
  log "building pulumi-codegen at pkg/v3 $codegen_version (first time only; seconds after the CLI's build)"
  go_build pulumi-codegen "$codegen" . "$sdk_stamp=$codegen_version"
fi
mkdir -p "$tools/bin"
ln -sf "$codegen" "$tools/bin/pulumi-codegen"
log "ready: pulumi-language-yaml $yaml_version, pulumi-language-python $py_version (pulumi $python_sdk_version), pulumi-language-go $go_version, pulumi-codegen $codegen_version"
