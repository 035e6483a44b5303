#!/usr/bin/env bash
# Benchmark (not a test): `mapwright discover` against ultimate-sitemap-parser and sitemapper on
# the same local site (an index of 20 gzipped sitemaps of 50,000 URLs, served on 127.0.0.1 by
# `python3 -m http.server`, as the peers harness of ../shared/bench serves it).
#
#   crates/mapwright-fetch/benches/discover_peers.sh            # results in /tmp/mw-bench/mapwright-results.md
#
# Copies the harness to /tmp/mw-bench (the shared copy is read-only), installs the two peers
# there (setup_peers.sh --no-advertools, without the Rust peers), adds mapwright as one more
# peer (its driver prints urls=N: `discover --no-scope --format text --sitemap URL | wc -l`;
# --no-scope because the corpus lists https://www.example.com/ URLs from a 127.0.0.1 index,
# which a scope-judging consumer drops and the peers keep), and times the 1M-URL case and
# each tool's 1-URL start-up with the harness's runner (/usr/bin/time -v, median of 3 runs).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
B=/tmp/mw-bench
PORT=${PORT:-8791}
CORPUS=${CORPUS:-/tmp/mw-corpus}
cargo build --release --locked -p mapwright --manifest-path "$ROOT/Cargo.toml"
[[ -d $B ]] || cp -r /work/shared/bench "$B"
cp "$ROOT/target/release/mapwright" "$B/mapwright-bin"
cd "$B"
if [[ ! -x .venv/bin/python ]]; then
  python3 -m venv .venv && .venv/bin/pip install -q ultimate-sitemap-parser==1.8.1 lxml==6.1.3
fi
[[ -d node/node_modules/sitemapper ]] || (cd node && npm ci --no-audit --no-fund)
cat > mapwright_discover.sh <<'DRIVER'
#!/bin/sh
n=$(/tmp/mw-bench/mapwright-bin discover -q --no-scope --format text --sitemap "$1" | wc -l)
echo "urls=$n"
DRIVER
chmod +x mapwright_discover.sh
grep -q 'mapwright 0.1 discover' bench_runner.py || python3 - <<'PY'
p = "/tmp/mw-bench/bench_runner.py"
s = open(p).read()
i = s.index('    dict(name="sitemapper 4.1.6 (Node, HTTP)"')
s = s[:i] + '''    dict(name="mapwright 0.1 discover (Rust, HTTP)", kind="peer", needs="/tmp/mw-bench/mapwright-bin",
         read="/tmp/mw-bench/mapwright_discover.sh {url}", tiny=True),
''' + s[i:]
open(p, "w").write(s)
PY
SKIP_BUILD=1 CORPUS=$CORPUS PORT=$PORT ./run_peers.sh --no-breakdown --no-write \
  --only '(mapwright|ultimate|sitemapper).*(big|tiny)' \
  --out "$B/mapwright-results.md" --json "$B/mapwright-results.json"
