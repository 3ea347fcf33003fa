# syntax=docker/dockerfile:1
# The static-export image: the operator (default command) and the CLI the site chart's init container
# runs (`static-export fetch`). Build: `docker build -t static-export .` (or podman); here, without a
# Docker engine or registry: `npm run image` (buildah on Node 24 bases assembled offline).
#
# Bases are arguments. The runtime base must provide Node 24 at NODE_BIN and a world-writable /tmp;
# the defaults are the public images (distroless: no shell, no package manager, user nonroot 65532).
ARG BUILD_BASE=docker.io/library/node:24-bookworm-slim
ARG NODE_BASE=gcr.io/distroless/nodejs24-debian12:nonroot

FROM ${BUILD_BASE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
# --ignore-scripts skips `prepare` (unpacks helm/kubectl for the tests) and the `node` devDependency's
# install of a second Node 24: the base's Node compiles. The cache mount keeps downloads across builds.
RUN --mount=type=cache,id=static-export-npm,target=/root/.npm \
    npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src src
RUN npm run build && npm prune --omit=dev --ignore-scripts --no-audit --no-fund
# Type declarations, TypeScript sources and source maps are never loaded at runtime (Node does not strip
# types under node_modules): about 40 % of the production node_modules, most of it @kubernetes/client-node.
RUN find node_modules -type f \( -name '*.ts' -o -name '*.mts' -o -name '*.cts' -o -name '*.map' \) -exec rm -f {} +
# The runtime base has neither a shell nor /usr/bin/env, so the CLI's shebang names its Node directly,
# and `static-export` on the PATH is what the site chart's init container runs.
ARG NODE_BIN=/nodejs/bin/node
RUN sed -i "1s|.*|#!${NODE_BIN}|" dist/cli/main.js \
 && mkdir -p /out/usr/local/bin \
 && ln -s /app/dist/cli/main.js /out/usr/local/bin/static-export

FROM ${NODE_BASE}
ARG VERSION=0.0.0-dev
ARG REVISION=unknown
ARG CREATED=1970-01-01T00:00:00Z
ARG SOURCE=https://github.com/static-export-operator/static-export-operator
LABEL org.opencontainers.image.title="static-export" \
      org.opencontainers.image.description="Operator and CLI that keep self-hosted docs sites serving the latest static export of a hosted docs platform" \
      org.opencontainers.image.source="${SOURCE}" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}" \
      org.opencontainers.image.licenses="Apache-2.0"
# Everything root-owned and read-only to the process: /tmp (from the base) is the only writable path.
WORKDIR /app
COPY --from=build /src/package.json ./
COPY --from=build /src/node_modules node_modules
COPY --from=build /src/dist dist
# crds/ for `kubectl apply` from the image; sample-docs/ is what `static-export simulate` serves.
COPY crds crds
COPY sample-docs sample-docs
COPY --from=build /out/ /
# The operator's --work-dir defaults to /tmp/static-export-operator.
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/static-export"]
CMD ["operator"]
