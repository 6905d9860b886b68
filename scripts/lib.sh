# Shared by build.sh, export.sh and test-run.sh: the image tag of a challenge and its validation.
# shellcheck shell=bash
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

image_tag() { echo "evaluation-$1"; }

# The challenges this checkout has: `python -m evaluation --list` when the venv works, else the
# `name = "..."` declarations of evaluation/challenges/*.py and the declared challenges
# evaluation/declarations/<name>.toml (no Python packages needed).
known_challenges() {
  [ -x "$REPO/.venv/bin/python" ] && (cd "$REPO" && .venv/bin/python -m evaluation --list 2>/dev/null) ||
    { sed -nE 's/^    name(: [^=]+)? = "([^"]+)".*/\2/p' "$REPO"/evaluation/challenges/*.py
      for f in "$REPO"/evaluation/declarations/*.toml; do [ -e "$f" ] && basename "$f" .toml; done; }
}

require_challenge() {
  local challenge="${1:-}" known
  known="$(known_challenges | sort -u)"
  if [ -z "$challenge" ]; then
    echo "usage: $0 <challenge>   (one of: $(echo "$known" | tr '\n' ' '))" >&2
    exit 2
  fi
  if ! grep -qxF -- "$challenge" <<<"$known"; then
    echo "$0: unknown challenge '$challenge' (known: $(echo "$known" | tr '\n' ' '))" >&2
    exit 2
  fi
}

# export.sh and test-run.sh also need the bundled ground truth of the challenge.
require_ground_truth() {
  if [ ! -d "$REPO/ground-truth/$1" ]; then
    echo "$0: no bundled ground truth for '$1' (expected the folder ground-truth/$1)" >&2
    exit 2
  fi
}

# The phase's ground-truth tarball of a challenge (export.sh, test-run.sh --shim): the files at the top level
# of /opt/ml/input/data/ground_truth once unpacked; same bytes for the same ground truth (sorted names, fixed
# owner and mtime, no gzip timestamp).
pack_ground_truth() { # pack_ground_truth CHALLENGE DEST.tar.gz
  tar -C "$REPO/ground-truth/$1" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -cf - . |
    gzip -n -c >"$2"
}
