#!/usr/bin/env bash
# Loads an image archive (`docker save` format, its tag inside) into a local cluster's nodes, so pods
# run it with imagePullPolicy IfNotPresent and no registry: `npm run image -- --load TARGET` calls this.
# Usage: scripts/image/load.sh kind|k3d|minikube|containerd ARCHIVE [CONTAINERD_SOCKET]
#        scripts/image/load.sh --check TARGET [CONTAINERD_SOCKET]   (only validates the arguments)
set -euo pipefail
check=
[ "${1:-}" != --check ] || { check=1; shift; }
target=${1:-}
if [ -n "$check" ]; then archive=; address=${2:-}; else archive=${2:-}; address=${3:-}; fi
if [ -n "$address" ] && [ "$target" != containerd ]; then
  echo "image: --address names a containerd socket: use it with --load containerd only" >&2
  exit 2
fi
case "$target" in
  kind) cmd=(kind load image-archive "$archive") ;;
  k3d) cmd=(k3d image import "$archive") ;;
  minikube) cmd=(minikube image load "$archive") ;;
  # The kubelet's images are in containerd's k8s.io namespace (what `kind load` imports into).
  containerd) cmd=(ctr ${address:+--address "$address"} -n k8s.io images import "$archive") ;;
  *)
    echo "image: --load takes kind, k3d, minikube or containerd (got '$target')" >&2
    exit 2
    ;;
esac
[ -z "$check" ] || exit 0
if ! command -v "${cmd[0]}" >/dev/null; then
  echo "image: ${cmd[0]} is not on the PATH; the image is in $archive, load it by hand: ${cmd[*]}" >&2
  exit 1
fi
"${cmd[@]}" >&2 || {
  echo "image: loading failed; the image is in $archive (${cmd[*]})" >&2
  exit 1
}
echo "image: loaded into $target from $archive" >&2
