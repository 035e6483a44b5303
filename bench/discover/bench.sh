#!/usr/bin/env bash
# Many-site discovery, side by side in one run (not a test): `mapwright discover --sites`
# against ultimate-sitemap-parser and advertools, each given a pool of WORKERS threads, over
# sites served on loopback by server/ (each its own 127.10.X.Y address): robots.txt -> an
# index -> 2 gzipped children x 500 URLs. Whole-process wall time, user+sys CPU and peak RSS
# by /usr/bin/time -v; every tool's URL count is checked.
#
# usage: bench/discover/bench.sh [HOSTS=10000] [PEER_HOSTS=1000] [WORKERS=64]
# Needs: python3 (the peers go into bench/discover/.venv from ../shared/bench's lock), cargo.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
SHARED=${SHARED:-$REPO/../shared}
HOSTS=${1:-10000}
PEER_HOSTS=${2:-1000}
WORKERS=${3:-64}
PORT=${PORT:-18471}
URLS=500
CARGO=${CARGO:-cargo}

[ -x "$HERE/.venv/bin/python" ] || python3 -m venv "$HERE/.venv"
"$HERE/.venv/bin/python" -c 'import usp, advertools' 2>/dev/null ||
  "$HERE/.venv/bin/python" -m pip install -q --disable-pip-version-check -r "$SHARED/bench/python/requirements-lock.txt"
# The wheel profile: release optimisation without the release profile's fat LTO (a much
# shorter build; if anything it makes mapwright slower).
$CARGO build --profile wheel -p mapwright --quiet --manifest-path "$REPO/Cargo.toml"
$CARGO build --release --quiet --manifest-path "$HERE/server/Cargo.toml"
BIN=$REPO/target/wheel/mapwright
SERVER_BIN=$HERE/server/target/release/discover-bench-server

WORK=$(mktemp -d)
SERVER=
cleanup() { [ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT
ulimit -n "$(ulimit -Hn)"
MAX=$(( HOSTS > PEER_HOSTS ? HOSTS : PEER_HOSTS ))
"$SERVER_BIN" "$MAX" "$PORT" "$URLS" "$WORK/all.txt" > "$WORK/server.log" 2>&1 &
SERVER=$!
until grep -q ready "$WORK/server.log" 2>/dev/null; do
  kill -0 "$SERVER" || { cat "$WORK/server.log"; exit 1; }
  sleep 0.5
done
head -n "$HOSTS" "$WORK/all.txt" > "$WORK/hosts.txt"
head -n "$PEER_HOSTS" "$WORK/all.txt" > "$WORK/peer-hosts.txt"

echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr); load before: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '| tool | hosts | URLs | wall s | user+sys s | peak RSS MB | URLs/s |\n|---|---:|---:|---:|---:|---:|---:|\n'

# timed LABEL HOSTS EXPECTED -- command...: runs it under /usr/bin/time -v, checks the count
# (urls=N on the command's standard output, or in the summary file mapwright wrote), prints a
# table row.
timed() {
  local label=$1 hosts=$2 expected=$3; shift 4
  rm -f "$WORK/summary.jsonl"
  /usr/bin/time -v -o "$WORK/time" "$@" > "$WORK/out" 2> "$WORK/err" || true
  if [ -f "$WORK/summary.jsonl" ]; then
    python3 -c 'import json,sys; print("urls=%d" % sum(json.loads(l)["urls"] for l in open(sys.argv[1])))' \
      "$WORK/summary.jsonl" >> "$WORK/out"
  fi
  local got wall cpu rss
  got=$(grep -o 'urls=[0-9]*' "$WORK/out" | tail -1 | cut -d= -f2)
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,a,":"); s=0; for(i=1;i<=n;i++) s=s*60+a[i]; print s}' "$WORK/time")
  cpu=$(awk -F': ' '/User time/ {u=$2} /System time/ {s=$2} END {print u+s}' "$WORK/time")
  rss=$(awk -F': ' '/Maximum resident/ {printf "%.0f", $2/1024}' "$WORK/time")
  local note=""
  [ "$got" = "$expected" ] || note=" MISMATCH (expected $expected, got ${got:-nothing}; $(tail -c 300 "$WORK/err" | tr '\n' ' '))"
  printf '| %s | %d | %s | %.2f | %.2f | %s | %.0f |%s\n' "$label" "$hosts" "${got:-0}" "$wall" "$cpu" "$rss" \
    "$(awk -v u="${got:-0}" -v w="$wall" 'BEGIN {print (w > 0 ? u / w : 0)}')" "$note"
}

# mapwright: rows to /dev/null as JSON Lines, the count from the per-site summary.
MW=("$BIN" discover --hosts-in-flight "$WORKERS" -q --out /dev/null --summary "$WORK/summary.jsonl" --sites)

timed "mapwright discover --sites" "$PEER_HOSTS" $(( PEER_HOSTS * 2 * URLS )) -- "${MW[@]}" "$WORK/peer-hosts.txt"
timed "ultimate-sitemap-parser 1.8.1" "$PEER_HOSTS" $(( PEER_HOSTS * 2 * URLS )) -- "$HERE/.venv/bin/python" "$HERE/peers.py" usp "$WORK/peer-hosts.txt" "$WORKERS"
timed "advertools 0.18.0" "$PEER_HOSTS" $(( PEER_HOSTS * 2 * URLS )) -- "$HERE/.venv/bin/python" "$HERE/peers.py" advertools "$WORK/peer-hosts.txt" "$WORKERS"
if [ "$HOSTS" != "$PEER_HOSTS" ]; then
  timed "mapwright discover --sites" "$HOSTS" $(( HOSTS * 2 * URLS )) -- "${MW[@]}" "$WORK/hosts.txt"
fi
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
