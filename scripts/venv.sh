#!/usr/bin/env bash
# Make (or refresh) .venv from the pinned requirements-dev.txt; silent when it is current.
# Shared by test.sh and demo.sh. A stamp holding the hash of requirements*.txt tells when to reinstall.
# The interpreter is $PYTHON, else python3.11, else python3 (the image runs CPython 3.11).
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$REPO/.venv"
stamp="$venv/.requirements-hash"
wanted="$(cat "$REPO"/requirements*.txt | sha256sum | cut -d' ' -f1)"
if [ -x "$venv/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$wanted" ]; then
  exit 0
fi
python="${PYTHON:-}"
if [ -z "$python" ]; then
  python=python3.11
  command -v "$python" >/dev/null 2>&1 || python=python3
fi
command -v "$python" >/dev/null 2>&1 || { echo "venv: no $python on PATH (Python 3.11 is needed)" >&2; exit 1; }
echo "[venv] installing the pinned requirements into $venv (first use, or requirements*.txt changed)"
if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv "$venv" || {
    rm -rf "$venv"
    echo "venv: '$python -m venv' failed (on Debian/Ubuntu: apt-get install python3-venv)" >&2
    exit 1
  }
fi
rm -f "$stamp"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$REPO/requirements-dev.txt"
echo "$wanted" >"$stamp"
