#!/usr/bin/env bash
# Ingest and refetch through `mapwright serve` (issue 36), end to end, on SQLite and PostgreSQL:
# an index of 10 gzipped children x 50,000 URLs served from 127.0.0.1 by a Python server that
# sends no validators (no ETag, no Last-Modified: every refetch is a 200 with the whole body).
#
#  1. The first ingest, timed from the submission (the API's POST of the index) to the rolled-up
#     count (11 downloads recorded, the index's rollup_urls 500,000, no lease held), beside a bare
#     bulk load of the same rows into copies of the same tables in the same run
#     (crates/mapwright-store/examples/ingest_bench.rs, INGEST_BENCH_BARE_ONLY=1: one
#     INSERT ... SELECT per table on SQLite, COPY on PostgreSQL, each into a fresh database).
#  2. A refetch of the same bytes (the API's resubmit of the index: the whole tree due again).
#  3. A refetch where one child changed one URL's lastmod.
#
# For each: wall time and CPU time (clock ticks of /proc/PID/stat, 10 ms each) of serve, and on
# PostgreSQL of the backends connected to the bench's database (summed over the backends seen
# at the start and the end of the phase; the server's shared processes, WAL writer and
# checkpointer, are not counted). Each refetch's CPU is given as a share of the first ingest's.
# Completion is watched through the database (sqlite3, psql), not serve's API, so the watching
# costs serve nothing. Not run in CI.
#
# Needs: python3, sqlite3, psql, PostgreSQL at 127.0.0.1:5432 with trust auth (databases of its
# own, dropped at the end). Usage: bench/serve/refetch.sh [sqlite|postgres|both]
# CARGO=/path/to/cargo-wrapper to build through a wrapper; MAPWRIGHT_BIN and INGEST_BENCH_BIN
# skip the builds (both `--profile wheel`: release optimisation without fat LTO).
# Where the first ingest's time goes: SERVE_LOG=PREFIX keeps serve's log (PREFIX.sqlite, ...); run
# with RUST_LOG=mapwright_server::jobs=debug and read it with bench/serve/timeline.py LOG START
# (START: the "submitted at" line). PERF=PREFIX samples serve's CPU during the first ingest
# (`perf report -i PREFIX.sqlite`), and each refetch (PREFIX.sqlite.refetch22, ...).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
cd "$REPO"

BACKEND=${1:-both}
CARGO=${CARGO:-cargo}
PORT=${PORT:-18541}
HTTP_PORT=${HTTP_PORT:-18542}
PG_ADMIN=postgres://postgres@127.0.0.1:5432/postgres
PG_DB=mapwright_refetch_$$
PG_BARE=mapwright_refetch_bare_$$
CHILDREN=10
PER_CHILD=50000

[ -n "${MAPWRIGHT_BIN:-}" ] || $CARGO build --locked --quiet --profile wheel -p mapwright
[ -n "${INGEST_BENCH_BIN:-}" ] || $CARGO build --locked --quiet --profile wheel -p mapwright-store --example ingest_bench
BIN=${MAPWRIGHT_BIN:-$REPO/target/wheel/mapwright}
BARE=${INGEST_BENCH_BIN:-$REPO/target/wheel/examples/ingest_bench}

WORK=$(mktemp -d)
SERVER= FILES_PID=
cleanup() {
  [ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null && wait "$SERVER" 2>/dev/null || true
  [ -n "$FILES_PID" ] && kill "$FILES_PID" 2>/dev/null || true
  psql -q "$PG_ADMIN" -c "DROP DATABASE IF EXISTS $PG_DB" >/dev/null 2>&1 || true
  psql -q "$PG_ADMIN" -c "DROP DATABASE IF EXISTS $PG_BARE" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT

load() { cut -d' ' -f1-3 /proc/loadavg; }
ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }

# The fixture: the index and its gzipped children; `make_files N` makes child N's URL 7 say a
# new lastmod when N >= 0.
make_files() {
  python3 - "$WORK/files" "$PORT" "$CHILDREN" "$PER_CHILD" "$1" <<'EOF'
import gzip, os, sys
out, port, children, per, changed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
os.makedirs(out, exist_ok=True)
base = f"http://127.0.0.1:{port}"
with open(f"{out}/index.xml", "w") as f:
    f.write('<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n')
    for c in range(children):
        f.write(f"<sitemap><loc>{base}/c{c}.xml.gz</loc></sitemap>\n")
    f.write("</sitemapindex>\n")
for c in range(children):
    if changed >= 0 and c != changed:
        continue
    rows = ['<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n']
    for i in range(per):
        day = 2 if (c == changed and i == 7) else 1
        rows.append(f"<url><loc>{base}/c{c}/products/item-{i:06}.html</loc><lastmod>2024-01-{day:02}T10:00:00+00:00</lastmod>"
                    "<changefreq>daily</changefreq><priority>0.5</priority></url>\n")
    rows.append("</urlset>\n")
    # mtime 0: the same rows make the same bytes.
    with gzip.GzipFile(f"{out}/c{c}.xml.gz.tmp", "wb", compresslevel=6, mtime=0) as f:
        f.write("".join(rows).encode())
    os.replace(f"{out}/c{c}.xml.gz.tmp", f"{out}/c{c}.xml.gz")
EOF
}

make_files -1
# A static server without validators (SimpleHTTPRequestHandler sends Last-Modified: dropped).
python3 - "$WORK/files" "$PORT" >"$WORK/files.log" 2>&1 <<'EOF' &
import functools, http.server, sys
class Handler(http.server.SimpleHTTPRequestHandler):
    def send_header(self, key, value):
        if key.lower() != "last-modified":
            super().send_header(key, value)
    def log_message(self, *args):
        pass
handler = functools.partial(Handler, directory=sys.argv[1])
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[2])), handler).serve_forever()
EOF
FILES_PID=$!
for _ in $(seq 1 50); do curl -fsS "http://127.0.0.1:$PORT/index.xml" >/dev/null 2>&1 && break; sleep 0.1; done

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); commit $(git rev-parse --short HEAD)"
echo "fixture: an index of $CHILDREN gzipped children x $PER_CHILD URLs ($(du -cb "$WORK"/files/c*.xml.gz | tail -1 | cut -f1) bytes gzipped), no validators"

# start_server ARGS... and stop_server, as in run.sh and scale.sh.
. "$HERE/server.sh"

# SERVE_LOG=PREFIX keeps serve's log as PREFIX.BACKEND (with RUST_LOG=mapwright_server::jobs=debug,
# bench/serve/timeline.py reads a timeline per sitemap from it).
keep_server_log() {
  if [ -n "${SERVE_LOG:-}" ]; then cp "$WORK/server.log" "$SERVE_LOG.$BACKEND_NOW"; fi
}

# The PostgreSQL backends of the bench's database: "pid ticks" lines.
pg_backends() {
  [ "$BACKEND_NOW" = postgres ] || return 0
  for pid in $(ps -u postgres -o pid=,args= | awk -v db="$PG_DB" 'index($0, " " db " ") {print $1}'); do
    echo "$pid $(ticks "$pid")"
  done
}

# phase_start / phase_end NAME: wall and CPU of serve (and the database's backends) between them.
phase_start() {
  T0=$(date +%s.%N)
  SERVE0=$(ticks "$SERVER")
  PG0=$(pg_backends)
}

# wait_for DOWNLOADS: until that many downloads are recorded and no lease is held.
wait_for() {
  while :; do
    local n
    n=$("${SQL[@]}" "SELECT (SELECT COUNT(*) FROM downloads) || ' ' || (SELECT COUNT(*) FROM sitemaps WHERE lease_owner IS NOT NULL)")
    [ "$n" = "$1 0" ] && return 0
    kill -0 "$SERVER" || { tail -20 "$WORK/server.log"; exit 1; }
    sleep 0.05
  done
}

phase_end() {
  local t1 serve1 pg1 pg_ticks
  t1=$(date +%s.%N)
  serve1=$(ticks "$SERVER")
  pg1=$(pg_backends)
  pg_ticks=$(awk 'NR == FNR {before[$1] = $2; next} {d += $2 - ($1 in before ? before[$1] : 0)} END {print d + 0}' \
    <(echo "$PG0") <(echo "$pg1"))
  WALL=$(awk -v a="$T0" -v b="$t1" 'BEGIN {printf "%.2f", b - a}')
  CPU=$(awk -v s=$((serve1 - SERVE0)) -v p="$pg_ticks" 'BEGIN {printf "%.2f", (s + p) / 100}')
  CPU_SERVE=$(awk -v s=$((serve1 - SERVE0)) 'BEGIN {printf "%.2f", s / 100}')
  CPU_DB=$(awk -v p="$pg_ticks" 'BEGIN {printf "%.2f", p / 100}')
}

# refetch WHAT DOWNLOADS: one refetch phase of bench_backend (whose locals base, token, index
# and first_cpu it reads): resubmits the index once the minimum interval between two downloads
# of one sitemap has passed, waits for DOWNLOADS downloads in all, and says the phase's times,
# its CPU as a share of the first ingest's, and the statuses of the refetch's 11 downloads.
# PERF=PREFIX: perf samples serve into PREFIX.BACKEND[.NAME] from perf_start NAME [ARGS...]
# (ARGS: perf record's own, e.g. -g) to perf_stop; without PERF both do nothing.
PERF_PID=
perf_start() {
  [ -n "${PERF:-}" ] || return 0
  local out=$PERF.$BACKEND_NOW${1:+.$1}
  perf record -q -F 999 "${@:2}" -o "$out" -p "$SERVER" 2>/dev/null &
  PERF_PID=$!
  sleep 0.5
}
perf_stop() {
  if [ -n "$PERF_PID" ]; then kill -INT "$PERF_PID" && wait "$PERF_PID" 2>/dev/null || true; fi
  PERF_PID=
}

refetch() {
  sleep 1.2
  # Each refetch sampled too, into PREFIX.BACKEND.refetchN (N: its expected downloads).
  perf_start "refetch$2" -g
  phase_start
  curl -fsS -X POST -H "authorization: Bearer $token" "$base/api/v1/sitemaps/$index/resubmit" >/dev/null
  wait_for "$2"
  phase_end
  perf_stop
  echo "refetch, $1: $WALL s; CPU $CPU s (serve $CPU_SERVE s, database $CPU_DB s): **$(awk -v a="$CPU" -v b="$first_cpu" 'BEGIN {printf "%.1f", 100 * a / b}') % of the first ingest's CPU**; load $(load)"
  echo "statuses of the refetch: $("${SQL[@]}" "SELECT status || ' ' || COUNT(*) FROM downloads WHERE id > (SELECT MAX(id) - 11 FROM downloads) GROUP BY status" | tr '\n' ' ')"
}

bench_backend() {
  BACKEND_NOW=$1
  echo
  echo "## $1 (load before: $(load))"
  local bare
  bare=$(printf '%s\n' "${BARE_OUT[@]}" | awk -v b="$1" '$1 == b":" {print $6}')
  bare=${bare:-0}
  printf '%s\n' bench-password | "$BIN" serve "${DB_ARGS[@]}" user create bench@example.com >/dev/null
  start_server --allow-private-networks --min-fetch-interval 1s
  local base="http://127.0.0.1:$HTTP_PORT" token site index
  curl -fsS -c "$WORK/cookies" -H 'content-type: application/json' \
    -d '{"email":"bench@example.com","password":"bench-password"}' "$base/api/v1/signin" >/dev/null
  token=$(curl -fsS -b "$WORK/cookies" -H 'content-type: application/json' -d '{"name":"bench"}' \
    "$base/api/v1/tokens" | jq -r .secret)
  site=$(curl -fsS -H "authorization: Bearer $token" -H 'content-type: application/json' \
    -d "{\"origin\":\"http://127.0.0.1:$PORT\"}" "$base/api/v1/sites" | jq -r .id)
  "${SQL[@]}" "UPDATE sites SET verified_at = 1 WHERE id = $site" >/dev/null
  sleep 1

  # The first ingest sampled into PREFIX.BACKEND (`perf report -i` it).
  perf_start ""
  phase_start
  index=$(curl -fsS -H "authorization: Bearer $token" -H 'content-type: application/json' \
    -d "{\"url\":\"http://127.0.0.1:$PORT/index.xml\"}" "$base/api/v1/sites/$site/sitemaps" | jq -r .id)
  wait_for 11
  phase_end
  perf_stop
  local urls first_cpu
  urls=$("${SQL[@]}" "SELECT rollup_urls FROM sitemaps WHERE id = $index")
  first_cpu=$CPU
  echo "submitted at $T0 (time zero of bench/serve/timeline.py)"
  echo "first ingest: $urls URLs rolled up (expected $((CHILDREN * PER_CHILD))) in $WALL s; bare load of the same rows $bare s: **$(awk -v a="$bare" -v b="$WALL" 'BEGIN {printf "%.0f", 100 * a / b}') % of the bare load**; CPU $CPU s (serve $CPU_SERVE s, database $CPU_DB s); load $(load)"
  echo "statuses: $("${SQL[@]}" "SELECT status || ' ' || COUNT(*) FROM downloads GROUP BY status" | tr '\n' ' ')"

  refetch "same bytes" 22
  make_files 0
  refetch "one URL of one child changed" 33
  stop_server
  keep_server_log
  make_files -1
}

# The bare loads first, each into a fresh database of its own (SQLite in a temporary folder).
psql -q "$PG_ADMIN" -c "CREATE DATABASE $PG_BARE" >/dev/null
BARE_ARGS=()
[ "$BACKEND" = sqlite ] || BARE_ARGS=("postgres://postgres@127.0.0.1:5432/$PG_BARE")
if [ "$BACKEND" = postgres ]; then export INGEST_BENCH_SKIP_SQLITE=1; fi
BARE_OUT=()
# INGEST_BENCH_BIN=none: no bare load (a binary of a commit before this script's example mode).
if [ "$BARE" != none ]; then
  # The bare load's process CPU too (user + system s, set-up included: an upper bound), beside
  # serve's CPU, which the load of a shared machine changes less than the wall times.
  mapfile -t BARE_OUT < <(INGEST_BENCH_BARE_ONLY=1 /usr/bin/time -f 'bare load process CPU: %U s user, %S s system' \
    "$BARE" "${BARE_ARGS[@]}" 2>&1)
  printf '%s\n' "${BARE_OUT[@]}"
fi

if [ "$BACKEND" = sqlite ] || [ "$BACKEND" = both ]; then
  mkdir -p "$WORK/data"
  DB_ARGS=(--data-dir "$WORK/data") SQL=(sqlite3 "$WORK/data/mapwright.db")
  bench_backend sqlite
fi
if [ "$BACKEND" = postgres ] || [ "$BACKEND" = both ]; then
  psql -q "$PG_ADMIN" -c "CREATE DATABASE $PG_DB" >/dev/null
  PG_URL=postgres://postgres@127.0.0.1:5432/$PG_DB
  DB_ARGS=(--database "$PG_URL" --data-dir "$WORK/pgdata") SQL=(psql -At "$PG_URL" -c)
  bench_backend postgres
fi
echo
echo "load after: $(load)"
