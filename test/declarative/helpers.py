"""One copy of the declarative tests' shared data, runners and independent oracles (scikit-learn, SciPy, lifelines,
isic-challenge-scoring, hand computations), imported by the tests of each feature."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import SimpleITK as sitk
from conftest import REPO
from isic_challenge_scoring.classification import ClassificationMetric, ClassificationScore
from scipy import ndimage
from scipy.optimize import linear_sum_assignment

from evaluation.platform.detections import platform_boxes as platform_boxes  # (the tests' name for it)
from evaluation.platform.layout import JobSpec, write_input
from evaluation.registry import get


def leaning_probabilities(
    classes: tuple[str, ...], n: int, seed: int, own: float, other: float, total: int
) -> tuple[np.ndarray, np.ndarray]:
    """Reference classes (each ``n / len(classes)`` times) and probabilities in ``1/total`` steps, drawn
    leaning ``own`` to the reference class and ``other`` to each other class, each row with a single
    maximum (ISIC calls a tied maximum "undecided", we take the first declared class: only untied rows compare)."""
    rng = np.random.default_rng(seed)
    truth = np.array(list(classes) * (n // len(classes)))[rng.permutation(n)]
    rows = []
    for label in truth:
        lean = np.where(np.array(classes) == label, own, other)
        while True:
            counts = rng.multinomial(total, lean)
            if np.count_nonzero(counts == counts.max()) == 1:
                break
        rows.append(counts / float(total))
    return truth, np.array(rows)


def first_argmax(probabilities: np.ndarray, classes: tuple[str, ...]) -> np.ndarray:
    """Each row's first class of highest probability, by a loop (the declared tie rule)."""
    return np.array([classes[max(range(len(row)), key=lambda j: (row[j], -j))] for row in probabilities])


def isic_score(truth: Path, predictions: Path) -> ClassificationScore:
    """The official ISIC scoring (isic-challenge-scoring, ``ClassificationScore.from_file``) of a
    participant's CSV against a one-hot truth CSV; its deprecation chatter silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ClassificationScore.from_file(truth, predictions, ClassificationMetric.BALANCED_ACCURACY)


TOL = 1e-9


def run(*args: str) -> subprocess.CompletedProcess:
    """One organizer command, as a subprocess from the repository root."""
    return subprocess.run([sys.executable, *args], cwd=REPO, capture_output=True, text=True, timeout=120, env=None)


def make_input(declaration: Path, outputs: Path) -> Path:
    """``python -m evaluation.make_input`` (its ``main``, in this process: the builder is not under test),
    once per outputs folder; the platform input it wrote."""
    from evaluation import make_input as builder

    platform_input = outputs.parent / f"{outputs.name}-input"
    if not platform_input.exists():
        arguments = ["--challenge", str(declaration), "--outputs", str(outputs), "--output", str(platform_input)]
        assert builder.main(arguments) == 0
    return platform_input


def evaluate(
    declaration: Path, outputs: Path, ground_truth: Path, work: Path, *extra: str
) -> tuple[subprocess.CompletedProcess, dict[str, Any] | None]:
    """make_input (once per outputs folder), then the evaluation; the process and metrics.json (or None)."""
    return evaluate_input(declaration, make_input(declaration, outputs), ground_truth, work, "--workers", "2", *extra)


def evaluate_input(
    declaration: Path, platform_input: Path, ground_truth: Path, work: Path, *extra: str
) -> tuple[subprocess.CompletedProcess, dict[str, Any] | None]:
    """``python -m evaluation`` on a platform input, into a fresh output folder under ``work``; the process
    and metrics.json (or None)."""
    out = work / f"output-{len(list(work.glob('output-*')))}"
    done = run("-m", "evaluation", "--challenge", str(declaration), "--input", str(platform_input),
               "--ground-truth", str(ground_truth), "--output", str(out), *extra)  # fmt: skip
    metrics_file = out / "metrics.json"
    return done, (json.loads(metrics_file.read_text()) if metrics_file.exists() else None)


def last_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def close(actual: Any, expected: float, what: str) -> None:
    assert actual is not None, f"{what}: missing"
    assert math.isclose(actual, expected, rel_tol=TOL, abs_tol=TOL), f"{what}: {actual} != {expected}"


def bootstrap_ci(statistic, n: int, resamples: int, seed: int, level: float) -> tuple[float, float]:
    """The README's bootstrap: n cases drawn with replacement per resample from ``default_rng(seed)``, the
    linear-interpolation percentile interval over the resamples where the statistic is defined."""
    draws = np.random.default_rng(seed).integers(0, n, (resamples, n))
    values = [v for v in (statistic(d) for d in draws) if v is not None]
    low, high = np.percentile(values, [50 * (1 - level), 50 * (1 + level)])
    return float(low), float(high)


def close_ci(aggregates: dict, key: str, expected: tuple[float, float]) -> None:
    close(aggregates[f"{key}_ci_low"], expected[0], f"{key}_ci_low")
    close(aggregates[f"{key}_ci_high"], expected[1], f"{key}_ci_high")


def write_json(path: Path, value: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value))


def write_image(array: np.ndarray, spacing: tuple[float, float, float], path: Path) -> None:
    image = sitk.GetImageFromArray(array.astype(np.uint8))
    image.SetSpacing(spacing)
    image.SetOrigin((10.0, -5.0, 3.0))
    path.parent.mkdir(parents=True, exist_ok=True)
    sitk.WriteImage(image, str(path), useCompression=True)


def components(mask: np.ndarray) -> list[np.ndarray]:
    """26-connected components, as the README defines lesions."""
    labelled, count = ndimage.label(mask, structure=np.ones((3, 3, 3)))
    return [labelled == k for k in range(1, count + 1)]


def iou_matrix(reference: np.ndarray, prediction: np.ndarray) -> np.ndarray:
    refs, preds = components(reference), components(prediction)
    matrix = np.zeros((len(refs), len(preds)))
    for i, r in enumerate(refs):
        for j, p in enumerate(preds):
            matrix[i, j] = (r & p).sum() / (r | p).sum()
    return matrix


def matched_ious(matrix: np.ndarray, threshold: float, how: str) -> list[float]:
    """The IoUs of the one-to-one matches above ``threshold`` (strict)."""
    if matrix.size == 0:
        return []
    if how == "hungarian":
        gain = np.where(matrix > threshold, matrix, 0.0)
        rows, cols = linear_sum_assignment(-gain)
        return [matrix[r, c] for r, c in zip(rows, cols, strict=True) if matrix[r, c] > threshold]
    pairs = sorted(((matrix[i, j], i, j) for i in range(matrix.shape[0]) for j in range(matrix.shape[1])), reverse=True)
    used_r, used_p, out = set(), set(), []
    for value, i, j in pairs:
        if value > threshold and i not in used_r and j not in used_p:
            used_r.add(i)
            used_p.add(j)
            out.append(value)
    return out


def harrell(time, event, higher_is_earlier, missing: set[int] = frozenset(), credit: float = 0.0) -> float | None:
    """Harrell's C by pairs as lifelines counts them (i comparable with j when i has the event and
    T_i < T_j, or T_i = T_j and j is censored); a pair with a missing answer counts ``credit``."""
    t, e, s = np.asarray(time), np.asarray(event, bool), np.asarray(higher_is_earlier)
    comparable = e[:, None] & ((t[:, None] < t[None, :]) | ((t[:, None] == t[None, :]) & ~e[None, :]))
    if not comparable.any():
        return None
    absent = np.zeros(len(t), bool)
    absent[list(missing)] = True
    score = np.where(s[:, None] > s[None, :], 1.0, np.where(s[:, None] == s[None, :], 0.5, 0.0))
    score = np.where(absent[:, None] | absent[None, :], credit, score)
    return float(score[comparable].sum() / comparable.sum())


def ece(y: np.ndarray, p: np.ndarray, bins: int) -> float:
    """Right-closed equal-width bins, p = 0 in the first (README, after Guo et al. 2017): bin m holds
    m/B < p <= (m+1)/B, compared as written (``ceil(p * B)`` would put 0.3 in (0.3, 0.4] for B = 10)."""
    index = np.array([next(m for m in range(bins) if value <= (m + 1) / bins) for value in p])
    total = 0.0
    for b in range(bins):
        inside = index == b
        if inside.any():
            total += inside.sum() / len(y) * abs(y[inside].mean() - p[inside].mean())
    return total


IMAGES = [f"img{k}" for k in range(6)]


def detection_data() -> tuple[dict, dict, dict, dict]:
    """Reference boxes / points and scored predictions per image; img4 and img5 have no reference box."""
    rng = np.random.default_rng(7)
    ref_boxes, pred_boxes, ref_points, pred_points = {}, {}, {}, {}
    for k, image in enumerate(IMAGES):
        boxes = []
        if k < 4:
            for _ in range(rng.integers(2, 5)):
                x, y = rng.uniform(0, 80, 2).round(1)
                w, h = rng.uniform(6, 14, 2).round(1)
                boxes.append([float(x), float(y), float(x + w), float(y + h)])
        predicted = []
        for box in boxes:
            if rng.random() < 0.8:  # found, jittered
                dx, dy, dw = rng.normal(0, 2.0, 3).round(1)
                predicted.append([box[0] + dx, box[1] + dy, box[2] + dx + dw, box[3] + dy, rng.uniform(0.3, 1)])
        for _ in range(rng.integers(1, 3)):  # false positives
            x, y = rng.uniform(0, 80, 2).round(1)
            predicted.append([float(x), float(y), float(x + 8), float(y + 8), float(rng.uniform(0, 0.9))])
        predicted = [[round(float(v), 3) for v in row] for row in predicted]
        if k == 0 and boxes:  # two predictions on one box: one of them is a false positive
            b = boxes[0]
            predicted.append([b[0] + 1, b[1], b[2] + 1, b[3], 0.55])
        ref_boxes[image], pred_boxes[image] = boxes, predicted
        ref_points[image] = [[(b[0] + b[2]) / 2, (b[1] + b[3]) / 2] for b in boxes]
        pred_points[image] = [[(p[0] + p[2]) / 2 + 1, (p[1] + p[3]) / 2, p[4]] for p in predicted]
    return ref_boxes, pred_boxes, ref_points, pred_points


def platform_points(rows: list[list[float]]) -> dict:
    points = [{"point": [x, y, 0], "probability": p} for x, y, p in rows]
    return {"type": "Multiple points", "points": points, "version": {"major": 1, "minor": 0}}


def box_iou(a: list[float], b: list[float]) -> float:
    w = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    h = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = w * h
    return inter / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter)


def centre(box: list[float]) -> tuple[float, float]:
    return ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2) if len(box) >= 4 else (box[0], box[1])


def true_positive_flags(reference: list, predicted: list, match: str, threshold: float, matching: str) -> list[bool]:
    """Per prediction: matched or not, one-to-one, as the README's detection metrics define it."""
    if not predicted:
        return []
    if match == "iou":
        quality = np.array([[box_iou(p, r) for r in reference] for p in predicted]).reshape(len(predicted), -1)
        ok = quality > threshold
    else:
        quality = np.array([[math.dist(centre(p[:-1]), centre(r)) for r in reference] for p in predicted])
        quality = quality.reshape(len(predicted), -1)
        ok = quality <= threshold
    flags = [False] * len(predicted)
    if matching == "hungarian":
        # IoU: maximum total IoU over the pairs above the threshold; distance: most matches, then least distance
        cost = -np.where(ok, quality, 0.0) if match == "iou" else np.where(ok, quality - 1e6, 0.0)
        for i, j in zip(*linear_sum_assignment(cost), strict=True):
            flags[i] = bool(ok[i, j])
        return flags
    taken: set[int] = set()
    for i in sorted(range(len(predicted)), key=lambda i: -predicted[i][-1]):
        candidates = [j for j in range(len(reference)) if ok[i, j] and j not in taken]
        if candidates:
            best = (
                max(candidates, key=lambda j: quality[i, j])
                if match == "iou"
                else min(candidates, key=lambda j: quality[i, j])
            )
            taken.add(best)
            flags[i] = True
    return flags


def detections(refs: dict, preds: dict, match: str, threshold: float, matching: str = "greedy"):
    """Scores, TP flags and image of every prediction, and the number of reference objects."""
    scores, flags, images = [], [], []
    for image in refs:
        flags += true_positive_flags(refs[image], preds[image], match, threshold, matching)
        scores += [p[-1] for p in preds[image]]
        images += [image] * len(preds[image])
    return np.array(scores), np.array(flags, bool), np.array(images), sum(len(r) for r in refs.values())


def voc_ap(scores, flags, n_reference) -> float:
    """All-point interpolated AP (PASCAL VOC 2010-2012 VOCap.m), by hand."""
    order = np.argsort(-scores, kind="stable")
    tp = np.cumsum(flags[order])
    fp = np.cumsum(~flags[order])
    recall = np.concatenate([[0.0], tp / n_reference, [1.0]])
    precision = np.concatenate([[0.0], tp / np.maximum(tp + fp, 1e-300), [0.0]])
    for i in range(len(precision) - 2, -1, -1):
        precision[i] = max(precision[i], precision[i + 1])
    changes = np.flatnonzero(recall[1:] != recall[:-1]) + 1
    return float(np.sum((recall[changes] - recall[changes - 1]) * precision[changes]))


def operating_points(scores, flags, images, n_reference, negative: set | None, n_images: int):
    """(recall, precision, FP rate) at every distinct score threshold (predictions with score >= it)."""
    points = []
    for threshold in sorted(set(scores), reverse=True):
        kept = scores >= threshold
        tp = int(flags[kept].sum())
        fps = ~flags & kept
        if negative is not None:
            fps &= np.isin(images, list(negative))
        denominator = len(negative) if negative is not None else n_images
        points.append((tp / n_reference, tp / kept.sum(), fps.sum() / denominator))
    return points


def froc(points, rates) -> float:
    """Mean over the rates of the recall at the lowest threshold whose FP rate is still <= the rate."""
    recalls = []
    for rate in rates:
        eligible = [recall for recall, _, fp_rate in points if fp_rate <= rate]
        recalls.append(eligible[-1] if eligible else 0.0)  # thresholds descend: the last is the lowest
    return float(np.mean(recalls))


TINY = """
name = "tiny"
title = "Tiny"
[[inputs]]
slug = "ct-image"
[[outputs]]
slug = "seg"
kind = "segmentation"
reference = "labels/{case}.mha"
labels = { a = 1, b = 2 }
missing = "__SEG_MISSING__"
[[outputs]]
slug = "p"
kind = "number"
reference = "truth.csv:y"
range = [0, 1]
missing = "__P_MISSING__"
[[outputs]]
slug = "grade"
kind = "choice"
classes = ["low", "high"]
reference = "truth.csv:grade"
missing = "misclassification"
[[metrics]]
metric = "dice"
output = "seg"
aggregates = ["mean", "dataset"]
both_empty = __BOTH_EMPTY__
absent_everywhere = 0.25
[[metrics]]
metric = "iou"
output = "seg"
labels = ["a"]
aggregates = ["mean", "dataset"]
[[metrics]]
metric = "hd95"
output = "seg"
labels = ["a"]
one_empty = __ONE_EMPTY__
[[metrics]]
metric = "lesion_f1"
output = "seg"
labels = ["a"]
aggregates = ["dataset", "mean"]
no_lesions = 0.75
[[metrics]]
metric = "auroc"
output = "p"
single_class = __SINGLE__
[[metrics]]
metric = "balanced_accuracy"
output = "grade"
[leaderboard]
score = "aggregates.dice_a_mean"
"""


def tiny_text(**fill: str) -> str:
    """TINY with its placeholders filled: the defaults below, or ``fill`` (raw TOML for the edge values)."""
    values = {"SEG_MISSING": "empty-mask", "P_MISSING": "worst-value", "BOTH_EMPTY": "1.0",
              "ONE_EMPTY": '"diagonal"', "SINGLE": '"error"'} | fill  # fmt: skip
    text = TINY
    for key, value in values.items():
        text = text.replace(f"__{key}__", value)
    return text


def tiny_case(
    root: Path,
    predictions: dict[str, np.ndarray | None],
    references: dict[str, np.ndarray],
    likelihoods: dict[str, float | None],
    grades: dict[str, str | None],
    labels_y: dict[str, int] | None = None,
    **fill: str,
) -> tuple[Path, Path, Path]:
    """Write the declaration, the ground truth and a submission; returns (toml, ground truth, input)."""
    text = tiny_text(**fill)
    root.mkdir(parents=True, exist_ok=True)
    toml = root / "tiny.toml"
    toml.write_text(text)
    ground_truth = root / "gt"
    (ground_truth / "labels").mkdir(parents=True)
    labels_y = labels_y or {case: i % 2 for i, case in enumerate(references)}
    rows = ["case,y,grade"] + [f"{c},{labels_y[c]},{'high' if labels_y[c] else 'low'}" for c in references]
    (ground_truth / "truth.csv").write_text("\n".join(rows) + "\n")
    for case, array in references.items():
        sitk.WriteImage(sitk.GetImageFromArray(array.astype(np.uint8)), str(ground_truth / "labels" / f"{case}.mha"))
    challenge = get(str(toml))
    seg, p, grade = challenge.phase.outputs
    jobs = []
    for case in references:
        outputs = {}
        if predictions.get(case) is not None:
            path = root / f"{case}-pred.mha"
            sitk.WriteImage(sitk.GetImageFromArray(predictions[case].astype(np.uint8)), str(path))
            outputs[seg] = path
        if likelihoods.get(case) is not None:
            outputs[p] = likelihoods[case]
        if grades.get(case) is not None:
            outputs[grade] = grades[case]
        jobs.append(JobSpec(challenge.job_inputs(case), outputs))
    write_input(root / "input", jobs)
    return toml, ground_truth, root / "input"


def volume(*boxes: tuple[int, tuple[slice, ...]]) -> np.ndarray:
    array = np.zeros((6, 8, 8), np.uint8)
    for value, box in boxes:
        array[box] = value
    return array


A1 = (1, (slice(1, 3), slice(1, 3), slice(1, 3)))  # 8 voxels of label a


A1_SHIFTED = (1, (slice(1, 3), slice(1, 3), slice(2, 4)))  # overlaps A1 in 4 voxels (IoU 1/3)


A2 = (1, (slice(4, 6), slice(5, 7), slice(5, 7)))  # a second, separate lesion of label a


B1 = (2, (slice(3, 5), slice(3, 5), slice(0, 2)))


def tiny_data(root: Path) -> tuple:
    """(root, references, predictions, likelihoods, grades) of the tiny cases: c3 has no label
    anywhere, c4 no segmentation and no grade, c3 no likelihood."""
    references = {"c1": volume(A1, B1), "c2": volume(A1), "c3": volume(), "c4": volume(A1)}
    predictions = {"c1": volume(A1_SHIFTED, A2, B1), "c2": volume(A1), "c3": volume(), "c4": None}
    likelihoods = {"c1": 0.3, "c2": 0.8, "c3": None, "c4": 0.6}
    grades = {"c1": "low", "c2": "high", "c3": "high", "c4": None}
    return root, references, predictions, likelihoods, grades
