#!/usr/bin/env bash
# Proves the tools of scripts/setup-languages.sh work with the real engine: a YAML, a Python and a
# Go Pulumi project (one stack output each) get `pulumi up` and then `pulumi preview` on a file
# backend, with the language hosts next to the CLI; pulumi-codegen writes the Python and Go SDKs
# of toolchain/pulumi-codegen/testdata/schema.json, the Python one builds into a wheel that
# imports, and a Go module using the Go one builds. Everything happens in a temporary folder,
# removed at the end. Run scripts/setup.sh and scripts/setup-languages.sh first.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tools="$root/.tools"
export PATH="$tools/bin:$PATH"
export PULUMI_CONFIG_PASSPHRASE=x PULUMI_SKIP_UPDATE_CHECK=true PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION=true
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
log() { printf 'check-languages: %s\n' "$*" >&2; }
fail() { log "FAIL: $*"; exit 1; }
pulumi_version="$(pulumi version)"
venv="$(ls -d "$tools"/python-pulumi-* | tail -1)"

# run_project <folder> <expected output>: up, the output, then a preview that changes nothing.
run_project() {
  local dir="$1" want="$2" got
  export PULUMI_BACKEND_URL="file://$dir.state"
  mkdir -p "$dir.state"
  (cd "$dir" && pulumi stack init dev >/dev/null 2>&1 &&
    pulumi up --yes --skip-preview >"$dir.up.log" 2>&1 || { cat "$dir.up.log" >&2; exit 1; })
  got="$(cd "$dir" && pulumi stack output message)"
  [ "$got" = "$want" ] || fail "$(basename "$dir"): stack output message is '$got', not '$want'"
  (cd "$dir" && pulumi preview --expect-no-changes >"$dir.preview.log" 2>&1) ||
    { cat "$dir.preview.log" >&2; fail "$(basename "$dir"): preview after up"; }
  log "$(basename "$dir"): up and preview ok (message: $got)"
}

mkdir "$work/yaml"
cat >"$work/yaml/Pulumi.yaml" <<'EOF'
name: smoke-yaml
runtime: yaml
outputs:
  message: hello from yaml
EOF
run_project "$work/yaml" "hello from yaml"

mkdir "$work/python"
printf 'name: smoke-python\nruntime: python\n' >"$work/python/Pulumi.yaml"
printf 'import pulumi\n\npulumi.export("message", "hello from python")\n' >"$work/python/__main__.py"
run_project "$work/python" "hello from python"

mkdir "$work/go"
printf 'name: smoke-go\nruntime: go\n' >"$work/go/Pulumi.yaml"
cat >"$work/go/main.go" <<'EOF'
package main

import "github.com/pulumi/pulumi/sdk/v3/go/pulumi"

func main() {
	pulumi.Run(func(ctx *pulumi.Context) error {
		ctx.Export("message", pulumi.String("hello from go"))
		return nil
	})
}
EOF
printf 'module smoke-go\n\ngo 1.26.0\n\nrequire github.com/pulumi/pulumi/sdk/v3 %s\n' "$pulumi_version" >"$work/go/go.mod"
cp "$root/toolchain/pulumi-cli/go.sum" "$work/go/go.sum"
(cd "$work/go" && go mod tidy)
run_project "$work/go" "hello from go"

schema="$root/toolchain/pulumi-codegen/testdata/schema.json"
pulumi-codegen "$schema" python "$work/sdk/python"
"$venv/bin/pip" wheel --quiet --no-deps --no-build-isolation -w "$work/wheels" "$work/sdk/python" >&2
"$venv/bin/pip" install --quiet --no-deps --target "$work/site" "$work"/wheels/*.whl >&2
PYTHONPATH="$work/site" "$venv/bin/python" -c 'import pulumi_codegen_smoke as p; p.GreetingArgs(name="world")' ||
  fail "the generated Python SDK does not import"
log "python SDK: $(basename "$work"/wheels/*.whl) builds and imports"

pulumi-codegen "$schema" go "$work/sdk/go"
mkdir "$work/consumer"
cat >"$work/consumer/main.go" <<'EOF'
package main

import (
	"example.com/codegen-smoke/sdk/go/codegensmoke"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

func main() {
	pulumi.Run(func(ctx *pulumi.Context) error {
		g, err := codegensmoke.NewGreeting(ctx, "hello", &codegensmoke.GreetingArgs{Name: pulumi.String("world")})
		if err != nil {
			return err
		}
		ctx.Export("message", g.Message)
		return nil
	})
}
EOF
cat >"$work/consumer/go.mod" <<EOF
module smoke-consumer

go 1.26.0

require (
	example.com/codegen-smoke/sdk/go v0.1.0
	github.com/pulumi/pulumi/sdk/v3 $pulumi_version
)

replace example.com/codegen-smoke/sdk/go => $work/sdk/go
EOF
cp "$root/toolchain/pulumi-cli/go.sum" "$work/consumer/go.sum"
(cd "$work/consumer" && go mod tidy && go build ./...) || fail "a module using the generated Go SDK does not build"
log "go SDK: a module using it builds"
log "all ok"
