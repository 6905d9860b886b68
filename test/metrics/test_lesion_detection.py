"""``lesion_detection``: lesions found by any overlap (ISLES 2022). The official numbers on the demo's
cases (test/metrics/golden/isles2022.json: github ezequieldlrosa/isles22_docker_evaluation
``eval_metrics_isles.py`` at the commit recorded there) and a hand count on random masks: components by
``scipy.ndimage.label`` with the official structure ``np.ones((3, 3, 3))``, then one component at a time."""

from __future__ import annotations

import importlib.util
import json

import numpy as np
import pytest
from conftest import REPO
from scipy import ndimage

from evaluation.metrics.lesion_detection import (
    OverlapDetection,
    lesion_count_difference,
    overlap_detection,
    overlap_lesion_f1,
)

GOLDEN = json.loads((REPO / "test" / "metrics" / "golden" / "isles2022.json").read_text())
_spec = importlib.util.spec_from_file_location("make_demo_isles2022", REPO / "scripts" / "make_demo_isles2022.py")
demo = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(demo)
CASES = demo.cases()


@pytest.mark.parametrize("case", sorted(CASES))
def test_equals_the_official_numbers(case):
    reference, prediction = CASES[case]
    official = GOLDEN["cases"][case]
    assert overlap_lesion_f1(reference, prediction) == pytest.approx(official["Lesion_F1_score"], abs=1e-12)
    assert lesion_count_difference(reference, prediction) == official["Lesion_count_difference"]


def _by_hand(reference: np.ndarray, prediction: np.ndarray, structure: np.ndarray) -> OverlapDetection:
    ref_labels, n_ref = ndimage.label(reference, structure)
    pred_labels, n_pred = ndimage.label(prediction, structure)
    tp = sum(bool(prediction[ref_labels == k].any()) for k in range(1, n_ref + 1))
    fp = sum(not reference[pred_labels == k].any() for k in range(1, n_pred + 1))
    return OverlapDetection(tp, fp, n_ref - tp, n_ref, n_pred)


@pytest.mark.parametrize("seed", range(8))
def test_equals_a_hand_count_at_each_connectivity(seed):
    rng = np.random.default_rng(seed)
    shape = (6, 9, 11)
    reference = rng.random(shape) < 0.1
    prediction = (rng.random(shape) < 0.08) | (reference & (rng.random(shape) < 0.4))
    structures = {26: np.ones((3, 3, 3)), 18: ndimage.generate_binary_structure(3, 2),
                  6: ndimage.generate_binary_structure(3, 1)}  # fmt: skip
    for connectivity, structure in structures.items():
        assert overlap_detection(reference, prediction, connectivity) == _by_hand(reference, prediction, structure)


def test_edge_cases():
    empty = np.zeros((3, 4, 5), bool)
    lesion = empty.copy()
    lesion[1, 1:3, 1:3] = True
    assert overlap_lesion_f1(empty, empty) == 1.0 and overlap_lesion_f1(empty, empty, empty=0.5) == 0.5
    assert overlap_lesion_f1(empty, lesion) == 0.0 and overlap_lesion_f1(lesion, empty) == 0.0
    assert overlap_detection(empty, lesion) == OverlapDetection(0, 1, 0, 0, 1)
    corner = empty.copy()
    corner[0, 0, 0] = corner[1, 1, 1] = True  # one lesion at 26, two at 18 and 6
    assert overlap_detection(corner, empty, 26).n_reference == 1
    assert overlap_detection(corner, empty, 18).n_reference == 2
    assert lesion_count_difference(corner, corner[:, ::-1], 6) == 0
    flat = np.zeros((5, 5), bool)
    flat[0, 0] = flat[1, 1] = True  # 2D: one slice, 26 = 8-connected
    assert overlap_detection(flat, flat) == OverlapDetection(1, 0, 0, 1, 1)
    with pytest.raises(ValueError):
        overlap_detection(empty, empty[0])
