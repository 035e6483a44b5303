#!/usr/bin/env bash
# The lease query at 10^4 sites (issue 20, item 5), on both backends: 10,000 verified sites of
# 100 accounts (100 sites each, as scale.sh lays them out), each with a sitemap index and two
# children, all 30,000 due at once (a first ingest's queue); `Store::lease_sitemaps` timed 20
# times for 8 slots and for 1 (a dispatcher asks for the slots that just freed), each lease
# released after; then the same with every site moved to one account (one owner's backlog).
# Not a test; not run in CI. Prints p50 and max per case.
#
# usage: bench/serve/lease.sh
# Needs: sqlite3, psql, PostgreSQL at 127.0.0.1:5432 with trust auth (a database of its own,
# dropped at the end). CARGO=/path/to/cargo-wrapper to build through a wrapper.
set -euo pipefail
cd "$(dirname "$0")/../.."
CARGO=${CARGO:-cargo}
# The seeder: the dev profile with the store optimised, as bench/serve/ingest.sh builds it.
$CARGO build --locked --quiet -p mapwright-store --example scale_seed --config 'profile.dev.package.mapwright-store.opt-level=2'
SEED=$PWD/target/debug/examples/scale_seed
PG=postgres://postgres@127.0.0.1:5432
NAME=mapwright_lease_$$
DIR=$(mktemp -d)
cleanup() { psql -q "$PG/postgres" -c "DROP DATABASE IF EXISTS $NAME" >/dev/null 2>&1 || true; rm -rf "$DIR"; }
trap cleanup EXIT
psql -q "$PG/postgres" -c "CREATE DATABASE $NAME"

run_sql() { # DB SQL
  if [ "$1" = "$DIR" ]; then sqlite3 "$DIR/mapwright.db" "$2;"; else psql -q "$1" -c "$2"; fi
}
echo "machine: $(nproc) cores; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for DB in "$PG/$NAME" "$DIR"; do
  if [ "$DB" = "$DIR" ]; then BACKEND=sqlite; else BACKEND=postgres; fi
  "$SEED" lease "$DB" 8 2 2 300 > /dev/null # opens the store: the migrations
  run_sql "$DB" "INSERT INTO users (id, email, password_hash, is_admin, created_at) VALUES (1, 'bench@example.com', 'x', FALSE, 0)"
  "$SEED" prepare "$DB" 10000 10000 18530 > /dev/null
  run_sql "$DB" "INSERT INTO sitemaps (site_id, url, source, parent_id, submitted_at, next_fetch_at, owner_id, site_verified) \
    SELECT site_id, url || '-c' || k.n, 'index', id, submitted_at, next_fetch_at, owner_id, site_verified FROM sitemaps, \
    (SELECT 1 AS n UNION ALL SELECT 2) k"
  [ "$DB" = "$DIR" ] || run_sql "$DB" "VACUUM ANALYZE"
  echo "$BACKEND, 100 accounts:"
  "$SEED" lease "$DB" 8 2 2 300
  "$SEED" lease "$DB" 1 2 2 300
  run_sql "$DB" "UPDATE sites SET owner_id = 1"
  [ "$DB" = "$DIR" ] || run_sql "$DB" "VACUUM ANALYZE"
  echo "$BACKEND, one account:"
  "$SEED" lease "$DB" 8 2 2 300
  "$SEED" lease "$DB" 1 2 2 300
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
