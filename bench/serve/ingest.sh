#!/usr/bin/env bash
# Ingest benchmark of the store's write path (issue 20): an index of 10 gzip-free children x
# 50,000 URLs stored as the scheduler stores a download (staged in batches of 2,000, merged once
# per child, `complete` with its roll-ups), side by side in the same run with a bare bulk load of
# the same rows into copies of the same tables with the same indexes (COPY on PostgreSQL; one
# INSERT ... SELECT per table in one transaction on SQLite), then a refetch of the same bytes and
# one with 1 % of the URLs changed. Prints the ratios; the figures go in bench/serve/RESULTS.md.
# Not run in CI.
#
# Needs PostgreSQL at 127.0.0.1:5432 with trust auth (a database of its own, dropped at the end).
# Usage: bench/serve/ingest.sh (CARGO=/path/to/cargo-wrapper bench/serve/ingest.sh)
set -euo pipefail
cd "$(dirname "$0")/../.."

PG_ADMIN=postgres://postgres@127.0.0.1:5432/postgres
PG_DB=mapwright_ingest_bench_$$
cleanup() { psql -q "$PG_ADMIN" -c "DROP DATABASE IF EXISTS $PG_DB" >/dev/null 2>&1 || true; }
trap cleanup EXIT
psql -q "$PG_ADMIN" -c "CREATE DATABASE $PG_DB" >/dev/null

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
# The `wheel` profile: release optimisation without the release profile's fat LTO (which would
# rebuild the whole graph), so both sides of the ratio run optimised code. CARGO names the cargo
# to run (e.g. a wrapper that waits for a build slot).
"${CARGO:-cargo}" build --locked --quiet --profile wheel -p mapwright-store --example ingest_bench
target/wheel/examples/ingest_bench "postgres://postgres@127.0.0.1:5432/$PG_DB"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
