#!/usr/bin/env bash
# The test command of README.md: on a fresh Debian machine it installs what the tests need, then
# runs every test suite, each to its end (a failure never hides the others), and exits non-zero
# when any failed. `.ci/run` runs exactly this, after the format, lint and doc checks.
#
# The order, for a first run on 2 cores (README.md says how long it takes): the Rust test
# binaries build while apt-get, npm and pip install; the Python wheel builds at the lowest
# priority from the moment its venv is there (it takes only the CPU the other work leaves); then
# the Rust tests (cargo-nextest when installed: every binary at once), the Python tests (once the
# wheel is built) and schemathesis (on the debug binary) run at the same time, the last two into
# logs that are printed when the Rust tests are done.
set -uo pipefail
cd "$(dirname "$0")"

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

# --- PostgreSQL ------------------------------------------------------------------------------
# The store and server tests run on PostgreSQL at 127.0.0.1:5432 (trust auth) too, and under
# CI=true fail without it: start the local cluster if it is down ("already running" is fine).
if ! pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null && [ -d /etc/postgresql ]; then
  for version in $(ls /etc/postgresql); do
    as_root pg_ctlcluster --skip-systemctl-redirect "$version" main start || true
  done
  for _ in $(seq 1 30); do pg_isready -h 127.0.0.1 -p 5432 -q && break; sleep 1; done
fi

# --- What the tests need, installed while the build runs -----------------------------------
# apt-get, npm and pip wait on the network, the build on the 2 cores: on a fresh machine they
# overlap (several minutes of a first run), and the test binaries run only once both are done.
provision() {
  # --- System packages -----------------------------------------------------------------------
  need_apt=()
  # xmllint: the validator's oracle (the official XSDs).
  command -v xmllint >/dev/null 2>&1 || need_apt+=(libxml2-utils)
  # git: `generate dir --lastmod git` is tested in a temporary repository.
  command -v git >/dev/null 2>&1 || need_apt+=(git)
  # The console's end-to-end test drives headless Chromium through ChromeDriver.
  [ -x /usr/bin/chromium ] || need_apt+=(chromium)
  [ -x /usr/bin/chromedriver ] || need_apt+=(chromium-driver)
  command -v npm >/dev/null 2>&1 || need_apt+=(npm)
  # The Python package's tests run in a venv (python3 -m venv needs ensurepip: python3-venv).
  python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || need_apt+=(python3 python3-venv)
  if [ ${#need_apt[@]} -gt 0 ]; then
    echo "test.sh: installing ${need_apt[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    as_root apt-get update -qq
    as_root apt-get install -y -qq "${need_apt[@]}" >/dev/null || { echo "test.sh: apt-get install failed" >&2; return 2; }
  fi

  # --- axe-core, pinned by package-lock.json, for the console's accessibility check ------------
  if [ ! -f crates/mapwright-server/tests/e2e/node_modules/axe-core/axe.min.js ]; then
    (cd crates/mapwright-server/tests/e2e && npm ci --no-audit --no-fund) || { echo "test.sh: npm ci failed" >&2; return 2; }
  fi

  python_venv || return 1
  schemathesis_venv || return 1
}

target_dir() {
  cargo metadata --format-version 1 --no-deps --locked | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])'
}

# The Python package's test venv (pinned requirements), inside cargo's target folder. The
# requirements are downloaded once into a wheelhouse beside it (again when requirements.txt
# changes), and the package's venvs install from there without the network: this one, and the
# fresh venv into which tests/test_wheel.py installs the built wheel.
python_venv() {
  local target venv house requirements=crates/mapwright-py/tests/requirements.txt
  target=$(target_dir) || return 1
  venv="$target/py-venv"
  house="$target/py-wheelhouse"
  if ! cmp -s "$requirements" "$house/requirements.txt"; then
    rm -rf "$house"
    python3 -m pip download -q --disable-pip-version-check --only-binary :all: -d "$house" -r "$requirements" || return 1
    cp "$requirements" "$house/requirements.txt"
  fi
  # A venv whose scripts no longer run (the target folder was moved: their #! names the old
  # path) is made again.
  if [ -x "$venv/bin/maturin" ] && ! "$venv/bin/maturin" --version >/dev/null 2>&1; then rm -rf "$venv"; fi
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv" || return 1
  "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-index --find-links "$house" -r "$requirements"
}

SCHEMATHESIS_VERSION=4.32.5
schemathesis_venv() {
  local venv
  venv="$(target_dir)/schemathesis-$SCHEMATHESIS_VERSION" || return 1
  if [ -x "$venv/bin/schemathesis" ] && ! "$venv/bin/schemathesis" --version >/dev/null 2>&1; then rm -rf "$venv"; fi
  if [ ! -x "$venv/bin/schemathesis" ]; then
    python3 -m venv "$venv" && "$venv/bin/pip" install -q "schemathesis==$SCHEMATHESIS_VERSION" || return 1
  fi
}

# The wheel is built once, as the release workflow (.github/workflows/python.yml) builds it for
# PyPI but in the dev profile: abi3, manylinux_2_17 (zig links it against glibc 2.17's symbols
# and maturin checks the tag), stripped; with its sdist. zig's target build shares nothing with
# the tests' (another target triple, another C compiler), so it compiles the extension's whole
# dependency graph (205 to 298 CPU seconds measured), at the lowest priority from the moment the
# venv is installed: beside the tests' build it gets only the CPU that build leaves idle (its
# last links), beside the tests all the CPU they leave while waiting on PostgreSQL, sockets and
# timers. In a target folder of its own (cargo locks the folder it builds in). Without debug
# info (CARGO_PROFILE_DEV_DEBUG=0): the wheel is stripped anyway, and rustc and the linker skip
# writing what would be thrown away.
python_wheel() {
  local target venv wheels
  target=$(target_dir) || return 1
  venv="$target/py-venv"
  wheels="$target/py-wheels"
  rm -rf "$wheels"
  # PATH: maturin finds zig as `python3 -m ziglang` of the venv (ziglang is pinned there).
  (cd crates/mapwright-py &&
    PATH="$venv/bin:$PATH" CARGO_TARGET_DIR="$target/py-wheel" CARGO_PROFILE_DEV_DEBUG=0 nice -n 19 \
      maturin build --profile dev --locked --quiet --zig --compatibility manylinux_2_17 \
        --interpreter "$venv/bin/python" --out "$wheels" &&
    PATH="$venv/bin:$PATH" CARGO_TARGET_DIR="$target/py-wheel" maturin sdist --out "$wheels")
}

logs=$(mktemp -d)
failed=()

# --- The build, the installs and the wheel, at once --------------------------------------------
# One background job installs (`provision`), then builds the wheel (`python_wheel`), each
# writing its exit status into $logs; the Rust test binaries build meanwhile. --timings leaves
# cargo's build report in target/cargo-timings/: on a first run the build is most of the time,
# and the report says which crates it went to.
{
  provision > "$logs/provision" 2>&1
  echo $? > "$logs/provision.rc"
  if [ "$(cat "$logs/provision.rc")" = 0 ]; then
    python_wheel > "$logs/wheel" 2>&1
    echo $? > "$logs/wheel.rc"
  fi
} &
background=$!
# Waits until the background job has written the file $1, or has ended without writing it.
await() { until [ -s "$1" ] || ! kill -0 "$background" 2>/dev/null; do sleep 1; done; }

built=0
cargo test --workspace --locked --no-run --timings || { built=1; failed+=("cargo build"); }
await "$logs/provision.rc"
cat "$logs/provision" >&2
if [ "$(cat "$logs/provision.rc" 2>/dev/null)" != 0 ]; then
  echo "test.sh: installing what the tests need failed" >&2
  rm -rf "$logs"
  exit 2
fi

# --- Rust: every test of the workspace, to the end ---------------------------------------------
# cargo-nextest (.config/nextest.toml) runs every test in a process of its own, 8 at once from
# every binary together: most tests wait on sockets, PostgreSQL, child processes and timers,
# and `cargo test` ran the binaries one after another, each with a thread per core. It reports
# each test's time, and the slow ones again at the end. It runs no doctests: `cargo test --doc`
# does. Without nextest (it is not installed by this script: it would be built from source,
# minutes of a first run), `cargo test` runs the binaries in turn, each with 8 threads.
NEXTEST_MIN=0.9.91
nextest_usable() {
  local version
  version=$(cargo nextest --version 2>/dev/null | sed -n 's/^cargo-nextest \([0-9][0-9.]*\).*/\1/p' | head -n 1)
  [ -n "$version" ] && [ "$(printf '%s\n' "$NEXTEST_MIN" "$version" | sort -V | head -n 1)" = "$NEXTEST_MIN" ]
}
rust_tests() {
  local status=0
  if nextest_usable; then
    cargo nextest run --workspace --locked --no-fail-fast || status=1
    cargo test --doc --workspace --locked || status=1
  else
    echo "test.sh: no cargo-nextest $NEXTEST_MIN or later: cargo test runs the test binaries one after another" >&2
    cargo test --workspace --locked --no-fail-fast -- --test-threads=8 || status=1
  fi
  return $status
}

# --- Python: the package crates/mapwright-py, built by maturin, tested by pytest ---------------
# The wheel is installed into the test venv (inside cargo's target folder, so nothing global
# changes) and the whole pytest suite runs on the installed package; tests/test_wheel.py checks
# the wheel and the sdist (tags, auditwheel, the glibc symbols, no symbol table, the sdist
# resolving offline) and installs the wheel into a fresh venv without Rust on PATH to run the
# examples there: that test (a minute, mostly pip installing offline) runs in a pytest of its
# own beside the rest. The tests compare with the CLI the cargo tests built. pytest's "no tests
# ran" (exit 5) is a failure too.
FRESH_VENV_TEST=test_the_wheel_runs_the_examples_in_a_fresh_venv_without_rust
python_tests() {
  local target venv wheels fresh status=0
  target=$(target_dir) || return 1
  venv="$target/py-venv"
  wheels="$target/py-wheels"
  await "$logs/wheel.rc"
  cat "$logs/wheel"
  [ "$(cat "$logs/wheel.rc" 2>/dev/null)" = 0 ] || { echo "test.sh: the wheel did not build"; return 1; }
  "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-index --no-deps --force-reinstall "$wheels"/*.whl || return 1
  export MAPWRIGHT_WHEELS="$wheels" MAPWRIGHT_WHEELHOUSE="$target/py-wheelhouse" MAPWRIGHT_BIN="$target/debug/mapwright"
  "$venv/bin/python" -m pytest -q -p no:cacheprovider "crates/mapwright-py/tests/test_wheel.py::$FRESH_VENV_TEST" \
    > "$logs/pytest-fresh" 2>&1 &
  fresh=$!
  "$venv/bin/python" -m pytest -q -p no:cacheprovider crates/mapwright-py/tests -k "not $FRESH_VENV_TEST" || status=1
  wait "$fresh" || status=1
  echo "--- pytest of tests/test_wheel.py::$FRESH_VENV_TEST:"
  cat "$logs/pytest-fresh"
  return $status
}

# --- The API against its OpenAPI file: schemathesis, every operation, every check -------------
# A real `mapwright serve` on SQLite in a temporary directory, on a free 127.0.0.1 port, with a
# signed-up user whose API token schemathesis sends; a bounded number of examples per operation
# keeps the run to a few minutes. Its configuration (crates/mapwright-server/schemathesis.toml)
# says which answers a request valid by the schema may still get, and why.
schemathesis_run() {
  local target venv dir port dns_port server token status=0
  target=$(target_dir) || return 1
  venv="$target/schemathesis-$SCHEMATHESIS_VERSION"
  # The binary the tests' build made (`cargo build -p mapwright` would resolve other features
  # for sqlx and its drivers and build them again).
  [ -x "$target/debug/mapwright" ] || return 1
  dir=$(mktemp -d)
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  dns_port=$(python3 -c 'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  # The account schemathesis signs in with is made by the operator's command (a sign-up waits
  # for the link mailed to its address).
  printf '%s\n' 'a long passphrase' | "$target/debug/mapwright" serve --data-dir "$dir" user create schemathesis@example.com >/dev/null || return 1
  # Its DNS look-ups (a domain property's "Verify now") go to a loopback port nothing answers
  # on, never to the machine's resolver: the run talks to 127.0.0.1 only.
  "$target/debug/mapwright" serve --listen "127.0.0.1:$port" --data-dir "$dir" --dns-server "127.0.0.1:$dns_port" \
    >"$dir/serve.log" 2>&1 &
  server=$!
  token=$(python3 - "$port" <<'PY'
import json, sys, time, urllib.request
base = f"http://127.0.0.1:{sys.argv[1]}"
for _ in range(100):
    try:
        urllib.request.urlopen(base + "/healthz", timeout=1)
        break
    except OSError:
        time.sleep(0.1)
def post(path, body, headers=()):
    request = urllib.request.Request(base + path, json.dumps(body).encode(), {"content-type": "application/json", **dict(headers)})
    return urllib.request.urlopen(request, timeout=10)
answer = post("/api/v1/signin", {"email": "schemathesis@example.com", "password": "a long passphrase"})
cookie = answer.headers["set-cookie"].split(";")[0]
# Tokens 1 to 300 are decoys: the run revokes tokens by id (DELETE /api/v1/tokens/{id}), and the
# small ids it tries first must not be the one it authenticates with.
for n in range(300):
    post("/api/v1/tokens", {"name": f"decoy {n}"}, [("cookie", cookie)])
print(json.load(post("/api/v1/tokens", {"name": "schemathesis"}, [("cookie", cookie)]))["secret"])
PY
  ) || status=1
  if [ $status = 0 ]; then
    "$venv/bin/schemathesis" --config-file crates/mapwright-server/schemathesis.toml run \
      "http://127.0.0.1:$port/api/v1/openapi.yaml" --url "http://127.0.0.1:$port" \
      -H "Authorization: Bearer $token" --checks all --max-examples 25 --seed 1 || status=1
  fi
  kill "$server" 2>/dev/null; wait "$server" 2>/dev/null
  [ $status = 0 ] || tail -n 20 "$dir/serve.log" >&2
  rm -rf "$dir"
  return $status
}
# --- The tests, at once ------------------------------------------------------------------------
# The Python tests (once the wheel is built) and schemathesis run in the background into logs,
# printed after the Rust tests, which print as they go.
python_tests > "$logs/python" 2>&1 &
python_job=$!
if [ $built = 0 ]; then
  schemathesis_run > "$logs/schemathesis" 2>&1 &
  schemathesis_job=$!
fi
rust_tests || failed+=("cargo test")
echo "=== The Python tests (pytest) ==="
wait "$python_job" || failed+=("python tests")
cat "$logs/python"
echo "=== The API against its OpenAPI file (schemathesis) ==="
if [ $built = 0 ]; then
  wait "$schemathesis_job" || failed+=("schemathesis")
  cat "$logs/schemathesis"
else
  echo "not run: the build failed"
  failed+=("schemathesis")
fi
rm -rf "$logs"

# --- Summary -----------------------------------------------------------------------------------
if [ ${#failed[@]} -gt 0 ]; then
  echo "test.sh: FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "test.sh: every suite passed" >&2
