#!/usr/bin/env bash
# Build the evaluation image of one challenge: ./build.sh <challenge> [docker build options, e.g. --no-cache]
#   -> image evaluation-<challenge>, linux/amd64, the challenge baked in as EVALUATION_CHALLENGE.
# The host network lets pip reach the package index during the build; the image runs without network.
set -euo pipefail
source "$(dirname "$0")/scripts/lib.sh"
require_challenge "${1:-}"
cd "$REPO"
# One build of a challenge at a time (CI starts one in the background, the docker test asks again):
# the second waits here and then finds every layer cached.
exec 9>"${TMPDIR:-/tmp}/evaluation-build-$1.lock"
flock 9
docker build --platform=linux/amd64 --network host \
  --build-arg EVALUATION_CHALLENGE="$1" --tag "$(image_tag "$1")" "${@:2}" .
