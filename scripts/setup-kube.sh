#!/usr/bin/env bash
# Builds the test cluster's servers into the git-ignored .tools/ folder, keyed by version: etcd from
# go.etcd.io/etcd/server/v3 and kube-apiserver + kube-controller-manager from k8s.io/kubernetes,
# through the wrapper modules in toolchain/etcd and toolchain/kubernetes. Only the tests need them
# (scripts/kube-test-cluster.sh), so `npm run demo` never waits for this. Idempotent: a binary that
# is present at its version is not built again.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tools="$root/.tools"
log() { printf 'setup-kube: %s\n' "$*" >&2; }
command -v go >/dev/null || { log "go is needed to build etcd and kube-apiserver (see README requirements)"; exit 1; }

# The version a wrapper module requires of a module, read from its go.mod.
pinned() { awk -v m="$2" '$1 == m { print $2; exit } $1 == "require" && $2 == m { print $3; exit }' "$1"; }

etcd_version="$(pinned "$root/toolchain/etcd/go.mod" go.etcd.io/etcd/server/v3)"
kube_version="$(pinned "$root/toolchain/kubernetes/go.mod" k8s.io/kubernetes)"
etcd_dir="$tools/etcd-$etcd_version"
kube_dir="$tools/kubernetes-$kube_version"

if [ ! -x "$etcd_dir/etcd" ]; then
  log "building etcd $etcd_version from Go (first time only; about a minute)"
  started=$SECONDS
  mkdir -p "$etcd_dir"
  (cd "$root/toolchain/etcd" && go build -trimpath -ldflags "-s -w" -o "$etcd_dir/etcd.tmp" .)
  mv "$etcd_dir/etcd.tmp" "$etcd_dir/etcd"
  log "etcd built in $((SECONDS - started)) s"
fi

if [ ! -x "$kube_dir/kube-apiserver" ] || [ ! -x "$kube_dir/kube-controller-manager" ]; then
  log "building kube-apiserver and kube-controller-manager $kube_version from Go (first time only; 5-10 minutes)"
  started=$SECONDS
  minor="$(echo "$kube_version" | cut -d. -f2)"
  stamp="k8s.io/component-base/version"
  ldflags="-s -w -X $stamp.gitVersion=$kube_version -X $stamp.gitMajor=1 -X $stamp.gitMinor=$minor"
  ldflags="$ldflags -X $stamp.gitTreeState=clean -X $stamp.buildDate=1970-01-01T00:00:00Z"
  rm -rf "$kube_dir.tmp" && mkdir -p "$kube_dir.tmp"
  (cd "$root/toolchain/kubernetes" && go build -trimpath -ldflags "$ldflags" -o "$kube_dir.tmp/" \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager)
  rm -rf "$kube_dir" && mv "$kube_dir.tmp" "$kube_dir"
  log "kube-apiserver and kube-controller-manager built in $((SECONDS - started)) s"
fi
mkdir -p "$tools/bin"
ln -sf "$etcd_dir/etcd" "$tools/bin/etcd"
ln -sf "$kube_dir/kube-apiserver" "$tools/bin/kube-apiserver"
ln -sf "$kube_dir/kube-controller-manager" "$tools/bin/kube-controller-manager"
