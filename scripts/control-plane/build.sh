#!/usr/bin/env bash
# Builds etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok from the Go module
# proxy with the machine's Go toolchain, once per version set; `build.sh node` adds the real node's
# kubelet, kube-proxy, crictl and CoreDNS (only when asked: the kubelet alone takes minutes). Builds
# what is missing and prints the bin directory.
# Usage: build.sh [node] [--kubernetes vX.Y.Z]   (default KUBERNETES_VERSION of versions.env; CI also
# builds KUBERNETES_OLDEST_VERSION, the oldest version the charts claim)
# `go install k8s.io/kubernetes/cmd/...@v` is refused (k8s.io/kubernetes replaces its staging
# modules with relative paths), so a throwaway module requires it and pins every staging module.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=versions.env
source "$here/versions.env"
# shellcheck source=../go-version.sh
source "$here/../go-version.sh"
usage="usage: build.sh [node] [--kubernetes vX.Y.Z]"
default_version=$KUBERNETES_VERSION
want=(etcd kube-apiserver kube-controller-manager kube-scheduler kwok)
while [ $# -gt 0 ]; do
  case "$1" in
    node) want+=(kubelet kube-proxy crictl coredns) ;;
    --kubernetes) KUBERNETES_VERSION=${2:?$usage}; shift ;;
    *) echo "build.sh: unknown argument '$1' ($usage)" >&2; exit 2 ;;
  esac
  shift
done
[[ $KUBERNETES_VERSION =~ ^v1\.[0-9]+\.[0-9]+$ ]] ||
  { echo "build.sh: --kubernetes must be a Kubernetes release such as $default_version, not '$KUBERNETES_VERSION'" >&2; exit 2; }
cache=${STATIC_EXPORT_CACHE:-$HOME/.cache/static-export-operator}
bin="$cache/control-plane/k8s-$KUBERNETES_VERSION-etcd-$ETCD_VERSION-kwok-$KWOK_VERSION/bin"
wanted() { [[ " ${want[*]} " == *" $1 "* ]]; }
missing() { [ ! -x "$bin/$1" ] && wanted "$1"; }
have_all() { for b in "${want[@]}"; do [ -x "$bin/$b" ] || return 1; done; }

# kwok ships no stages by default; take the "fast" node and pod stages and lease heartbeats from its
# module, so nodes turn Ready, pods turn Ready, and deleted pods go away (there is no kubelet).
write_kwok_stages() {
  [ -s "$bin/kwok-stages.yaml" ] && return 0
  local dir
  dir=$(go mod download -json "sigs.k8s.io/kwok@$KWOK_VERSION" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
  local s="$dir/kustomize/stage"
  for f in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
           pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
    echo "---"; cat "$s/$f"
  done > "$bin/kwok-stages.yaml.tmp"
  mv "$bin/kwok-stages.yaml.tmp" "$bin/kwok-stages.yaml"
}
if have_all; then write_kwok_stages; echo "$bin"; exit 0; fi

require_go "the control plane"
mkdir -p "$bin"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export GOFLAGS=-mod=mod CGO_ENABLED=0 GOBIN="$bin"
log() { echo "build.sh: $*" >&2; }
start=$(date +%s)

# kube-* binaries
kube_cmds=()
for cmd in kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy; do
  missing "$cmd" && kube_cmds+=("$cmd")
done
if [ ${#kube_cmds[@]} -gt 0 ]; then
  k8s_minor=${KUBERNETES_VERSION#v1.}; k8s_minor=${k8s_minor%%.*}
  staging_version="v0.${KUBERNETES_VERSION#v1.}"
  mkdir -p "$work/k8s" && cd "$work/k8s"
  go mod init local/controlplane >/dev/null 2>&1
  gomod=$(go mod download -json "k8s.io/kubernetes@$KUBERNETES_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
  {
    echo "require k8s.io/kubernetes $KUBERNETES_VERSION"
    echo "replace ("
    sed -n 's#^\s*\(k8s.io/[a-z0-9-]*\) => ./staging/src/.*#\t\1 => \1 '"$staging_version"'#p' "$gomod"
    echo ")"
  } >> go.mod
  go mod tidy >/dev/null 2>&1 || true
  # Up to 1.30 the in-tree cloud providers come from k8s.io/legacy-cloud-providers, which the module
  # proxy and checksum database lack at some versions (v0.27.16): Kubernetes' own `providerless`
  # build leaves them out, and a control plane on loopback runs on no cloud.
  tag_flags=()
  grep -q 'k8s.io/legacy-cloud-providers' "$gomod" && tag_flags=(-tags=providerless)
  ver_flags=""
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ver_flags+=" -X $pkg.gitVersion=$KUBERNETES_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$k8s_minor -X $pkg.gitTreeState=clean"
  done
  for cmd in "${kube_cmds[@]}"; do
    log "building $cmd $KUBERNETES_VERSION"
    go get "${tag_flags[@]}" "k8s.io/kubernetes/cmd/$cmd@$KUBERNETES_VERSION" >"$work/go-get.log" 2>&1 ||
      { cat "$work/go-get.log" >&2; log "go get k8s.io/kubernetes/cmd/$cmd@$KUBERNETES_VERSION failed"; exit 1; }
    go build "${tag_flags[@]}" -trimpath -ldflags "-s -w$ver_flags" -o "$bin/$cmd" "k8s.io/kubernetes/cmd/$cmd"
  done
fi

# etcd: its server module has relative replaces too; a throwaway module that requires it builds.
if missing etcd; then
  mkdir -p "$work/etcd" && cd "$work/etcd"
  go mod init local/etcd >/dev/null 2>&1
  log "building etcd $ETCD_VERSION"
  go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION" >/dev/null 2>&1
  cat > main.go <<'GO'
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
GO
  go mod tidy >/dev/null 2>&1
  go build -trimpath -ldflags "-s -w" -o "$bin/etcd" .
fi

if missing kwok; then
  log "installing kwok $KWOK_VERSION"
  go install -trimpath -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
fi
if missing crictl; then
  log "installing crictl $CRI_TOOLS_VERSION"
  go install -trimpath -ldflags "-s -w" "sigs.k8s.io/cri-tools/cmd/crictl@$CRI_TOOLS_VERSION"
fi
if missing coredns; then
  log "installing coredns $COREDNS_VERSION"
  go install -trimpath -ldflags "-s -w" "github.com/coredns/coredns@$COREDNS_VERSION"
fi

have_all || { log "some binaries are missing in $bin"; exit 1; }
write_kwok_stages
log "built in $(( $(date +%s) - start ))s"
echo "$bin"
