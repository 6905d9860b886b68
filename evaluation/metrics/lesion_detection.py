"""Lesion detection by any overlap: a reference lesion is found when any predicted voxel lies in it,
a predicted lesion is false when it holds no reference voxel (no one-to-one matching: a predicted
lesion over two reference lesions finds both, two predicted lesions over one find it once and are
no false positives; touching without a shared voxel is no overlap).

Reference: ISLES 2022 (github ezequieldlrosa/isles22_docker_evaluation, ``eval_metrics_isles.py``,
``compute_lesion_f1_score`` and ``compute_absolute_lesion_difference``): lesions are the connected
components of ``scipy.ndimage.label`` with the structure ``np.ones((3, 3, 3))``, i.e. 26-connected in
3D (the code's comment says 18; the structure is 26); F1 = TP / (TP + (FP + FN) / 2) with TP the
found and FN the missed reference lesions, FP the false predicted ones, 1.0 when neither mask has a
lesion (``empty_value``); the lesion count difference is |#predicted - #reference lesions|. (ATLAS R2.0
describes its lesion-wise F1 alike; its code has not been checked against this module.)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evaluation.metrics import checks
from evaluation.metrics.boxes import bounding_box
from evaluation.metrics.lesions import connected_components, f1_score


@dataclass(frozen=True)
class OverlapDetection:
    """The lesions of two masks detected by any overlap."""

    tp: int  # reference lesions sharing a voxel with the prediction
    fp: int  # predicted lesions sharing no voxel with the reference
    fn: int  # reference lesions sharing no voxel with the prediction
    n_reference: int  # connected components of the reference
    n_prediction: int  # connected components of the prediction

    @property
    def count_difference(self) -> int:
        """|#predicted - #reference lesions| (ISLES 2022's absolute lesion difference)."""
        return abs(self.n_prediction - self.n_reference)


def overlap_detection(reference: np.ndarray, prediction: np.ndarray, connectivity: int = 26) -> OverlapDetection:
    """TP / FP / FN lesions by any overlap and both masks' lesion counts (module docstring).

    ``reference``, ``prediction``: binary masks of one shape (3D, or 2D labelled as one slice:
    26 then means 8-connected); ``connectivity``: 6, 18 or 26 (ISLES 2022: 26).
    """
    reference, prediction = checks.binary_pair(reference, prediction, (2, 3))
    box = bounding_box(reference, prediction)  # no component changes inside the union's box
    if box is None:
        return OverlapDetection(0, 0, 0, 0, 0)
    reference, prediction = reference[box], prediction[box]
    ref_labels, n_ref = connected_components(reference, connectivity)
    pred_labels, n_pred = connected_components(prediction, connectivity)
    both = (reference & prediction).reshape(ref_labels.shape)
    found = np.unique(ref_labels[both]).size  # every voxel of ``both`` is in a component of each
    touching = np.unique(pred_labels[both]).size
    return OverlapDetection(found, n_pred - touching, n_ref - found, n_ref, n_pred)


def overlap_lesion_f1(
    reference: np.ndarray, prediction: np.ndarray, connectivity: int = 26, empty: float = 1.0
) -> float:
    """Lesion F1 by any overlap, 2TP / (2TP + FP + FN) = TP / (TP + (FP + FN) / 2); ``empty`` when
    neither mask has a lesion (ISLES 2022: 1.0)."""
    found = overlap_detection(reference, prediction, connectivity)
    return float(f1_score(found.tp, found.fp, found.fn, empty=empty))


def lesion_count_difference(reference: np.ndarray, prediction: np.ndarray, connectivity: int = 26) -> int:
    """|#predicted - #reference lesions| (connected components; ISLES 2022: 26-connected)."""
    return overlap_detection(reference, prediction, connectivity).count_difference
