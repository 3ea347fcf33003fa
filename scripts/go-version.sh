# The oldest Go toolchain the Go-built binaries compile with, sourced by control-plane/build.sh and
# go-tools/build.sh: etcd v3.6.16, kwok v0.8.0 and the Distribution registry v3.1.2 declare
# `go 1.26.0` in their go.mod (Kubernetes v1.35 and cosign v2.6.5 `go 1.25.0`). Debian 12's
# golang-go is 1.19: without this check the build fails minutes in, on a module's syntax.
GO_MIN_VERSION=1.26

# require_go WHAT: returns when `go` runs and is at least GO_MIN_VERSION; else says so, naming
# WHAT, and exits 1. A version it cannot read (a development build) is taken.
require_go() {
  local what=$1 found major minor want_major=${GO_MIN_VERSION%%.*} want_minor=${GO_MIN_VERSION#*.}
  command -v go >/dev/null ||
    { echo "build.sh: the Go toolchain (go $GO_MIN_VERSION or later) is required to build $what: https://go.dev/dl/" >&2; exit 1; }
  found=$(go version 2>/dev/null | sed -n 's/^go version go\([0-9][0-9]*\)\.\([0-9][0-9]*\).*/\1 \2/p')
  [ -n "$found" ] || return 0
  read -r major minor <<<"$found"
  if ((major < want_major || (major == want_major && minor < want_minor))); then
    echo "build.sh: go $major.$minor is too old to build $what: Go $GO_MIN_VERSION or later is required (Debian 12's golang-go is 1.19; install a current release from https://go.dev/dl/ and put its bin first on the PATH)" >&2
    exit 1
  fi
}
