#!/usr/bin/env bash
# The interoperability check: serves a real interai instance on a free loopback port (SQLite in a temporary data
# dir) and drives it over HTTP with the official MCP clients that install.sh put in CACHE_DIR: the Python SDK in
# both protocol eras, the TypeScript SDK 1.x (initialize) and 2.x (2026-07-28), and the MCP Inspector CLI's strict
# schema lint. Each lists the tools, calls every
# tool once with valid input and once with input that must fail, and checks that it shows the spec's error code and
# message; plus a connection without a key (unauthenticated) and a read-only key (forbidden_scope). Prints one line
# per check and a closing "interop: N passed, M failed"; exits 1 when any check failed.
#
# usage: tests/interop/run.sh CACHE_DIR   (INTEROP_BINARY=path to check a binary other than the debug build)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cache="${1:?usage: tests/interop/run.sh CACHE_DIR}"
cache="$(cd "$cache" && pwd)"
cd "$here/../.."
export CARGO_TERM_COLOR=never

# The debug binary: after `cargo test` has built it (as CI does first), this only checks that it is fresh.
# INTEROP_BINARY=path checks another build instead (a release binary, another checkout's).
if [ -n "${INTEROP_BINARY:-}" ]; then
  binary="$INTEROP_BINARY"
else
  cargo build --quiet --bin interai
  target_dir="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"
  binary="$target_dir/debug/interai"
fi

work="$(mktemp -d)"
server_pid=""
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

# Only the settings below: nothing from the caller's environment (a PostgreSQL URL, a realm) leaks in.
for name in $(compgen -e | grep '^INTERAI_' || true); do
  unset "$name"
done
export INTERAI_DATA_DIR="$work/data" INTERAI_LISTEN=127.0.0.1:0 INTERAI_LOG_FORMAT=json INTERAI_SHUTDOWN_GRACE_SECONDS=2

# Actors and keys, through the admin CLI before the server starts (the first command also bootstraps the realm and
# writes the admin key). The reviewer is its own root controller, so it may review the admin's content; the reader's
# key has the read scope only.
admin() {
  "$binary" admin "$@" 2>>"$work/admin.log"
}
reviewer_id="$(admin --init actor create --type usr --name "Interop reviewer")"
reviewer_key="$(admin key create --actor "$reviewer_id" --label interop)"
reader_id="$(admin actor create --type ai --name "Interop reader" --controller "$reviewer_id")"
reader_key="$(admin key create --actor "$reader_id" --scopes read --label interop)"
author_key="$(cat "$work/data/admin.key")"

"$binary" serve >"$work/server.log" 2>&1 &
server_pid=$!
# The port the server bound, from its "serving" log line.
address=""
for _ in $(seq 1 300); do
  address="$(grep '"message":"serving"' "$work/server.log" | grep -o '"address":"[^"]*"' | cut -d '"' -f 4 || true)"
  [ -n "$address" ] && break
  if ! kill -0 "$server_pid" 2>/dev/null; then
    break
  fi
  sleep 0.1
done
if [ -z "$address" ]; then
  echo "FAIL: the server did not start; its log:" >&2
  cat "$work/server.log" >&2
  exit 1
fi
echo "serving $binary at http://$address/mcp (SQLite in a temporary data dir)"

export INTEROP_MCP_URL="http://$address/mcp" INTEROP_AUTHOR_KEY="$author_key" INTEROP_REVIEWER_KEY="$reviewer_key"
export INTEROP_READER_KEY="$reader_key" INTEROP_NODE_MODULES="$cache/node"

# Runs one client; a client that ends badly without naming a failed check counts as one failed check.
run_client() {
  local name="$1"
  shift
  local output="$work/client-$name.log"
  local status=0
  timeout 180 "$@" >"$output" 2>&1 || status=$?
  cat "$output"
  if [ "$status" -ne 0 ] && ! grep -q '^FAIL ' "$output"; then
    echo "FAIL $name: the client ended with status $status" | tee -a "$output"
  fi
  cat "$output" >>"$work/checks.log"
}
touch "$work/checks.log"
run_client python-modern "$cache/python/bin/python" "$here/python/check.py" --mode auto
run_client python-legacy "$cache/python/bin/python" "$here/python/check.py" --mode legacy
run_client typescript-v1 node "$here/node/check.mjs" --sdk v1
run_client typescript-v2 node "$here/node/check.mjs" --sdk v2

# The MCP Inspector's schema-portability lint over tools/list: with --strict it prints every finding (path, issue,
# fix) on stderr, so a clean run prints none. Any finding, warning or error, fails the check.
inspector_check() {
  local inspector="$cache/node/node_modules/@modelcontextprotocol/inspector/clients/cli/build/index.js"
  local findings="$work/inspector-strict.log"
  local status=0
  timeout 120 node "$inspector" --cli "$INTEROP_MCP_URL" --header "Authorization: Bearer $author_key" \
    --method tools/list --strict >/dev/null 2>"$findings" || status=$?
  if [ "$status" -eq 0 ] && ! grep -q '[^[:space:]]' "$findings"; then
    echo "ok   inspector 2.12.0: tools/list --strict reports no schema finding"
  else
    echo "FAIL inspector 2.12.0: tools/list --strict exited $status with these findings:"
    head -n 40 "$findings"
  fi
}
inspector_check | tee -a "$work/checks.log"

# Every error was one the clients asked for: an error-level line in the server's log is a failure.
if grep -q '"level":"ERROR"' "$work/server.log"; then
  echo "FAIL server: logged errors while the clients ran:" | tee -a "$work/checks.log"
  grep '"level":"ERROR"' "$work/server.log" | head -n 5
else
  echo "ok   server: logged no errors while the clients ran" | tee -a "$work/checks.log"
fi

passed="$(grep -c '^ok ' "$work/checks.log" || true)"
failed="$(grep -c '^FAIL ' "$work/checks.log" || true)"
echo "interop: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
