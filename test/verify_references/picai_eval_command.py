"""A reference evaluation for ``python -m evaluation.verify --reference-command``: the official PI-CAI
evaluation, ``picai_eval`` 1.4.13 (github DIAGNijmegen/picai_eval, ``picai_eval.evaluate``, installed
from PyPI), run on a flat input (``INPUT/<case>.mha``: each case's detection map; an absent one is an
all-zero map) against ``GROUND_TRUTH/labels/<case>.mha``; writes ``OUTPUT/metrics.json`` with its
AUROC, AP, sensitivity at 1 false positive per case and ranking score (AUROC + AP) / 2.

Usage: python picai_eval_command.py INPUT GROUND_TRUTH OUTPUT
"""

import contextlib
import io
import json
import sys
from pathlib import Path

import numpy as np
import SimpleITK as sitk

with contextlib.redirect_stdout(io.StringIO()):  # picai_eval prints a banner on import
    from picai_eval import evaluate


def main(input_dir: Path, ground_truth: Path, output_dir: Path) -> None:
    labels = sorted((ground_truth / "labels").glob("*.mha"))
    truths = [sitk.GetArrayFromImage(sitk.ReadImage(str(p))) for p in labels]
    maps = []
    for path, truth in zip(labels, truths, strict=True):
        found = input_dir / path.name
        maps.append(sitk.GetArrayFromImage(sitk.ReadImage(str(found))) if found.is_file() else np.zeros(truth.shape))
    with contextlib.redirect_stdout(io.StringIO()):
        metrics = evaluate(y_det=maps, y_true=truths, num_parallel_calls=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        sensitivity = float(metrics.lesion_TPR_at_FPR(1.0))
    document = {"auroc": metrics.auroc, "AP": metrics.AP, "sensitivity_at_1fp": sensitivity, "score": metrics.score}
    (output_dir / "metrics.json").write_text(json.dumps(document))


if __name__ == "__main__":
    main(*(Path(arg) for arg in sys.argv[1:4]))
