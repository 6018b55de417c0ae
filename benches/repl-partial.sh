#!/usr/bin/env bash
# The link to a replica down for 5 s under a write load (issue 16): the replica is stopped
# (SIGSTOP) and its link killed on the primary (CLIENT KILL TYPE replica), writes go on for
# 5 s, then the replica resumes and reconnects. Prints whether that cost a partial resync or
# a full one, and the backlog bytes the primary sent (from its log line).
#
#   benches/repl-partial.sh PRIMARY_BIN REPLICA_BIN [BACKLOG]
#
# The backlog must hold 5 s of writes (default 256mb). The primary runs on core 0; the
# replica and redis-benchmark share core 1. Servers are started on free ports here and
# stopped by their PIDs.
set -euo pipefail
P=${1:?primary binary}; R=${2:?replica binary}; BACKLOG=${3:-256mb}
. "$(dirname "$0")/repl-pair.sh"
EXTRA_EXIT='kill -CONT $RPID ${LOAD:-} 2>/dev/null'
start_pair "$P" "$R" --repl-backlog-size "$BACKLOG"
follow_primary
taskset -c 1 redis-benchmark -p "$PP" -t set -n 100000000 -d 100 -r 1000000 -c 20 -q > /dev/null 2>&1 &
LOAD=$!
sleep 2
kill -STOP $RPID
redis-cli -p "$PP" client kill type replica > /dev/null
sleep 5
kill -CONT $RPID
sleep 0.5
until redis-cli -p "$RP" info replication | grep -q 'master_link_status:up'; do sleep 0.05; done
sleep 1
kill $LOAD 2>/dev/null || true
stat() { redis-cli -p "$PP" info stats | tr -d '\r' | awk -F: -v f="$1" '$1 == f {print $2}'; }
SENT=$(grep -o 'Sending [0-9]* bytes of backlog' "$D/p.log" | tail -1 | awk '{print $2}')
printf 'primary=%s replica=%s sync_full=%s sync_partial_ok=%s backlog_bytes_sent=%s\n' \
  "$(basename "$P")" "$(basename "$R")" "$(stat sync_full)" "$(stat sync_partial_ok)" "${SENT:-none}"
