"""A reference evaluation for ``python -m evaluation.verify --reference-command``: DeepMind's official
surface-distance code (github google-deepmind/surface-distance, ``surface_distance.metrics``:
``compute_surface_distances`` and ``compute_surface_dice_at_tolerance``, installed from PyPI as
surface-distance 0.1), run on a flat input (``INPUT/<case>.mha``: each case's mask; an absent one refuses the
submission) against ``GROUND_TRUTH/labels/<case>.mha`` (label 1), at the tolerance given in mm;
writes ``OUTPUT/metrics.json``: each case's normalised surface Dice and their mean.

Usage: python surface_distance_command.py INPUT GROUND_TRUTH OUTPUT TOLERANCE_MM
"""

import json
import sys
from pathlib import Path

import numpy as np
import SimpleITK as sitk
from surface_distance import metrics

# surface-distance 0.1 still names np.Inf (removed in NumPy 2.0) where a mask is empty: the alias restored,
# so that its own code runs unchanged
np.Inf = np.inf


def main(input_dir: Path, ground_truth: Path, output_dir: Path, tolerance: float) -> None:
    cases = {}
    for path in sorted((ground_truth / "labels").glob("*.mha")):
        image = sitk.ReadImage(str(path))
        truth = sitk.GetArrayFromImage(image) == 1
        found = input_dir / path.name
        if not found.is_file():
            sys.exit(f"No prediction for case {path.stem}.")
        mask = sitk.GetArrayFromImage(sitk.ReadImage(str(found))) == 1
        spacing = tuple(reversed(image.GetSpacing()))  # numpy's axis order
        distances = metrics.compute_surface_distances(truth, mask, spacing)
        cases[path.stem] = {"nsd": float(metrics.compute_surface_dice_at_tolerance(distances, tolerance))}
    document = {"case": cases, "mean_nsd": float(np.mean([c["nsd"] for c in cases.values()]))}
    (output_dir / "metrics.json").write_text(json.dumps(document))


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]), float(sys.argv[4]))
