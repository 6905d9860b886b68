#!/usr/bin/env bash
# The platform's job runner on this machine: .venv-shim (Python 3.12, the pinned requirements.txt next to
# this script: sagemaker-shim, moto, PyInstaller) and, built from that venv, the one-file sagemaker-shim
# binary (.venv-shim/dist/sagemaker-shim) that grand-challenge.org adds to every image at /sagemaker-shim
# (the platform builds its binary the same way, PyInstaller then staticx: DIAGNijmegen/rse-sagemaker-shim,
# dist/Makefile; the image and this machine are both Debian bookworm, so the glibc matches without staticx).
# Idempotent: a stamp holding the hash of requirements.txt tells when to redo it. Prints the binary's path.
# The interpreter is $PYTHON_SHIM, else python3.12 on PATH, else a pyenv 3.12 (sagemaker-shim needs 3.12).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$here/../.." && pwd)"
venv="$REPO/.venv-shim"
binary="$venv/dist/sagemaker-shim"
stamp="$venv/.requirements-hash"
wanted="$(sha256sum "$here/requirements.txt" | cut -d' ' -f1)"
if [ -x "$binary" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$wanted" ]; then
  echo "$binary"
  exit 0
fi

find_python() {
  local candidate
  for candidate in "${PYTHON_SHIM:-}" python3.12 "$(pyenv root 2>/dev/null)"/versions/3.12*/bin/python3.12; do
    [ -n "$candidate" ] && "$candidate" -c 'import sys, venv; assert sys.version_info[:2] == (3, 12)' 2>/dev/null &&
      { command -v "$candidate"; return 0; }
  done
  return 1
}
python="$(find_python)" || {
  echo "sagemaker-shim setup: no Python 3.12 found (sagemaker-shim requires it): set PYTHON_SHIM" >&2
  exit 1
}
echo "[sagemaker-shim] installing $here/requirements.txt into $venv with $python" >&2
rm -f "$stamp"
[ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/requirements.txt" >&2
echo "[sagemaker-shim] building the one-file binary with PyInstaller (a few minutes)" >&2
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# the platform's own PyInstaller call (hidden imports of aioboto3), plus the package metadata the shim
# reads for its version
"$venv/bin/pyinstaller" --onefile --noconfirm --log-level WARN --name sagemaker-shim \
  --hidden-import=aioboto3.s3 --hidden-import=aioboto3.s3.inject --copy-metadata sagemaker-shim \
  --distpath "$venv/dist" --workpath "$work/build" --specpath "$work" \
  "$("$venv/bin/python" -c 'import sagemaker_shim.cli as m; print(m.__file__)')" >&2
"$binary" --help >/dev/null
echo "$wanted" >"$stamp"
echo "$binary"
