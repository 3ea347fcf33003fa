#!/usr/bin/env bash
# Builds one Go-built test tool named in tools.env from the Go module proxy with the machine's Go
# toolchain, once per version, and prints the binary's path. Usage: build.sh NAME
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
name=${1:?usage: build.sh NAME (one of: $(sed -n 's/^\([a-z0-9-]*\)=.*/\1/p' "$here/tools.env" | tr '\n' ' '))}
spec=$(sed -n "s/^$name=//p" "$here/tools.env")
[ -n "$spec" ] || { echo "build.sh: no tool '$name' in $here/tools.env" >&2; exit 2; }
cache=${STATIC_EXPORT_CACHE:-$HOME/.cache/static-export-operator}
dir="$cache/go-tools/$name-${spec##*@}"
if [ -x "$dir/$name" ]; then echo "$dir/$name"; exit 0; fi

command -v go >/dev/null || { echo "build.sh: the Go toolchain (go) is required to build $name" >&2; exit 1; }
mkdir -p "$dir"
# One build at a time per tool: parallel test workers may ask for the same tool at once.
exec 9>"$dir.lock"
flock 9
if [ ! -x "$dir/$name" ]; then
  echo "build.sh: building $name from $spec" >&2
  start=$(date +%s)
  GOFLAGS=-mod=mod CGO_ENABLED=0 GOBIN="$dir/.bin" go install -trimpath -ldflags "-s -w" "$spec" >&2
  mv "$dir/.bin/$(basename "${spec%@*}")" "$dir/$name" && rm -rf "$dir/.bin"
  echo "build.sh: $name built in $(($(date +%s) - start)) s" >&2
fi
echo "$dir/$name"
