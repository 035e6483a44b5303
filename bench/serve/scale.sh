#!/usr/bin/env bash
# 10^4 sites (issue 20, item 5): `mapwright serve` (release build) over N verified sites and
# N x M URLs, on SQLite and/or PostgreSQL. Not a test; not run in CI.
#
#  1. Ingest through the service: S sites (each its own origin 127.10.X.Y:PORT, served by
#     bench/discover/server: an index of two gzipped children of M/2 URLs) are fetched, synced
#     and merged by `serve` with W workers, from the first lease to the last merge; the peak
#     RSS of each process (serve, the fixture server, PostgreSQL's processes) is read from
#     /proc (VmHWM) at the end.
#  2. The other N - S sites are copies of those S, made at the store's level by
#     crates/mapwright-store/examples/scale_seed.rs (`clone`: every row the service wrote, ids
#     shifted, origins and URL hashes remade; a bulk load, timed), and every URL gets a check
#     outcome (one in 20 a 404) as a check run records it.
#  3. The lease query: `Store::lease_sitemaps` with every sitemap of the N sites due.
#  4. The pages: `serve --workers 0`, then bench/serve/pages.py (Python's http.client, one
#     keep-alive connection, R requests per page over the bench account's 100 sites): p50/p99
#     of the console's pages and their API equivalents.
#
# usage: bench/serve/scale.sh [--backend sqlite|postgres|both] [--sites N=10000]
#        [--urls-per-site M=1000] [--ingest-sites S=500] [--workers W=8] [--requests R=200]
#   N must be a multiple of S, S at least 100.
#   Quick check: bench/serve/scale.sh --sites 1000 --ingest-sites 100 --requests 50
# Needs: python3, sqlite3, psql, PostgreSQL at 127.0.0.1:5432 with trust auth (a database of
# its own, dropped at the end). CARGO=/path/to/cargo-wrapper to build through a wrapper.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
cd "$REPO"

BACKEND=both SITES=10000 URLS=1000 INGEST=500 WORKERS=8 REQUESTS=200
while [ $# -gt 0 ]; do
  case $1 in
    --backend) BACKEND=$2 ;;
    --sites) SITES=$2 ;;
    --urls-per-site) URLS=$2 ;;
    --ingest-sites) INGEST=$2 ;;
    --workers) WORKERS=$2 ;;
    --requests) REQUESTS=$2 ;;
    *) echo "unknown argument $1 (see the head of $0)" >&2; exit 2 ;;
  esac
  shift 2
done
[ $((SITES % INGEST)) -eq 0 ] && [ "$INGEST" -ge 100 ] || { echo "--sites must be a multiple of --ingest-sites (>= 100)" >&2; exit 2; }
CARGO=${CARGO:-cargo}
PORT=${PORT:-18530}
HTTP_PORT=${HTTP_PORT:-18531}
PG_ADMIN=postgres://postgres@127.0.0.1:5432/postgres
PG_DB=mapwright_scale_$$

# MAPWRIGHT_BIN=path skips the release build (a dry run of the script with another build).
[ -n "${MAPWRIGHT_BIN:-}" ] || $CARGO build --release --locked -p mapwright --quiet
$CARGO build --release --quiet --manifest-path bench/discover/server/Cargo.toml
# The seeder: the dev profile with the store optimised, as bench/serve/ingest.sh builds it.
SEED_CONFIG=(--config 'profile.dev.package.mapwright-store.opt-level=2')
$CARGO build --locked --quiet -p mapwright-store --example scale_seed "${SEED_CONFIG[@]}"
BIN=${MAPWRIGHT_BIN:-$REPO/target/release/mapwright}
SEED=$REPO/target/debug/examples/scale_seed
FIXTURE=$REPO/bench/discover/server/target/release/discover-bench-server

WORK=$(mktemp -d)
SERVER= FIXTURE_PID=
cleanup() {
  [ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null && wait "$SERVER" 2>/dev/null || true
  [ -n "$FIXTURE_PID" ] && kill "$FIXTURE_PID" 2>/dev/null || true
  psql -q "$PG_ADMIN" -c "DROP DATABASE IF EXISTS $PG_DB" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT
ulimit -n "$(ulimit -Hn)"

load() { cut -d' ' -f1-3 /proc/loadavg; }
hwm_mb() { awk '/VmHWM/ {printf "%.0f", $2 / 1024}' "/proc/$1/status" 2>/dev/null || echo "?"; }
# The process's own memory (heap, stacks) without the file pages it maps (SQLite's mmap).
anon_mb() { awk '/RssAnon/ {printf "%.0f", $2 / 1024}' "/proc/$1/status" 2>/dev/null || echo 0; }

"$FIXTURE" "$INGEST" "$PORT" $((URLS / 2)) >"$WORK/fixture.log" 2>&1 &
FIXTURE_PID=$!
until grep -q ready "$WORK/fixture.log" 2>/dev/null; do
  kill -0 "$FIXTURE_PID" || { cat "$WORK/fixture.log"; exit 1; }
  sleep 0.5
done

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo); commit $(git rev-parse --short HEAD)"
echo "scale: $SITES sites x $URLS URLs ($((SITES * URLS)) URLs), $INGEST sites ingested through the service with $WORKERS workers"

# start_server ARGS... and stop_server, as in run.sh and refetch.sh.
. "$HERE/server.sh"

bench_backend() {
  local backend=$1
  echo
  echo "## $backend (load before: $(load))"
  printf '%s\n' bench-password | "$BIN" serve "${DB_ARGS[@]}" user create bench@example.com >/dev/null
  "$SEED" prepare "$DB" "$SITES" "$INGEST" "$PORT"

  # 1. The first complete ingest of the S sites, through the service.
  local expected_sitemaps=$((INGEST * 3)) expected_urls=$((INGEST * URLS))
  local t0 t1
  t0=$(date +%s.%N)
  start_server --workers "$WORKERS" --allow-private-networks --poll-interval 100ms
  local pg_peak=0 anon_peak=0
  while :; do
    local anon_now
    anon_now=$(anon_mb "$SERVER")
    [ "$anon_now" -gt "$anon_peak" ] && anon_peak=$anon_now
    local done_count
    done_count=$("${SQL[@]}" "SELECT COUNT(*) FROM sitemaps WHERE status IS NOT NULL AND lease_owner IS NULL")
    if [ "$backend" = postgres ]; then
      local pg_now
      pg_now=$(ps -u postgres -o rss=,args= | awk -v db="$PG_DB" 'index($0, db) {s += $1} END {printf "%.0f", s / 1024}')
      [ "$pg_now" -gt "$pg_peak" ] && pg_peak=$pg_now
    fi
    [ "$done_count" -ge "$expected_sitemaps" ] && break
    kill -0 "$SERVER" || { tail -20 "$WORK/server.log"; exit 1; }
    sleep 0.5
  done
  t1=$(date +%s.%N)
  local urls failed serve_mb
  urls=$("${SQL[@]}" "SELECT COUNT(*) FROM urls")
  failed=$("${SQL[@]}" "SELECT COUNT(*) FROM sitemaps WHERE status NOT IN ('ok', 'warnings')")
  serve_mb=$(hwm_mb "$SERVER")
  local secs
  secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f", b - a}')
  echo "first complete ingest: $INGEST sites, $expected_sitemaps sitemaps, $urls URLs (expected $expected_urls; $failed sitemaps not ok) in $secs s = $(awk -v u="$urls" -v s="$secs" 'BEGIN {printf "%.0f", u / s}') URLs/s; load $(load)"
  echo "peak RSS: serve ${serve_mb} MB (of which its own memory, sampled every 0.5 s, at most ${anon_peak} MB; the rest mapped database file), fixture server $(hwm_mb "$FIXTURE_PID") MB"
  if [ "$backend" = postgres ]; then
    echo "PostgreSQL: the RSS of the backends of this database summed, at its peak: ${pg_peak} MB (shared buffers they touched counted in each); the largest backend's VmHWM $(for p in $(ps -u postgres -o pid=,args= | awk -v db="$PG_DB" 'index($0, db) {print $1}'); do hwm_mb "$p"; echo; done | sort -n | tail -1) MB"
  fi
  stop_server

  # 2. The other sites, copies made at the store's level.
  t0=$(date +%s.%N)
  "$SEED" clone "$DB" "$SITES" "$INGEST" "$PORT" | tail -3
  echo "bulk copy to $SITES sites: $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.0f", b - a}') s; load $(load)"
  [ "$backend" = sqlite ] && echo "SQLite file: $(du -m "$WORK/data/mapwright.db" | cut -f1) MB"
  [ "$backend" = postgres ] && echo "PostgreSQL database: $(psql -At "$PG_URL" -c "SELECT pg_database_size(current_database()) / 1048576") MB"

  # 3. The lease query with every sitemap due (the defaults of serve for W workers).
  "$SEED" lease "$DB" "$WORKERS" 2 2 300

  # 4. The pages.
  start_server --workers 0
  python3 "$HERE/pages.py" "http://127.0.0.1:$HTTP_PORT" bench@example.com bench-password "$REQUESTS" "$backend"
  echo "serve (web only) peak RSS after the pages: $(hwm_mb "$SERVER") MB (its own memory now $(anon_mb "$SERVER") MB); load $(load)"
  stop_server
}

if [ "$BACKEND" = sqlite ] || [ "$BACKEND" = both ]; then
  DB=$WORK/data DB_ARGS=(--data-dir "$WORK/data") SQL=(sqlite3 "$WORK/data/mapwright.db")
  mkdir -p "$DB"
  bench_backend sqlite
fi
if [ "$BACKEND" = postgres ] || [ "$BACKEND" = both ]; then
  psql -q "$PG_ADMIN" -c "CREATE DATABASE $PG_DB" >/dev/null
  PG_URL=postgres://postgres@127.0.0.1:5432/$PG_DB
  DB=$PG_URL DB_ARGS=(--database "$PG_URL" --data-dir "$WORK/pgdata") SQL=(psql -At "$PG_URL" -c)
  bench_backend postgres
fi
echo
echo "load after: $(load)"
