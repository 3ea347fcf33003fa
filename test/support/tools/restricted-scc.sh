#!/bin/sh
# Helm post-renderer: test/support/tools/restricted-scc.ts on the rendered manifests (stdin to stdout).
# Node 24 (the repository's, from node_modules) runs TypeScript as it is.
exec "$(dirname "$0")/../../../node_modules/node/bin/node" "$(dirname "$0")/restricted-scc.ts"
