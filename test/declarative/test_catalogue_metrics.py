"""Declared catalogue metrics beyond the example's: each declared by a tiny TOML written here, run
through the command line on hand-made ground truth and input, and its metrics.json value checked
against an independent reference (DeepMind surface-distance, scipy connected components with a
brute-force matching, scikit-learn, scipy.stats, lifelines, or a hand computation) to 1e-9, with
every declared edge value."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest
import SimpleITK as sitk
import surface_distance
from conftest import documented_section
from declarative.helpers import box_iou, harrell, iou_matrix, platform_boxes

from evaluation.declarative.schema import parse
from evaluation.errors import ConfigurationError
from evaluation.platform.layout import JobSpec, write_input
from evaluation.registry import get

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
bootstrap = true
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
            matrix = iou_matrix(r, p)
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
    draws = np.random.default_rng(0).integers(0, len(REFERENCES), size=(1000, len(REFERENCES)))
    for label in LABELS:  # the CI of a mean with excluded cases: each resample's mean of its non-excluded draws
        per_case = np.array([oracle[case][f"sq_{label}"] for case in REFERENCES])
        means = [np.nanmean(per_case[row]) for row in draws if not np.isnan(per_case[row]).all()]
        low, high = np.percentile(means, [2.5, 97.5])
        got = (metrics["aggregates"][f"sq_{label}_mean_ci_low"], metrics["aggregates"][f"sq_{label}_mean_ci_high"])
        assert got == pytest.approx((low, high), abs=1e-12)
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
        (
            'missing = "empty-mask"',
            'missing = "empty"',
            r"outputs\[0\]\.missing: 'empty' is not one of error, empty-mask, "
            r"exclude \(for a segmentation output\)",
        ),
    ],
)
def test_bad_segmentation_declarations_name_the_key(old, new, message):
    assert old in SEGMENTATION
    with pytest.raises(ConfigurationError, match=message):
        parse(SEGMENTATION.replace(old, new, 1), "seg.toml")


# --------------------------------------------------------------------------------- value metrics

VALUES = """
name = "catalogue-values"
title = "Declared value metrics of the catalogue"
[[inputs]]
slug = "ct"
[cases]
id_column = "patient"
[[outputs]]
slug = "score"
kind = "number"
reference = "truth.csv:y"
[[outputs]]
slug = "level"
kind = "choice"
classes = ["low", "mid", "high"]
reference = "truth.csv:level"
[[outputs]]
slug = "age"
kind = "number"
reference = "truth.csv:age"
[[outputs]]
slug = "risk"
kind = "number"
reference = "truth.csv:time"
event = "truth.csv:event"
missing = "__RISK_MISSING__"
[[outputs]]
slug = "months"
kind = "number"
reference = "truth.csv:time"
event = "truth.csv:event"
[[metrics]]
metric = "sensitivity"
output = "score"
threshold = 0.5
bootstrap = true
[[metrics]]
metric = "specificity"
output = "score"
threshold = 0.4
[[metrics]]
metric = "sensitivity_at_specificity"
output = "score"
target = 0.75
bootstrap = true
[[metrics]]
metric = "specificity_at_sensitivity"
output = "score"
target = 0.8
[[metrics]]
name = "kappa"
metric = "cohen_kappa"
output = "level"
[[metrics]]
name = "kappa_linear"
metric = "cohen_kappa"
output = "level"
weights = "linear"
[[metrics]]
name = "kappa_quadratic"
metric = "cohen_kappa"
output = "level"
weights = "quadratic"
bootstrap = true
[[metrics]]
metric = "pearson"
output = "age"
bootstrap = true
[[metrics]]
metric = "spearman"
output = "age"
[[metrics]]
metric = "c_index"
output = "risk"
bootstrap = true
[[metrics]]
name = "c_index_time"
metric = "c_index"
output = "months"
sign = "time"
[bootstrap]
resamples = 300
[leaderboard]
score = "aggregates.c_index"
"""

N = 14
LEVELS = ("low", "mid", "high")


def value_data(seed: int = 5) -> dict[str, np.ndarray]:
    """Reference and submitted values with ties in every column."""
    rng = np.random.default_rng(seed)
    y = np.r_[np.ones(6, int), np.zeros(N - 6, int)][rng.permutation(N)]
    return {
        "y": y,
        "score": np.round(np.clip(0.35 * y + rng.uniform(0, 0.7, N), 0, 1), 1),
        "level": rng.integers(0, 3, N),
        "level_pred": rng.integers(0, 3, N),
        "age": rng.integers(40, 60, N).astype(float),
        "age_pred": rng.integers(40, 60, N).astype(float),
        "time": rng.integers(1, 8, N).astype(float),
        "event": rng.integers(0, 2, N),
        "risk": np.round(rng.uniform(0, 1, N), 1),
        "months": rng.integers(1, 10, N).astype(float),
    }


def values_case(root: Path, data: dict[str, np.ndarray], absent: tuple[str, ...] = (), **fill: str) -> tuple:
    """Write the declaration, truth.csv and a submission (``absent`` patients give no risk)."""
    text = VALUES.replace("__RISK_MISSING__", fill.pop("risk_missing", "error"))
    for old, new in fill.items():
        text = text.replace(old, new)
    toml, ground_truth = root / "values.toml", root / "gt"
    root.mkdir(parents=True, exist_ok=True)
    toml.write_text(text)
    ground_truth.mkdir(parents=True)
    patients = [f"p{i:02d}" for i in range(N)]
    rows = ["patient,y,level,age,time,event"] + [
        f"{p},{data['y'][i]},{LEVELS[data['level'][i]]},{data['age'][i]},{data['time'][i]},{data['event'][i]}"
        for i, p in enumerate(patients)
    ]
    (ground_truth / "truth.csv").write_text("\n".join(rows) + "\n")
    challenge = get(str(toml))
    score, level, age, risk, months = challenge.phase.outputs
    jobs = []
    for i, p in enumerate(patients):
        outputs = {score: float(data["score"][i]), level: LEVELS[data["level_pred"][i]],
                   age: float(data["age_pred"][i]), months: float(data["months"][i])}  # fmt: skip
        if p not in absent:
            outputs[risk] = float(data["risk"][i])
        jobs.append(JobSpec(challenge.job_inputs(p), outputs))
    write_input(root / "input", jobs)
    return toml, ground_truth, root / "input"


def lifelines_or_none(time: np.ndarray, score: np.ndarray, event: np.ndarray) -> float | None:
    """lifelines' C-index, None without a comparable pair (it raises there)."""
    from lifelines.utils import concordance_index

    try:
        return concordance_index(time, score, event)
    except ZeroDivisionError:
        return None


def operating_points(y: np.ndarray, score: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    from sklearn.metrics import roc_curve

    fpr, tpr, _ = roc_curve(y, score, drop_intermediate=False)
    return tpr, 1 - fpr


def test_declared_value_metrics_against_independent_references(tmp_path, evaluate_cli):
    from lifelines.utils import concordance_index
    from scipy.stats import rankdata
    from sklearn.metrics import cohen_kappa_score, recall_score

    data = value_data()
    toml, ground_truth, input_dir = values_case(tmp_path, data)
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert run.exit_code == 0, run.stderr
    got = run.metrics["aggregates"]
    y, score = data["y"], data["score"]
    assert got["sensitivity"] == pytest.approx(recall_score(y, score >= 0.5), abs=1e-12)
    assert got["specificity"] == pytest.approx(recall_score(y, score >= 0.4, pos_label=0), abs=1e-12)
    sens, spec = operating_points(y, score)
    assert got["sensitivity_at_specificity"] == pytest.approx(sens[spec >= 0.75].max(), abs=1e-12)
    assert got["specificity_at_sensitivity"] == pytest.approx(spec[sens >= 0.8].max(), abs=1e-12)
    truth, predicted = data["level"], data["level_pred"]  # the declared order low < mid < high
    assert got["kappa"] == pytest.approx(cohen_kappa_score(truth, predicted), abs=1e-12)
    for weights in ("linear", "quadratic"):
        expected = cohen_kappa_score(truth, predicted, weights=weights)
        assert got[f"kappa_{weights}"] == pytest.approx(expected, abs=1e-12)
    assert got["pearson"] == pytest.approx(np.corrcoef(data["age"], data["age_pred"])[0, 1], abs=1e-12)
    ranks = np.corrcoef(rankdata(data["age"]), rankdata(data["age_pred"]))[0, 1]
    assert got["spearman"] == pytest.approx(ranks, abs=1e-12)
    time, event = data["time"], data["event"].astype(bool)
    assert got["c_index"] == pytest.approx(concordance_index(time, -data["risk"], event), abs=1e-12)
    assert got["c_index"] == pytest.approx(harrell(time, event, data["risk"]), abs=1e-12)
    assert got["c_index_time"] == pytest.approx(concordance_index(time, data["months"], event), abs=1e-12)
    # bootstrap CIs, rebuilt from the documented draw by indexing
    draws = np.random.default_rng(0).integers(0, N, size=(300, N))
    rebuilt = {
        "sensitivity": [recall_score(y[r], score[r] >= 0.5) for r in draws if y[r].any()],
        "sensitivity_at_specificity": [
            operating_points(y[r], score[r])[0][operating_points(y[r], score[r])[1] >= 0.75].max()
            for r in draws if 0 < y[r].sum() < N
        ],
        "kappa_quadratic": [cohen_kappa_score(truth[r], predicted[r], weights="quadratic") for r in draws],
        "pearson": [np.corrcoef(data["age"][r], data["age_pred"][r])[0, 1] for r in draws],
        "c_index": [lifelines_or_none(time[r], -data["risk"][r], event[r]) for r in draws],
    }  # fmt: skip
    for name, values in rebuilt.items():
        low, high = np.percentile([v for v in values if v is not None], [2.5, 97.5])
        assert (got[f"{name}_ci_low"], got[f"{name}_ci_high"]) == pytest.approx((low, high), abs=1e-9), name
    settings = run.metrics["settings"]
    assert settings["outputs"]["risk"]["event"] == "truth.csv:event"
    assert settings["metrics"]["c_index"]["policy"] == "non-concordant"
    assert settings["metrics"]["kappa_linear"]["weights"] == "linear"


@pytest.mark.parametrize(("policy", "credit"), [("non-concordant", 0.0), ("tie", 0.5)])
def test_c_index_missing_policies(tmp_path, evaluate_cli, policy, credit):
    """A missing risk under the output's c_index policy: its comparable pairs count 0 (non-concordant) or
    1/2 (tie), as a brute-force Harrell's C says; the case is listed as missing, its value null."""
    data = value_data()
    toml, ground_truth, input_dir = values_case(tmp_path, data, absent=("p03", "p07"), risk_missing=policy)
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert run.exit_code == 0, run.stderr
    expected = harrell(data["time"], data["event"].astype(bool), data["risk"], missing={3, 7}, credit=credit)
    assert run.metrics["aggregates"]["c_index"] == pytest.approx(expected, abs=1e-12)
    assert run.metrics["missing"]["risk"] == ["p03", "p07"] and run.metrics["case"]["p03"]["risk"] is None
    assert run.metrics["settings"]["metrics"]["c_index"]["policy"] == policy


def test_an_event_file_without_a_case_names_it(tmp_path, evaluate_cli):
    """The event indicators in another CSV than the times: a case without a row there is the
    organizer's error naming the file, the column and the case (not "the event is not a boolean")."""
    data = value_data()
    toml, ground_truth, input_dir = values_case(tmp_path, data, **{"truth.csv:event": "events.csv:event"})
    rows = [f"p{i:02d},{data['event'][i]}" for i in range(N) if i != 3]
    (ground_truth / "events.csv").write_text("patient,event\n" + "\n".join(rows) + "\n")
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert run.exit_code != 0 and not run.wrote_metrics
    assert run.last_error_line == "events.csv:event: there is no row for case p03."


def test_value_edge_cases_as_declared(tmp_path, evaluate_cli):
    """Each edge case gives its declared value; "error" (the default where the reference causes it)
    refuses the run with a message naming the key to declare."""
    from evaluation.declarative.measures import value_metric

    y0, scores = np.zeros(4), np.array([0.2, 0.6, 0.6, 0.9])
    assert value_metric("sensitivity", y0, scores, {"threshold": 0.5, "no_positive": 0.25}) == 0.25
    assert np.isnan(value_metric("sensitivity", y0, scores, {"threshold": 0.5, "no_positive": "error"}))
    assert value_metric("specificity", y0 + 1, scores, {"threshold": 0.5, "no_negative": 0.75}) == 0.75
    for metric in ("sensitivity_at_specificity", "specificity_at_sensitivity"):
        for truth in (y0, y0 + 1):  # no positive, or no negative: the declared value either way
            assert value_metric(metric, truth, scores, {"target": 0.5, "single_class": 0.125}) == 0.125
    assert value_metric("pearson", scores, np.ones(4), {"constant": -1.0}) == -1.0
    assert value_metric("spearman", np.ones(4), scores, {"constant": 0.5}) == 0.5
    same = np.array(["low"] * 3)
    kappa = {"weights": "quadratic", "classes": LEVELS, "perfect_chance": 0.5}
    assert value_metric("cohen_kappa", same, same, kappa) == 0.5
    censored = {"sign": "risk", "policy": "non-concordant", "no_comparable_pair": 0.5}
    assert value_metric("c_index", scores, scores, censored, event=np.zeros(4, bool)) == 0.5

    data = value_data()
    data["event"][:] = 0  # every case censored: no comparable pair
    toml, ground_truth, input_dir = values_case(tmp_path / "a", data)
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert run.exit_code == 1 and not run.wrote_metrics
    assert "holds no comparable pair" in run.last_error_line and "declare no_comparable_pair" in run.last_error_line
    fill = {f'output = "{slug}"\n': f'output = "{slug}"\nno_comparable_pair = 0.5\n' for slug in ("risk", "months")}
    toml, ground_truth, input_dir = values_case(tmp_path / "b", data, **fill)
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert run.exit_code == 0, run.stderr
    assert run.metrics["aggregates"]["c_index"] == 0.5 and np.isnan(
        run.metrics["aggregates"]["c_index_ci_low"] or np.nan
    )
    data = value_data()
    data["y"][:] = 0
    toml, ground_truth, input_dir = values_case(tmp_path / "c", data)
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert run.exit_code == 1 and "holds no positive case" in run.last_error_line
    assert "declare no_positive" in run.last_error_line
    data["age_pred"][:] = 50.0  # a constant prediction: the declared (default 0.0) value, never an error
    declared = ["threshold = 0.5\n", "target = 0.75\n", "target = 0.8\n"]
    fill = {
        line: f"{line}{key} = 0.0\n"
        for line, key in zip(declared, ("no_positive", "single_class", "single_class"), strict=True)
    }
    toml, ground_truth, input_dir = values_case(tmp_path / "d", data, **fill)
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert run.exit_code == 0, run.stderr
    assert run.metrics["aggregates"]["pearson"] == 0.0 and run.metrics["aggregates"]["spearman"] == 0.0
    assert run.metrics["aggregates"]["sensitivity"] == 0.0


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("threshold = 0.5\n", "", r"metrics\[0\]\.threshold: is required"),
        ("target = 0.75", "target = 75", r"metrics\[2\]\.target: must be in \[0, 1\]"),
        ("threshold = 0.4", "threshold = 0.4\nno_positive = 0.5", r"metrics\[1\]\.no_positive: unknown key"),
        ('weights = "linear"', 'weights = "cubic"', r"metrics\[5\]\.weights: 'cubic' is not one of none, linear"),
        ('"high"]', '"high"]\nmissing = "misclassification"', r"metrics\[5\]\.weights: weighted kappa orders"),
        ('sign = "time"', 'sign = "survival"', r"metrics\[10\]\.sign: 'survival' is not one of risk, time"),
        ('event = "truth.csv:event"', 'event = "event"', r"outputs\[3\]\.event: 'event' is not 'file.csv:column'"),
        (
            'output = "age"\nbootstrap',
            'output = "risk"\nbootstrap',
            r"metrics\[7\]\.output: 'risk' has missing = 'tie'",
        ),
        ('output = "months"', 'output = "age"', r"metrics\[10\]\.output: c_index needs the event column"),
        ('metric = "pearson"', 'metric = "pearson"\nconstant = "error"', r"metrics\[7\]\.constant: must be a number"),
        (
            'metric = "spearman"\noutput = "age"',
            'metric = "spearman"\noutput = "level"',
            r"metrics\[8\]\.output: spearman scores a number",
        ),
    ],
)
def test_bad_value_declarations_name_the_key(old, new, message):
    text = VALUES.replace("__RISK_MISSING__", "tie")
    assert old in text
    with pytest.raises(ConfigurationError, match=message):
        parse(text.replace(old, new, 1), "values.toml")


# ------------------------------------------------------------------------------------- detection

DETECTION = """
name = "catalogue-detection"
title = "Declared detection metrics of the catalogue"
[[inputs]]
slug = "slide"
[[outputs]]
slug = "cells"
kind = "boxes"
reference = "boxes/{case}.json"
[[metrics]]
name = "ap"
metric = "detection_average_precision"
output = "cells"
bootstrap = true
[[metrics]]
name = "ap_hungarian"
metric = "detection_average_precision"
output = "cells"
matching = "hungarian"
threshold = 0.1
[[metrics]]
name = "recall_p50"
metric = "recall_at_precision"
output = "cells"
precision = 0.5
match = "distance"
threshold = 4.0
[[metrics]]
name = "froc"
metric = "froc"
output = "cells"
fp_rates = [0.5, 1, 2]
threshold = 0.3
bootstrap = true
[[metrics]]
name = "froc_negative"
metric = "froc"
output = "cells"
fp_rates = [1, 2]
fp_images = "negative"
threshold = 0.3
[bootstrap]
resamples = 200
[leaderboard]
score = "aggregates.ap"
"""

# i1: three cells, four scored boxes; i2: one cell, two boxes; i3: no cell (a negative image), two boxes.
# In i1 box (3, 0, 15, 10) @0.9 overlaps the first cell (IoU 7/15) and the second (IoU 5/17): greedy by
# score takes the first, leaving box @0.5 (IoU 0.4 with the first only) unmatched; the maximum total IoU
# gives it the second cell and the first to box @0.5. Its centre is 4 from the first cell's (inclusive).
REFERENCE_BOXES = {
    "i1": [[0, 0, 10, 10], [10, 0, 20, 10], [30, 30, 40, 40]],
    "i2": [[50, 50, 60, 60]],
    "i3": [],
}
PREDICTED_BOXES = {
    "i1": [[3, 0, 15, 10, 0.9], [0, 0, 4, 10, 0.5], [31, 31, 41, 41, 0.8], [70, 70, 80, 80, 0.7]],
    "i2": [[52, 50, 62, 60, 0.6], [20, 20, 25, 25, 0.95]],
    "i3": [[1, 1, 5, 5, 0.4], [6, 6, 9, 9, 0.85]],
}


def detection_case(root: Path, text: str = DETECTION, references: dict | None = None) -> tuple[Path, Path, Path]:
    toml, ground_truth = root / "det.toml", root / "gt"
    root.mkdir(parents=True, exist_ok=True)
    toml.write_text(text)
    (ground_truth / "boxes").mkdir(parents=True)
    for i, (case, rows) in enumerate((references or REFERENCE_BOXES).items()):  # both reference layouts
        document = platform_boxes(rows) if i % 2 else rows
        (ground_truth / "boxes" / f"{case}.json").write_text(json.dumps(document))
    challenge = get(str(toml))
    (cells,) = challenge.phase.outputs
    assert cells.kind == "Multiple 2D bounding boxes"
    jobs = [JobSpec(challenge.job_inputs(c), {cells: platform_boxes(rows)}) for c, rows in PREDICTED_BOXES.items()]
    write_input(root / "input", jobs)
    return toml, ground_truth, root / "input"


def true_positives(reference: list, predicted: list, how: str, threshold: float, hungarian: bool = False) -> list:
    """Whether each prediction matches: greedy in descending score, each taking the unmatched reference
    box of highest IoU (> threshold) or the nearest centre (<= threshold); or the brute-force assignment
    of maximum total IoU."""

    def quality(p: list, r: list) -> float:
        if how == "iou":
            return box_iou(p, r)
        return -float(np.hypot((p[0] + p[2] - r[0] - r[2]) / 2, (p[1] + p[3] - r[1] - r[3]) / 2))

    limit = threshold if how == "iou" else -threshold
    valid = [[quality(p, r) > limit or (how != "iou" and quality(p, r) == limit) for r in reference] for p in predicted]
    if hungarian:
        best, chosen = -1.0, ()
        for perm in itertools.permutations(range(len(predicted) + len(reference)), len(predicted)):
            pairs = [(i, j) for i, j in enumerate(perm) if j < len(reference) and valid[i][j]]
            total = sum(box_iou(predicted[i], reference[j]) for i, j in pairs)
            if total > best:
                best, chosen = total, pairs
        return [any(i == k for k, _ in chosen) for i in range(len(predicted))]
    taken, flags = set(), [False] * len(predicted)
    for i in sorted(range(len(predicted)), key=lambda k: -predicted[k][4]):
        options = [(quality(predicted[i], r), j) for j, r in enumerate(reference) if j not in taken and valid[i][j]]
        if options:
            taken.add(max(options)[1])
            flags[i] = True
    return flags


def operating_curve(how: str, threshold: float, hungarian: bool = False, cases=None) -> tuple:
    """(tp, fp on all images, fp on negative images) cumulated over the predictions by descending score."""
    cases = cases or list(REFERENCE_BOXES)
    rows = []
    for case in cases:
        flags = true_positives(REFERENCE_BOXES[case], PREDICTED_BOXES[case], how, threshold, hungarian)
        rows += [(p[4], f, not REFERENCE_BOXES[case]) for p, f in zip(PREDICTED_BOXES[case], flags, strict=True)]
    rows.sort(key=lambda row: -row[0])  # no tied scores here
    tp = np.cumsum([f for _, f, _ in rows])
    fp = np.cumsum([not f for _, f, _ in rows])
    fp_negative = np.cumsum([n for _, _, n in rows])
    return tp, fp, fp_negative, sum(len(REFERENCE_BOXES[c]) for c in cases), len(cases)


def voc_ap(tp: np.ndarray, fp: np.ndarray, n_reference: int) -> float:
    """All-point interpolated AP (PASCAL VOC 2010-2012 devkit VOCap.m), by hand."""
    recall = [0.0, *(tp / n_reference)]
    precision = [1.0, *(tp / (tp + fp))]
    for k in range(len(precision) - 2, -1, -1):
        precision[k] = max(precision[k], precision[k + 1])
    return sum((recall[k + 1] - recall[k]) * precision[k + 1] for k in range(len(recall) - 1))


def froc_by_hand(tp, fp, n_reference, n_images, rates) -> float:
    points = [(0.0, 0.0), *zip(fp / n_images, tp / n_reference, strict=True)]
    return float(np.mean([[recall for rate_fp, recall in points if rate_fp <= rate][-1] for rate in rates]))


def test_declared_detection_metrics_against_hand_computations(tmp_path, evaluate_cli):
    toml, ground_truth, input_dir = detection_case(tmp_path)
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert run.exit_code == 0, run.stderr
    got = run.metrics["aggregates"]
    tp, fp, fp_negative, n_reference, n_images = operating_curve("iou", 0.5)
    assert got["ap"] == pytest.approx(voc_ap(tp, fp, n_reference), abs=1e-12)
    greedy = operating_curve("iou", 0.1)
    hungarian = operating_curve("iou", 0.1, hungarian=True)
    assert greedy[0][-1] < hungarian[0][-1]  # the example tells the two matchings apart
    assert got["ap_hungarian"] == pytest.approx(voc_ap(hungarian[0], hungarian[1], n_reference), abs=1e-12)
    tp, fp, _, n_reference, _ = operating_curve("distance", 4.0)
    reached = [t / n_reference for t, f in zip(tp, fp, strict=True) if t / (t + f) >= 0.5]
    assert got["recall_p50"] == pytest.approx(max(reached), abs=1e-12)
    tp, fp, fp_negative, n_reference, n_images = operating_curve("iou", 0.3)
    assert got["froc"] == pytest.approx(froc_by_hand(tp, fp, n_reference, n_images, (0.5, 1, 2)), abs=1e-12)
    negative = froc_by_hand(tp, fp_negative, n_reference, 1, (1, 2))
    assert got["froc_negative"] == pytest.approx(negative, abs=1e-12)
    draws = np.random.default_rng(0).integers(0, 3, size=(200, 3))
    cases = list(REFERENCE_BOXES)
    aps = []
    for row in draws:
        drawn = [cases[i] for i in row]
        tp, fp, _, n_reference, _ = operating_curve("iou", 0.5, cases=drawn)
        if n_reference:  # a resample without any reference box is left out
            aps.append(voc_ap(tp, fp, n_reference))
    low, high = np.percentile(aps, [2.5, 97.5])
    assert (got["ap_ci_low"], got["ap_ci_high"]) == pytest.approx((low, high), abs=1e-12)
    assert "cells" not in run.metrics["case"]["i1"] and run.metrics["missing"]["cells"] == []


def test_detection_edge_cases_and_bad_boxes(tmp_path, evaluate_cli):
    empty = {case: [] for case in REFERENCE_BOXES}
    toml, ground_truth, input_dir = detection_case(tmp_path / "a", references=empty)
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert run.exit_code == 1 and "holds no reference box" in run.last_error_line
    assert "declare no_reference" in run.last_error_line
    head, _, tail = DETECTION.partition('[[metrics]]\nname = "froc_negative"')
    text = head + tail[tail.index("[bootstrap]") :]  # (no negative image here: fp_images = "negative" is refused)
    fill = {f'name = "{n}"\n': f'name = "{n}"\nno_reference = 0.25\n' for n in ("ap", "ap_hungarian", "recall_p50")}
    fill['name = "froc"\n'] = 'name = "froc"\nno_reference = 0.75\n'
    for old, new in fill.items():
        text = text.replace(old, new)
    toml, ground_truth, input_dir = detection_case(tmp_path / "b", text, references=empty)
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert run.exit_code == 0, run.stderr
    got = run.metrics["aggregates"]
    assert (got["ap"], got["ap_hungarian"], got["recall_p50"], got["froc"]) == (0.25, 0.25, 0.25, 0.75)
    toml, ground_truth, input_dir = detection_case(tmp_path / "c")
    bad = json.loads((input_dir / "predictions.json").read_text())
    job = bad[1]
    path = input_dir / job["pk"] / "output" / job["outputs"][0]["interface"]["relative_path"]
    path.write_text(json.dumps([[5, 5, 1, 9, 0.5]]))
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert run.exit_code == 1 and "Detection 0 of image i2 is degenerate" in run.last_error_line
    (ground_truth / "boxes" / "i1.json").write_text("[[1, 2, 3]]")
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert run.exit_code == 1 and "The reference boxes of case i1 (i1.json)" in run.last_error_line


def test_missing_boxes_count_as_no_detections_under_empty(tmp_path, evaluate_cli):
    """missing = "empty": image i2 without a job, and i3 with a job but without the output, are images
    without detections: i2's reference box is a false negative and both images still count in
    FROC's false positives per image (by hand over i1's predictions: 4 reference boxes, 3 images)."""
    text = DETECTION.replace(
        'reference = "boxes/{case}.json"\n', 'reference = "boxes/{case}.json"\nmissing = "empty"\n'
    )
    toml, ground_truth, input_dir = detection_case(tmp_path, text)
    jobs = json.loads((input_dir / "predictions.json").read_text())
    assert [job["inputs"][0]["image"]["name"].split(".")[0] for job in jobs[1:]] == ["i2", "i3"]
    jobs[2]["outputs"] = []
    (input_dir / "predictions.json").write_text(json.dumps([jobs[0], jobs[2]]))
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert run.exit_code == 0, run.stderr
    assert run.metrics["missing"] == {"jobs": ["i2"], "cells": ["i2", "i3"]}
    got = run.metrics["aggregates"]
    tp, fp, _, _, _ = operating_curve("iou", 0.5, cases=["i1"])
    assert got["ap"] == pytest.approx(voc_ap(tp, fp, 4), abs=1e-12)
    assert got["ap"] < voc_ap(tp, fp, 3)  # (i2's box counts)
    tp, fp, fp_negative, _, _ = operating_curve("iou", 0.3, cases=["i1"])
    assert got["froc"] == pytest.approx(froc_by_hand(tp, fp, 4, 3, (0.5, 1, 2)), abs=1e-12)
    assert got["froc_negative"] == pytest.approx(froc_by_hand(tp, fp_negative, 4, 1, (1, 2)), abs=1e-12)


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ('reference = "boxes/{case}.json"', 'reference = "boxes.csv:n"', r"outputs\[0\]\.reference: a boxes output"),
        ('reference = "boxes/{case}.json"', 'reference = "boxes/{case}.xml"', r"outputs\[0\]\.reference: .* \.json"),
        ('kind = "boxes"', 'kind = "list"', r"outputs\[0\]\.kind: 'list' is not supported by this version"),
        (
            'reference = "boxes/{case}.json"',
            'reference = "boxes/{case}.json"\nmissing = "empty-mask"',
            r"outputs\[0\]\.missing: 'empty-mask' is not one of error, empty, exclude \(for a boxes output\)",
        ),
        ("precision = 0.5\n", "", r"metrics\[2\]\.precision: is required"),
        ('match = "distance"', 'match = "centre"', r"metrics\[2\]\.match: 'centre' is not one of iou, distance"),
        ("threshold = 4.0\n", "", r"metrics\[2\]\.threshold: is required"),
        ("fp_rates = [1, 2]", "fp_rates = []", r"metrics\[4\]\.fp_rates: must be a non-empty list"),
        ('fp_images = "negative"', 'fp_images = "normal"', r"metrics\[4\]\.fp_images: 'normal' is not one of"),
        ('matching = "hungarian"', 'matching = "optimal"', r"metrics\[1\]\.matching: 'optimal' is not one of"),
        ("threshold = 0.1", "threshold = 1.5", r"metrics\[1\]\.threshold: must be in \[0, 1\)"),
    ],
)
def test_bad_detection_declarations_name_the_key(old, new, message):
    assert old in DETECTION
    with pytest.raises(ConfigurationError, match=message):
        parse(DETECTION.replace(old, new, 1), "det.toml")


# ---------------------------------------------------------------------------------------- points

POINTS = """
name = "catalogue-points"
title = "Declared detection metrics on points"
[[inputs]]
slug = "slide"
[[outputs]]
slug = "mitoses"
kind = "points"
reference = "points/{case}.json"
missing = "exclude"
[[metrics]]
name = "ap"
metric = "detection_average_precision"
output = "mitoses"
threshold = 3.0
[[metrics]]
name = "froc"
metric = "froc"
output = "mitoses"
threshold = 3.0
fp_rates = [0.25, 0.5, 1]
matching = "hungarian"
[leaderboard]
score = "aggregates.ap"
"""
REFERENCE_POINTS = {"m1": [[10, 10], [20, 10], [40, 40]], "m2": [[5, 5, 0]], "m3": []}
PREDICTED_POINTS = {  # (x, y, score); m1's first prediction is 2 from the first point and 8 from the second
    "m1": [[12, 10, 0.9], [19, 12, 0.7], [60, 60, 0.8]],
    "m2": [[5, 8, 0.6], [30, 30, 0.5]],
    "m3": [[1, 1, 0.3]],
}


def test_declared_points_by_hand(tmp_path, evaluate_cli):
    """Points match by distance (<= threshold, inclusive); the platform's "Multiple points" JSON
    with 2D points in the plane z = 0; AP and FROC by hand; a missing output under "exclude" and
    under "empty"."""
    root = tmp_path
    (root / "gt" / "points").mkdir(parents=True)
    for case, rows in REFERENCE_POINTS.items():
        (root / "gt" / "points" / f"{case}.json").write_text(json.dumps(rows))
    toml = root / "points.toml"
    toml.write_text(POINTS)
    challenge = get(str(toml))
    (mitoses,) = challenge.phase.outputs
    assert mitoses.kind == "Multiple points"
    documents = {
        case: {"type": "Multiple points", "points": [{"point": [x, y, 0], "probability": p} for x, y, p in rows],
               "version": {"major": 1, "minor": 0}}
        for case, rows in PREDICTED_POINTS.items()
    }  # fmt: skip
    write_input(root / "input", [JobSpec(challenge.job_inputs(c), {mitoses: d}) for c, d in documents.items()])
    run = evaluate_cli(str(toml), root / "input", ground_truth=root / "gt")
    assert run.exit_code == 0, run.stderr
    # by hand, in descending score: m1 0.9 TP (2 from [10, 10]), m1 0.8 FP, m1 0.7 TP (sqrt 5 from
    # [20, 10]), m2 0.6 TP (3 from [5, 5]: inclusive), m2 0.5 FP, m3 0.3 FP; 4 reference points, 3 images
    tp, fp = np.array([1, 1, 2, 3, 3, 3]), np.array([0, 1, 1, 1, 2, 3])
    assert run.metrics["aggregates"]["ap"] == pytest.approx(voc_ap(tp, fp, 4), abs=1e-12)
    expected = froc_by_hand(tp, fp, 4, 3, (0.25, 0.5, 1))
    assert expected == pytest.approx((0.25 + 0.75 + 0.75) / 3)
    assert run.metrics["aggregates"]["froc"] == pytest.approx(expected, abs=1e-12)
    del documents["m2"]
    write_input(root / "input2", [JobSpec(challenge.job_inputs(c), {mitoses: d}) for c, d in documents.items()])
    run = evaluate_cli(str(toml), root / "input2", ground_truth=root / "gt")
    assert run.exit_code == 0, run.stderr
    assert run.metrics["missing"] == {"jobs": ["m2"], "mitoses": ["m2"]}
    tp, fp = np.array([1, 1, 2, 2]), np.array([0, 1, 1, 2])  # m2 left out: 3 reference points, 2 images
    assert run.metrics["aggregates"]["ap"] == pytest.approx(voc_ap(tp, fp, 3), abs=1e-12)
    toml.write_text(POINTS.replace('missing = "exclude"', 'missing = "empty"'))
    run = evaluate_cli(str(toml), root / "input2", ground_truth=root / "gt")  # m2: an image without detections
    assert run.exit_code == 0, run.stderr
    assert run.metrics["missing"] == {"jobs": ["m2"], "mitoses": ["m2"]}
    assert run.metrics["aggregates"]["ap"] == pytest.approx(voc_ap(tp, fp, 4), abs=1e-12)  # its point is missed
    expected = froc_by_hand(tp, fp, 4, 3, (0.25, 0.5, 1))  # three images
    assert expected == pytest.approx((0.25 + 0.5 + 0.5) / 3)
    assert run.metrics["aggregates"]["froc"] == pytest.approx(expected, abs=1e-12)
    with pytest.raises(ConfigurationError, match=r"metrics\[0\]\.match: 'iou' is not one of distance"):
        parse(POINTS.replace("threshold = 3.0", 'match = "iou"\nthreshold = 0.5', 1), "points.toml")


def test_parse_points_formats_and_errors():
    from evaluation.errors import SubmissionError
    from evaluation.platform.detections import parse_points

    document = {"type": "Multiple points", "points": [{"point": [1, 2], "probability": 0.5}, {"point": [3, 4, 5],
                "probability": 1}]}  # fmt: skip
    points, scores = parse_points(document, "c")
    assert points.tolist() == [[1, 2, 0], [3, 4, 5]] and scores.tolist() == [0.5, 1.0]
    points, scores = parse_points([[1, 2, 0.25], [3, 4, 5, 0.75]], "c")
    assert points.tolist() == [[1, 2, 0], [3, 4, 5]] and scores.tolist() == [0.25, 0.75]
    points, scores = parse_points([[1, 2], [3, 4, 5]], "c", scored=False)
    assert points.tolist() == [[1, 2, 0], [3, 4, 5]] and scores.tolist() == [1.0, 1.0]
    assert parse_points({"points": []}, "c")[0].shape == (0, 3)
    for bad, message in [
        ({"type": "Multiple points"}, "The points of image c have no list of 'points'"),
        ({"points": [[1, 2]]}, "Point 0 of image c is not an object"),
        ({"points": [{"point": [1], "probability": 0.5}]}, "Point 0 of image c does not have 2 or 3 coordinates"),
        ({"points": [{"point": [1, 2]}]}, "The score of point 0 of image c"),
        ([[1, 2, 1.5]], "Point 0 of image c has a score outside"),
        ("1, 2", "neither a list nor points JSON"),
    ]:
        with pytest.raises(SubmissionError, match=message):
            parse_points(bad, "c")


# ---------------------------------------------------------------------------- coverage and docs


def test_every_catalogue_metric_is_declarable_and_documented():
    """Each catalogue entry is reached by a declared metric (directly, or as the per-label, dataset
    or count form of one, or as the multi-class form on a probabilities output); every declarable
    metric has a row in the site's generated reference of metrics."""
    from evaluation.declarative import measures
    from evaluation.declarative.derived import metric_table
    from evaluation.declarative.metric_records import RECORDS
    from evaluation.declarative.schema import (
        COMBINED,
        DECISION_METRICS,
        DETECTION_METRICS,
        HEAT_MAP_METRICS,
        SEGMENTATION_METRICS,
        VALUE_METRICS,
    )
    from evaluation.metrics import catalogue

    reached = (
        (set(SEGMENTATION_METRICS) | set(measures.VALUE_METRICS.values()) | set(measures.DETECTION_METRICS.values()))
        | set(measures.HEAT_MAP_METRICS.values())
        | set(measures.DECISION_METRICS.values())
        | {r.catalogue for r in RECORDS}  # (lesion_wise_dice and lesion_wise_hd95 reach lesion_wise)
    )
    forms = {"dice_per_label", "iou_per_label", "aggregated_dice", "lesion_counts", "lesion_f1_from_counts",
             "multiclass_brier_score"}  # fmt: skip
    assert set(catalogue.names()) - reached - forms == set()
    table = metric_table()  # the site's reference of metrics (scripts/docs_hooks.py)
    for name in (
        *SEGMENTATION_METRICS,
        *VALUE_METRICS,
        *DETECTION_METRICS,
        *DECISION_METRICS,
        *HEAT_MAP_METRICS,
        COMBINED,
    ):
        assert f"`{name}`" in table, name


def test_the_readme_sketches_parse():
    """The README's "More catalogue metrics" declarations are valid as written."""
    section = documented_section("More catalogue metrics")
    blocks = [block.split("\n```", 1)[0] for block in section.split("```toml\n")[1:]]
    assert len(blocks) == 10  # the catalogue sketches, groups, ISLES 2022 and the stacked one (AIROGS)
    declarations = [parse(block, "README") for block in blocks]
    assert {m.metric for d in declarations for m in d.metrics} >= {"c_index", "froc", "panoptic_quality",
                                                                   "top_label_calibration_error",
                                                                   "overlap_lesion_f1"}  # fmt: skip
