#!/usr/bin/env bash
# The test suite: ./test.sh [pytest arguments]  (makes .venv on first use, then runs pytest).
# Runs on every core (pytest-xdist, one test file per worker at a time: a module's fixtures run once) and
# prints a line when each stage of the suite is done, and every minute what is left (test/suite_progress.py).
# EVALUATION_TEST_WORKERS=N sets the number of workers (0: one process, no xdist).
# The Docker end-to-end tests skip when no engine can be had, unless EVALUATION_REQUIRE_DOCKER=1.
set -euo pipefail
cd "$(dirname "$0")"
bash scripts/venv.sh
exec .venv/bin/python -m pytest -n "${EVALUATION_TEST_WORKERS:-auto}" --dist loadfile "$@"
