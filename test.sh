#!/usr/bin/env bash
# The test suite: ./test.sh [pytest arguments]  (makes .venv on first use, then runs pytest).
# The Docker end-to-end test skips when no engine can be had, unless EVALUATION_REQUIRE_DOCKER=1.
set -euo pipefail
cd "$(dirname "$0")"
bash scripts/venv.sh
exec .venv/bin/python -m pytest "$@"
