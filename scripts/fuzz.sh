#!/usr/bin/env bash
# `npm run fuzz`: schemathesis (pinned, from PyPI, into the project-local .venv-fuzz; idempotent) against the
# gateway's /docs/json over every operation, on a devnet of its own (free ports, scratch data directory).
# Prints the figures and exits non-zero on any server error or schema violation. See scripts/fuzz.ts.
set -euo pipefail
cd "$(dirname "$0")/.."
SCHEMATHESIS_VERSION=4.3.6
# hypothesis-jsonschema 0.23.1 (what schemathesis 4.3.6 pulls) fails on hypothesis 6.170 (`many.more` is gone); 6.140.3 works
HYPOTHESIS_VERSION=6.140.3
have=$(.venv-fuzz/bin/st --version 2>/dev/null || true)
have_h=$(.venv-fuzz/bin/pip show hypothesis 2>/dev/null || true)
if [[ "$have" != *"$SCHEMATHESIS_VERSION"* || "$have_h" != *"Version: $HYPOTHESIS_VERSION"* ]]; then
  echo "[fuzz] installing schemathesis $SCHEMATHESIS_VERSION into .venv-fuzz"
  python3 -m venv .venv-fuzz
  .venv-fuzz/bin/pip install -q "schemathesis==$SCHEMATHESIS_VERSION" "hypothesis==$HYPOTHESIS_VERSION"
fi
if [ -z "${TEMPORAL_CLI_PATH:-}" ] && [ -x .venv-temporal/bin/temporal ]; then
  export TEMPORAL_CLI_PATH="$PWD/.venv-temporal/bin/temporal"
fi
exec npx tsx scripts/fuzz.ts "$@"
