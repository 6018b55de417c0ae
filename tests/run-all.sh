#!/usr/bin/env bash
# Run every test on a fresh machine: installs redis-server and redis-tools (for the
# differential tests and the redis-cli / redis-benchmark smoke tests) when missing, then runs
# `cargo test` once per io-threads mode.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v redis-server >/dev/null || ! command -v redis-cli >/dev/null || ! command -v redis-benchmark >/dev/null; then
  echo "installing redis-server and redis-tools..."
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq redis-server redis-tools >/dev/null
fi
# The Debian package starts a redis-server service on 6379; tests never use it (they pick
# free ports), so it is left alone.
cargo build --release --all-targets
for threads in ${FERROKEY_TEST_IO_THREADS:-1 2}; do
  echo "=== cargo test with io-threads $threads"
  FERROKEY_IO_THREADS=$threads cargo test --release -- --test-threads 2
done
