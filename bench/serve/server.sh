# shellcheck shell=bash
# Sourced by run.sh, scale.sh and refetch.sh: starting and stopping the `mapwright serve` under
# measure, written once. The sourcing script sets BIN (the binary), WORK (its scratch folder,
# where server.log goes), HTTP_PORT, SERVER (empty) and, if it serves a database of its own,
# the array DB_ARGS (`--data-dir ...` or `--database ...`).

# start_server ARGS...: serves on 127.0.0.1:$HTTP_PORT with DB_ARGS and ARGS, sets SERVER to
# its pid and waits (30 s at most) for /healthz; on a timeout prints the server's log and fails.
start_server() {
  "$BIN" serve ${DB_ARGS[@]+"${DB_ARGS[@]}"} --listen "127.0.0.1:$HTTP_PORT" "$@" 2>"$WORK/server.log" &
  SERVER=$!
  for _ in $(seq 1 300); do
    curl -fsS "http://127.0.0.1:$HTTP_PORT/healthz" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  cat "$WORK/server.log" >&2
  return 1
}

# stop_server: stops the server start_server started and waits for it to exit.
stop_server() {
  kill "$SERVER" && wait "$SERVER" 2>/dev/null || true
  SERVER=
}
