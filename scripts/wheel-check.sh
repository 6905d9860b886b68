#!/usr/bin/env bash
# The installed package, tested as a user outside the repository would use it (issue 13):
# build the wheel into dist/, install it into a fresh venv in a temporary folder, then, from an
# empty working folder (no repository on disk for Python to find), run the console commands:
# gc-evaluate --help / --list, the RARE25 demo with its expected-result diff (gc-demo), the phase
# settings (gc-phase), the participant's pre-flight check of the demo submission (gc-check).
# Dependencies are constrained to the pins of requirements*.txt (the image's, its medical-image packages and the
# ranking report's), the set CI tests; pip takes no extras in a constraint, so dask[...] is left out.
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="${PYTHON:-python3.11}"
command -v "$python" >/dev/null 2>&1 || python=python3
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

say() { echo "[wheel-check] $*"; }
rm -rf "$REPO/dist"
"$python" -m pip wheel --quiet --disable-pip-version-check --no-deps -w "$REPO/dist" "$REPO"
wheel="$(ls "$REPO"/dist/gc_challenge_evaluation-*.whl)"
say "built $(basename "$wheel") ($(du -k "$wheel" | cut -f1) KiB)"
"$python" -m venv "$work/venv"
grep -hv -e '^-r' -e '\[' "$REPO"/requirements*.txt >"$work/constraints.txt"
"$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check -c "$work/constraints.txt" "$wheel"
mkdir "$work/empty"
cd "$work/empty"
bin="$work/venv/bin"
# grep without -q below: -q may exit at the first match and close the pipe while a command still
# writes (BrokenPipeError, a failure under pipefail)
"$bin/gc-evaluate" --list | grep -x rare25 >/dev/null || { echo "wheel-check: gc-evaluate --list lacks rare25" >&2; exit 1; }
"$bin/gc-evaluate" --help | grep "ppv_at_recall" >/dev/null || { echo "wheel-check: --help lacks the options" >&2; exit 1; }
"$bin/gc-demo" --challenge rare25 --output out --workers 1
"$bin/python" -c "import evaluation, sys; sys.exit(not evaluation.__file__.startswith('$work/venv/'))" ||
  { echo "wheel-check: evaluation was not imported from the installed wheel" >&2; exit 1; }
"$bin/gc-phase" --challenge rare25 | grep '"score_jsonpath": "Score"' >/dev/null
"$bin/gc-demo" --challenge rare25 --copy-input demo-input
"$bin/gc-check" --challenge rare25 --input demo-input | grep "6 cases checked, all outputs valid" ||
  { echo "wheel-check: gc-check did not accept the RARE25 demo submission" >&2; exit 1; }
say "the installed wheel runs the RARE25 demo (same metrics as test/expected), --help, --list, gc-phase and gc-check"
