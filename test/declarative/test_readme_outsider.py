"""A challenge declared by an outsider from the README alone, checked against independent references.

Issue 14's acceptance: "A challenge written by someone else from the README's documentation alone ...
evaluates correctly: every catalogue metric equal to its independent reference to 1e-9, each edge case
as declared, a bad declaration refused with a message naming the key." The declarations below were
written from the README section "A new challenge without Python" and its reference table only; the
data are generated here; every number of metrics.json is recomputed with scikit-learn, SciPy,
lifelines, DeepMind ``surface_distance`` or a hand computation written in this file from the README's
definitions (never from the engine). The commands run as an organizer runs them: ``python -m
evaluation.make_input`` builds the platform input, ``python -m evaluation`` evaluates it (a subprocess).
"""

from __future__ import annotations

import json
import math
import shutil
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import SimpleITK as sitk
import surface_distance
from declarative.helpers import (
    IMAGES,
    TOL,
    bootstrap_ci,
    close,
    close_ci,
    detection_data,
    detections,
    ece,
    evaluate,
    evaluate_input,
    froc,
    harrell,
    iou_matrix,
    last_line,
    make_input,
    matched_ious,
    operating_points,
    platform_boxes,
    platform_points,
    run,
    voc_ap,
    write_image,
    write_json,
)
from lifelines.utils import concordance_index
from scipy import ndimage, stats
from sklearn import metrics as skm

# --------------------------------------------------------------------------- running the commands


# --------------------------------------------------------------------------- segmentation

SEGMENTATION = """
name = "outsider-seg"
title = "Organ and tumour segmentation, declared from the README"

[[inputs]]
slug = "mr-image"
name = "{case}_0000.mha"

[cases]
strip = ["_0000"]

[[outputs]]
slug = "organ-segmentation"
kind = "segmentation"
reference = "labels/{case}.mha"
labels = { organ = 1, tumour = 2, cyst = 3 }
missing = "empty-mask"

[[outputs]]
slug = "copy-segmentation"
kind = "segmentation"
reference = "labels/{case}.mha"
labels = { organ = 1, tumour = 2 }
missing = "exclude"

[[metrics]]
metric = "dice"
output = "organ-segmentation"
aggregates = ["mean", "dataset"]
both_empty = 1.0
absent_everywhere = 0.5
bootstrap = true

[[metrics]]
name = "dice_mm3"
metric = "dice"
output = "organ-segmentation"
labels = ["organ", "tumour"]
aggregates = ["dataset"]
volume = "mm3"

[[metrics]]
name = "dice_ex"
metric = "dice"
output = "organ-segmentation"
labels = ["tumour"]
both_empty = "exclude"

[[metrics]]
metric = "iou"
output = "organ-segmentation"
labels = ["organ", "tumour"]
aggregates = ["mean", "dataset"]
group = "seg"
key = { dataset = "iou_{label}", mean = "iou_{label}_avg" }

[[metrics]]
metric = "hd95"
output = "organ-segmentation"
labels = ["organ", "tumour"]
both_empty = 0.0
one_empty = "diagonal"

[[metrics]]
name = "hd95_present"
metric = "hd95"
output = "organ-segmentation"
labels = ["tumour"]
one_empty = 50.0
mean_over = "present"
bootstrap = true

[[metrics]]
metric = "hausdorff"
output = "organ-segmentation"
labels = ["organ", "tumour"]
one_empty = "diagonal"

[[metrics]]
metric = "masd"
output = "organ-segmentation"
labels = ["organ", "tumour"]
one_empty = 40.0
mean_over = "positives"

[[metrics]]
name = "nsd"
metric = "nsd"
output = "organ-segmentation"
labels = ["organ", "tumour"]
tolerance_mm = 1.5
case_key = "surface_dice_{label}"

[[metrics]]
name = "vd_abs"
metric = "volume_difference"
output = "organ-segmentation"
labels = ["organ", "tumour"]

[[metrics]]
name = "vd_signed"
metric = "volume_difference"
output = "organ-segmentation"
labels = ["organ", "tumour"]
absolute = false
volume = "mm3"

[[metrics]]
name = "vd_rel"
metric = "volume_difference"
output = "organ-segmentation"
labels = ["tumour"]
relative = true
empty_reference = 2.5

[[metrics]]
name = "vd_rel_ex"
metric = "volume_difference"
output = "organ-segmentation"
labels = ["tumour"]
relative = true

[[metrics]]
name = "lesion_f1"
metric = "lesion_f1"
output = "organ-segmentation"
labels = ["tumour"]
aggregates = ["dataset", "mean"]
iou_threshold = 0.3
no_lesions = 1.0
bootstrap = true

[[metrics]]
name = "lesion_f1_h"
metric = "lesion_f1"
output = "organ-segmentation"
labels = ["tumour"]
aggregates = ["dataset", "mean"]
matching = "hungarian"
no_lesions = 0.75

[[metrics]]
name = "pq"
metric = "panoptic_quality"
output = "organ-segmentation"
labels = ["tumour"]

[[metrics]]
name = "sq"
metric = "panoptic_quality"
output = "organ-segmentation"
labels = ["tumour"]
quality = "sq"
no_instances = "exclude"

[[metrics]]
name = "rq"
metric = "panoptic_quality"
output = "organ-segmentation"
labels = ["tumour"]
quality = "rq"
no_instances = 0.25

[[metrics]]
name = "pq_06"
metric = "panoptic_quality"
output = "organ-segmentation"
labels = ["tumour"]
iou_threshold = 0.6

[[metrics]]
name = "hd_ex"
metric = "hausdorff"
output = "organ-segmentation"
labels = ["tumour"]
both_empty = "exclude"
one_empty = 30.0

[[metrics]]
name = "nsd_edge"
metric = "nsd"
output = "organ-segmentation"
labels = ["tumour"]
tolerance_mm = 2.0
both_empty = 0.5
one_empty = 0.25

[[metrics]]
name = "iou_present"
metric = "iou"
output = "organ-segmentation"
labels = ["tumour"]
mean_over = "present"

[[metrics]]
name = "dice_positives"
metric = "dice"
output = "organ-segmentation"
labels = ["tumour"]
mean_over = "positives"

[[metrics]]
name = "dice_copy"
metric = "dice"
output = "copy-segmentation"
labels = ["tumour"]

[[metrics]]
name = "dice_mean"
metric = "mean"
of = ["dice_organ_mean", "dice_tumour_mean"]
bootstrap = true

[report]
label_presence = true

[report.counts]
n_cases = "cases"
n_tumour_present = "hd95_present_tumour_mean"

[report.notes]
definition = "Dice per label"

[report.constants]
nsd_tolerance_mm = 1.5
nsd_tolerances_mm = [1.5, 2.0]

[bootstrap]
resamples = 100
seed = 3

[leaderboard]
score = "aggregates.dice_tumour_mean"
scoring_method = "avg"

[[leaderboard.columns]]
title = "Tumour HD95"
path = "aggregates.hd95_tumour_mean"
order = "asc"
"""

# (x, y, z) spacing of each case: anisotropic and different between cases, so the mm3 forms differ
SPACINGS = {
    "c0": (0.7, 0.8, 2.0),
    "c1": (0.9, 0.9, 3.0),
    "c2": (1.1, 0.6, 2.5),
    "c3": (0.8, 1.0, 1.5),
    "c4": (0.6, 0.7, 2.2),
    "c5": (1.0, 1.0, 1.0),
    "c6": (0.75, 0.75, 2.5),
}
SHAPE = (8, 14, 34)  # z, y, x


def organ(rng: np.random.Generator, shift: int = 0, noise: float = 0.0) -> np.ndarray:
    """An ellipsoid in the organ band (y < 8), optionally shifted along x and with flipped voxels."""
    z, y, x = np.indices(SHAPE)
    mask = ((z - 3.5) / 3.2) ** 2 + ((y - 3.5) / 3.4) ** 2 + ((x - 15 - shift) / 11.0) ** 2 <= 1.0
    if noise:
        flip = (rng.random(SHAPE) < noise) & (y < 8)
        mask = mask ^ (flip & ndimage.binary_dilation(mask) & ~ndimage.binary_erosion(mask))
    return mask


def bars(*spans: tuple[int, int]) -> np.ndarray:
    """Tumour lesions as x-intervals of a 2 x 2 bar in the tumour band (y 10-11, z 3-4)."""
    mask = np.zeros(SHAPE, bool)
    for start, stop in spans:
        mask[3:5, 10:12, start:stop] = True
    return mask


def blobs(rng: np.random.Generator, count: int) -> np.ndarray:
    mask = np.zeros(SHAPE, bool)
    for _ in range(count):
        z, y, x = rng.integers(0, 5), rng.integers(9, 12), rng.integers(0, 30)
        mask[z : z + rng.integers(2, 4), y : y + rng.integers(1, 3), x : x + rng.integers(2, 5)] = True
    return mask


def segmentation_cases() -> dict[str, tuple[np.ndarray, np.ndarray | None]]:
    """Reference and prediction label volumes (z, y, x); prediction None = the job has no output."""
    rng = np.random.default_rng(14)
    cases: dict[str, tuple[np.ndarray, np.ndarray | None]] = {}

    def volume(organ_mask: np.ndarray, tumour_mask: np.ndarray) -> np.ndarray:
        out = np.zeros(SHAPE, np.uint8)
        out[organ_mask] = 1
        out[tumour_mask] = 2
        return out

    # c0: greedy and Hungarian lesion matching differ (README: greedy by descending IoU, Hungarian maximum
    # total IoU): reference A = [0, 20), B = [21, 29); prediction Y = [0, 7), X = [8, 29).
    # IoU(X, A) = 12/29 > IoU(X, B) = 8/21 > IoU(Y, A) = 7/20 > 0.3: greedy takes X-A only.
    cases["c0"] = (volume(organ(rng), bars((0, 20), (21, 29))), volume(organ(rng, 1, 0.2), bars((0, 7), (8, 29))))
    cases["c1"] = (volume(organ(rng), bars()), volume(organ(rng, -1, 0.1), bars()))  # no tumour at all
    cases["c2"] = (volume(organ(rng), bars()), volume(organ(rng, 2), bars((5, 9))))  # tumour only predicted
    cases["c3"] = (volume(organ(rng), bars((3, 9), (14, 16))), volume(organ(rng, 0, 0.3), bars()))  # missed
    cases["c4"] = (volume(organ(rng), blobs(rng, 3)), volume(organ(rng, 1, 0.1), blobs(rng, 3)))
    reference5 = blobs(rng, 4)
    cases["c5"] = (volume(organ(rng), reference5), volume(organ(rng, -2), reference5 | blobs(rng, 1)))
    cases["c6"] = (volume(organ(rng), bars((2, 12))), None)  # no job: missing = "empty-mask"
    return cases


def segmentation_oracle(reference: np.ndarray, prediction: np.ndarray, spacing_xyz) -> dict[str, Any]:
    """Every per-case number, per label, from the README's definitions and DeepMind surface_distance."""
    spacing = tuple(reversed(spacing_xyz))  # arrays are z, y, x
    voxel = float(np.prod(spacing))
    diagonal = float(np.sqrt(sum((n * s) ** 2 for n, s in zip(SHAPE, spacing, strict=True))))
    out: dict[str, Any] = {"diagonal": diagonal}
    for label, value in {"organ": 1, "tumour": 2, "cyst": 3}.items():
        r, p = reference == value, prediction == value
        nr, np_, ni = int(r.sum()), int(p.sum()), int((r & p).sum())
        d: dict[str, Any] = {"r": nr, "p": np_, "i": ni, "voxel": voxel, "present": bool(nr or np_), "ref": nr > 0}
        d["dice"] = 2 * ni / (nr + np_) if nr + np_ else None
        d["iou"] = ni / (nr + np_ - ni) if nr + np_ else None
        if nr and np_:
            sd = surface_distance.compute_surface_distances(r, p, spacing)
            d["hd95"] = float(surface_distance.compute_robust_hausdorff(sd, 95))
            d["hausdorff"] = float(surface_distance.compute_robust_hausdorff(sd, 100))
            d["masd"] = float(np.mean(surface_distance.compute_average_surface_distance(sd)))
            d["nsd"] = float(surface_distance.compute_surface_dice_at_tolerance(sd, 1.5))
            d["nsd_2"] = float(surface_distance.compute_surface_dice_at_tolerance(sd, 2.0))
        else:
            d["hd95"] = d["hausdorff"] = d["masd"] = d["nsd"] = d["nsd_2"] = None
        d["vd_abs"] = float(abs(np_ - nr))
        d["vd_signed"] = (np_ - nr) * voxel
        d["vd_rel"] = abs(np_ - nr) / nr if nr else None
        matrix = iou_matrix(r, p)
        for how in ("greedy", "hungarian"):
            tp = len(matched_ious(matrix, 0.3, how))
            d[f"lesion_{how}"] = (tp, matrix.shape[1] - tp, matrix.shape[0] - tp)
        for suffix, threshold in (("", 0.5), ("_06", 0.6)):
            pq_matches = matched_ious(matrix, threshold, "greedy")
            tp, fp, fn = len(pq_matches), matrix.shape[1] - len(pq_matches), matrix.shape[0] - len(pq_matches)
            if tp + fp + fn == 0:
                d["sq" + suffix] = d["rq" + suffix] = d["pq" + suffix] = None
            else:
                d["sq" + suffix] = float(np.mean(pq_matches)) if tp else 0.0
                d["rq" + suffix] = tp / (tp + 0.5 * fp + 0.5 * fn)
                d["pq" + suffix] = d["sq" + suffix] * d["rq" + suffix]
        out[label] = d
    return out


@pytest.fixture(scope="module")
def segmentation_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("seg")
    declaration = root / "outsider-seg.toml"
    declaration.write_text(SEGMENTATION)
    oracle = {}
    for case, (reference, prediction) in segmentation_cases().items():
        write_image(reference, SPACINGS[case], root / "gt" / "labels" / f"{case}.mha")
        if prediction is not None:
            write_image(prediction, SPACINGS[case], root / "outputs" / case / "images" / "organ-segmentation" / "x.mha")
            write_image(prediction, SPACINGS[case], root / "outputs" / case / "images" / "copy-segmentation" / "y.mha")
        oracle[case] = segmentation_oracle(
            reference, np.zeros(SHAPE) if prediction is None else prediction, SPACINGS[case]
        )
    done, metrics = evaluate(declaration, root / "outputs", root / "gt", root)
    assert done.returncode == 0, done.stderr
    return metrics, oracle, root, declaration


def mean(values: list[float]) -> float:
    return float(np.mean(values))


def per_case(oracle, label: str, key: str, both: Any, one: Any = None, over: str = "all") -> tuple[dict, list]:
    """Per-case values with the declared edge values, and the list the mean form averages."""
    values, averaged = {}, []
    for case, numbers in oracle.items():
        d = numbers[label]
        value = d[key]
        if value is None:
            value = both if not d["present"] else (numbers["diagonal"] if one == "diagonal" else one)
        values[case] = value
        if value == "exclude" or (over == "present" and not d["present"]) or (over == "positives" and not d["ref"]):
            continue
        averaged.append(value)
    return values, averaged


def test_segmentation_metrics_equal_independent_references(segmentation_run):
    metrics, oracle, _, _ = segmentation_run
    agg, case = metrics["aggregates"], metrics["case"]
    labels = ("organ", "tumour")
    # Dice: per case, mean (both_empty 1.0) and dataset 2ΣI / Σ(|R|+|P|) (absent_everywhere 0.5 for the cyst)
    for label in (*labels, "cyst"):
        values, averaged = per_case(oracle, label, "dice", 1.0)
        for c, v in values.items():
            close(case[c][f"dice_{label}"], v, f"case {c} dice_{label}")
        close(agg[f"dice_{label}_mean"], mean(averaged), f"dice_{label}_mean")
        i = sum(o[label]["i"] for o in oracle.values())
        s = sum(o[label]["r"] + o[label]["p"] for o in oracle.values())
        close(agg[f"dice_{label}_dataset"], 2 * i / s if s else 0.5, f"dice_{label}_dataset")
        per = np.array([values[c] for c in sorted(oracle)])
        close_ci(agg, f"dice_{label}_mean", bootstrap_ci(lambda d, per=per: per[d].mean(), 7, 100, 3, 0.95))
        parts = np.array(
            [[oracle[c][label]["i"], oracle[c][label]["r"] + oracle[c][label]["p"]] for c in sorted(oracle)]
        )

        def dataset(d, parts=parts):
            i, s = parts[d].sum(axis=0)
            return 2 * i / s if s else 0.5

        close_ci(agg, f"dice_{label}_dataset", bootstrap_ci(dataset, 7, 100, 3, 0.95))
    # mm3 dataset Dice weighs each case by its voxel volume
    for label in labels:
        i = sum(o[label]["i"] * o[label]["voxel"] for o in oracle.values())
        s = sum((o[label]["r"] + o[label]["p"]) * o[label]["voxel"] for o in oracle.values())
        close(agg[f"dice_mm3_{label}_dataset"], 2 * i / s, f"dice_mm3_{label}_dataset")
    # both_empty = "exclude": the mean skips c1 (no tumour anywhere)
    _, averaged = per_case(oracle, "tumour", "dice", "exclude")
    close(agg["dice_ex_tumour_mean"], mean(averaged), "dice_ex_tumour_mean")
    # IoU under group and key templates
    for label in labels:
        _, averaged = per_case(oracle, label, "iou", 1.0)
        close(agg["seg"][f"iou_{label}_avg"], mean(averaged), f"seg.iou_{label}_avg")
        i = sum(o[label]["i"] for o in oracle.values())
        u = sum(o[label]["r"] + o[label]["p"] - o[label]["i"] for o in oracle.values())
        close(agg["seg"][f"iou_{label}"], i / u, f"seg.iou_{label}")
    # surface distances (DeepMind), edge values as declared
    for name, key, both, one, over in (
        ("hd95", "hd95", 0.0, "diagonal", "all"),
        ("hausdorff", "hausdorff", 0.0, "diagonal", "all"),
        ("masd", "masd", 0.0, 40.0, "positives"),
        ("nsd", "nsd", 1.0, 0.0, "all"),
    ):
        for label in labels:
            values, averaged = per_case(oracle, label, key, both, one, over)
            case_key = f"surface_dice_{label}" if name == "nsd" else f"{name}_{label}"
            for c, v in values.items():
                close(case[c][case_key], v, f"case {c} {case_key}")
            close(agg[f"{name}_{label}_mean"], mean(averaged), f"{name}_{label}_mean")
    values, averaged = per_case(oracle, "tumour", "hd95", 0.0, 50.0, "present")
    close(agg["hd95_present_tumour_mean"], mean(averaged), "hd95_present_tumour_mean")
    # its CI draws over all cases and averages the drawn cases that have the label (none: left out)
    hd = np.array([values[c] for c in sorted(oracle)])
    present = np.array([oracle[c]["tumour"]["present"] for c in sorted(oracle)])
    ci = bootstrap_ci(lambda d: hd[d][present[d]].mean() if present[d].any() else None, 7, 100, 3, 0.95)
    close_ci(agg, "hd95_present_tumour_mean", ci)
    # volume differences
    for label in labels:
        close(agg[f"vd_abs_{label}_mean"], mean([o[label]["vd_abs"] for o in oracle.values()]), f"vd_abs_{label}")
        close(agg[f"vd_signed_{label}_mean"], mean([o[label]["vd_signed"] for o in oracle.values()]), "vd_signed")
    rel = [
        o["tumour"]["vd_rel"] if o["tumour"]["r"] else (0.0 if not o["tumour"]["p"] else 2.5) for o in oracle.values()
    ]
    close(agg["vd_rel_tumour_mean"], mean(rel), "vd_rel_tumour_mean")
    rel = [
        o["tumour"]["vd_rel"] if o["tumour"]["r"] else 0.0
        for o in oracle.values()
        if o["tumour"]["r"] or not o["tumour"]["p"]
    ]
    close(agg["vd_rel_ex_tumour_mean"], mean(rel), "vd_rel_ex_tumour_mean")
    # lesion-wise F1, greedy and Hungarian
    assert oracle["c0"]["tumour"]["lesion_greedy"] == (1, 1, 1) and oracle["c0"]["tumour"]["lesion_hungarian"] == (
        2,
        0,
        0,
    )
    for name, how, none in (("lesion_f1", "greedy", 1.0), ("lesion_f1_h", "hungarian", 0.75)):
        f1s, sums = [], np.zeros(3)
        for c, o in oracle.items():
            tp, fp, fn = o["tumour"][f"lesion_{how}"]
            sums += (tp, fp, fn)
            f1 = 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else none
            f1s.append(f1)
            close(case[c][f"{name}_tumour"], f1, f"case {c} {name}_tumour")
            assert (case[c][f"{name}_tumour_tp"], case[c][f"{name}_tumour_fp"], case[c][f"{name}_tumour_fn"]) == (
                tp,
                fp,
                fn,
            )
        close(agg[f"{name}_tumour_mean"], mean(f1s), f"{name}_tumour_mean")
        close(agg[f"{name}_tumour_dataset"], 2 * sums[0] / (2 * sums[0] + sums[1] + sums[2]), f"{name}_tumour_dataset")
    # panoptic quality and its factors (no_instances: pq 1.0 default, sq exclude, rq 0.25)
    for name, none in (("pq", 1.0), ("sq", "exclude"), ("rq", 0.25)):
        values = [o["tumour"][name] if o["tumour"][name] is not None else none for o in oracle.values()]
        close(agg[f"{name}_tumour_mean"], mean([v for v in values if v != "exclude"]), f"{name}_tumour_mean")
    # PQ at 0.6, edge values of Hausdorff and NSD, present / positive means
    values = [o["tumour"]["pq_06"] if o["tumour"]["pq_06"] is not None else 1.0 for o in oracle.values()]
    close(agg["pq_06_tumour_mean"], mean(values), "pq_06_tumour_mean")
    _, averaged = per_case(oracle, "tumour", "hausdorff", "exclude", 30.0)
    close(agg["hd_ex_tumour_mean"], mean(averaged), "hd_ex_tumour_mean")
    _, averaged = per_case(oracle, "tumour", "nsd_2", 0.5, 0.25)
    close(agg["nsd_edge_tumour_mean"], mean(averaged), "nsd_edge_tumour_mean")
    _, averaged = per_case(oracle, "tumour", "iou", 1.0, over="present")
    close(agg["iou_present_tumour_mean"], mean(averaged), "iou_present_tumour_mean")
    _, averaged = per_case(oracle, "tumour", "dice", 1.0, over="positives")
    close(agg["dice_positives_tumour_mean"], mean(averaged), "dice_positives_tumour_mean")
    # the second output's missing = "exclude": the case without a job leaves its metrics
    _, averaged = per_case({c: o for c, o in oracle.items() if c != "c6"}, "tumour", "dice", 1.0)
    close(agg["dice_copy_tumour_mean"], mean(averaged), "dice_copy_tumour_mean")
    assert metrics["missing"]["copy-segmentation"] == ["c6"]
    assert metrics["settings"]["nsd_tolerances_mm"] == [1.5, 2.0]
    # the mean of two aggregates, and the report's counts, presence flags, notes and constants
    close(agg["dice_mean"], (agg["dice_organ_mean"] + agg["dice_tumour_mean"]) / 2, "dice_mean")
    organ = np.array([per_case(oracle, "organ", "dice", 1.0)[0][c] for c in sorted(oracle)])
    tumour = np.array([per_case(oracle, "tumour", "dice", 1.0)[0][c] for c in sorted(oracle)])
    close_ci(agg, "dice_mean", bootstrap_ci(lambda d: (organ[d].mean() + tumour[d].mean()) / 2, 7, 100, 3, 0.95))
    counts = np.array([oracle[c]["tumour"]["lesion_greedy"] for c in sorted(oracle)])
    f1 = np.array([case[c]["lesion_f1_tumour"] for c in sorted(oracle)])  # each checked above

    def summed_f1(d):
        tp, fp, fn = counts[d].sum(axis=0)
        return 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else None

    close_ci(agg, "lesion_f1_tumour_dataset", bootstrap_ci(summed_f1, 7, 100, 3, 0.95))
    close_ci(agg, "lesion_f1_tumour_mean", bootstrap_ci(lambda d: f1[d].mean(), 7, 100, 3, 0.95))
    assert agg["n_cases"] == 7
    assert agg["n_tumour_present"] == sum(o["tumour"]["present"] for o in oracle.values())
    for c, o in oracle.items():
        assert case[c]["tumour_in_reference"] is o["tumour"]["ref"]
        assert case[c]["cyst_in_reference"] is False
    assert metrics["settings"]["definition"] == "Dice per label"
    assert metrics["settings"]["nsd_tolerance_mm"] == 1.5
    assert metrics["missing"]["organ-segmentation"] == ["c6"]


# --------------------------------------------------------------------------- case-level values

VALUES = """
name = "outsider-values"
title = "Case-level values declared from the README"

[[inputs]]
slug = "ct-image"

[cases]
id_column = "patient"

[[outputs]]
slug = "likelihood"
kind = "number"
reference = "clinical.csv:malignant"
range = [0, 1]
missing = "worst-value"

[[outputs]]
slug = "size"
kind = "number"
reference = "clinical.csv:size"
blank = "skip"
blank_values = ["", "na"]
missing = "exclude"

[[outputs]]
slug = "risk"
kind = "number"
reference = "clinical.csv:time"
event = "clinical.csv:event"
missing = "non-concordant"

[[outputs]]
slug = "predicted-time"
kind = "number"
reference = "clinical.csv:time"
event = "clinical.csv:event"
unit = "days"
missing = "tie"

[[outputs]]
slug = "malignant"
kind = "boolean"
reference = "clinical.csv:mal"
missing = "misclassification"

[[outputs]]
slug = "grade"
kind = "choice"
reference = "clinical.csv:grade"
classes = ["low", "mid", "high"]
missing = "exclude"

[[outputs]]
slug = "allpos"
kind = "number"
reference = "clinical.csv:allone"
range = [0, 1]

[[outputs]]
slug = "allneg"
kind = "number"
reference = "clinical.csv:allzero"
range = [0, 1]

[[outputs]]
slug = "flat"
kind = "number"
reference = "clinical.csv:time"

[[outputs]]
slug = "nocomp"
kind = "number"
reference = "clinical.csv:time"
event = "clinical.csv:noevent"

[[outputs]]
slug = "same"
kind = "boolean"
reference = "clinical.csv:allyes"
true_values = ["y"]
false_values = ["n"]

[[metrics]]
metric = "auroc"
output = "likelihood"
bootstrap = true

[[metrics]]
name = "ap"
metric = "average_precision"
output = "likelihood"

[[metrics]]
metric = "brier"
output = "likelihood"
bootstrap = true

[[metrics]]
metric = "ece"
output = "likelihood"
bins = 5

[[metrics]]
metric = "sensitivity"
output = "likelihood"
threshold = 0.5

[[metrics]]
metric = "specificity"
output = "likelihood"
threshold = 0.5

[[metrics]]
name = "sens_at_spec"
metric = "sensitivity_at_specificity"
output = "likelihood"
target = 0.8

[[metrics]]
name = "spec_at_sens"
metric = "specificity_at_sensitivity"
output = "likelihood"
target = 0.9

[[metrics]]
metric = "mae"
output = "size"
bootstrap = true

[[metrics]]
metric = "rmse"
output = "size"

[[metrics]]
metric = "pearson"
output = "size"

[[metrics]]
metric = "spearman"
output = "size"

[[metrics]]
name = "c_index"
metric = "c_index"
output = "risk"
sign = "risk"
bootstrap = true

[[metrics]]
name = "c_index_time"
metric = "c_index"
output = "predicted-time"
sign = "time"

[[metrics]]
name = "balanced_accuracy"
metric = "balanced_accuracy"
output = "malignant"
bootstrap = true

[[metrics]]
name = "accuracy"
metric = "accuracy"
output = "malignant"

[[metrics]]
name = "kappa_bool"
metric = "cohen_kappa"
output = "malignant"

[[metrics]]
name = "kappa"
metric = "cohen_kappa"
output = "grade"
weights = "none"

[[metrics]]
name = "kappa_linear"
metric = "cohen_kappa"
output = "grade"
weights = "linear"

[[metrics]]
name = "kappa_quadratic"
metric = "cohen_kappa"
output = "grade"
weights = "quadratic"
group = "grading"
key = "qwk"

[[metrics]]
name = "grade_bacc"
metric = "balanced_accuracy"
output = "grade"

[[metrics]]
name = "grade_accuracy"
metric = "accuracy"
output = "grade"

[[metrics]]
name = "auroc_single"
metric = "auroc"
output = "allpos"
single_class = 0.5

[[metrics]]
name = "ap_all_positive"
metric = "average_precision"
output = "allpos"

[[metrics]]
name = "spec_no_negative"
metric = "specificity"
output = "allpos"
threshold = 0.5
no_negative = 0.25

[[metrics]]
name = "sens_at_spec_single"
metric = "sensitivity_at_specificity"
output = "allpos"
target = 0.5
single_class = 0.125

[[metrics]]
name = "ap_no_positive"
metric = "average_precision"
output = "allneg"
no_positive = 0.0

[[metrics]]
name = "sens_no_positive"
metric = "sensitivity"
output = "allneg"
threshold = 0.5
no_positive = 0.75

[[metrics]]
name = "pearson_constant"
metric = "pearson"
output = "flat"
constant = 0.5

[[metrics]]
name = "spearman_constant"
metric = "spearman"
output = "flat"
constant = -0.5

[[metrics]]
name = "c_index_none"
metric = "c_index"
output = "nocomp"
no_comparable_pair = 0.5

[[metrics]]
name = "kappa_perfect"
metric = "cohen_kappa"
output = "same"
perfect_chance = 0.9

[[metrics]]
name = "combined"
metric = "mean"
of = ["auroc", "balanced_accuracy"]
bootstrap = true

[[options]]
name = "ece_bins"
default = 5
sets = ["metrics.ece.bins"]
help = "ECE bins"

[report]
notes_first = true

[report.missing_names]
likelihood = "lik"

[report.counts]
n_cases = "cases"

[report.notes]
about = "values"

[bootstrap]
resamples = 200
seed = 0
level = 0.9

[leaderboard]
score = "aggregates.auroc"
title = "AUROC"
sort = "desc"
decimal_places = 3
scoring_method = "med"

[[leaderboard.columns]]
title = "C-index"
path = "aggregates.c_index"

[[leaderboard.columns]]
title = "Brier"
path = "aggregates.brier"
order = "asc"
exclude_from_ranking = true
"""

N_VALUES = 24
PATIENTS = [f"P{k:02d}" for k in range(1, N_VALUES + 1)]
MISSING = {
    "likelihood": "P05",
    "size": "P07",
    "risk": "P09",
    "predicted-time": "P10",
    "malignant": "P11",
    "grade": "P12",
}
BLANK_SIZE = "P03"  # a blank ("na") reference size: not scored for that output


def value_data() -> dict[str, Any]:
    rng = np.random.default_rng(2026)
    y = np.array([1, 0] * (N_VALUES // 2))
    rng.shuffle(y)
    likelihood = np.clip(np.round(0.3 * y + rng.random(N_VALUES) * 0.7, 1), 0, 1)  # ties, 0.0 and bin edges
    likelihood[0], likelihood[1] = 0.0, 0.4
    size = np.round(rng.normal(30, 8, N_VALUES), 1)
    size_answer = size + np.round(rng.normal(0, 4, N_VALUES), 1)
    size_answer[4] = size_answer[5]  # a tie in the answers (Spearman's average ranks)
    time = rng.integers(10, 60, N_VALUES).astype(float)
    time[3] = time[2]  # tied times
    event = rng.integers(0, 2, N_VALUES)
    event[2], event[3] = 1, 0  # an event and a censoring at the same time
    risk = np.round(-time / 10 + rng.normal(0, 2, N_VALUES), 0)  # ties in the answers
    predicted_time = np.abs(time + rng.normal(0, 15, N_VALUES)).round(0)
    mal = rng.integers(0, 2, N_VALUES).astype(bool)
    mal_answer = np.where(rng.random(N_VALUES) < 0.75, mal, ~mal)
    grades = np.array(["low", "mid", "high"])
    grade = rng.integers(0, 3, N_VALUES)
    grade_answer = np.clip(grade + rng.integers(-1, 2, N_VALUES), 0, 2)
    return {
        "y": y,
        "likelihood": likelihood,
        "size": size,
        "size_answer": size_answer,
        "time": time,
        "event": event,
        "risk": risk,
        "predicted_time": predicted_time,
        "mal": mal,
        "mal_answer": mal_answer,
        "grade": grades[grade],
        "grade_answer": grades[grade_answer],
        "allpos": rng.random(N_VALUES).round(2),
        "allneg": rng.random(N_VALUES).round(2),
        "nocomp": rng.random(N_VALUES),
    }


def write_values(root: Path, data: dict[str, Any], drop: dict[str, str] = MISSING) -> None:
    rows = ["patient,malignant,size,time,event,mal,grade,allone,allzero,noevent,allyes"]
    for k, p in enumerate(PATIENTS):
        size = "na" if p == BLANK_SIZE else f"{data['size'][k]}"
        mal = "yes" if data["mal"][k] else "no"
        rows.append(
            f"{p},{data['y'][k]},{size},{data['time'][k]},{data['event'][k]},{mal},{data['grade'][k]},1,0.0,0,Y"
        )
    (root / "gt").mkdir(parents=True, exist_ok=True)
    (root / "gt" / "clinical.csv").write_text("\n".join(rows) + "\n")
    for k, p in enumerate(PATIENTS):
        answers = {
            "likelihood": float(data["likelihood"][k]),
            "size": float(data["size_answer"][k]),
            "risk": float(data["risk"][k]),
            "predicted-time": float(data["predicted_time"][k]),
            "malignant": bool(data["mal_answer"][k]),
            "grade": str(data["grade_answer"][k]),
            "allpos": float(data["allpos"][k]),
            "allneg": float(data["allneg"][k]),
            "flat": 3.0,
            "nocomp": float(data["nocomp"][k]),
            "same": True,
        }
        for slug, value in answers.items():
            if drop.get(slug) != p:
                write_json(root / "outputs" / p / f"{slug}.json", value)


def value_oracle(data: dict[str, Any], bins: int = 5) -> dict[str, float]:
    k_of = {p: k for k, p in enumerate(PATIENTS)}
    y = data["y"]
    lik = data["likelihood"].copy()
    k = k_of[MISSING["likelihood"]]
    lik[k] = 0.0 if y[k] == 1 else 1.0  # worst value: the end of the range farthest from the reference
    fpr, tpr, _ = skm.roc_curve(y, lik, drop_intermediate=False)
    out = {
        "auroc": skm.roc_auc_score(y, lik),
        "ap": skm.average_precision_score(y, lik),
        "brier": skm.brier_score_loss(y, lik),
        "ece": ece(y, lik, bins),
        "sensitivity": skm.recall_score(y, lik >= 0.5),
        "specificity": skm.recall_score(y, lik >= 0.5, pos_label=0),
        "sens_at_spec": tpr[(1 - fpr) >= 0.8].max(),
        "spec_at_sens": (1 - fpr)[tpr >= 0.9].max(),
    }
    keep = [k for k, p in enumerate(PATIENTS) if p not in (MISSING["size"], BLANK_SIZE)]
    ref, ans = data["size"][keep], data["size_answer"][keep]
    out["mae"] = skm.mean_absolute_error(ref, ans)
    out["rmse"] = math.sqrt(skm.mean_squared_error(ref, ans))
    out["pearson"] = stats.pearsonr(ref, ans)[0]
    out["spearman"] = stats.spearmanr(ref, ans)[0]
    time, event = data["time"], data["event"].astype(bool)
    # the pair counting agrees with lifelines on complete answers; then the two missing policies
    assert math.isclose(harrell(time, event, data["risk"]), concordance_index(time, -data["risk"], event), rel_tol=TOL)
    out["c_index"] = harrell(time, event, data["risk"], {k_of[MISSING["risk"]]}, 0.0)
    out["c_index_time"] = harrell(time, event, -data["predicted_time"], {k_of[MISSING["predicted-time"]]}, 0.5)
    k = k_of[MISSING["malignant"]]
    mal_true = np.where(data["mal"], "true", "false")
    mal_answer = np.where(data["mal_answer"], "true", "false").astype(object)
    mal_answer[k] = "missing"  # misclassification: a wrong answer, a class of its own for kappa
    out["balanced_accuracy"] = skm.balanced_accuracy_score(mal_true, mal_answer)
    out["accuracy"] = skm.accuracy_score(mal_true, mal_answer)
    out["kappa_bool"] = skm.cohen_kappa_score(mal_true, mal_answer)
    keep = [k for k, p in enumerate(PATIENTS) if p != MISSING["grade"]]
    g, a = data["grade"][keep], data["grade_answer"][keep]
    order = ["low", "mid", "high"]
    out["kappa"] = skm.cohen_kappa_score(g, a, labels=order)
    out["kappa_linear"] = skm.cohen_kappa_score(g, a, labels=order, weights="linear")
    out["kappa_quadratic"] = skm.cohen_kappa_score(g, a, labels=order, weights="quadratic")
    out["grade_bacc"] = skm.balanced_accuracy_score(g, a)
    out["grade_accuracy"] = skm.accuracy_score(g, a)
    # the declared edge values
    out.update(
        auroc_single=0.5,
        ap_all_positive=1.0,
        spec_no_negative=0.25,
        sens_at_spec_single=0.125,
        ap_no_positive=0.0,
        sens_no_positive=0.75,
        pearson_constant=0.5,
        spearman_constant=-0.5,
        c_index_none=0.5,
        kappa_perfect=0.9,
    )
    out["combined"] = (out["auroc"] + out["balanced_accuracy"]) / 2
    return out


def value_cis(data: dict[str, Any], resamples: int, seed: int, level: float) -> dict[str, tuple[float, float]]:
    """The bootstrapped value metrics' intervals, each statistic recomputed on the drawn cases."""
    y = data["y"]
    lik = data["likelihood"].copy()
    k = PATIENTS.index(MISSING["likelihood"])
    lik[k] = 0.0 if y[k] == 1 else 1.0
    mal_true = np.where(data["mal"], "true", "false")
    mal_answer = np.where(data["mal_answer"], "true", "false").astype(object)
    mal_answer[PATIENTS.index(MISSING["malignant"])] = "missing"
    time, event, risk = data["time"], data["event"].astype(bool), data["risk"]
    missing_risk = PATIENTS.index(MISSING["risk"])

    scored = [k for k, p in enumerate(PATIENTS) if p not in (MISSING["size"], BLANK_SIZE)]  # the cases mae scores
    size, size_answer = data["size"][scored], data["size_answer"][scored]

    def auroc(d):
        return skm.roc_auc_score(y[d], lik[d]) if len(set(y[d])) == 2 else None

    def c_index(d):
        return harrell(time[d], event[d], risk[d], set(np.flatnonzero(d == missing_risk)), 0.0)

    def combined(d):
        a = auroc(d)
        return None if a is None else (a + skm.balanced_accuracy_score(mal_true[d], mal_answer[d])) / 2

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "y_pred contains classes not in y_true": the missing answer's class
        return {
            "auroc": bootstrap_ci(auroc, N_VALUES, resamples, seed, level),
            "mae": bootstrap_ci(
                lambda d: np.mean(np.abs(size[d] - size_answer[d])), len(scored), resamples, seed, level
            ),
            "brier": bootstrap_ci(lambda d: np.mean((lik[d] - y[d]) ** 2), N_VALUES, resamples, seed, level),
            "c_index": bootstrap_ci(c_index, N_VALUES, resamples, seed, level),
            "balanced_accuracy": bootstrap_ci(
                lambda d: skm.balanced_accuracy_score(mal_true[d], mal_answer[d]), N_VALUES, resamples, seed, level
            ),
            "combined": bootstrap_ci(combined, N_VALUES, resamples, seed, level),
        }


@pytest.fixture(scope="module")
def values_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("values")
    declaration = root / "outsider-values.toml"
    declaration.write_text(VALUES)
    data = value_data()
    write_values(root, data)
    done, metrics = evaluate(declaration, root / "outputs", root / "gt", root)
    assert done.returncode == 0, done.stderr
    return metrics, data, root, declaration


def test_value_metrics_equal_independent_references(values_run):
    metrics, data, _, _ = values_run
    agg = metrics["aggregates"]
    oracle = value_oracle(data)
    for name, expected in oracle.items():
        actual = agg["grading"]["qwk"] if name == "kappa_quadratic" else agg[name]
        close(actual, expected, name)
    for key, ci in value_cis(data, 200, 0, 0.9).items():
        close_ci(agg, key, ci)
    assert agg["n_cases"] == N_VALUES
    # the report: a renamed missing list, notes first, the participant's own values (null when missing)
    assert metrics["missing"]["lik"] == [MISSING["likelihood"]]
    assert metrics["missing"]["grade"] == [MISSING["grade"]]
    assert list(metrics["settings"])[:2] == ["challenge", "about"]
    assert metrics["case"][MISSING["likelihood"]]["likelihood"] is None
    assert metrics["case"]["P01"]["likelihood"] == data["likelihood"][0]


def test_options_change_what_they_set(values_run):
    _, data, root, declaration = values_run
    done, metrics = evaluate(declaration, root / "outputs", root / "gt", root, "--set", "ece_bins=8")
    assert done.returncode == 0, done.stderr
    close(metrics["aggregates"]["ece"], value_oracle(data, bins=8)["ece"], "ece with 8 bins")
    assert metrics["settings"]["ece_bins"] == 8
    done, metrics = evaluate(
        declaration, root / "outputs", root / "gt", root, "--set", "seed=5", "--set", "bootstrap_resamples=60"
    )
    assert done.returncode == 0, done.stderr
    assert (metrics["settings"]["seed"], metrics["settings"]["bootstrap_resamples"]) == (5, 60)
    for key, ci in value_cis(data, 60, 5, 0.9).items():
        close_ci(metrics["aggregates"], key, ci)


# --------------------------------------------------------------------------- detection

DETECTION = """
name = "outsider-detection"
title = "Cell detection declared from the README"

[[inputs]]
slug = "histopathology-image"

[[outputs]]
slug = "cells"
kind = "boxes"
reference = "boxes/{case}.json"

[[outputs]]
slug = "nuclei"
kind = "points"
reference = "points/{case}.json"
missing = "exclude"

[[outputs]]
slug = "nothing"
kind = "boxes"
reference = "empty/{case}.json"

[[metrics]]
name = "ap"
metric = "detection_average_precision"
output = "cells"
match = "iou"
threshold = 0.5

[[metrics]]
name = "ap_hungarian"
metric = "detection_average_precision"
output = "cells"
matching = "hungarian"
threshold = 0.3

[[metrics]]
name = "ap_distance"
metric = "detection_average_precision"
output = "cells"
match = "distance"
threshold = 6.0
bootstrap = true

[[metrics]]
name = "recall_at_precision"
metric = "recall_at_precision"
output = "cells"
precision = 0.6

[[metrics]]
name = "froc"
metric = "froc"
output = "cells"

[[metrics]]
name = "froc_distance_negative"
metric = "froc"
output = "cells"
match = "distance"
threshold = 6.0
matching = "hungarian"
fp_rates = [0.25, 0.5, 1, 2]
fp_images = "negative"

[[metrics]]
name = "points_froc"
metric = "froc"
output = "nuclei"
match = "distance"
threshold = 5.0
fp_rates = [0.5, 1, 2]

[[metrics]]
name = "points_ap"
metric = "detection_average_precision"
output = "nuclei"
match = "distance"
threshold = 5.0

[[metrics]]
name = "ap_no_reference"
metric = "detection_average_precision"
output = "nothing"
no_reference = 0.25

[[metrics]]
name = "froc_no_reference"
metric = "froc"
output = "nothing"
no_reference = 0.125

[[metrics]]
name = "detection_mean"
metric = "mean"
of = ["ap", "froc"]

[bootstrap]
resamples = 100
seed = 7

[leaderboard]
score = "aggregates.froc"
"""


def test_detection_metrics_equal_independent_references(tmp_path):
    ref_boxes, pred_boxes, ref_points, pred_points = detection_data()
    declaration = tmp_path / "outsider-detection.toml"
    declaration.write_text(DETECTION)
    for k, image in enumerate(IMAGES):
        # the reference in both documented forms; the submission too
        write_json(
            tmp_path / "gt" / "boxes" / f"{image}.json", platform_boxes(ref_boxes[image]) if k % 2 else ref_boxes[image]
        )
        write_json(tmp_path / "gt" / "points" / f"{image}.json", ref_points[image])
        write_json(tmp_path / "gt" / "empty" / f"{image}.json", [])
        job = tmp_path / "outputs" / image
        write_json(job / "cells.json", platform_boxes(pred_boxes[image]) if k % 2 == 0 else pred_boxes[image])
        if image != "img3":  # missing = "exclude": img3 leaves the points' image set
            write_json(job / "nuclei.json", platform_points(pred_points[image]))
        write_json(job / "nothing.json", pred_boxes[image][:1])
    done, metrics = evaluate(declaration, tmp_path / "outputs", tmp_path / "gt", tmp_path)
    assert done.returncode == 0, done.stderr
    agg = metrics["aggregates"]
    n = len(IMAGES)
    negative = {image for image in IMAGES if not ref_boxes[image]}

    greedy_iou = detections(ref_boxes, pred_boxes, "iou", 0.5)
    close(agg["ap"], voc_ap(*greedy_iou[:2], greedy_iou[3]), "ap")
    points = operating_points(*greedy_iou, None, n)
    close(agg["froc"], froc(points, [1, 2, 4, 8, 16, 32]), "froc")
    qualified = [recall for recall, precision, _ in points if precision >= 0.6]
    close(agg["recall_at_precision"], max(qualified, default=0.0), "recall_at_precision")
    hungarian = detections(ref_boxes, pred_boxes, "iou", 0.3, "hungarian")
    close(agg["ap_hungarian"], voc_ap(*hungarian[:2], hungarian[3]), "ap_hungarian")
    distance = detections(ref_boxes, pred_boxes, "distance", 6.0)
    close(agg["ap_distance"], voc_ap(*distance[:2], distance[3]), "ap_distance")
    by_image = {image: k for k, image in enumerate(IMAGES)}

    def resampled_ap(d):
        refs = {f"{j}": ref_boxes[IMAGES[k]] for j, k in enumerate(d)}
        preds = {f"{j}": pred_boxes[IMAGES[k]] for j, k in enumerate(d)}
        s, f, _, m = detections(refs, preds, "distance", 6.0)
        return voc_ap(s, f, m) if m else None

    assert by_image
    close_ci(agg, "ap_distance", bootstrap_ci(resampled_ap, n, 100, 7, 0.95))
    hungarian_distance = detections(ref_boxes, pred_boxes, "distance", 6.0, "hungarian")
    points = operating_points(*hungarian_distance, negative, n)
    close(agg["froc_distance_negative"], froc(points, [0.25, 0.5, 1, 2]), "froc_distance_negative")
    kept = [image for image in IMAGES if image != "img3"]
    point_refs = {image: ref_points[image] for image in kept}
    point_preds = {image: pred_points[image] for image in kept}
    on_points = detections(point_refs, point_preds, "distance", 5.0)
    close(agg["points_ap"], voc_ap(*on_points[:2], on_points[3]), "points_ap")
    close(agg["points_froc"], froc(operating_points(*on_points, None, len(kept)), [0.5, 1, 2]), "points_froc")
    close(agg["ap_no_reference"], 0.25, "ap_no_reference")
    close(agg["froc_no_reference"], 0.125, "froc_no_reference")
    close(agg["detection_mean"], (agg["ap"] + agg["froc"]) / 2, "detection_mean")
    assert metrics["missing"]["nuclei"] == ["img3"]


# --------------------------------------------------------------------------- refusals

BAD_DECLARATIONS = [
    # (declaration, text replaced, replacement, what the message must name)
    ("seg", "tolerance_mm = 1.5\ncase_key", "tolerence_mm = 1.5\ncase_key", "tolerence_mm"),  # a wrong key
    ("seg", 'title = "Organ', 'titel = "Organ', "titel"),  # a misspelt required key
    ("values", 'slug = "size"', 'slg = "size"', "slg"),
    ("seg", "[report]\n", "[report]\nlabel_presense = true\n", "label_presense"),
    ("values", "bins = 5", 'bins = "five"', "bins"),  # a wrong type
    ("values", "decimal_places = 3", 'decimal_places = "3"', "decimal_places"),
    (
        "seg",
        'metric = "hausdorff"\noutput = "organ-segmentation"\nlabels = ["organ"',
        'metric = "hausdorf"\noutput = "organ-segmentation"\nlabels = ["organ"',
        "metric",
    ),  # an unknown metric
    ("values", 'metric = "brier"\noutput = "likelihood"', 'metric = "brier"\noutput = "size"', "range"),
    (
        "values",
        'name = "kappa_bool"\nmetric = "cohen_kappa"\noutput = "malignant"',
        'name = "kappa_bool"\nmetric = "cohen_kappa"\noutput = "malignant"\nweights = "linear"',
        "weights",
    ),
    (
        "values",
        'name = "c_index_none"\nmetric = "c_index"\noutput = "nocomp"',
        'name = "c_index_none"\nmetric = "c_index"\noutput = "flat"',
        "event",
    ),
    ("values", 'metric = "mae"\noutput = "size"', 'metric = "mae"\noutput = "malignant"', "output"),  # wrong kind
    (
        "seg",
        'metric = "masd"\noutput = "organ-segmentation"',
        'metric = "auroc"\noutput = "organ-segmentation"',
        "output",
    ),
    (
        "seg",
        'reference = "labels/{case}.mha"\nlabels = { organ = 1, tumour = 2, cyst',
        'reference = "labels/case.mha"\nlabels = { organ = 1, tumour = 2, cyst',
        "reference",
    ),  # bad pattern
    ("values", 'reference = "clinical.csv:size"', 'reference = "clinical.csv"', "reference"),
    (
        "values",
        'missing = "exclude"\n\n[[outputs]]\nslug = "risk"',
        'missing = "empty-mask"\n\n[[outputs]]\nslug = "risk"',
        "missing",
    ),  # a policy of another kind
    ("values", 'sets = ["metrics.ece.bins"]', 'sets = ["metrics.ece.bin"]', "metrics[3].bin"),
    ("values", 'sets = ["metrics.ece.bins"]', 'sets = ["metrics.ecee.bins"]', "sets"),
    ("values", 'score = "aggregates.auroc"', 'score = "aggregates.auc"', "score"),
    ("values", 'of = ["auroc", "balanced_accuracy"]', 'of = ["auroc", "accuracy"]', "bootstrap"),  # part: no CI
    ("values", 'of = ["auroc", "balanced_accuracy"]', 'of = ["auroc", "balanced_acc"]', "of"),
    ("seg", "one_empty = 50.0", 'one_empty = "twice"', "one_empty"),
    ("seg", 'quality = "sq"', 'quality = "pqs"', "quality"),
    ("seg", 'one_empty = 50.0\nmean_over = "present"', 'one_empty = 50.0\nmean_over = "some"', "mean_over"),
    ("seg", 'matching = "hungarian"', 'matching = "hungarian"\nconnectivity = 6', "connectivity"),  # 26 only
    ("values", 'slug = "flat"\nkind = "number"', 'slug = "flat"\nkind = "list"', "kind"),  # reserved kinds
    ("values", 'slug = "flat"\nkind = "number"', 'slug = "flat"\nkind = "csv-column"', "kind"),
    ("values", 'metric = "ece"', 'metric = "top_label_calibration_error"', "metrics[3].output"),  # wrong kind
]


@pytest.mark.parametrize(("which", "old", "new", "key"), BAD_DECLARATIONS)
def test_bad_declarations_are_refused_naming_the_key(tmp_path, capsys, which, old, new, key):
    from evaluation import phase

    text = {"seg": SEGMENTATION, "values": VALUES}[which]
    assert text.count(old) == 1, old
    declaration = tmp_path / f"outsider-{which}.toml"
    declaration.write_text(text.replace(old, new))
    capsys.readouterr()
    assert phase.main(["--challenge", str(declaration)]) != 0
    err = capsys.readouterr().err
    line = last_line(err)
    assert key in line and "Traceback" not in err, err
    assert line.startswith(declaration.name), line


def test_a_bad_declaration_stops_the_evaluation_with_one_line(tmp_path):
    declaration = tmp_path / "outsider-values.toml"
    declaration.write_text(VALUES.replace("bins = 5", "bins = 0"))
    done = run(
        "-m",
        "evaluation",
        "--challenge",
        str(declaration),
        "--input",
        str(tmp_path),
        "--output",
        str(tmp_path / "out"),
        "--ground-truth",
        str(tmp_path),
    )
    assert done.returncode != 0 and "bins" in last_line(done.stderr) and "Traceback" not in done.stderr
    assert not (tmp_path / "out" / "metrics.json").exists()


def test_missing_error_policy_names_the_case(values_run, tmp_path):
    _, _, root, _ = values_run
    declaration = tmp_path / "outsider-values.toml"
    declaration.write_text(VALUES.replace('missing = "worst-value"', 'missing = "error"'))
    done, metrics = evaluate(declaration, root / "outputs", root / "gt", tmp_path)
    assert done.returncode == 1 and metrics is None
    assert MISSING["likelihood"] in last_line(done.stderr) and "Traceback" not in done.stderr


# --------------------------------------------------------------------------- report layout, options with choices

REPORT = """
name = "outsider-report"
title = "The report table and an option with choices"
[[inputs]]
slug = "image"
[cases]
word = "image"
[[outputs]]
slug = "score"
kind = "number"
reference = "truth.csv:label"
range = [0, 1]
noun = "malignancy score"
[[outputs]]
slug = "grade"
kind = "choice"
reference = "truth.csv:grade"
classes = ["a", "b", "c"]
[[metrics]]
metric = "auroc"
output = "score"
[[metrics]]
name = "kappa"
metric = "cohen_kappa"
output = "grade"
[[options]]
name = "kappa_weights"
default = "none"
choices = ["none", "linear", "quadratic"]
sets = ["metrics.kappa.weights"]
[report]
missing = false
settings = "options"
case_values = false
per_case = false
[leaderboard]
score = "aggregates.kappa"
"""


def test_report_layout_and_option_choices(tmp_path):
    rng = np.random.default_rng(3)
    cases = [f"im{k}" for k in range(10)]
    label = np.array([0, 1] * 5)
    score = rng.random(10).round(2)
    grade = rng.choice(["a", "b", "c"], 10)
    answer = np.where(rng.random(10) < 0.6, grade, rng.choice(["a", "b", "c"], 10))
    (tmp_path / "gt").mkdir()
    rows = ["case,label,grade"] + [f"{c},{label[k]},{grade[k]}" for k, c in enumerate(cases)]
    (tmp_path / "gt" / "truth.csv").write_text("\n".join(rows) + "\n")
    for k, c in enumerate(cases):
        write_json(tmp_path / "outputs" / c / "score.json", float(score[k]))
        write_json(tmp_path / "outputs" / c / "grade.json", str(answer[k]))
    declaration = tmp_path / "outsider-report.toml"
    declaration.write_text(REPORT)
    done, metrics = evaluate(
        declaration, tmp_path / "outputs", tmp_path / "gt", tmp_path, "--set", "kappa_weights=quadratic"
    )
    assert done.returncode == 0, done.stderr
    close(metrics["aggregates"]["auroc"], skm.roc_auc_score(label, score), "auroc")
    expected = skm.cohen_kappa_score(grade, answer, labels=["a", "b", "c"], weights="quadratic")
    close(metrics["aggregates"]["kappa"], expected, "kappa (quadratic by --set)")
    assert "missing" not in metrics and metrics["case"] == {}
    assert metrics["settings"] == {"challenge": "outsider-report", "kappa_weights": "quadratic"}
    done, metrics = evaluate(
        declaration, tmp_path / "outputs", tmp_path / "gt", tmp_path, "--set", "kappa_weights=cubic"
    )
    assert done.returncode != 0 and metrics is None and "kappa_weights" in last_line(done.stderr)
    # a participant's value that is not a number: one line with the declared noun and word (written past
    # make_input, which refuses a string for a Float socket as the platform does)
    for c in cases:
        (tmp_path / "bad" / c).mkdir(parents=True, exist_ok=True)
        (tmp_path / "bad" / c / "grade.json").write_text(json.dumps(str(answer[0])))
        write_json(tmp_path / "bad" / c / "score.json", 0.5)
    platform_input = make_input(declaration, tmp_path / "bad")
    job = json.loads((platform_input / "predictions.json").read_text())[sorted(cases).index("im3")]
    write_json(platform_input / job["pk"] / "output" / "score.json", "high")
    done, metrics = evaluate_input(declaration, platform_input, tmp_path / "gt", tmp_path, "--workers", "2")
    line = last_line(done.stderr)
    assert done.returncode == 1 and metrics is None and "malignancy score" in line and "image im3" in line, line


# --------------------------------------------------------------------------- geometry and its tolerance

GEOMETRY = """
name = "outsider-geometry"
title = "Geometry policies"
[[inputs]]
slug = "ct"
[[outputs]]
slug = "mask"
kind = "segmentation"
reference = "labels/{case}.mha"
labels = { lesion = 1 }
tolerance = 0.01
[[metrics]]
metric = "dice"
output = "mask"
[[options]]
name = "resample"
default = "error"
choices = ["error", "nearest"]
sets = ["outputs.mask.geometry"]
[leaderboard]
score = "aggregates.dice_lesion_mean"
"""


def test_geometry_error_tolerance_and_nearest(tmp_path):
    rng = np.random.default_rng(9)
    shape = (6, 10, 12)
    references, predictions = {}, {}
    for case in ("g0", "g1", "g2"):
        reference = np.zeros(shape, np.uint8)
        reference[1:5, 2:8, 2:10] = rng.random((4, 6, 8)) < 0.7
        image = sitk.GetImageFromArray(reference)
        image.SetSpacing((1.0, 1.0, 2.0))
        references[case] = image
        (tmp_path / "gt" / "labels").mkdir(parents=True, exist_ok=True)
        sitk.WriteImage(image, str(tmp_path / "gt" / "labels" / f"{case}.mha"))
    # g0: the same grid; g1: spacing off by 5e-4 (inside tolerance = 0.01); g2: half the x resolution
    same = sitk.GetImageFromArray(np.roll(sitk.GetArrayFromImage(references["g0"]), 1, axis=2))
    same.CopyInformation(references["g0"])
    within = sitk.GetImageFromArray(
        sitk.GetArrayFromImage(references["g1"]) ^ (rng.random(shape) < 0.05).astype(np.uint8)
    )
    within.SetSpacing((1.0005, 1.0, 2.0))
    coarse = sitk.GetImageFromArray((rng.random((6, 10, 6)) < 0.5).astype(np.uint8))
    coarse.SetSpacing((2.0, 1.0, 2.0))
    coarse.SetOrigin((0.5, 0.0, 0.0))
    for case, image in (("g0", same), ("g1", within), ("g2", coarse)):
        predictions[case] = image
        folder = tmp_path / "outputs" / case / "images" / "mask"
        folder.mkdir(parents=True)
        sitk.WriteImage(image, str(folder / "p.mha"))
    declaration = tmp_path / "outsider-geometry.toml"
    declaration.write_text(GEOMETRY)
    done, metrics = evaluate(declaration, tmp_path / "outputs", tmp_path / "gt", tmp_path)
    assert done.returncode == 1 and metrics is None and "g2" in last_line(done.stderr), done.stderr
    done, metrics = evaluate(declaration, tmp_path / "outputs", tmp_path / "gt", tmp_path, "--set", "resample=nearest")
    assert done.returncode == 0, done.stderr
    dices = []
    for case in ("g0", "g1", "g2"):
        r = sitk.GetArrayFromImage(references[case]) == 1
        resampled = sitk.Resample(predictions[case], references[case], sitk.Transform(), sitk.sitkNearestNeighbor, 0)
        p = sitk.GetArrayFromImage(resampled if case == "g2" else predictions[case]) == 1
        dices.append(2 * (r & p).sum() / (r.sum() + p.sum()))
        close(metrics["case"][case]["dice_lesion"], dices[-1], f"dice of {case}")
    close(metrics["aggregates"]["dice_lesion_mean"], mean(dices), "dice_lesion_mean")
    assert metrics["settings"]["resample"] == "nearest"


def test_phase_settings_and_check_follow_the_declaration(values_run, capsys):
    from evaluation import phase

    _, _, root, declaration = values_run
    capsys.readouterr()
    assert phase.main(["--challenge", str(declaration)]) == 0
    settings = json.loads(capsys.readouterr().out)
    assert settings["score_jsonpath"] == "aggregates.auroc" and settings["score_title"] == "AUROC"
    assert (settings["score_default_sort"], settings["score_decimal_places"]) == ("desc", 3)
    assert settings["scoring_method_choice"] == "med"
    columns = settings["extra_results_columns"]
    assert [(c["title"], c["path"], c["order"]) for c in columns] == [
        ("C-index", "aggregates.c_index", "desc"),
        ("Brier", "aggregates.brier", "asc"),
    ]
    assert columns[1]["exclude_from_ranking"] is True and not columns[0].get("exclude_from_ranking", False)
    slugs = {o["slug"]: (o["kind"], o["relative_path"]) for o in settings["algorithm_outputs"]}
    assert slugs["likelihood"] == ("Float", "likelihood.json") and slugs["malignant"] == ("Bool", "malignant.json")
    assert slugs["grade"] == ("String", "grade.json")
    metrics_file = next(root.glob("output-0/metrics.json"))
    assert phase.main(["--challenge", str(declaration), "--check", str(metrics_file)]) == 0


# --------------------------------------------------------------------------- 2D masks from files named like images

TISSUE = """
name = "outsider-tissue"
title = "2D masks, any non-zero pixel"
[[inputs]]
slug = "tissue-image"
relative_path = "images/tissue"
kind = "Image"
name = "{case}"
[cases]
strip_suffixes = []
same_stem = true
id_column = "image"
ground_truth_name = "TISSUE"
[[outputs]]
slug = "tissue-mask"
kind = "segmentation"
relative_path = "images/tissue-mask"
reference = "masks/{stem}.*"
reference_suffixes = [".png", ".mha"]
labels = { lesion = "nonzero" }
dimension = 2
[[outputs]]
slug = "tissue-class"
kind = "boolean"
reference = "labels.csv:malignant"
[[metrics]]
metric = "dice"
output = "tissue-mask"
aggregates = ["mean", "dataset"]
[[metrics]]
metric = "iou"
output = "tissue-mask"
aggregates = ["mean", "dataset"]
[[metrics]]
metric = "accuracy"
output = "tissue-class"
[leaderboard]
score = "aggregates.dice_lesion_mean"
"""


def test_two_dimensional_nonzero_masks(tmp_path):
    from PIL import Image

    rng = np.random.default_rng(21)
    names = ["t0.png", "t1.png", "t2.png", "t3.png"]
    modes = ["L", "RGB", "RGBA", "L"]
    (tmp_path / "gt" / "masks").mkdir(parents=True)
    rows = ["image,malignant"]
    refs, preds, truth, answers = {}, {}, {}, {}
    for k, name in enumerate(names):
        ref = rng.random((20, 24)) < 0.3
        pred = ref ^ (rng.random((20, 24)) < 0.15)
        if k == 3:
            ref[:] = False  # an image without tissue
        refs[name], preds[name] = ref, pred
        stem = name[:-4]
        if k == 1:  # one reference mask as a 2D MetaImage (the ".*" pattern takes any listed suffix)
            sitk.WriteImage(
                sitk.GetImageFromArray(ref.astype(np.uint8) * 255), str(tmp_path / "gt" / "masks" / f"{stem}.mha")
            )
        else:
            Image.fromarray(ref.astype(np.uint8) * 7).save(tmp_path / "gt" / "masks" / f"{stem}.png")
        truth[name], answers[name] = bool(k % 2), bool(k % 3)
        rows.append(f"{name},{'yes' if truth[name] else 'no'}")
        job = tmp_path / "outputs" / name
        (job / "images" / "tissue-mask").mkdir(parents=True)
        pixels = pred.astype(np.uint8) * 200
        if modes[k] == "RGB":  # non-zero in one channel only
            pixels = np.stack([np.zeros_like(pixels), pixels, np.zeros_like(pixels)], axis=-1)
        elif modes[k] == "RGBA":
            # the alpha channel counts as any other (README): the background must be transparent
            pixels = np.stack([pixels, pixels, np.zeros_like(pixels), pixels], axis=-1)
        Image.fromarray(pixels, mode=modes[k]).save(job / "images" / "tissue-mask" / "out.png")
        write_json(job / "tissue-class.json", answers[name])
    (tmp_path / "gt" / "labels.csv").write_text("\n".join(rows) + "\n")
    declaration = tmp_path / "outsider-tissue.toml"
    declaration.write_text(TISSUE)
    # the platform names an input t2.tif: it stands for the case t2.png (same_stem)
    predictions = make_input(declaration, tmp_path / "outputs") / "predictions.json"
    assert predictions.read_text().count('"t2.png"') == 1
    predictions.write_text(predictions.read_text().replace('"t2.png"', '"t2.tif"'))
    done, metrics = evaluate(declaration, tmp_path / "outputs", tmp_path / "gt", tmp_path, "--case-results", "private")
    assert done.returncode == 0, done.stderr
    per_case = json.loads((tmp_path / "output-0" / "case-results.json").read_text())
    assert not metrics.get("case")
    dice, iou = [], []
    for name in names:
        r, p = refs[name], preds[name]
        dice.append(2 * (r & p).sum() / (r.sum() + p.sum()))
        iou.append((r & p).sum() / (r | p).sum())
        close(per_case["case"][name]["dice_lesion"], dice[-1], f"dice of {name}")
    agg = metrics["aggregates"]
    close(agg["dice_lesion_mean"], mean(dice), "dice_lesion_mean")
    close(agg["iou_lesion_mean"], mean(iou), "iou_lesion_mean")
    inter = sum((refs[n] & preds[n]).sum() for n in names)
    close(agg["dice_lesion_dataset"], 2 * inter / sum(refs[n].sum() + preds[n].sum() for n in names), "dice dataset")
    close(agg["iou_lesion_dataset"], inter / sum((refs[n] | preds[n]).sum() for n in names), "iou dataset")
    close(agg["accuracy"], skm.accuracy_score(list(truth.values()), list(answers.values())), "accuracy")
    # a reference CSV that is not UTF-8: the organizer's message names the ground truth
    (tmp_path / "gt" / "labels.csv").write_bytes("image,malignant\nt0.png,n\xe9\n".encode("latin-1"))
    done, metrics = evaluate(declaration, tmp_path / "outputs", tmp_path / "gt", tmp_path)
    assert done.returncode != 0 and metrics is None
    assert "The TISSUE ground truth labels.csv cannot be parsed as UTF-8" in last_line(done.stderr), done.stderr


def test_a_negative_predicted_time_and_a_blank_reference_are_one_line(values_run, tmp_path):
    _, _, root, declaration = values_run
    # unit = "days" names the unit of a refused value: c_index with sign = "time" refuses a negative time
    shutil.copytree(root / "outputs", tmp_path / "outputs")
    write_json(tmp_path / "outputs" / "P02" / "predicted-time.json", -5)
    done, metrics = evaluate(declaration, tmp_path / "outputs", root / "gt", tmp_path)
    line = last_line(done.stderr)
    assert done.returncode == 1 and metrics is None and "P02" in line and "-5 days" in line, done.stderr
    # blank = "error" (the default): a blank time cell is the organizer's error
    shutil.copytree(root / "gt", tmp_path / "gt")
    csv = tmp_path / "gt" / "clinical.csv"
    rows = csv.read_text().splitlines()
    cells = rows[4].split(",")
    cells[3] = ""
    rows[4] = ",".join(cells)
    csv.write_text("\n".join(rows) + "\n")
    done, metrics = evaluate(declaration, root / "outputs", tmp_path / "gt", tmp_path)
    line = last_line(done.stderr)
    assert done.returncode != 0 and metrics is None and "clinical.csv" in line and "Traceback" not in done.stderr, line


@pytest.mark.parametrize(
    ("old", "new", "words"),
    [
        ("single_class = 0.5", 'single_class = "error"', ("'allpos'", "single class", "auroc", "single_class")),
        ("no_comparable_pair = 0.5", 'no_comparable_pair = "error"', ("'nocomp'", "c_index", "no_comparable_pair")),
        ("no_positive = 0.0", 'no_positive = "error"', ("'allneg'", "average_precision", "no_positive")),
        ("threshold = 0.5\nno_positive = 0.75", "threshold = 0.5", ("'allneg'", "sensitivity", "no_positive")),
    ],
)
def test_edge_cases_declared_error_stop_the_run(values_run, evaluate_cli, tmp_path, old, new, words):
    """An edge case left at (or declared) "error" ends the run with one line naming the output, the metric
    and the key that would give it a value (in process, through the same command line)."""
    _, _, root, _ = values_run
    assert VALUES.count(old) == 1
    declaration = tmp_path / "outsider-values.toml"
    declaration.write_text(VALUES.replace(old, new))
    done = evaluate_cli(str(declaration), root / "outputs-input", ground_truth=root / "gt")
    assert done.exit_code != 0 and not done.wrote_metrics and "Traceback" not in done.stderr
    assert all(word in done.last_error_line for word in words), done.last_error_line
