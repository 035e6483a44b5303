#!/usr/bin/env bash
# Load benchmark of `mapwright serve` (release build) on SQLite and on PostgreSQL: wrk for
# DURATION (30 s) on loopback against
#   1. GET /ping?sitemap=...           with the ping limits raised (--ping-limit-per-minute),
#   2. GET /ping?sitemap=...           with the default limits: nearly every answer is 429,
#   3. GET /api/v1/sitemaps/{id}       with a Bearer token (the sitemap-status call).
# Prints a Markdown table of requests/s and p99 latency (wrk --latency). Not run in CI.
#
# Needs: wrk (installed with apt if missing), curl, jq, sqlite3, psql, PostgreSQL at
# 127.0.0.1:5432 with trust auth. Usage: bench/serve/run.sh [DURATION] [CONNECTIONS]
set -euo pipefail
cd "$(dirname "$0")/../.."

DURATION=${1:-30s}
CONNECTIONS=${2:-64}
THREADS=2
HTTP_PORT=18391
PG_ADMIN=postgres://postgres@127.0.0.1:5432/postgres
PG_DB=mapwright_bench_$$

if ! command -v wrk >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq wrk >/dev/null
fi
cargo build --release --locked -p mapwright --quiet
BIN=target/release/mapwright

WORK=$(mktemp -d)
SERVER=
cleanup() {
  [ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null && wait "$SERVER" 2>/dev/null || true
  psql -q "$PG_ADMIN" -c "DROP DATABASE IF EXISTS $PG_DB" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT

# start_server ARGS... and stop_server (serves on $HTTP_PORT, waits for /healthz).
. bench/serve/server.sh

# run_wrk NAME URL [HEADER]: one wrk run; prints "NAME | req/s | p99 | non-2xx".
run_wrk() {
  local name=$1 url=$2 header=${3:-}
  local out
  if [ -n "$header" ]; then
    out=$(wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --latency -H "$header" "$url")
  else
    out=$(wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --latency "$url")
  fi
  echo "$out" >>"$WORK/wrk.log"
  local rps p99 errors
  rps=$(awk '/^Requests\/sec:/ {print $2}' <<<"$out")
  p99=$(awk '$1 == "99%" {print $2}' <<<"$out")
  errors=$(awk '/Non-2xx or 3xx responses:/ {print $5}' <<<"$out")
  echo "| $BACKEND | $name | $rps | $p99 | ${errors:-0} |"
}

# bench_backend NAME SERVE-ARGS...: set-up through the API, then the three runs.
bench_backend() {
  BACKEND=$1
  shift
  local base="http://127.0.0.1:$HTTP_PORT"
  # The account is made by the operator's command (a sign-up waits for its mailed link).
  printf '%s\n' bench-password | "$BIN" serve "$@" user create bench@example.com >/dev/null
  start_server "$@" --ping-limit-per-minute 1000000000
  curl -fsS -c "$WORK/cookies" -H 'content-type: application/json' \
    -d '{"email":"bench@example.com","password":"bench-password"}' "$base/api/v1/signin" >/dev/null
  local token site sitemap
  token=$(curl -fsS -b "$WORK/cookies" -H 'content-type: application/json' -d '{"name":"bench"}' \
    "$base/api/v1/tokens" | jq -r .secret)
  site=$(curl -fsS -H "authorization: Bearer $token" -H 'content-type: application/json' \
    -d '{"origin":"https://bench.example"}' "$base/api/v1/sites" | jq -r .id)
  # bench.example cannot serve a verification file: mark the site verified in the database.
  "${MARK_VERIFIED[@]}" "UPDATE sites SET verified_at = 1 WHERE id = $site" >/dev/null
  sitemap=$(curl -fsS -H "authorization: Bearer $token" -H 'content-type: application/json' \
    -d '{"url":"https://bench.example/sitemap.xml"}' "$base/api/v1/sites/$site/sitemaps" | jq -r .id)

  run_wrk "ping (limits raised)" "$base/ping?sitemap=https%3A%2F%2Fbench.example%2Fsitemap.xml"
  run_wrk "GET /api/v1/sitemaps/{id}" "$base/api/v1/sitemaps/$sitemap" "Authorization: Bearer $token"
  stop_server
  start_server "$@"
  run_wrk "ping (default limits: 429)" "$base/ping?sitemap=https%3A%2F%2Fbench.example%2Fsitemap.xml"
  stop_server
}

echo "| backend | request | requests/s | p99 | non-2xx |"
echo "|---|---|---|---|---|"
MARK_VERIFIED=(sqlite3 "$WORK/data/mapwright.db")
bench_backend sqlite --data-dir "$WORK/data"
psql -q "$PG_ADMIN" -c "CREATE DATABASE $PG_DB" >/dev/null
PG_URL=postgres://postgres@127.0.0.1:5432/$PG_DB
MARK_VERIFIED=(psql -q "$PG_URL" -c)
bench_backend postgres --database "$PG_URL" --data-dir "$WORK/pgdata"
echo
echo "wrk -t$THREADS -c$CONNECTIONS -d$DURATION --latency; $(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg)"
