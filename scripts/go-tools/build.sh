#!/usr/bin/env bash
# Builds one Go-built test tool named in tools.env with the machine's Go toolchain, once per version,
# and prints the binary's path. Usage: build.sh NAME
# A tool is either a module from the Go module proxy (module/path/cmd@version, cached per version) or
# a small program kept in this repository (a directory with its own go.mod and go.sum, relative to the
# repository root; cached per hash of its sources, so an edit rebuilds it).
# A spec `module@version#path/in/module` names a file the module ships (e.g. a project's generated
# CRD) instead: it is copied out of the module download, cached per version, and its path printed.
# A module spec may be followed by build tags, `module/path/cmd@version tags=a,b` (cached per version
# and tags), to leave out what the tests do not use.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=../go-version.sh
source "$here/../go-version.sh"
name=${1:?usage: build.sh NAME (one of: $(sed -n 's/^\([a-z0-9-]*\)=.*/\1/p' "$here/tools.env" | tr '\n' ' '))}
line=$(sed -n "s/^$name=//p" "$here/tools.env")
[ -n "$line" ] || { echo "build.sh: no tool '$name' in $here/tools.env" >&2; exit 2; }
spec=${line%% *}
tags=
[[ $line != *' tags='* ]] || tags=${line##* tags=}
module=${spec%%#*}
file=${spec#"$module"}
file=${file#\#}
cache=${STATIC_EXPORT_CACHE:-$HOME/.cache/static-export-operator}
if [[ $module == *@* ]]; then
  src=
  dir="$cache/go-tools/$name-${module##*@}${tags:+-${tags//,/-}}"
else
  src="$root/$spec"
  [ -f "$src/go.mod" ] || { echo "build.sh: $spec (tool '$name') has no go.mod" >&2; exit 2; }
  hash=$(cd "$src" && find . -type f \( -name '*.go' -o -name go.mod -o -name go.sum \) | LC_ALL=C sort |
    xargs sha256sum | sha256sum | cut -c1-16)
  dir="$cache/go-tools/$name-src-$hash"
fi
out="$dir/$name"
[ -z "$file" ] || out="$dir/$(basename "$file")"
if [ -f "$out" ]; then echo "$out"; exit 0; fi

require_go "$name"
mkdir -p "$dir"
# One build at a time per tool: parallel test workers may ask for the same tool at once.
exec 9>"$dir.lock"
flock 9
if [ ! -f "$out" ]; then
  start=$(date +%s)
  if [ -n "$file" ]; then
    echo "build.sh: fetching $file from $module" >&2
    # A throwaway module cache: only the one file is kept, not the whole extracted module.
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    from=$(cd "$tmp" && GOMODCACHE="$tmp/mod" GOFLAGS=-modcacherw GOTOOLCHAIN=local \
      go mod download -json "$module" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
    [ -f "$from/$file" ] || { echo "build.sh: $module has no $file" >&2; exit 1; }
    cp "$from/$file" "$out.tmp" && mv "$out.tmp" "$out"
  elif [ -n "$src" ]; then
    echo "build.sh: building $name from $spec" >&2
    # go.sum pins every module: -mod=readonly refuses to build rather than resolve anything anew.
    (cd "$src" && CGO_ENABLED=0 go build -mod=readonly -trimpath -ldflags "-s -w" -o "$dir/.$name" .) >&2
    mv "$dir/.$name" "$out"
  else
    echo "build.sh: building $name from $spec" >&2
    GOFLAGS=-mod=mod CGO_ENABLED=0 GOBIN="$dir/.bin" go install -trimpath -ldflags "-s -w" ${tags:+-tags "$tags"} "$spec" >&2
    mv "$dir/.bin/$(basename "${spec%@*}")" "$out" && rm -rf "$dir/.bin"
  fi
  echo "build.sh: $name ready in $(($(date +%s) - start)) s" >&2
fi
echo "$out"
