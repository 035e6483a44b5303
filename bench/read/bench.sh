#!/usr/bin/env bash
# The reader beside its limits, in one run (not a test): `mapwright read FILE --format text`
# against a bare quick-xml loop over the same file (crates/mapwright-core/examples/quickxml_loop.rs,
# the loop of the shared benchmark's `quickxml_count`: events, `<loc>` counted, nothing decoded),
# and a `.xml.gz` read against a bare inflate of the same file by the same library and build
# (crates/mapwright-core/examples/inflate.rs). Everything is built from this repository, with its
# release profile, and the files are generated: a clone is all it needs.
#
# Two measures, each with its limit in the same run:
# - instructions (valgrind --tool=callgrind, total Ir of the whole process): independent of
#   the machine's load, so they compare across runs and machines of the same kind;
# - whole-process times (getrusage of the child, microseconds; /usr/bin/time's 10 ms would be
#   a third of a run), RUNS alternating rounds, medians: user+sys CPU seconds and wall seconds
#   (the gzip read runs its inflate on a second thread, so its wall time, not its CPU, is what
#   overlapping buys, and only while the second core is free: on a loaded machine wall times
#   mean little, and the load is printed before and after).
#
# usage: bench/read/bench.sh [RUNS=11]
# Needs: python3, cargo, valgrind (for the instruction counts; skipped without it).
# The corpus is made by bench/python/gen_corpus.py (no network) into $CORPUS (default
# $TMPDIR/mapwright-read-bench); SKIP_BUILD=1 times what target/release already holds.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
CORPUS=${CORPUS:-${TMPDIR:-/tmp}/mapwright-read-bench}
RUNS=${1:-11}
CARGO=${CARGO:-cargo}

python3 "$REPO/bench/python/gen_corpus.py" --out "$CORPUS" > /dev/null 2>&1
# SKIP_BUILD=1 uses what is built (MW=... names another mapwright binary).
if [ -z "${SKIP_BUILD:-}" ]; then
  $CARGO build --release --locked --quiet -p mapwright --manifest-path "$REPO/Cargo.toml"
  $CARGO build --release --locked --quiet -p mapwright-core --example inflate --example quickxml_loop \
    --manifest-path "$REPO/Cargo.toml"
fi
MW=${MW:-$REPO/target/release/mapwright}
INFLATE=$REPO/target/release/examples/inflate
QX=$REPO/target/release/examples/quickxml_loop
XML=$CORPUS/s50k.xml
GZ=$CORPUS/s50k.xml.gz
URLS=50000
XML_BYTES=$(stat -c %s "$XML")

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# The cases: label, expected count, command. mapwright's count is its output's lines.
# The last, a one-URL file, is the fixed cost every read pays (process start-up, output set-up).
TINY=$CORPUS/tiny.xml
LABELS=("quick-xml loop, s50k.xml" "mapwright read s50k.xml" "bare inflate, s50k.xml.gz" "mapwright read s50k.xml.gz"
  "mapwright read tiny.xml (start-up)")
run_case() {
  case $1 in
    0) "$QX" "$XML" | grep -o 'urls=[0-9]*' | cut -d= -f2 ;;
    1) "$MW" read "$XML" --format text | wc -l ;;
    2) "$INFLATE" "$GZ" | cut -d= -f2 ;;
    3) "$MW" read "$GZ" --format text | wc -l ;;
    4) "$MW" read "$TINY" --format text | wc -l ;;
  esac
}
EXPECT=("$URLS" "$URLS" "$XML_BYTES" "$URLS" 1)
CMDS=("$QX $XML" "$MW read $XML --format text" "$INFLATE $GZ" "$MW read $GZ --format text" "$MW read $TINY --format text")

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(uname -sr)"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "file: $XML ($XML_BYTES bytes, $URLS URLs), $GZ ($(stat -c %s "$GZ") bytes)"
for i in "${!LABELS[@]}"; do
  got=$(run_case $i)
  [ "$got" = "${EXPECT[$i]}" ] || { echo "MISMATCH: ${LABELS[$i]} gave $got, expected ${EXPECT[$i]}"; exit 1; }
done

declare -A IR
if command -v valgrind > /dev/null; then
  for i in "${!LABELS[@]}"; do
    # shellcheck disable=SC2086
    valgrind --tool=callgrind --trace-children=yes --callgrind-out-file="$WORK/cg.$i.%p" ${CMDS[$i]} > /dev/null 2> "$WORK/vg.$i"
    IR[$i]=$(cat "$WORK"/cg."$i".* | awk '/^summary:/ {n += $2} END {print n}')
  done
fi

# RUNS alternating rounds of the cases, all timed from one Python process: one started for each
# run (its launcher's and interpreter's start-up, tens of CPU milliseconds, just before the
# timed child) left the scheduler's view of both CPUs busy, and the gzip read's second thread
# then shared the first one's CPU (its wall time the sum of both threads' CPU time).
# shellcheck disable=SC2086
python3 -c '
import resource, shlex, subprocess, sys, time
runs, work, cmds = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
out = [open("%s/times.%d" % (work, i), "a") for i in range(len(cmds))]
for _ in range(runs):
    for i, cmd in enumerate(cmds):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        subprocess.run(shlex.split(cmd), stdout=subprocess.DEVNULL, check=True)
        wall = time.perf_counter() - t
        r = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = r.ru_utime + r.ru_stime - r0.ru_utime - r0.ru_stime
        print("%.4f %.4f" % (cpu, wall), file=out[i])
' "$RUNS" "$WORK" "${CMDS[@]}"
median() { sort -n | awk '{a[NR] = $1} END {print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2)}'; }
declare -A CPU WALL
for i in "${!LABELS[@]}"; do
  CPU[$i]=$(cut -d' ' -f1 "$WORK/times.$i" | median)
  WALL[$i]=$(cut -d' ' -f2 "$WORK/times.$i" | median)
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
printf '| case | instructions (M) | CPU s (median of %s) | wall s (median) | MB/s of XML, wall |\n|---|---:|---:|---:|---:|\n' "$RUNS"
for i in "${!LABELS[@]}"; do
  printf '| %s | %s | %s | %s | %s |\n' "${LABELS[$i]}" \
    "$(awk -v n="${IR[$i]:-0}" 'BEGIN {print (n > 0 ? sprintf("%.1f", n / 1e6) : "-")}')" \
    "${CPU[$i]}" "${WALL[$i]}" "$([ "$i" = 4 ] && echo - || awk -v b="$XML_BYTES" -v w="${WALL[$i]}" 'BEGIN {printf "%.0f", (w > 0 ? b / w / 1e6 : 0)}')"
done
echo
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {print (a > 0 && b > 0 ? sprintf("%.2f", a / b) : "-")}'; }
echo "mapwright read s50k.xml against the quick-xml loop (x its speed; above 1 is faster):"
echo "  by instructions: $(ratio "${IR[0]:-0}" "${IR[1]:-0}")x, by CPU seconds: $(ratio "${CPU[0]}" "${CPU[1]}")x, by wall seconds: $(ratio "${WALL[0]}" "${WALL[1]}")x"
echo "mapwright read s50k.xml.gz against a bare inflate (share of its speed, by wall seconds):"
echo "  $(awk -v a="${WALL[2]}" -v b="${WALL[3]}" 'BEGIN {printf "%.0f %%", 100 * a / b}') (CPU seconds: $(ratio "${CPU[2]}" "${CPU[3]}")x)"
