# Sourced by the replication benches (repl-fullsync.sh, repl-lag.sh, repl-partial.sh): starts
# a primary and a replica-to-be on free ports of 127.0.0.1, the primary on core 0 and the
# other on core 1, each in a directory of its own, waits until both answer, and stops them
# by their PIDs (and removes the directories) when the script exits.
#
#   start_pair PRIMARY_BIN REPLICA_BIN [more primary arguments...]
#
# More arguments for the replica go in REPLICA_ARGS (for example
# `REPLICA_ARGS="--repl-diskless-load swapdb"`).
# Sets PP and RP (the ports), PPID_ and RPID (the PIDs) and D (the directory). A script
# that must do more on exit sets EXTRA_EXIT to a command first.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
start_pair() {
  local p=$1 r=$2; shift 2
  PP=$(free_port); RP=$(free_port)
  D=$(mktemp -d); mkdir -p "$D/p" "$D/r"
  taskset -c 0 "$p" --port "$PP" --bind 127.0.0.1 --save '' --dir "$D/p" \
    --repl-diskless-sync-delay 0 "$@" > "$D/p.log" 2>&1 &
  PPID_=$!
  # shellcheck disable=SC2086 # REPLICA_ARGS: more replica arguments, split on spaces
  taskset -c 1 "$r" --port "$RP" --bind 127.0.0.1 --save '' --dir "$D/r" ${REPLICA_ARGS:-} \
    > "$D/r.log" 2>&1 &
  RPID=$!
  trap 'eval "${EXTRA_EXIT:-true}"; kill $PPID_ $RPID 2>/dev/null; wait 2>/dev/null; rm -rf "$D"' EXIT
  local port
  for port in $PP $RP; do
    for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.05; done
  done
}

# Makes the second server follow the first and waits for its link to be up.
follow_primary() {
  redis-cli -p "$RP" replicaof 127.0.0.1 "$PP" > /dev/null
  until redis-cli -p "$RP" info replication | grep -q 'master_link_status:up'; do sleep 0.05; done
}
