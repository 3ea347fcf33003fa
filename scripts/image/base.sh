#!/usr/bin/env bash
# Assembles the two Node 24 base images the Dockerfile takes as build arguments, offline (no registry
# can be pulled from here), and commits them to buildah's local storage:
#   localhost/node24-base:offline   runtime base, laid out like gcr.io/distroless/nodejs24-debian12:nonroot:
#                                   /nodejs/bin/node, its shared libraries, CA certificates, user
#                                   nonroot (65532), a world-writable /tmp, no shell
#   localhost/node24-build:offline  build base, like node:24-bookworm-slim: the same node as
#                                   /usr/local/bin/node, npm, and a shell with core utilities (busybox)
# Node is the binary of the `node` npm package (node_modules/node); the libraries, busybox and CA
# certificates are this Debian machine's; npm is the machine's npm (pure JavaScript).
# Usage: scripts/image/base.sh   (prints nothing but errors; idempotent: rebuilds both each time)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
node=$(readlink -f "$root/node_modules/node/bin/node")
npm_dir=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")
for need in buildah busybox; do
  command -v "$need" >/dev/null || { echo "base.sh: $need is required (Debian: apt-get install buildah busybox-static)" >&2; exit 1; }
done
[ -x "$node" ] && "$node" --version | grep -q '^v24\.' || { echo "base.sh: $node is not Node 24 (run npm ci)" >&2; exit 1; }
[ -f "$npm_dir/bin/npm-cli.js" ] || { echo "base.sh: npm not found at $npm_dir" >&2; exit 1; }

# Copies a file into the mounted root at the same path, with the shared libraries it links (ldd).
copy_with_libs() { # <mountpoint> <file> <destination in image>
  local mnt=$1 file=$2 dest=$3 lib
  install -D -m 0755 "$file" "$mnt$dest"
  for lib in $(ldd "$file" | grep -o '/[^ ]*'); do
    install -D -m 0755 "$(readlink -f "$lib")" "$mnt$lib"
  done
}

# The files both bases share: passwd/group (root, nonroot 65532), CA certificates, /tmp.
common_files() { # <mountpoint>
  local mnt=$1
  mkdir -p "$mnt/etc/ssl/certs" "$mnt/home/nonroot" "$mnt/root"
  install -d -m 1777 "$mnt/tmp"
  printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$mnt/etc/passwd"
  printf 'root:x:0:\nnonroot:x:65532:\n' >"$mnt/etc/group"
  cp /etc/ssl/certs/ca-certificates.crt "$mnt/etc/ssl/certs/"
  printf 'hosts: files dns\n' >"$mnt/etc/nsswitch.conf"
}

annotate() { # <container> <title>
  buildah config --label "org.opencontainers.image.title=$2" \
    --label "org.opencontainers.image.version=$("$node" --version)" \
    --label "org.opencontainers.image.description=Assembled offline by scripts/image/base.sh" "$1"
}

# Runtime base.
ctr=$(buildah from --quiet scratch)
trap 'buildah rm "$ctr" >/dev/null 2>&1 || true' EXIT
mnt=$(buildah mount "$ctr")
copy_with_libs "$mnt" "$node" /nodejs/bin/node
common_files "$mnt"
buildah umount "$ctr" >/dev/null
buildah config --user 65532:65532 --workingdir /home/nonroot --entrypoint '["/nodejs/bin/node"]' --cmd '' \
  --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --env SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt \
  --os linux --arch amd64 "$ctr"
annotate "$ctr" node24-base
buildah commit --quiet --rm "$ctr" localhost/node24-base:offline >/dev/null

# Build base.
ctr=$(buildah from --quiet scratch)
mnt=$(buildah mount "$ctr")
copy_with_libs "$mnt" "$node" /usr/local/bin/node
common_files "$mnt"
copy_with_libs "$mnt" "$(command -v busybox)" /bin/busybox
for applet in $(busybox --list-full); do
  [ -e "$mnt/$applet" ] || { mkdir -p "$(dirname "$mnt/$applet")"; ln -s /bin/busybox "$mnt/$applet"; }
done
mkdir -p "$mnt/usr/local/lib/node_modules"
cp -a "$npm_dir" "$mnt/usr/local/lib/node_modules/npm"
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$mnt/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$mnt/usr/local/bin/npx"
buildah umount "$ctr" >/dev/null
# NODE_EXTRA_CA_CERTS: npm in the build stage trusts this machine's CA bundle (it may hold a proxy's CA).
buildah config --user 0:0 --workingdir / --cmd '["node"]' \
  --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --env SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt \
  --env NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt \
  --os linux --arch amd64 "$ctr"
annotate "$ctr" node24-build
buildah commit --quiet --rm "$ctr" localhost/node24-build:offline >/dev/null
trap - EXIT
