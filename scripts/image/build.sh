#!/usr/bin/env bash
# `npm run image`: builds the Dockerfile without a Docker engine or registry. buildah (chroot
# isolation, so no user namespaces or runc are needed) on the Node 24 bases scripts/image/base.sh
# assembles offline. Leaves the image in buildah's local storage as localhost/static-export:<version>
# and writes it as an OCI image layout (what umoci, skopeo and `podman load` read).
# With --load it also writes .image/static-export-<version>.tar (`docker save` format, tagged with the
# name the charts default to) and loads it into a local cluster (scripts/image/load.sh).
# Usage: scripts/image/build.sh [--load kind|k3d|minikube|containerd [--address SOCKET]] [OCI_LAYOUT_DIR]
#   (default .image/oci; the tag is the version, which is every chart's appVersion)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
load=
address=
out=
while [ $# -gt 0 ]; do
  case "$1" in
    --load) load=${2:?image: --load needs kind, k3d, minikube or containerd}; shift 2 ;;
    --address) address=${2:?image: --address needs the containerd socket path}; shift 2 ;;
    -*) echo "image: unknown option $1 (usage: npm run image -- [--load kind|k3d|minikube|containerd [--address SOCKET]] [OCI_LAYOUT_DIR])" >&2; exit 2 ;;
    *) out=$1; shift ;;
  esac
done
default_out=$root/.image/oci
out=${out:-$default_out}
# The layout directory is replaced as a whole: only one this script wrote (its marker beside
# oci-layout), an empty one or none may be. Earlier builds left no marker: at the default path a
# directory holding nothing but a layout's own entries is taken as theirs.
marker=.static-export-image
refuse_out() {
  echo "image: $out $1: not replaced. Name a new or empty directory, or one an earlier \`npm run image\` wrote (it holds oci-layout and $marker)." >&2
  exit 2
}
if [ -L "$out" ]; then
  refuse_out "is a symbolic link"
elif [ -e "$out" ] && [ ! -d "$out" ]; then
  refuse_out "exists and is not a directory"
elif [ -d "$out" ]; then
  shopt -s nullglob dotglob
  entries=("$out"/*)
  shopt -u nullglob dotglob
  names=("${entries[@]##*/}")
  layout_only=1
  for name in "${names[@]}"; do
    case $name in blobs | index.json | oci-layout) ;; *) layout_only=0 ;; esac
  done
  if [ ${#names[@]} -gt 0 ] && ! { [ -f "$out/$marker" ] && [ -f "$out/oci-layout" ]; } &&
    ! { [ "$out" = "$default_out" ] && [ -f "$out/oci-layout" ] && [ $layout_only = 1 ]; }; then
    refuse_out "holds files that are not an OCI layout this script wrote (no $marker beside oci-layout; it holds ${names[*]:0:5})"
  fi
fi
# A wrong --load fails before the build, not after it.
[ -z "$load$address" ] || scripts/image/load.sh --check "$load" "$address"
command -v buildah >/dev/null || { echo "image: buildah is required (Debian: apt-get install buildah)" >&2; exit 1; }
version=$(node -p 'require("./package.json").version')
revision=$(git rev-parse HEAD 2>/dev/null || echo unknown)
git diff --quiet HEAD 2>/dev/null || revision="$revision-dirty"

buildah inspect --type image localhost/node24-base:offline >/dev/null 2>&1 &&
  buildah inspect --type image localhost/node24-build:offline >/dev/null 2>&1 ||
  scripts/image/base.sh
previous=$(buildah inspect --type image --format '{{.FromImageID}}' "localhost/static-export:$version" 2>/dev/null || true)
created=$(date -u +%Y-%m-%dT%H:%M:%SZ)
# buildah 1.28's layer cache ignores build-argument values, so a cached LABEL step would keep an
# earlier build's version, revision and date: --label sets them on the final image every time.
buildah build --isolation chroot --layers --quiet \
  --build-arg BUILD_BASE=localhost/node24-build:offline \
  --build-arg NODE_BASE=localhost/node24-base:offline \
  --build-arg VERSION="$version" --build-arg REVISION="$revision" --build-arg CREATED="$created" \
  --label org.opencontainers.image.version="$version" \
  --label org.opencontainers.image.revision="$revision" \
  --label org.opencontainers.image.created="$created" \
  -t "localhost/static-export:$version" . >/dev/null
# The previous build of this tag would stay behind untagged (the layer cache keeps the build stage).
current=$(buildah inspect --type image --format '{{.FromImageID}}' "localhost/static-export:$version")
[ -z "$previous" ] || [ "$previous" = "$current" ] || buildah rmi "$previous" >/dev/null 2>&1 || true
rm -rf "$out" && mkdir -p "$(dirname "$out")"
buildah push --quiet "localhost/static-export:$version" "oci:$out:$version"
echo "Written by npm run image (scripts/image/build.sh): the next build replaces this directory." >"$out/$marker"
echo "image: localhost/static-export:$version in local storage, OCI layout $out (tag $version)" >&2
[ -n "$load" ] || exit 0
archive=$root/.image/static-export-$version.tar
rm -f "$archive"
buildah push --quiet "localhost/static-export:$version" \
  "docker-archive:$archive:ghcr.io/static-export-operator/static-export:$version"
scripts/image/load.sh "$load" "$archive" "$address"
