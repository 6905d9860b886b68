#!/usr/bin/env bash
# Run a challenge's image as grand-challenge.org does, then compare the result with the expected metrics:
#   ./test-run.sh [--shim] <challenge> [INPUT_DIR] [EXPECTED_METRICS_JSON]
# Defaults: test/input/<challenge> and test/expected/<challenge>/metrics.json; the env var OUTPUT_DIR
# chooses where metrics.json lands (default test/output/<challenge>). The container gets no network,
# /input read-only, an 8 GB memory limit, no capabilities, a fresh scratch volume as /tmp, and the
# bundled ground truth where the platform unpacks the phase's tarball. Its stderr is passed through
# untouched (the last line is what participants would see); this script reports on stdout.
#
# --shim: through the platform's own job runner instead, as the platform runs an evaluation: the image
# mutated as the platform mutates it (/sagemaker-shim as entrypoint, built by
# scripts/sagemaker-shim/setup.sh into .venv-shim; Python 3.12 needed), `invoke` against a moto S3 server
# on loopback with the input folder staged as the platform stages it, the ground-truth tarball of
# export.sh, GRAND_CHALLENGE_COMPONENT_MAX_MEMORY_MB=$SHIM_MAX_MEMORY_MB (default 7168, an 8 GB instance:
# the shim sets it as RLIMIT_DATA on every process) and the time limit $SHIM_TIME_LIMIT (s, default 3600).
# Only what the platform reads back is used: inference_result.json's return code, the participant's last
# stderr line (printed last on stderr) and the uploaded metrics.json; OUTPUT_DIR also gets
# sagemaker-shim.json (that summary) and sagemaker-shim.log. EVALUATION_IMAGE=<tag> shims another image
# built by ./build.sh (e.g. evaluation-kits-example for every challenge: it has every challenge's code and,
# a challenge with image outputs, every package; the challenge is then set with EVALUATION_CHALLENGE in the
# container's environment).
set -euo pipefail
source "$(dirname "$0")/scripts/lib.sh"
shim=0
if [ "${1:-}" = --shim ]; then
  shim=1
  shift
fi
require_challenge "${1:-}"
require_ground_truth "$1"
challenge="$1"
input="${2:-$REPO/test/input/$challenge}"
[ -d "$input" ] || { echo "$0: no input folder $input" >&2; exit 2; }
input="$(cd "$input" && pwd)"
expected="${3:-$REPO/test/expected/$challenge/metrics.json}"
output="${OUTPUT_DIR:-$REPO/test/output/$challenge}"
tag="${EVALUATION_IMAGE:-$(image_tag "$challenge")}"
docker image inspect "$tag" >/dev/null 2>&1 || { echo "$0: no image $tag; run ./build.sh $challenge" >&2; exit 2; }

mkdir -p "$output"
output="$(cd "$output" && pwd)"
rm -f "$output/metrics.json"
status=0
extra=() # another challenge's image: the challenge set in the container's environment
[ "$tag" = "$(image_tag "$challenge")" ] || extra=(--env "EVALUATION_CHALLENGE=$challenge")
if [ "$shim" = 1 ]; then
  shim_binary="$(bash "$REPO/scripts/sagemaker-shim/setup.sh")"
  shim_python="$REPO/.venv-shim/bin/python"
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  # The platform's mutation of the image (comic/grand-challenge.org, components/tasks.py,
  # _mutate_container_image, with `crane mutate`): one appended layer holding /sagemaker-shim (root, 0500),
  # /input (0755), /output and /tmp (0777); user root (the shim stages /input, then drops to the image's
  # user); entrypoint /sagemaker-shim, no command; the original entrypoint, command and user kept in
  # GRAND_CHALLENGE_COMPONENT_{ENTRYPOINT,CMD}_B64J (base64 of their JSON) and _USER. Done here with
  # docker create/cp/commit, which copies the file system once on vfs (a Dockerfile: once per step).
  rootfs="$work/rootfs"
  mkdir -p "$rootfs/input" "$rootfs/output" "$rootfs/tmp"
  install -m 0500 "$shim_binary" "$rootfs/sagemaker-shim"
  chmod 0755 "$rootfs/input"
  chmod 0777 "$rootfs/output" "$rootfs/tmp"
  b64j() { "$shim_python" -c 'import base64, json, sys; print(base64.b64encode(json.dumps(json.loads(sys.argv[1])).encode()).decode())' "$1"; }
  shim_tag="$tag-sagemaker-shim"
  # the same base image and binary give the same shimmed image: made once
  made_from="$(docker image inspect "$tag" --format '{{.Id}}') $(sha256sum "$shim_binary" | cut -d' ' -f1)"
  (
    flock 9
    if [ "$(docker image inspect "$shim_tag" --format '{{index .Config.Labels "evaluation.shimmed-from"}}' 2>/dev/null)" != "$made_from" ]; then
      container="$(docker create --platform=linux/amd64 "$tag")"
      docker cp "$rootfs/." "$container:/" >/dev/null
      docker commit \
        --change "USER 0" \
        --change "ENV GRAND_CHALLENGE_COMPONENT_ENTRYPOINT_B64J=$(b64j "$(docker image inspect "$tag" --format '{{json .Config.Entrypoint}}')")" \
        --change "ENV GRAND_CHALLENGE_COMPONENT_CMD_B64J=$(b64j "$(docker image inspect "$tag" --format '{{json .Config.Cmd}}')")" \
        --change "ENV GRAND_CHALLENGE_COMPONENT_USER=$(docker image inspect "$tag" --format '{{.Config.User}}')" \
        --change 'ENTRYPOINT ["/sagemaker-shim"]' --change 'CMD []' \
        --change "LABEL evaluation.shimmed-from=\"$made_from\"" \
        "$container" "$shim_tag" >/dev/null
      docker rm "$container" >/dev/null
    fi
  ) 9>"${TMPDIR:-/tmp}/evaluation-build-$shim_tag.lock"
  pack_ground_truth "$challenge" "$work/ground_truth.tar.gz"
  echo "test-run: $shim_tag (sagemaker-shim invoke, moto S3) on $input -> $output"
  "$shim_python" "$REPO/scripts/sagemaker-shim/run.py" --image "$shim_tag" --input "$input" \
    --ground-truth "$work/ground_truth.tar.gz" --output "$output" \
    --max-memory-mb "${SHIM_MAX_MEMORY_MB:-7168}" --time-limit "${SHIM_TIME_LIMIT:-3600}" "${extra[@]}" || status=$?
else
  chmod a+rwx "$output" # the container runs as a non-root user
  scratch="$(docker volume create)"
  trap 'docker volume rm -f "$scratch" >/dev/null' EXIT
  echo "test-run: $tag on $input -> $output"
  docker run --rm --platform=linux/amd64 --network none \
    --memory=8g --memory-swap=8g --cap-drop=ALL --security-opt=no-new-privileges \
    --pids-limit=256 --shm-size=128m \
    -v "$input":/input:ro -v "$output":/output -v "$scratch":/tmp \
    -v "$REPO/ground-truth/$challenge":/opt/ml/input/data/ground_truth:ro \
    "${extra[@]}" "$tag" || status=$?
fi
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
