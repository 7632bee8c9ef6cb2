#!/usr/bin/env bash
# Installs the pinned official MCP clients that tests/interop/run.sh drives, into CACHE_DIR (CI uses the ignored
# .ci/cache/interop): a Python virtual environment with python/requirements.txt (the `mcp` package and everything
# it pulls in, each pinned exactly) and `npm ci` of node/package-lock.json (@modelcontextprotocol/sdk 1.x,
# @modelcontextprotocol/client 2.x and the @modelcontextprotocol/inspector CLI). Each part is installed only when
# it is missing or its pins (or the interpreter) changed, so reruns take a second. Needs python3 with pip, node 20 or later and npm; `cargo test` needs none of it.
#
# usage: tests/interop/install.sh CACHE_DIR
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cache="${1:?usage: tests/interop/install.sh CACHE_DIR}"
mkdir -p "$cache"
cache="$(cd "$cache" && pwd)"

for tool in python3 node npm; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "FAIL: the interoperability check needs $tool" >&2
    exit 1
  fi
done
node_major="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$node_major" -lt 20 ]; then
  echo "FAIL: the interoperability check needs node 20 or later, not $(node --version)" >&2
  exit 1
fi

# A digest of what an installed part was made from (pins and interpreter); a different one means reinstall.
digest() {
  sha256sum | cut -d ' ' -f 1
}

install_python() {
  local target="$cache/python"
  local stamp
  stamp="$({ cat "$here/python/requirements.txt"; python3 --version; } | digest)"
  if [ "$(cat "$target/interop.stamp" 2>/dev/null || true)" = "$stamp" ]; then
    echo "Python client: already installed in $target"
    return
  fi
  rm -rf "$target"
  # A venv without its own pip is made in a fraction of a second; the interpreter's pip installs into it.
  python3 -m venv --without-pip "$target"
  python3 -m pip --disable-pip-version-check --python "$target/bin/python" install --quiet \
    --requirement "$here/python/requirements.txt"
  echo "$stamp" >"$target/interop.stamp"
  echo "Python client: installed $("$target/bin/python" -c 'from importlib.metadata import version; print("mcp", version("mcp"))') in $target"
}

install_node() {
  local target="$cache/node"
  local stamp
  stamp="$({ cat "$here/node/package.json" "$here/node/package-lock.json"; node --version; } | digest)"
  if [ "$(cat "$target/interop.stamp" 2>/dev/null || true)" = "$stamp" ]; then
    echo "TypeScript clients: already installed in $target"
    return
  fi
  rm -rf "$target"
  mkdir -p "$target"
  cp "$here/node/package.json" "$here/node/package-lock.json" "$target/"
  (cd "$target" && npm ci --no-audit --no-fund --loglevel=error)
  echo "$stamp" >"$target/interop.stamp"
  echo "TypeScript clients: installed in $target:"
  (cd "$target" && npm ls --depth=0 --loglevel=error | tail -n +2)
}

install_python
install_node
