#!/usr/bin/env bash
# Memory of `mapwright discover --sites` against the number of hosts (not a test): SERVERS
# loopback servers of server/ with 10,000 sites each (one process per 10,000: each holds a
# listener per site, and a process may open 20,000 descriptors here), on consecutive ports,
# so SERVERS x 10,000 distinct sites (a site is its origin, port included). mapwright's RSS,
# threads and open descriptors are sampled every second with the number of sites done (the
# summary's lines); the peak RSS by /usr/bin/time -v.
#
# usage: bench/discover/memory.sh [SERVERS=2] [WORKERS=64]
# Run bench.sh once first (it builds both binaries).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
SERVERS=${1:-2}
WORKERS=${2:-64}
PORT=${PORT:-18471}
BIN=${BIN:-$REPO/target/wheel/mapwright}
SERVER_BIN=$HERE/server/target/release/discover-bench-server

WORK=$(mktemp -d)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$WORK"; }
trap cleanup EXIT
ulimit -n "$(ulimit -Hn)"
for i in $(seq 0 $((SERVERS - 1))); do
  "$SERVER_BIN" 10000 $((PORT + i)) 500 "$WORK/sites-$i.txt" > "$WORK/server-$i.log" 2>&1 &
  PIDS+=($!)
done
for i in $(seq 0 $((SERVERS - 1))); do
  until grep -q ready "$WORK/server-$i.log" 2>/dev/null; do sleep 0.5; done
done
cat "$WORK"/sites-*.txt > "$WORK/all.txt"
HOSTS=$(wc -l < "$WORK/all.txt")
echo "hosts: $HOSTS; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/time -v -o "$WORK/time" "$BIN" discover --hosts-in-flight "$WORKERS" -q --out /dev/null \
  --summary "$WORK/summary.jsonl" --sites "$WORK/all.txt" &
TIMED=$!
sleep 0.2
MW=$(pgrep -P "$TIMED" | head -1)
printf '| s | sites done | RSS MB | threads | fds |\n|---:|---:|---:|---:|---:|\n'
t=0
while kill -0 "$MW" 2>/dev/null; do
  rss=$(awk '/VmRSS/ {printf "%.0f", $2/1024}' "/proc/$MW/status" 2>/dev/null || echo 0)
  thr=$(awk '/Threads/ {print $2}' "/proc/$MW/status" 2>/dev/null || echo 0)
  fds=$(ls "/proc/$MW/fd" 2>/dev/null | wc -l)
  done_=$(wc -l < "$WORK/summary.jsonl" 2>/dev/null || echo 0)
  [ "$rss" != 0 ] && printf '| %d | %d | %s | %s | %s |\n' "$t" "$done_" "$rss" "$thr" "$fds"
  sleep 1
  t=$((t + 1))
done
wait "$TIMED" || true
urls=$(python3 -c 'import json,sys; print(sum(json.loads(l)["urls"] for l in open(sys.argv[1])))' "$WORK/summary.jsonl")
echo "urls: $urls (expected $((HOSTS * 1000))); peak RSS: $(awk -F': ' '/Maximum resident/ {printf "%.0f MB", $2/1024}' "$WORK/time"); wall: $(awk -F': ' '/Elapsed/ {print $2}' "$WORK/time"); user+sys: $(awk -F': ' '/User time/ {u=$2} /System time/ {s=$2} END {print u+s}' "$WORK/time") s; load after: $(cut -d' ' -f1-3 /proc/loadavg)"
