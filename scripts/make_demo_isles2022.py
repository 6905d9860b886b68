"""Make the demo of the declared challenge ``isles2022`` (evaluation/declarations/isles2022.toml): small
synthetic stroke-lesion masks (10 x 12 x (14 + i) voxels at 2 x 1.5 x 1.25 mm; each case's own width,
so no two masks are the same bytes: evalutils' ``UniqueImagesValidator`` refuses equal images) with the
edge cases of ISLES 2022's evaluation -- both masks empty, an empty prediction, an empty reference, a
partial overlap with a false positive, a reference lesion split in two predicted ones, two reference
lesions merged by one predicted, lesions touching without a shared voxel, lesions joined only at a
corner (one 26-connected lesion), random lesions -- as reference masks
(ground-truth/isles2022/labels/<case>.mha) and predicted masks in the platform's layout
(test/input/isles2022). The official evaluation's numbers on these cases are in
test/metrics/golden/isles2022.json (test/declarative/test_isles2022.py).

``generate`` writes the same data anywhere. Deterministic. Usage: python scripts/make_demo_isles2022.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import SimpleITK as sitk

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))

from library_demo import write_demo  # noqa: E402

NAME = "isles2022"
OUTPUT = "stroke-lesion-segmentation"
SPACING = (2.0, 1.5, 1.25)  # z, y, x (mm)
Pair = tuple[np.ndarray, np.ndarray]


def _blank(index: int) -> np.ndarray:
    return np.zeros((10, 12, 14 + index), np.uint8)


def _pairs(rng: np.random.Generator) -> dict[str, Pair]:
    """Case -> (reference, prediction), in case order."""
    names = ("both_empty", "empty_prediction", "empty_reference", "overlap", "split", "merged", "touching",
             "corners", "random", "many")  # fmt: skip
    ref, pred = {n: _blank(i) for i, n in enumerate(names)}, {n: _blank(i) for i, n in enumerate(names)}
    ref["empty_prediction"][2:5, 2:6, 2:6] = 1
    ref["empty_prediction"][6:9, 7:10, 8:12] = 1
    pred["empty_reference"][3:6, 4:8, 4:9] = 1
    ref["overlap"][2:6, 3:8, 3:8] = 1
    pred["overlap"][3:7, 5:10, 5:9] = 1
    pred["overlap"][8:10, 0:2, 12:15] = 1  # a false positive far away
    ref["split"][3:6, 2:10, 3:10] = 1
    pred["split"][4:5, 3:5, 4:6] = 1
    pred["split"][4:5, 7:9, 4:6] = 1  # two predicted lesions in one reference lesion
    ref["merged"][3:6, 2:5, 3:8] = 1
    ref["merged"][3:6, 6:9, 3:8] = 1
    pred["merged"][4:5, 3:8, 4:6] = 1  # one predicted lesion over both reference lesions
    ref["touching"][2:5, 2:6, 2:6] = 1
    pred["touching"][2:5, 6:9, 2:6] = 1  # face to face, no shared voxel
    pred["touching"][6:8, 2:4, 9:12] = 1
    ref["touching"][6:8, 4:6, 12:14] = 1  # edge to edge: one lesion each side
    ref["corners"][2:4, 2:4, 2:4] = 1
    ref["corners"][4:6, 4:6, 4:6] = 1  # joined at a corner: one 26-connected lesion
    pred["corners"][4:6, 4:6, 4:6] = 1
    pred["corners"][6:8, 6:8, 6:8] = 1  # corner-joined to the first: one lesion, overlapping
    pred["corners"][7:9, 1:3, 10:12] = 1
    for name, density in (("random", 0.12), ("many", 0.05)):
        shape = ref[name].shape
        ref[name] = (rng.random(shape) < density).astype(np.uint8)
        pred[name] = ((rng.random(shape) < density) | (ref[name] & (rng.random(shape) < 0.5))).astype(np.uint8)
    return {name: (ref[name], pred[name]) for name in names}


def cases(seed: int = 2022) -> dict[str, Pair]:
    """Case -> (reference mask, predicted mask), (z, y, x) uint8 0 / 1."""
    return _pairs(np.random.default_rng(seed))


def write(array: np.ndarray, path: Path) -> None:
    image = sitk.GetImageFromArray(array)
    image.SetSpacing(tuple(reversed(SPACING)))  # SimpleITK's (x, y, z)
    image.SetOrigin((-90.0, 12.5, -40.25))
    path.parent.mkdir(parents=True, exist_ok=True)
    sitk.WriteImage(image, str(path), useCompression=True)


def generate(ground_truth: Path, outputs: Path, seed: int = 2022) -> dict[str, Pair]:
    """The reference masks under ``ground_truth/labels`` and the algorithm's outputs under
    ``outputs/<case>/images/stroke-lesion-segmentation/`` (what make_input takes); returns ``cases``."""
    found = cases(seed)
    for case, (reference, prediction) in found.items():
        write(reference, ground_truth / "labels" / f"{case}.mha")
        write(prediction, outputs / case / "images" / OUTPUT / f"{case}.mha")
    return found


def main() -> None:
    write_demo(NAME, generate)


if __name__ == "__main__":
    main()
