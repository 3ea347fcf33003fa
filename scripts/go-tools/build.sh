#!/usr/bin/env bash
# Builds one Go-built test tool named in tools.env with the machine's Go toolchain, once per version,
# and prints the binary's path. Usage: build.sh NAME
# A tool is either a module from the Go module proxy (module/path/cmd@version, cached per version) or
# a small program kept in this repository (a directory with its own go.mod and go.sum, relative to the
# repository root; cached per hash of its sources, so an edit rebuilds it).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
name=${1:?usage: build.sh NAME (one of: $(sed -n 's/^\([a-z0-9-]*\)=.*/\1/p' "$here/tools.env" | tr '\n' ' '))}
spec=$(sed -n "s/^$name=//p" "$here/tools.env")
[ -n "$spec" ] || { echo "build.sh: no tool '$name' in $here/tools.env" >&2; exit 2; }
cache=${STATIC_EXPORT_CACHE:-$HOME/.cache/static-export-operator}
if [[ $spec == *@* ]]; then
  src=
  dir="$cache/go-tools/$name-${spec##*@}"
else
  src="$root/$spec"
  [ -f "$src/go.mod" ] || { echo "build.sh: $spec (tool '$name') has no go.mod" >&2; exit 2; }
  hash=$(cd "$src" && find . -type f \( -name '*.go' -o -name go.mod -o -name go.sum \) | LC_ALL=C sort |
    xargs sha256sum | sha256sum | cut -c1-16)
  dir="$cache/go-tools/$name-src-$hash"
fi
if [ -x "$dir/$name" ]; then echo "$dir/$name"; exit 0; fi

command -v go >/dev/null || { echo "build.sh: the Go toolchain (go) is required to build $name" >&2; exit 1; }
mkdir -p "$dir"
# One build at a time per tool: parallel test workers may ask for the same tool at once.
exec 9>"$dir.lock"
flock 9
if [ ! -x "$dir/$name" ]; then
  echo "build.sh: building $name from $spec" >&2
  start=$(date +%s)
  if [ -n "$src" ]; then
    # go.sum pins every module: -mod=readonly refuses to build rather than resolve anything anew.
    (cd "$src" && CGO_ENABLED=0 go build -mod=readonly -trimpath -ldflags "-s -w" -o "$dir/.$name" .) >&2
    mv "$dir/.$name" "$dir/$name"
  else
    GOFLAGS=-mod=mod CGO_ENABLED=0 GOBIN="$dir/.bin" go install -trimpath -ldflags "-s -w" "$spec" >&2
    mv "$dir/.bin/$(basename "${spec%@*}")" "$dir/$name" && rm -rf "$dir/.bin"
  fi
  echo "build.sh: $name built in $(($(date +%s) - start)) s" >&2
fi
echo "$dir/$name"
