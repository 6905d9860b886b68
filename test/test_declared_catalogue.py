"""Declared catalogue metrics beyond the example's: each declared by a tiny TOML written here, run
through the command line on hand-made ground truth and input, and its metrics.json value checked
against an independent reference (DeepMind surface-distance, scipy connected components with a
brute-force matching, scikit-learn, scipy.stats, lifelines, or a hand computation) to 1e-9, with
every declared edge value."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
import SimpleITK as sitk
import surface_distance
from scipy import ndimage

from evaluation.challenges import get
from evaluation.declarative.schema import parse
from evaluation.errors import ConfigurationError
from evaluation.platform.layout import JobSpec, write_input

SPACING = (2.0, 1.0, 0.75)  # (z, y, x) mm
SHAPE = (5, 5, 20)
LABELS = {"a": 1, "b": 2}

SEGMENTATION = """
name = "catalogue-segmentation"
title = "Declared segmentation metrics of the catalogue"
[[inputs]]
slug = "ct"
[[outputs]]
slug = "seg"
kind = "segmentation"
reference = "labels/{case}.mha"
labels = { a = 1, b = 2 }
missing = "empty-mask"
[[metrics]]
metric = "hausdorff"
output = "seg"
one_empty = "diagonal"
[[metrics]]
name = "hd_fixed"
metric = "hausdorff"
output = "seg"
both_empty = 0.5
one_empty = 123.0
[[metrics]]
metric = "masd"
output = "seg"
one_empty = 50.0
both_empty = "exclude"
[[metrics]]
name = "vd"
metric = "volume_difference"
output = "seg"
[[metrics]]
name = "rvd"
metric = "volume_difference"
output = "seg"
relative = true
absolute = false
empty_reference = 9.0
[[metrics]]
name = "vd_mm3"
metric = "volume_difference"
output = "seg"
volume = "mm3"
absolute = false
[[metrics]]
name = "pq"
metric = "panoptic_quality"
output = "seg"
no_instances = 0.5
[[metrics]]
name = "sq"
metric = "panoptic_quality"
output = "seg"
quality = "sq"
no_instances = "exclude"
[[metrics]]
name = "rq"
metric = "panoptic_quality"
output = "seg"
quality = "rq"
[[metrics]]
name = "f1_hungarian"
metric = "lesion_f1"
output = "seg"
matching = "hungarian"
iou_threshold = 0.1
aggregates = ["mean", "dataset"]
[[metrics]]
name = "f1_greedy"
metric = "lesion_f1"
output = "seg"
iou_threshold = 0.1
aggregates = ["mean", "dataset"]
[leaderboard]
score = "aggregates.pq_a_mean"
"""


def bars(*spans: tuple[int, int, int]) -> np.ndarray:
    """A label map with ``(value, x0, x1)`` bars through z 1:4, y 1:3."""
    array = np.zeros(SHAPE, np.uint8)
    for value, x0, x1 in spans:
        array[1:4, 1:3, x0:x1] = value
    return array


# c1, label a: greedy takes R1-P1 (IoU 6/14) and leaves R2; the maximum total IoU is R1-P2 (3/10) plus
# R2-P1 (2/12), two matches. Label b overlaps partly. c2: b only in the reference (one empty).
# c3: nothing anywhere (both empty, for both labels). c4: b only in the prediction (empty reference).
REFERENCES = {
    "c1": bars((1, 0, 10), (1, 12, 16)),
    "c2": bars((1, 2, 8), (2, 10, 15)),
    "c3": bars(),
    "c4": bars((1, 3, 9)),
}
PREDICTIONS = {
    "c1": bars((1, 0, 3), (1, 4, 14)),
    "c2": bars((1, 3, 8)),
    "c3": bars(),
    "c4": bars((1, 2, 9), (2, 12, 17)),
}
PREDICTIONS["c1"][1:4, 3:5, 12:16] = 2
REFERENCES["c1"][1:4, 3:5, 13:18] = 2


def write_image(array: np.ndarray, path: Path) -> None:
    image = sitk.GetImageFromArray(array.astype(np.uint8))
    image.SetSpacing(tuple(reversed(SPACING)))
    sitk.WriteImage(image, str(path))


def segmentation_case(root: Path, text: str) -> tuple[Path, Path, Path]:
    toml, ground_truth = root / "seg.toml", root / "gt"
    toml.write_text(text)
    (ground_truth / "labels").mkdir(parents=True)
    for case, array in REFERENCES.items():
        write_image(array, ground_truth / "labels" / f"{case}.mha")
    challenge = get(str(toml))
    (seg,) = challenge.phase.outputs
    jobs = []
    for case, array in PREDICTIONS.items():
        write_image(array, root / f"{case}-pred.mha")
        jobs.append(JobSpec(challenge.job_inputs(case), {seg: root / f"{case}-pred.mha"}))
    write_input(root / "input", jobs)
    return toml, ground_truth, root / "input"


def components(mask: np.ndarray) -> list[np.ndarray]:
    labelled, count = ndimage.label(mask, np.ones((3, 3, 3)))
    return [labelled == i for i in range(1, count + 1)]


def ious(reference: np.ndarray, prediction: np.ndarray) -> np.ndarray:
    refs, preds = components(reference), components(prediction)
    return np.array([[np.sum(r & p) / np.sum(r | p) for p in preds] for r in refs]).reshape(len(refs), len(preds))


def matched(matrix: np.ndarray, threshold: float, how: str) -> list[float]:
    """IoUs of the matched pairs: greedy by descending IoU, or the brute-force maximum total IoU."""
    n_ref, n_pred = matrix.shape
    if how == "greedy":
        pairs = sorted((-matrix[i, j], i, j) for i in range(n_ref) for j in range(n_pred))
        used_r, used_p, found = set(), set(), []
        for value, i, j in pairs:
            if -value > threshold and i not in used_r and j not in used_p:
                used_r.add(i)
                used_p.add(j)
                found.append(-value)
        return found
    best: list[float] = []
    for chosen in itertools.permutations(range(max(n_ref, n_pred)), n_ref):
        values = [matrix[i, j] for i, j in enumerate(chosen) if j < n_pred and matrix[i, j] > threshold]
        if sum(values) > sum(best):
            best = values
    return best


def segmentation_oracle() -> dict[str, dict[str, float]]:
    """Per case and label, every declared value computed independently of the package."""
    diagonal = float(np.linalg.norm(np.array(SHAPE) * np.array(SPACING)))
    voxel = float(np.prod(SPACING))
    result: dict[str, dict[str, float]] = {}
    for case in REFERENCES:
        numbers = {}
        for label, value in LABELS.items():
            r, p = REFERENCES[case] == value, PREDICTIONS[case] == value
            nr, npred = int(r.sum()), int(p.sum())
            if nr and npred:
                distances = surface_distance.compute_surface_distances(r, p, SPACING)
                hd = surface_distance.compute_robust_hausdorff(distances, 100)
                numbers[f"hausdorff_{label}"] = numbers[f"hd_fixed_{label}"] = hd
                numbers[f"masd_{label}"] = float(np.mean(surface_distance.compute_average_surface_distance(distances)))
            elif nr or npred:
                numbers[f"hausdorff_{label}"], numbers[f"hd_fixed_{label}"] = diagonal, 123.0
                numbers[f"masd_{label}"] = 50.0
            else:
                numbers[f"hausdorff_{label}"], numbers[f"hd_fixed_{label}"] = 0.0, 0.5
                numbers[f"masd_{label}"] = float("nan")  # excluded
            numbers[f"vd_{label}"] = abs(npred - nr)
            numbers[f"rvd_{label}"] = (npred - nr) / nr if nr else (9.0 if npred else 0.0)
            numbers[f"vd_mm3_{label}"] = (npred - nr) * voxel
            matrix = ious(r, p)
            pq_matches = matched(matrix, 0.5, "greedy")
            tp, fp, fn = len(pq_matches), matrix.shape[1] - len(pq_matches), matrix.shape[0] - len(pq_matches)
            if tp + fp + fn == 0:
                numbers[f"pq_{label}"], numbers[f"sq_{label}"], numbers[f"rq_{label}"] = 0.5, float("nan"), 1.0
            else:
                rq = tp / (tp + fp / 2 + fn / 2)
                sq = sum(pq_matches) / tp if tp else 0.0
                numbers[f"pq_{label}"], numbers[f"sq_{label}"], numbers[f"rq_{label}"] = sq * rq, sq, rq
            for how in ("greedy", "hungarian"):
                tp = len(matched(matrix, 0.1, how))
                counts = (tp, matrix.shape[1] - tp, matrix.shape[0] - tp)
                numbers[f"f1_{how}_{label}_counts"] = counts
                numbers[f"f1_{how}_{label}"] = 2 * tp / (2 * tp + counts[1] + counts[2]) if sum(counts) else 1.0
        result[case] = numbers
    return result


def test_declared_segmentation_metrics_against_independent_references(tmp_path, evaluate_cli):
    toml, ground_truth, input_dir = segmentation_case(tmp_path, SEGMENTATION)
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert run.exit_code == 0, run.stderr
    metrics, oracle = run.metrics, segmentation_oracle()
    assert oracle["c1"]["f1_greedy_a_counts"] == (1, 1, 1) and oracle["c1"]["f1_hungarian_a_counts"] == (2, 0, 0)
    names = ("hausdorff", "hd_fixed", "masd", "vd", "rvd", "vd_mm3", "pq", "sq", "rq", "f1_greedy", "f1_hungarian")
    for name in names:
        for label in LABELS:
            per_case = [oracle[case][f"{name}_{label}"] for case in REFERENCES]
            for case, expected in zip(REFERENCES, per_case, strict=True):
                got = metrics["case"][case][f"{name}_{label}"]
                if np.isnan(expected):  # "exclude": written as null, left out of the mean
                    assert got is None, (name, case)
                else:
                    assert got == pytest.approx(expected, abs=1e-9), (name, case)
            expected_mean = float(np.nanmean(per_case))
            assert metrics["aggregates"][f"{name}_{label}_mean"] == pytest.approx(expected_mean, abs=1e-9), name
        for how in ("greedy", "hungarian"):
            summed = np.sum([oracle[case][f"f1_{how}_{label}_counts"] for case in REFERENCES], axis=0)
            dataset = 2 * summed[0] / (2 * summed[0] + summed[1] + summed[2])
            assert metrics["aggregates"][f"f1_{how}_{label}_dataset"] == pytest.approx(dataset, abs=1e-9)
    settings = metrics["settings"]["metrics"]
    assert settings["rvd"]["empty_reference"] == 9.0 and settings["f1_hungarian"]["matching"] == "hungarian"
    assert "empty_reference" not in settings["vd"]  # absolute volumes have no edge case


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ('matching = "hungarian"', 'matching = "optimal"', r"metrics\[9\]\.matching: 'optimal' is not one of greedy"),
        ('quality = "sq"', 'quality = "iq"', r"metrics\[7\]\.quality: 'iq' is not one of pq, sq, rq"),
        ("empty_reference = 9.0", 'empty_reference = "inf"', r"metrics\[4\]\.empty_reference: must be a number or"),
        ('volume = "mm3"', 'volume = "mm3"\nempty_reference = 1.0', r"metrics\[5\]\.empty_reference: unknown key"),
        ("no_instances = 0.5", "no_instances = 0.5\niou_threshold = 0.3", r"metrics\[6\]\.iou_threshold: must be in"),
        ("one_empty = 50.0", 'one_empty = "far"', r"metrics\[2\]\.one_empty: must be a number or 'diagonal'"),
        ("labels = { a = 1, b = 2 }", "labels = { a = 1, b = 2 }\ndimension = 2", r"metrics\[0\]\.metric: hausdorff"),
    ],
)
def test_bad_segmentation_declarations_name_the_key(old, new, message):
    assert old in SEGMENTATION
    with pytest.raises(ConfigurationError, match=message):
        parse(SEGMENTATION.replace(old, new, 1), "seg.toml")
