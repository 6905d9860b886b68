"""Make the demo of the declared challenge ``hntsmrg2024`` (evaluation/declarations/hntsmrg2024.toml):
the eight synthetic head-and-neck masks (GTVp = 1, GTVn = 2, each case its own spacing) of
``hntsmrg_cases`` in test/declarative/outsider_more_data.py -- a perfect case, an empty prediction, no
GTVn in the reference, no GTVn predicted, no GTVn in either mask, random overlaps -- as reference masks
(ground-truth/hntsmrg2024/labels/<case>.mha) and predicted masks in the platform's layout
(test/input/hntsmrg2024). The official notebook's numbers on these cases are in
test/metrics/golden/hntsmrg2024.json (test/declarative/test_hntsmrg2024.py).

``generate`` writes the same data anywhere. Deterministic. Usage: python scripts/make_demo_hntsmrg2024.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import SimpleITK as sitk

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))
sys.path.insert(0, str(REPO / "test"))

from declarative.outsider_more_data import hntsmrg_cases  # noqa: E402
from library_demo import write_demo  # noqa: E402

NAME = "hntsmrg2024"
INPUT = "t2w-head-neck-mri"
OUTPUT = "head-neck-tumour-segmentation"


def write(array: np.ndarray, spacing: tuple[float, float, float], path: Path) -> None:
    """A compressed .mha of a (z, y, x) mask with its (z, y, x) spacing in mm."""
    image = sitk.GetImageFromArray(array.astype(np.uint8))
    image.SetSpacing(tuple(reversed(spacing)))  # SimpleITK's (x, y, z)
    image.SetOrigin((-60.0, 25.5, -12.25))
    path.parent.mkdir(parents=True, exist_ok=True)
    sitk.WriteImage(image, str(path), useCompression=True)


def generate(ground_truth: Path, outputs: Path) -> dict:
    """The reference masks under ``ground_truth/labels`` and the algorithm's outputs under
    ``outputs/<case>/images/head-neck-tumour-segmentation/`` (what make_input takes); returns the cases."""
    cases = hntsmrg_cases()
    for case, (reference, prediction, spacing) in cases.items():
        write(reference, spacing, ground_truth / "labels" / f"{case}.mha")
        write(prediction, spacing, outputs / case / "images" / OUTPUT / f"{case}.mha")
    return cases


def main() -> None:
    write_demo(NAME, generate)


if __name__ == "__main__":
    main()
