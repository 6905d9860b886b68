#!/usr/bin/env bash
# A real evaluation of a bundled demo submission: ./demo.sh [challenge]  (default rare25).
# Makes .venv on first use, writes demo-output/<challenge>/metrics.json and prints it.
set -euo pipefail
cd "$(dirname "$0")"
challenge="${1:-rare25}"
bash scripts/venv.sh
.venv/bin/python -m evaluation --challenge "$challenge" --input "test/input/$challenge" \
  --output "demo-output/$challenge"
cat "demo-output/$challenge/metrics.json"
