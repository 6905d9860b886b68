#!/usr/bin/env bash
# The two files an organizer uploads for a challenge's phase: ./export.sh <challenge>
#   export/evaluation-<challenge>_<timestamp>.tar.gz   the image (docker save | gzip), the evaluation method
#   export/ground_truth.tar.gz                         the phase's ground truth; its files unpack at the top
#                                                      level of /opt/ml/input/data/ground_truth
# Builds the image first when it does not exist. Prints the two paths.
set -euo pipefail
source "$(dirname "$0")/scripts/lib.sh"
require_challenge "${1:-}"
require_ground_truth "$1"
cd "$REPO"
tag="$(image_tag "$1")"
docker image inspect "$tag" >/dev/null 2>&1 || ./build.sh "$1" >&2
mkdir -p export
image_file="export/${tag}_$(date -u +%Y%m%d%H%M%S).tar.gz"
docker save "$tag" | gzip -c >"$image_file.partial"
mv "$image_file.partial" "$image_file"
pack_ground_truth "$1" export/ground_truth.tar.gz
echo "$image_file"
echo "export/ground_truth.tar.gz"
