#!/usr/bin/env bash
# Run a challenge's image as grand-challenge.org does, then compare the result with the expected metrics:
#   ./test-run.sh <challenge> [INPUT_DIR] [EXPECTED_METRICS_JSON]
# Defaults: test/input/<challenge> and test/expected/<challenge>/metrics.json; the env var OUTPUT_DIR
# chooses where metrics.json lands (default test/output/<challenge>). The container gets no network,
# /input read-only, an 8 GB memory limit, no capabilities, a fresh scratch volume as /tmp, and the
# bundled ground truth where the platform unpacks the phase's tarball. Its stderr is passed through
# untouched (the last line is what participants would see); this script reports on stdout.
set -euo pipefail
source "$(dirname "$0")/scripts/lib.sh"
require_challenge "${1:-}"
require_ground_truth "$1"
challenge="$1"
input="${2:-$REPO/test/input/$challenge}"
[ -d "$input" ] || { echo "$0: no input folder $input" >&2; exit 2; }
input="$(cd "$input" && pwd)"
expected="${3:-$REPO/test/expected/$challenge/metrics.json}"
output="${OUTPUT_DIR:-$REPO/test/output/$challenge}"
tag="$(image_tag "$challenge")"
docker image inspect "$tag" >/dev/null 2>&1 || { echo "$0: no image $tag; run ./build.sh $challenge" >&2; exit 2; }

mkdir -p "$output"
output="$(cd "$output" && pwd)"
rm -f "$output/metrics.json"
chmod a+rwx "$output" # the container runs as a non-root user
scratch="$(docker volume create)"
trap 'docker volume rm -f "$scratch" >/dev/null' EXIT

echo "test-run: $tag on $input -> $output"
status=0
docker run --rm --platform=linux/amd64 --network none \
  --memory=8g --memory-swap=8g --cap-drop=ALL --security-opt=no-new-privileges \
  --pids-limit=256 --shm-size=128m \
  -v "$input":/input:ro -v "$output":/output -v "$scratch":/tmp \
  -v "$REPO/ground-truth/$challenge":/opt/ml/input/data/ground_truth:ro \
  "$tag" || status=$?
if [ "$status" != 0 ]; then
  echo "test-run: the evaluation exited with $status"
  exit "$status"
fi
if [ ! -f "$output/metrics.json" ]; then
  echo "test-run: the evaluation exited with 0 but wrote no metrics.json (the platform would fail it)"
  exit 1
fi
if [ ! -f "$expected" ]; then
  echo "test-run: no expected metrics at $expected; the evaluation wrote $output/metrics.json"
  exit 0
fi
python="$REPO/.venv/bin/python"
[ -x "$python" ] || python=python3
(cd "$REPO" && "$python" -m evaluation.compare "$expected" "$output/metrics.json")
