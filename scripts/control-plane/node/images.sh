#!/usr/bin/env bash
# Assembles the real node's own images offline (no registry can be pulled from here), once per
# content, as one OCI image layout, and prints its directory. Each is tagged with the name a cluster
# pulls it by: the pod sandbox (pause.c, static), busybox (Debian's busybox-static, so the site
# chart's `helm test` pod runs with its default image; the binary is Debian's version, not 1.37) and
# the site chart's nginx (Debian's nginx under the chart's default repository, tag `offline`: the
# unprivileged image's contract, uid 101, nginx and /etc/nginx/mime.types, a shell for preStop).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${STATIC_EXPORT_CACHE:-$HOME/.cache/static-export-operator}
busybox=$(command -v busybox) || { echo "images.sh: busybox-static is required (Debian: apt-get install busybox-static)" >&2; exit 1; }
nginx=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$nginx" ] || { echo "images.sh: nginx is required (Debian: apt-get install nginx)" >&2; exit 1; }
key=$(cat "$here/images.sh" "$here/pause.c" "$busybox" "$nginx" | sha256sum | cut -c1-16)
out="$cache/node-images/$key"
if [ -f "$out/index.json" ]; then echo "$out"; exit 0; fi

work=$(mktemp -d)
containers=()
trap 'for c in "${containers[@]}"; do buildah rm "$c" >/dev/null; done; rm -rf "$work"' EXIT
# image NAME ROOTFS_DIR CONFIG_ARGS...: a one-layer image from scratch, tagged NAME in the layout.
image() {
  local name=$1 rootfs=$2 c
  shift 2
  c=$(buildah from scratch)
  containers+=("$c")
  buildah copy --quiet "$c" "$rootfs" / >/dev/null
  buildah config "$@" "$c"
  buildah commit --quiet "$c" "oci:$work/oci:$name" >/dev/null
}

mkdir -p "$work/pause"
gcc -static -Os -s -o "$work/pause/pause" "$here/pause.c"
image registry.k8s.io/pause:3.10.1 "$work/pause" --entrypoint '["/pause"]' --user 65535:65535

mkdir -p "$work/busybox/bin" "$work/busybox/tmp" "$work/busybox/etc"
cp "$busybox" "$work/busybox/bin/busybox"
for applet in $("$busybox" --list); do [ -e "$work/busybox/bin/$applet" ] || ln -s busybox "$work/busybox/bin/$applet"; done
chmod 1777 "$work/busybox/tmp"
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/home:/bin/false\n' > "$work/busybox/etc/passwd"
printf 'root:x:0:\nnobody:x:65534:\n' > "$work/busybox/etc/group"
image docker.io/library/busybox:1.37 "$work/busybox" --cmd '["sh"]' --env PATH=/bin

# nginx with the shared libraries it links, the shell and utilities preStop uses, a writable /tmp.
cp -a "$work/busybox" "$work/nginx"
install -D -m 0755 "$nginx" "$work/nginx/usr/sbin/nginx"
for lib in $(ldd "$nginx" | grep -o '/[^ ]*'); do install -D -m 0755 "$(readlink -f "$lib")" "$work/nginx$lib"; done
install -D -m 0644 /etc/nginx/mime.types "$work/nginx/etc/nginx/mime.types"
printf 'nginx:x:101:101:nginx:/nonexistent:/bin/false\n' >> "$work/nginx/etc/passwd"
printf 'nginx:x:101:\n' >> "$work/nginx/etc/group"
image docker.io/nginxinc/nginx-unprivileged:offline "$work/nginx" --user 101:101 --env PATH=/usr/sbin:/bin \
  --cmd '["nginx", "-g", "daemon off;"]'

mkdir -p "$(dirname "$out")"
rm -rf "$out"
mv "$work/oci" "$out"
echo "$out"
