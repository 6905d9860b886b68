"""The ground truth of the verify tests: four lesion masks (label 1) on an anisotropic 8 x 16 x 16 grid
(spacing 2 x 1.5 x 1 mm), every case with one or two box lesions of its own size, drawn from a seed."""

from pathlib import Path

import numpy as np
import SimpleITK as sitk

SHAPE = (8, 16, 16)


def write_ground_truth(folder: Path, seed: int = 7, cases: int = 4) -> Path:
    rng = np.random.default_rng(seed)
    (folder / "labels").mkdir(parents=True, exist_ok=True)
    for index in range(cases):
        array = np.zeros(SHAPE, np.uint8)
        for _ in range(1 + index % 2):
            corner = [int(rng.integers(0, s - 4)) for s in SHAPE]
            size = [int(rng.integers(2, 5)) for _ in SHAPE]
            array[tuple(slice(c, c + z) for c, z in zip(corner, size, strict=True))] = 1
        image = sitk.GetImageFromArray(array)
        image.SetSpacing((1.0, 1.5, 2.0))
        sitk.WriteImage(image, str(folder / "labels" / f"case-{index:02d}.mha"), useCompression=False)
    return folder


if __name__ == "__main__":  # python test/verify_references/ground_truth.py FOLDER (the README's guide)
    import sys

    write_ground_truth(Path(sys.argv[1]))
