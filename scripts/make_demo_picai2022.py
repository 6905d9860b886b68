"""Make the demo of the declared challenge ``picai2022`` (evaluation/declarations/picai2022.toml):
small synthetic prostate-MRI-like cases (6 x 24 x 24 voxels) with the edge cases of PI-CAI's
evaluation -- benign cases, missed lesions, candidates overlapping a lesion below IoU 0.1, two
candidates over one lesion (one is no entry), one candidate over two lesions (one missed), tied
confidences, an all-zero map, and a job without its map (the empty-mask policy) -- as reference
lesion masks (ground-truth/picai2022/labels/<case>.mha) and detection maps (constant-valued
candidates, as picai_eval expects) in the platform's layout (test/input/picai2022).

``generate`` writes the same data anywhere (test/declarative/test_picai2022.py runs picai_eval on it).
Deterministic. Usage: python scripts/make_demo_picai2022.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import SimpleITK as sitk

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))

from library_demo import write_demo  # noqa: E402

NAME = "picai2022"
SHAPE = (6, 24, 24)  # z, y, x
SLOTS = ((3, 6, 6), (3, 6, 17), (3, 17, 6), (3, 17, 17))  # candidates in different slots never touch
CONFIDENCES = (0.3, 0.5, 0.5, 0.7, 0.9)  # repeated: tied confidences
OUTPUT = "cspca-detection-map"
MISSING = "case-07"  # a job without its map


def _ball(centre: tuple[int, int, int], radius: float) -> np.ndarray:
    z, y, x = np.ogrid[: SHAPE[0], : SHAPE[1], : SHAPE[2]]
    return (z - centre[0]) ** 2 / 2 + (y - centre[1]) ** 2 + (x - centre[2]) ** 2 <= radius**2


def _case(rng: np.random.Generator, n_lesions: int) -> tuple[np.ndarray, np.ndarray]:
    """(detection map, reference): lesions in the first slots, candidates near them or elsewhere."""
    reference = np.zeros(SHAPE, np.uint8)
    for slot in SLOTS[:n_lesions]:
        reference[_ball(slot, 3.0)] = 1
    detection = np.zeros(SHAPE, np.float32)
    for slot in rng.permutation(len(SLOTS))[: int(rng.integers(0, 4))]:
        z, y, x = SLOTS[slot]
        centre = (z, y + int(rng.integers(-2, 3)), x + int(rng.integers(-2, 3)))
        detection[_ball(centre, float(rng.choice([1.0, 2.0, 3.0])))] = rng.choice(CONFIDENCES)
    return detection, reference


def _crowded() -> tuple[np.ndarray, np.ndarray]:
    """Two candidates over one lesion and one candidate over two lesions."""
    reference = np.zeros(SHAPE, np.uint8)
    reference[1:5, 2:10, 2:10] = 1
    reference[1:5, 14:18, 14:17] = 1
    reference[1:5, 14:18, 18:21] = 1
    detection = np.zeros(SHAPE, np.float32)
    detection[1:5, 2:10, 2:6] = 0.8
    detection[1:5, 2:10, 7:10] = 0.6
    detection[1:5, 14:18, 14:21] = 0.7
    return detection, reference


def cases(seed: int = 2022, n: int = 10) -> dict[str, tuple[np.ndarray | None, np.ndarray]]:
    """Case -> (detection map or None for a missing job, reference lesion mask)."""
    rng = np.random.default_rng(seed)
    pairs = [_case(rng, [0, 1, 2, 1][i % 4]) for i in range(n - 2)] + [_crowded()]
    pairs.append((np.zeros(SHAPE, np.float32), pairs[1][1]))  # an all-zero map of a case with a lesion
    found: dict[str, tuple[np.ndarray | None, np.ndarray]] = {f"case-{i:02d}": p for i, p in enumerate(pairs)}
    found[MISSING] = (None, found[MISSING][1])
    return found


def _write(array: np.ndarray, path: Path) -> None:
    image = sitk.GetImageFromArray(array)
    image.SetSpacing((0.5, 0.5, 3.0))
    path.parent.mkdir(parents=True, exist_ok=True)
    sitk.WriteImage(image, str(path), useCompression=True)


def generate(ground_truth: Path, outputs: Path, seed: int = 2022) -> dict[str, tuple[np.ndarray | None, np.ndarray]]:
    """The reference masks under ``ground_truth/labels`` and the algorithm's outputs under
    ``outputs/<case>/images/cspca-detection-map/`` (what make_input takes); returns ``cases``."""
    found = cases(seed)
    for case, (detection, reference) in found.items():
        _write(reference, ground_truth / "labels" / f"{case}.mha")
        (outputs / case).mkdir(parents=True, exist_ok=True)
        if detection is not None:
            _write(detection, outputs / case / "images" / OUTPUT / "detection_map.mha")
    return found


def main() -> None:
    write_demo(NAME, generate)


if __name__ == "__main__":
    main()
