#!/usr/bin/env bash
# Run the ledger conformance suite against the official Accumulate Go simulator.
#   scripts/go-simulator-build.sh            # once: builds .data/go-simulator/simulator (~3 min, needs the Go module proxy)
#   scripts/go-simulator-conformance.sh      # starts it, runs test/ledger-conformance with ACC_ENDPOINT, stops it
# The simulator CLI passes empty globals to genesis, which selects executor v1 (WriteData doubleHash entries are
# refused there); --globals selects v2-vandenberg, the version the network runs.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BIN="${GO_SIM_BIN:-$ROOT/.data/go-simulator/simulator}"
PORT="${GO_SIM_PORT:-28000}"
LOG="$(mktemp -t go-sim.XXXXXX.log)"
[ -x "$BIN" ] || { echo "no simulator at $BIN; run scripts/go-simulator-build.sh first"; exit 1; }
"$BIN" --step 20ms -b 1 -v 1 -p "$PORT" --globals '{"executorVersion":"v2-vandenberg"}' >"$LOG" 2>&1 &
SIM_PID=$!
trap 'kill "$SIM_PID" 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
  grep -q "Node HTTP up.*partition=.*Directory" <(sed 's/\x1b\[[0-9;]*m//g' "$LOG") && break
  sleep 0.2
done
ENDPOINT="$(sed 's/\x1b\[[0-9;]*m//g' "$LOG" | sed -n 's/.*Node HTTP up address=\(http:[^ ]*\).*partition=Directory.*/\1/p' | head -1)"
[ -n "$ENDPOINT" ] || { echo "simulator did not come up:"; cat "$LOG"; exit 1; }
echo "[go-sim] $ENDPOINT/v3 (log $LOG)"
cd "$ROOT"
ACC_ENDPOINT="$ENDPOINT/v3" npx vitest run test/ledger-conformance "$@"
