#!/usr/bin/env bash
# A real evaluation of a bundled demo submission: ./demo.sh [challenge]  (default rare25).
# Makes .venv on first use, writes demo-output/<challenge>/metrics.json, compares it with
# test/expected/<challenge>/metrics.json (the verdict) and sums up the leaderboard's numbers.
# Any further argument goes to python -m evaluation (e.g. --workers 1). Exit 0: the result agrees.
set -euo pipefail
cd "$(dirname "$0")"
challenge="${1:-rare25}"
shift || true
bash scripts/venv.sh
exec .venv/bin/python -m evaluation.demo --challenge "$challenge" --output "demo-output/$challenge" "$@"
