#!/usr/bin/env bash
# Full sync figure of issue 16: the time from REPLICAOF to master_link_status:up, and the
# primary's peak extra memory meanwhile (the proportional set size of the primary and its
# fork child, summed and sampled every 20 ms, minus the primary's before the sync).
#
#   benches/repl-fullsync.sh PRIMARY_BIN REPLICA_BIN [KEYS] [diskless|disk]
#
# The dataset is DEBUG POPULATE KEYS keys ("key:0000:<n>", up to 16 bytes below 10M keys)
# with 100-byte values. Either binary may be ferrokey or Valkey; the
# primary runs on core 0, the replica on core 1. Servers are started on free ports here and
# stopped by their PIDs.
set -euo pipefail
P=${1:?primary binary}; R=${2:?replica binary}; N=${3:-1000000}; MODE=${4:-diskless}
DISKLESS=yes; [ "$MODE" = disk ] && DISKLESS=no
. "$(dirname "$0")/repl-pair.sh"
start_pair "$P" "$R" --repl-diskless-sync "$DISKLESS" --enable-debug-command yes
redis-cli -p "$PP" debug populate "$N" key:0000 100 >/dev/null
pss() {  # summed PSS (kB) of a process and its children
  local total=0 pid
  for pid in "$1" $(pgrep -P "$1" || true); do
    v=$(awk '/^Pss:/ {print $2}' "/proc/$pid/smaps_rollup" 2>/dev/null || echo 0)
    total=$((total + ${v:-0}))
  done
  echo $total
}
BASE=$(pss $PPID_)
PEAK=$BASE
T0=$(date +%s.%N)
redis-cli -p "$RP" replicaof 127.0.0.1 "$PP" >/dev/null
while :; do
  now=$(pss $PPID_); [ "$now" -gt "$PEAK" ] && PEAK=$now
  if redis-cli -p "$RP" info replication | grep -q 'master_link_status:up'; then break; fi
  sleep 0.02
done
T1=$(date +%s.%N)
KEYS=$(redis-cli -p "$RP" dbsize)
printf 'primary=%s replica=%s keys=%s mode=%s sync_s=%.2f primary_extra_MiB=%.1f\n' \
  "$(basename "$P")" "$(basename "$R")" "$KEYS" "$MODE" "$(echo "$T1 - $T0" | bc)" \
  "$(echo "($PEAK - $BASE) / 1024" | bc -l)"
