"""Today's declaration features, declared by an outsider from the README alone and checked independently.

Issue 14's acceptance ("a challenge written by someone else from the README's documentation alone ...
every catalogue metric equal to its independent reference to 1e-9, each edge case as declared, a bad
declaration refused with a message naming the key") for the features the README section "A new
challenge without Python" gained after ``test_readme_outsider.py``: the ``probabilities`` output kind,
prediction-file phases (``[submission] kind = "csv"``), one-hot references, ``missing = "empty"`` on
boxes, and HECKTOR-style report keys. The declarations were written from that README section only;
every number is recomputed here with scikit-learn or by hand from the README's definitions.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import REPO
from declarative.helpers import (
    bootstrap_ci,
    close,
    close_ci,
    detection_data,
    detections,
    ece,
    evaluate,
    evaluate_input,
    froc,
    iou_matrix,
    last_line,
    make_input,
    matched_ious,
    operating_points,
    platform_boxes,
    platform_points,
    voc_ap,
    write_image,
    write_json,
)
from sklearn import metrics as skm

# --------------------------------------------------------------------------- class probabilities (jobs)

PROBABILITIES = """
name = "outsider-probabilities"
title = "Three-class diagnosis from class probabilities"

[[inputs]]
slug = "image"

[[outputs]]
slug = "dx"
kind = "probabilities"
classes = ["MEL", "NV", "BCC"]
reference = "truth.csv:diagnosis"
sum = "one"
missing = "uniform"

[[outputs]]
slug = "dxw"
kind = "probabilities"
classes = ["MEL", "NV", "BCC"]
reference = "truth.csv:diagnosis"
missing = "worst-value"

[[outputs]]
slug = "dxe"
kind = "probabilities"
classes = ["MEL", "NV", "BCC"]
reference = "truth.csv:diagnosis"
sum = "any"
missing = "exclude"

[[outputs]]
slug = "rare"
kind = "probabilities"
classes = ["MEL", "NV", "BCC"]
reference = "truth.csv:rare"
sum = "any"

[[metrics]]
metric = "auroc"
output = "dx"
bootstrap = true

[[metrics]]
metric = "average_precision"
output = "dx"

[[metrics]]
metric = "ece"
output = "dx"
bins = 5

[[metrics]]
metric = "sensitivity"
output = "dx"

[[metrics]]
metric = "specificity"
output = "dx"

[[metrics]]
metric = "brier"
output = "dx"
bootstrap = true

[[metrics]]
name = "tlce"
metric = "top_label_calibration_error"
output = "dx"
bins = 4

[[metrics]]
metric = "accuracy"
output = "dx"
bootstrap = true

[[metrics]]
metric = "balanced_accuracy"
output = "dx"

[[metrics]]
name = "kappa"
metric = "cohen_kappa"
output = "dx"

[[metrics]]
name = "kappa_q"
metric = "cohen_kappa"
output = "dx"
weights = "quadratic"

[[metrics]]
name = "kappa_l"
metric = "cohen_kappa"
output = "dx"
weights = "linear"

[[metrics]]
name = "auroc_w"
metric = "auroc"
output = "dxw"

[[metrics]]
name = "brier_w"
metric = "brier"
output = "dxw"

[[metrics]]
name = "acc_w"
metric = "accuracy"
output = "dxw"

[[metrics]]
name = "auroc_e"
metric = "auroc"
output = "dxe"
aggregates = ["macro"]

[[metrics]]
name = "brier_e"
metric = "brier"
output = "dxe"

[[metrics]]
name = "bacc_e"
metric = "balanced_accuracy"
output = "dxe"

[[metrics]]
name = "auroc_r1"
metric = "auroc"
output = "rare"
single_class = 0.5

[[metrics]]
name = "auroc_r2"
metric = "auroc"
output = "rare"
single_class = "exclude"
bootstrap = true

[[metrics]]
name = "ap_r"
metric = "average_precision"
output = "rare"
no_positive = "exclude"

[[metrics]]
name = "sens_r"
metric = "sensitivity"
output = "rare"
no_positive = 0.25

[bootstrap]
resamples = 200
seed = 3
level = 0.9

[leaderboard]
score = "aggregates.auroc_macro"
"""

CLASSES = ["MEL", "NV", "BCC"]
N_PROB = 30
IMAGES = [f"C{k:02d}" for k in range(1, N_PROB + 1)]
DROP = {"dx": "C04", "dxw": "C05", "dxe": "C06"}


def probability_data() -> dict[str, Any]:
    rng = np.random.default_rng(14)
    y = np.array([k % 3 for k in range(N_PROB)])
    rng.shuffle(y)
    raw = rng.dirichlet([1.0, 1.0, 1.0], N_PROB) + 0.8 * np.eye(3)[y] * rng.random((N_PROB, 1))
    p = np.round(raw / raw.sum(1, keepdims=True), 6)
    p[:, 2] = 1.0 - p[:, 0] - p[:, 1]  # sums to 1 within the tolerance
    p[7] = [0.4, 0.4, 0.2]  # an argmax tie: the first declared class wins
    p[8] = [0.2, 0.4, 0.4]
    scores = np.round(rng.random((N_PROB, 3)), 4)  # independent scores (sum = "any")
    rare = np.array([k % 2 for k in range(N_PROB)])  # BCC never occurs
    return {"y": y, "p": p, "scores": scores, "rare": rare}


def write_probabilities(root: Path, data: dict[str, Any]) -> None:
    rows = ["case,diagnosis,rare"] + [
        f"{c},{CLASSES[data['y'][k]]},{CLASSES[data['rare'][k]]}" for k, c in enumerate(IMAGES)
    ]
    (root / "gt").mkdir(parents=True, exist_ok=True)
    (root / "gt" / "truth.csv").write_text("\n".join(rows) + "\n")
    for k, case in enumerate(IMAGES):
        p = [float(v) for v in data["p"][k]]
        as_object = dict(zip(CLASSES, p, strict=True))
        answers = {"dx": as_object if k % 2 else p, "dxw": p if k % 2 else as_object}
        answers["dxe"] = [float(v) for v in data["scores"][k]]
        answers["rare"] = dict(zip(CLASSES, answers["dxe"], strict=True))
        for slug, value in answers.items():
            if DROP.get(slug) != case:
                write_json(root / "outputs" / case / f"{slug}.json", value)


def argmax_first(p: np.ndarray) -> np.ndarray:
    """Each row's argmax, a tie to the first declared class (numpy's argmax takes the first maximum)."""
    return np.argmax(p, axis=1)


def per_class(y: np.ndarray, p: np.ndarray, name: str, bins: int = 5) -> dict[int, float]:
    if name == "auroc":
        return {k: skm.roc_auc_score(y == k, p[:, k]) for k in range(3)}
    if name == "average_precision":
        return {k: skm.average_precision_score(y == k, p[:, k]) for k in range(3)}
    if name == "ece":
        return {k: ece((y == k).astype(float), p[:, k], bins) for k in range(3)}
    decided = argmax_first(p)
    if name == "sensitivity":
        return {k: skm.recall_score(y == k, decided == k) for k in range(3)}
    return {k: skm.recall_score(y != k, decided != k) for k in range(3)}  # specificity


def brier(y: np.ndarray, p: np.ndarray) -> float:
    return float(np.mean(np.sum((p - np.eye(3)[y]) ** 2, axis=1)))


def top_label(y: np.ndarray, p: np.ndarray, bins: int) -> float:
    decided = argmax_first(p)
    return ece((decided == y).astype(float), p.max(axis=1), bins)


@pytest.fixture(scope="module")
def probabilities_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("probabilities")
    declaration = root / "outsider-probabilities.toml"
    declaration.write_text(PROBABILITIES)
    data = probability_data()
    write_probabilities(root, data)
    done, metrics = evaluate(declaration, root / "outputs", root / "gt", root)
    assert done.returncode == 0, done.stderr
    return metrics, data, root, declaration


def imputed(data: dict[str, Any]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Each output's (reference, probabilities) over its scored cases after its missing policy."""
    y, p = data["y"], data["p"]
    uniform = p.copy()
    uniform[IMAGES.index(DROP["dx"])] = 1 / 3
    worst = p.copy()
    k = IMAGES.index(DROP["dxw"])
    wrong = next(c for c in range(3) if c != y[k])  # all mass on the first declared class that is not y
    worst[k] = np.eye(3)[wrong]
    keep = np.array([c != DROP["dxe"] for c in IMAGES])
    return {"dx": (y, uniform), "dxw": (y, worst), "dxe": (y[keep], data["scores"][keep])}


def test_probabilities_equal_independent_references(probabilities_run):
    metrics, data, _, _ = probabilities_run
    agg = metrics["aggregates"]
    y, p = imputed(data)["dx"]
    for name in ("auroc", "average_precision", "ece", "sensitivity", "specificity"):
        values = per_class(y, p, name)
        for k, cls in enumerate(CLASSES):
            close(agg[f"{name}_{cls}"], values[k], f"{name}_{cls}")
        close(agg[f"{name}_macro"], float(np.mean(list(values.values()))), f"{name}_macro")
    close(agg["brier"], brier(y, p), "brier")
    # scikit-learn's multi-class Brier (columns in sorted class order), as the README cites it
    order = np.argsort(CLASSES)
    sorted_names = np.array(CLASSES)[y]
    close(agg["brier"], skm.brier_score_loss(sorted_names, p[:, order], labels=sorted(CLASSES)), "brier (sklearn)")
    close(agg["tlce"], top_label(y, p, 4), "tlce")
    decided = argmax_first(p)
    assert decided[7] == 0 and decided[8] == 1  # the tie rule, as the README states it
    close(agg["accuracy"], skm.accuracy_score(y, decided), "accuracy")
    close(agg["balanced_accuracy"], skm.balanced_accuracy_score(y, decided), "balanced_accuracy")
    close(agg["kappa"], skm.cohen_kappa_score(y, decided, labels=[0, 1, 2]), "kappa")
    for name, weights in (("kappa_q", "quadratic"), ("kappa_l", "linear")):
        close(agg[name], skm.cohen_kappa_score(y, decided, labels=[0, 1, 2], weights=weights), name)
    # worst-value and exclude
    yw, pw = imputed(data)["dxw"]
    auroc_w = [skm.roc_auc_score(yw == k, pw[:, k]) for k in range(3)]
    for k, cls in enumerate(CLASSES):
        close(agg[f"auroc_w_{cls}"], auroc_w[k], f"auroc_w_{cls}")
    close(agg["auroc_w_macro"], float(np.mean(auroc_w)), "auroc_w_macro")
    close(agg["brier_w"], brier(yw, pw), "brier_w")
    close(agg["acc_w"], skm.accuracy_score(yw, argmax_first(pw)), "acc_w")
    ye, pe = imputed(data)["dxe"]
    close(agg["auroc_e_macro"], float(np.mean([skm.roc_auc_score(ye == k, pe[:, k]) for k in range(3)])), "auroc_e")
    assert "auroc_e_MEL" not in agg  # aggregates = ["macro"] only
    close(agg["brier_e"], brier(ye, pe), "brier_e")
    close(agg["bacc_e"], skm.balanced_accuracy_score(ye, argmax_first(pe)), "bacc_e")


def test_probabilities_edge_cases_as_declared(probabilities_run):
    metrics, data, _, _ = probabilities_run
    agg = metrics["aggregates"]
    yr, pr = data["rare"], data["scores"]
    auroc = [skm.roc_auc_score(yr == k, pr[:, k]) for k in range(2)]
    # single_class = 0.5: BCC (no case) is 0.5 and counts in the macro
    close(agg["auroc_r1_BCC"], 0.5, "auroc_r1_BCC")
    close(agg["auroc_r1_macro"], (auroc[0] + auroc[1] + 0.5) / 3, "auroc_r1_macro")
    # "exclude": null, left out of the macro
    assert agg["auroc_r2_BCC"] is None
    close(agg["auroc_r2_macro"], (auroc[0] + auroc[1]) / 2, "auroc_r2_macro")
    ap = [skm.average_precision_score(yr == k, pr[:, k]) for k in range(2)]
    assert agg["ap_r_BCC"] is None
    close(agg["ap_r_macro"], float(np.mean(ap)), "ap_r_macro")
    decided = argmax_first(pr)
    sens = [skm.recall_score(yr == k, decided == k) for k in range(2)]
    close(agg["sens_r_BCC"], 0.25, "sens_r_BCC")
    close(agg["sens_r_macro"], (sens[0] + sens[1] + 0.25) / 3, "sens_r_macro")


def test_probabilities_bootstrap_follows_the_documented_scheme(probabilities_run):
    metrics, data, _, _ = probabilities_run
    agg = metrics["aggregates"]
    y, p = imputed(data)["dx"]
    n = len(y)

    def class_auroc(k):
        def statistic(draw):
            truth = y[draw] == k
            return skm.roc_auc_score(truth, p[draw, k]) if 0 < truth.sum() < len(draw) else None

        return statistic

    draws = np.random.default_rng(3).integers(0, n, (200, n))
    per_draw = {d.tobytes(): [class_auroc(k)(d) for k in range(3)] for d in draws}  # scikit-learn once per class
    for k, cls in enumerate(CLASSES):
        close_ci(agg, f"auroc_{cls}", bootstrap_ci(lambda d, k=k: per_draw[d.tobytes()][k], n, 200, 3, 0.9))

    def macro(draw):  # single_class = "error": a resample with a class at its edge is left out
        values = per_draw[draw.tobytes()]
        return None if None in values else float(np.mean(values))

    close_ci(agg, "auroc_macro", bootstrap_ci(macro, n, 200, 3, 0.9))
    close_ci(agg, "brier", bootstrap_ci(lambda d: brier(y[d], p[d]), n, 200, 3, 0.9))
    close_ci(agg, "accuracy", bootstrap_ci(lambda d: skm.accuracy_score(y[d], argmax_first(p[d])), n, 200, 3, 0.9))
    yr, pr = data["rare"], data["scores"]

    def macro_exclude(draw):  # "exclude": the mean over the classes the resample holds
        values = [
            skm.roc_auc_score(yr[draw] == k, pr[draw, k]) for k in range(3) if 0 < (yr[draw] == k).sum() < len(draw)
        ]
        return float(np.mean(values)) if values else None

    close_ci(agg, "auroc_r2_macro", bootstrap_ci(macro_exclude, len(yr), 200, 3, 0.9))


def test_probabilities_report_answers_and_missing(probabilities_run):
    metrics, data, _, _ = probabilities_run
    case = metrics["case"]
    # the answer per case shown as an object (list answers too); null when missing (never the imputation)
    assert case["C01"]["dx"] == dict(zip(CLASSES, [float(v) for v in data["p"][0]], strict=True))
    assert case["C02"]["dx"] == dict(zip(CLASSES, [float(v) for v in data["p"][1]], strict=True))
    for slug, missing_case in DROP.items():
        assert case[missing_case][slug] is None
        assert metrics["missing"][slug] == [missing_case]


# --------------------------------------------------------------------------- a prediction-file phase, one-hot reference

CSV_PHASE = """
name = "outsider-csv"
title = "Diagnosis and a score per image (CSV upload)"

[submission]
kind = "csv"
id_column = "image"

[cases]
id_column = "image_id"
word = "image"

[[outputs]]
slug = "diag"
kind = "probabilities"
classes = ["MEL", "NV", "UNK"]
columns = { MEL = "p_mel" }
reference = "truth.csv"
reference_columns = { MEL = "melanoma" }
reference_none = "UNK"
missing = "uniform"

[[outputs]]
slug = "score"
kind = "number"
column = "p_score"
reference = "truth.csv:target"
range = [0, 1]
missing = "worst-value"

[[metrics]]
metric = "auroc"
output = "diag"
bootstrap = true

[[metrics]]
metric = "balanced_accuracy"
output = "diag"

[[metrics]]
metric = "brier"
output = "diag"

[[metrics]]
name = "auroc_s"
metric = "auroc"
output = "score"

[[metrics]]
name = "ece_s"
metric = "ece"
output = "score"
bins = 4

[bootstrap]
resamples = 150
seed = 1
level = 0.95

[leaderboard]
score = "aggregates.auroc_macro"
"""

N_CSV = 24
ISIC = [f"ISIC_{k:07d}" for k in range(1, N_CSV + 1)]
NO_ROW, BLANK_CLASSES, BLANK_SCORE = "ISIC_0000003", "ISIC_0000009", "ISIC_0000011"
CSV_CLASSES = ["MEL", "NV", "UNK"]


def csv_data() -> dict[str, Any]:
    rng = np.random.default_rng(99)
    y = np.array([k % 3 for k in range(N_CSV)])
    rng.shuffle(y)
    p = np.round(rng.dirichlet([1.0, 1.0, 1.0], N_CSV) * 0.5 + 0.5 * np.eye(3)[y] * rng.random((N_CSV, 1)), 5)
    p = np.round(p / p.sum(1, keepdims=True), 5)
    p[:, 2] = np.round(1 - p[:, 0] - p[:, 1], 5)
    target = (rng.random(N_CSV) < 0.5).astype(int)
    target[:2] = [0, 1]
    s = np.round(np.clip(0.3 * target + rng.random(N_CSV) * 0.7, 0, 1), 4)
    return {"y": y, "p": p, "target": target, "s": s}


def write_csv_phase(root: Path, data: dict[str, Any], truth_rows: dict[int, str] | None = None) -> Path:
    """The one-hot truth (``melanoma``, ``NV``; UNK = no column at 1) and the participant's CSV."""
    rows = ["image_id,melanoma,NV,target,score_weight"]
    for k, image in enumerate(ISIC):
        one_hot = [int(data["y"][k] == 0), int(data["y"][k] == 1)]
        rows.append(f"{image},{one_hot[0]},{one_hot[1]},{data['target'][k]},1.0")
    for line, text in (truth_rows or {}).items():
        rows[line - 1] = text
    (root / "gt").mkdir(parents=True, exist_ok=True)
    (root / "gt" / "truth.csv").write_text("\n".join(rows) + "\n")
    submission = ["image,extra,p_score,UNK,NV,p_mel"]  # any column order, an ignored extra column
    for k in reversed(range(N_CSV)):  # rows in any order
        image = ISIC[k]
        if image == NO_ROW:
            continue
        mel, nv, unk = ["", "", ""] if image == BLANK_CLASSES else [repr(float(v)) for v in data["p"][k]]
        score = "" if image == BLANK_SCORE else repr(float(data["s"][k]))
        submission.append(f"{image},x,{score},{unk},{nv},{mel}")
    (root / "input").mkdir(parents=True, exist_ok=True)
    (root / "input" / "predictions.csv").write_text("\n".join(submission) + "\n")
    return root / "input"


def evaluate_csv(root: Path, declaration_text: str = CSV_PHASE, evaluate_cli: Any = None) -> tuple[Any, dict | None]:
    """The CSV phase as a subprocess, or in this process through ``evaluate_cli`` (refusals: faster)."""
    declaration = root / "outsider-csv.toml"
    declaration.write_text(declaration_text)
    if evaluate_cli is not None:
        done = evaluate_cli(str(declaration), root / "input", ground_truth=root / "gt")
        return done, (done.metrics if done.wrote_metrics else None)
    return evaluate_input(declaration, root / "input", root / "gt", root)


def test_prediction_csv_with_one_hot_reference(tmp_path):
    data = csv_data()
    write_csv_phase(tmp_path, data)
    done, metrics = evaluate_csv(tmp_path)
    assert done.returncode == 0, done.stderr
    agg = metrics["aggregates"]
    y, p = data["y"], data["p"].copy()
    for image in (NO_ROW, BLANK_CLASSES):  # uniform
        p[ISIC.index(image)] = 1 / 3
    auroc = [skm.roc_auc_score(y == k, p[:, k]) for k in range(3)]
    for k, cls in enumerate(CSV_CLASSES):
        close(agg[f"auroc_{cls}"], auroc[k], f"auroc_{cls}")
    close(agg["auroc_macro"], float(np.mean(auroc)), "auroc_macro")
    close(agg["balanced_accuracy"], skm.balanced_accuracy_score(y, argmax_first(p)), "balanced_accuracy")
    close(agg["brier"], brier(y, p), "brier")

    def macro(draw):
        values = [skm.roc_auc_score(y[draw] == k, p[draw, k]) if 0 < (y[draw] == k).sum() < len(draw) else None
                  for k in range(3)]  # fmt: skip
        return None if None in values else float(np.mean(values))

    close_ci(agg, "auroc_macro", bootstrap_ci(macro, N_CSV, 150, 1, 0.95))
    t, s = data["target"], data["s"].copy()
    for image in (NO_ROW, BLANK_SCORE):  # worst-value: the end of range farthest from the reference
        k = ISIC.index(image)
        s[k] = 0.0 if t[k] == 1 else 1.0
    close(agg["auroc_s"], skm.roc_auc_score(t, s), "auroc_s")
    close(agg["ece_s"], ece(t.astype(float), s, 4), "ece_s")
    assert metrics["missing"]["rows"] == [NO_ROW]
    assert metrics["missing"]["diag"] == [NO_ROW, BLANK_CLASSES]
    assert metrics["missing"]["score"] == [NO_ROW, BLANK_SCORE]
    assert metrics["case"][BLANK_CLASSES]["diag"] is None
    assert metrics["case"][BLANK_SCORE]["score"] is None


# the README's quoted one-line refusals of a one-hot reference (line 6 = ISIC_0000005)
ONE_HOT_REFUSALS = [
    (
        CSV_PHASE,
        "ISIC_0000005,0,2,1,1.0",
        "Line 6 of truth.csv has a cell for image ISIC_0000005 in column 'NV' that is not 0 or 1 "
        "(1/1.0/true/yes/0/0.0/false/no).",
    ),
    (
        CSV_PHASE,
        "ISIC_0000005,1,,1,1.0",
        "Line 6 of truth.csv has a blank cell for image ISIC_0000005 in column 'NV'.",
    ),
    (
        CSV_PHASE,
        "ISIC_0000005,1,1,1,1.0",
        "Line 6 of truth.csv has more than one class column at 1 for image ISIC_0000005",
    ),
    (
        CSV_PHASE.replace('reference_none = "UNK"\n', "").replace('"NV", "UNK"', '"NV"'),
        "ISIC_0000005,0,0,1,1.0",
        "Line 6 of truth.csv has no class column at 1 for image ISIC_0000005; a one-hot reference needs exactly "
        "one (melanoma, NV).",
    ),
]


@pytest.mark.parametrize(("declaration", "row", "message"), ONE_HOT_REFUSALS)
def test_one_hot_reference_refusals_are_the_readme_lines(tmp_path, evaluate_cli, declaration, row, message):
    data = csv_data()
    data["y"] = np.minimum(data["y"], 1) if "UNK" not in declaration else data["y"]
    write_csv_phase(tmp_path, data, {6: row})
    if "UNK" not in declaration:  # two classes: the CSV has no UNK column to read
        csv = tmp_path / "input" / "predictions.csv"
        lines = [line.split(",") for line in csv.read_text().splitlines()]
        csv.write_text("\n".join(",".join(cells[:3] + cells[4:]) for cells in lines) + "\n")
    done, metrics = evaluate_csv(tmp_path, declaration, evaluate_cli)
    assert done.exit_code != 0 and metrics is None
    assert "Traceback" not in done.stderr
    assert last_line(done.stderr).startswith(message), done.stderr


SUBMISSION_REFUSALS = [
    ("some blank class cells", lambda cells: [*cells[:4], "", *cells[5:]], ("line", "ISIC_0000005", "NV")),
    ("a sum off 1", lambda cells: [*cells[:3], "0.5", *cells[4:]], ("line", "ISIC_0000005")),
    ("a probability above 1", lambda cells: [*cells[:5], "1.5"], ("line", "ISIC_0000005", "p_mel")),
    ("a non-number", lambda cells: [*cells[:2], "high", *cells[3:]], ("line", "ISIC_0000005", "p_score")),
    ("more cells than the header", lambda cells: [*cells, "1"], ("line", "has 7 cells; its header has 6 columns")),
]


@pytest.mark.parametrize(("what", "edit", "words"), SUBMISSION_REFUSALS)
def test_bad_submission_rows_are_one_line_naming_line_and_case(tmp_path, evaluate_cli, what, edit, words):
    data = csv_data()
    write_csv_phase(tmp_path, data)
    csv = tmp_path / "input" / "predictions.csv"
    lines = csv.read_text().splitlines()
    index = next(i for i, line in enumerate(lines) if line.startswith("ISIC_0000005,"))
    lines[index] = ",".join(edit(lines[index].split(",")))
    csv.write_text("\n".join(lines) + "\n")
    done, metrics = evaluate_csv(tmp_path, CSV_PHASE, evaluate_cli)
    line = last_line(done.stderr)
    assert done.exit_code != 0 and metrics is None and "Traceback" not in done.stderr, what
    assert all(word.lower() in line.lower() for word in words), (what, line)


# --------------------------------------------------------------------------- boxes and points: missing = "empty"

EMPTY_DETECTIONS = """
name = "outsider-empty"
title = "Detections with a missing output counted as no detections"

[[inputs]]
slug = "image"

[[outputs]]
slug = "cells"
kind = "boxes"
reference = "boxes/{case}.json"
missing = "empty"

[[outputs]]
slug = "nuclei"
kind = "points"
reference = "points/{case}.json"
missing = "empty"

[[metrics]]
name = "ap"
metric = "detection_average_precision"
output = "cells"
match = "iou"
threshold = 0.5

[[metrics]]
name = "froc"
metric = "froc"
output = "cells"
match = "iou"
fp_rates = [0.25, 0.5, 1, 2]

[[metrics]]
name = "froc_points"
metric = "froc"
output = "nuclei"
match = "distance"
threshold = 6.0
fp_rates = [0.25, 0.5, 1, 2]

[leaderboard]
score = "aggregates.ap"
"""


def test_missing_empty_detections_are_false_negatives_and_count_as_images(tmp_path):
    ref_boxes, pred_boxes, ref_points, pred_points = detection_data()
    images = list(ref_boxes)
    gone = images[1]  # an image with reference objects and no output at all
    assert ref_boxes[gone]
    declaration = tmp_path / "outsider-empty.toml"
    declaration.write_text(EMPTY_DETECTIONS)
    for image in images:
        write_json(tmp_path / "gt" / "boxes" / f"{image}.json", ref_boxes[image])
        write_json(tmp_path / "gt" / "points" / f"{image}.json", ref_points[image])
        if image != gone:
            write_json(tmp_path / "outputs" / image / "cells.json", platform_boxes(pred_boxes[image]))
            write_json(tmp_path / "outputs" / image / "nuclei.json", platform_points(pred_points[image]))
    done, metrics = evaluate(declaration, tmp_path / "outputs", tmp_path / "gt", tmp_path)
    assert done.returncode == 0, done.stderr
    agg = metrics["aggregates"]
    pred_boxes[gone], pred_points[gone] = [], []  # "empty": no detections
    found = detections(ref_boxes, pred_boxes, "iou", 0.5)
    close(agg["ap"], voc_ap(*found[:2], found[3]), "ap")
    close(agg["froc"], froc(operating_points(*found, None, len(images)), [0.25, 0.5, 1, 2]), "froc")
    near = detections(ref_points, pred_points, "distance", 6.0)
    close(agg["froc_points"], froc(operating_points(*near, None, len(images)), [0.25, 0.5, 1, 2]), "froc_points")
    assert metrics["missing"]["cells"] == [gone] and metrics["missing"]["nuclei"] == [gone]


# --------------------------------------------------------------------------- HECKTOR-style report keys

HECKTOR_STYLE = """
name = "outsider-hecktor-style"
title = "Primary tumour and lymph nodes, label by label"

[[inputs]]
slug = "ct"

[[outputs]]
slug = "seg"
kind = "segmentation"
reference = "labels/{case}.*"
reference_suffixes = [".nii.gz", ".mha"]
labels = { gtvp = 1, gtvn = 2 }
missing = "empty-mask"

[[metrics]]
metric = "dice"
output = "seg"
aggregates = ["mean", "dataset"]

[[metrics]]
metric = "hd95"
output = "seg"
compute = false

[[metrics]]
name = "lesions"
metric = "lesion_f1"
output = "seg"
labels = ["gtvn"]
aggregates = ["dataset", "tp", "fp", "fn"]
case_count_key = "lesions_{count}_{label}"

[report]
order = "label"

[leaderboard]
score = "aggregates.dice_gtvp_mean"
"""

PATIENTS = ["HN-1", "HN-2", "HN-3", "HN-4", "HN-5", "HN-6"]
EMPTY_PATIENT, NO_OUTPUT = "HN-5", "HN-6"


def hecktor_style_maps() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """(reference, prediction) label maps: a tumour block (1) and node blobs (2), shifted and thinned."""
    rng = np.random.default_rng(5)
    maps = {}
    for k, patient in enumerate(PATIENTS):
        reference = np.zeros((12, 14, 16), np.uint8)
        prediction = np.zeros_like(reference)
        if patient != EMPTY_PATIENT:
            reference[2:7, 3:9, 4:10] = 1
            prediction[2 + k % 2 : 7, 3 : 9 - k % 3, 4:11] = 1
            for n in range(k % 3 + 1):  # separate nodes, some found, one false positive
                z, y = 8 + (n % 2) * 2, 2 + 4 * n
                reference[z : z + 2, y : y + 2, 12:14] = 2
                if rng.random() < 0.7:
                    prediction[z : z + 2, y : y + 2, 12 + n % 2 : 14] = 2
            prediction[0:2, 12:14, 0:2] = 2 * (k % 2)
        maps[patient] = (reference, prediction)
    return maps


def dice(r: np.ndarray, p: np.ndarray) -> float:
    return 1.0 if not r.any() and not p.any() else 2 * (r & p).sum() / (r.sum() + p.sum())


def test_hecktor_style_keys_order_counts_and_listing(tmp_path, evaluate_cli):
    maps = hecktor_style_maps()
    declaration = tmp_path / "outsider-hecktor-style.toml"
    declaration.write_text(HECKTOR_STYLE)
    for k, (patient, (reference, prediction)) in enumerate(maps.items()):
        suffix = ".nii.gz" if k % 2 else ".mha"  # the listing pattern takes either suffix
        write_image(reference, (1.0, 1.0, 2.0), tmp_path / "gt" / "labels" / f"{patient}{suffix}")
        if patient != NO_OUTPUT:
            write_image(prediction, (1.0, 1.0, 2.0), tmp_path / "outputs" / patient / "images" / "seg" / "out.mha")
        else:
            (tmp_path / "outputs" / patient).mkdir(parents=True)
    (tmp_path / "gt" / "labels" / "README.txt").write_text("not a case")  # not a listed suffix: ignored
    done, metrics = evaluate(declaration, tmp_path / "outputs", tmp_path / "gt", tmp_path)
    assert done.returncode == 0, done.stderr
    agg, case = metrics["aggregates"], metrics["case"]
    maps[NO_OUTPUT] = (maps[NO_OUTPUT][0], np.zeros_like(maps[NO_OUTPUT][0]))  # empty-mask
    assert sorted(case) == PATIENTS
    for name, value in (("gtvp", 1), ("gtvn", 2)):
        per = [dice(r == value, p == value) for r, p in maps.values()]
        close(agg[f"dice_{name}_mean"], float(np.mean(per)), f"dice_{name}_mean")
        inter = sum(((r == value) & (p == value)).sum() for r, p in maps.values())
        total = sum((r == value).sum() + (p == value).sum() for r, p in maps.values())
        close(agg[f"dice_{name}_dataset"], 2 * inter / total, f"dice_{name}_dataset")
        for patient, (r, p) in maps.items():
            close(case[patient][f"dice_{name}"], dice(r == value, p == value), f"{patient} dice_{name}")
            # compute = false: null, except where neither map holds any label (both_empty, 0.0)
            expected = 0.0 if not r.any() and not p.any() else None
            assert case[patient][f"hd95_{name}"] == expected, (patient, name)
        assert agg[f"hd95_{name}_mean"] is None
    counts = {"tp": 0, "fp": 0, "fn": 0}
    for patient, (r, p) in maps.items():
        matrix = iou_matrix(r == 2, p == 2)
        tp = len(matched_ious(matrix, 0.3, "greedy"))
        fp, fn = matrix.shape[1] - tp, matrix.shape[0] - tp
        for count, value in (("tp", tp), ("fp", fp), ("fn", fn)):
            assert case[patient][f"lesions_{count}_gtvn"] == value, (patient, count)
            counts[count] += value
        f1 = 1.0 if not matrix.shape[0] and not matrix.shape[1] else 2 * tp / (2 * tp + fp + fn)
        close(case[patient]["lesions_gtvn"], f1, f"{patient} lesions_gtvn")
    for count, value in counts.items():
        assert agg[f"lesions_gtvn_{count}"] == value and isinstance(agg[f"lesions_gtvn_{count}"], int), count
    tp, fp, fn = counts["tp"], counts["fp"], counts["fn"]
    close(agg["lesions_gtvn_dataset"], 2 * tp / (2 * tp + fp + fn), "lesions_gtvn_dataset")
    # order = "label": aggregates and each case's keys label by label
    assert list(agg) == [
        "dice_gtvp_mean", "dice_gtvp_dataset", "hd95_gtvp_mean",
        "dice_gtvn_mean", "dice_gtvn_dataset", "hd95_gtvn_mean",
        "lesions_gtvn_dataset", "lesions_gtvn_tp", "lesions_gtvn_fp", "lesions_gtvn_fn",
    ]  # fmt: skip
    assert list(case["HN-1"]) == [
        "dice_gtvp", "hd95_gtvp", "dice_gtvn", "hd95_gtvn",
        "lesions_gtvn", "lesions_tp_gtvn", "lesions_fp_gtvn", "lesions_fn_gtvn",
    ]  # fmt: skip
    assert metrics["missing"]["seg"] == [NO_OUTPUT]
    # the listing pattern: two files for one case is an error naming it
    write_image(maps["HN-1"][0], (1.0, 1.0, 2.0), tmp_path / "gt" / "labels" / "HN-1.nii.gz")
    done = evaluate_cli(str(declaration), tmp_path / "outputs-input", ground_truth=tmp_path / "gt")
    assert done.exit_code != 0 and "HN-1" in last_line(done.stderr) and "Traceback" not in done.stderr, done.stderr


# --------------------------------------------------------------------------- bad declarations name the key

BAD = [
    # (declaration, old, new, the key the one-line refusal names)
    ("prob", 'sum = "one"', 'sum = "some"', "sum"),
    ("prob", 'sum = "one"', 'sum = "any"\nsum_tolerance = 0.01', "sum_tolerance"),
    ("prob", 'missing = "uniform"', 'missing = "empty-mask"', "outputs[0].missing"),
    ("prob", 'missing = "uniform"', 'missing = "misclassification"', "outputs[0].missing"),
    (
        "prob",
        'classes = ["MEL", "NV", "BCC"]\nreference = "truth.csv:rare"',
        'classes = ["MEL"]\nreference = "truth.csv:rare"',
        "classes",
    ),
    (
        "prob",
        'classes = ["MEL", "NV", "BCC"]\nreference = "truth.csv:rare"',
        'classes = ["MEL", "N V", "BCC"]\nreference = "truth.csv:rare"',
        "classes",
    ),
    ("prob", "single_class = 0.5", 'single_class = "skip"', "single_class"),
    ("prob", 'no_positive = "exclude"', 'no_positive = "maybe"', "no_positive"),
    ("prob", 'weights = "quadratic"', 'weights = "cubic"', "weights"),
    ("prob", 'aggregates = ["macro"]', 'aggregates = ["macro", "micro"]', "aggregates"),
    ("prob", "bins = 4", "bins = 0", "bins"),
    (
        "prob",
        'metric = "specificity"\noutput = "dx"',
        'metric = "specificity"\noutput = "dx"\nthreshold = 0.5',
        "threshold",
    ),
    ("csv", 'columns = { MEL = "p_mel" }', 'columns = { MEL = "p_mel", SCC = "p_scc" }', "columns"),
    ("csv", 'columns = { MEL = "p_mel" }', 'columns = { MEL = "image" }', "columns"),
    ("csv", 'columns = { MEL = "p_mel" }', 'column = "p_mel"', "column"),
    (
        "csv",
        'reference_columns = { MEL = "melanoma" }',
        'reference_columns = { MEL = "image_id" }',
        "reference_columns",
    ),
    ("csv", 'reference_none = "UNK"', 'reference_none = "OTHER"', "reference_none"),
    ("csv", 'kind = "csv"', 'kind = "xlsx"', "kind"),
    ("csv", 'missing = "worst-value"', 'missing = "uniform"', "missing"),
    (
        "empty",
        'reference = "boxes/{case}.json"\nmissing = "empty"',
        'reference = "boxes/{case}.json"\nmissing = "uniform"',
        "missing",
    ),
    ("hecktor", 'order = "label"', 'order = "labels"', "order"),
    (
        "hecktor",
        'aggregates = ["dataset", "tp", "fp", "fn"]',
        'aggregates = ["dataset", "tp", "fp", "tn"]',
        "aggregates",
    ),
    ("hecktor", 'case_count_key = "lesions_{count}_{label}"', 'case_count_key = "lesions_{label}"', "case_count_key"),
    ("hecktor", "compute = false", 'compute = "no"', "compute"),
    ("hecktor", 'missing = "empty-mask"', 'missing = "empty"', "missing"),
]  # fmt: skip


@pytest.mark.parametrize(("which", "old", "new", "key"), BAD)
def test_bad_declarations_are_refused_naming_the_key(tmp_path, capsys, which, old, new, key):
    from evaluation import phase

    text = {"prob": PROBABILITIES, "csv": CSV_PHASE, "empty": EMPTY_DETECTIONS, "hecktor": HECKTOR_STYLE}[which]
    assert text.count(old) == 1, old
    declaration = tmp_path / f"outsider-{which}.toml"
    declaration.write_text(text.replace(old, new))
    capsys.readouterr()
    assert phase.main(["--challenge", str(declaration)]) != 0, new
    err = capsys.readouterr().err
    line = last_line(err)
    assert key in line and "Traceback" not in err, err
    assert line.startswith(declaration.name), line


def test_the_readme_quoted_declaration_errors(tmp_path, capsys):
    """The README's own example lines, on its complete example and on the probabilities sketch above."""
    from evaluation import phase

    kits = (REPO / "evaluation" / "declarations" / "kits-example.toml").read_text()
    cases = [
        (kits.replace('missing = "worst-value"', 'missing = "zero"'),
         "my-challenge.toml: outputs[1].missing: 'zero' is not one of error, empty-mask, worst-value, "
         "misclassification, exclude, empty, non-concordant, tie"),
        (PROBABILITIES.replace('missing = "uniform"', 'missing = "empty-mask"'),
         "my-challenge.toml: outputs[0].missing: 'empty-mask' is not one of error, worst-value, uniform, exclude "
         "(for a probabilities output)"),
        (kits.replace("title =", "titel =", 1),
         "my-challenge.toml: title: is required (is 'titel' a misspelling of it?)"),
    ]  # fmt: skip
    for text, message in cases:
        declaration = tmp_path / "my-challenge.toml"
        declaration.write_text(text)
        capsys.readouterr()
        assert phase.main(["--challenge", str(declaration)]) != 0
        assert last_line(capsys.readouterr().err) == message


def run_probabilities(
    root: Path, replacements: dict[str, str], answer: Any = None, evaluate_cli: Any = None
) -> tuple[Any, dict | None]:
    """The probabilities declaration with ``replacements``; ``answer`` (if given) is C05's ``dx``; in this
    process through ``evaluate_cli`` when given (a ``Run``; metrics.json or None)."""
    text = PROBABILITIES
    for old, new in replacements.items():
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    declaration = root / "outsider-probabilities.toml"
    declaration.write_text(text)
    write_probabilities(root, probability_data())
    if answer is not None:
        write_json(root / "outputs" / "C05" / "dx.json", answer)
    if evaluate_cli is None:
        return evaluate(declaration, root / "outputs", root / "gt", root)
    done = evaluate_cli(str(declaration), make_input(declaration, root / "outputs"), ground_truth=root / "gt")
    return done, (done.metrics if done.wrote_metrics else None)


def test_a_class_at_its_edge_by_default_stops_the_run_naming_class_and_key(tmp_path, evaluate_cli):
    done, metrics = run_probabilities(tmp_path, {"single_class = 0.5": ""}, evaluate_cli=evaluate_cli)
    line = last_line(done.stderr)
    assert done.exit_code != 0 and metrics is None and "Traceback" not in done.stderr
    assert "'BCC'" in line and "auroc" in line and "single_class" in line, line


def test_a_number_edge_value_leaves_its_class_and_the_macro_without_interval(tmp_path, evaluate_cli):
    """The README: in a resample a class at its edge is NaN, left out of its interval, and the macro
    resample is left out too unless "exclude": BCC never occurs, so with ``single_class = 0.5`` neither
    BCC's nor the macro's interval has a resample (null), while the other classes' intervals do."""
    bootstrapped = {"single_class = 0.5": "single_class = 0.5\nbootstrap = true"}
    done, metrics = run_probabilities(tmp_path, bootstrapped, evaluate_cli=evaluate_cli)
    assert done.exit_code == 0, done.stderr
    agg = metrics["aggregates"]
    assert agg["auroc_r1_BCC"] == 0.5 and agg["auroc_r1_BCC_ci_low"] is None and agg["auroc_r1_macro_ci_low"] is None
    data = probability_data()
    yr, pr = data["rare"], data["scores"]
    for k, cls in enumerate(CLASSES[:2]):

        def statistic(draw, k=k):
            truth = yr[draw] == k
            return skm.roc_auc_score(truth, pr[draw, k]) if 0 < truth.sum() < len(draw) else None

        close_ci(agg, f"auroc_r1_{cls}", bootstrap_ci(statistic, N_PROB, 200, 3, 0.9))


JOB_ANSWER_REFUSALS = [
    ({"MEL": 0.5, "NV": 0.5}, "a class missing"),
    ({"MEL": 0.5, "NV": 0.25, "BCC": 0.25, "SCC": 0.0}, "a class not declared"),
    ([0.5, 0.5], "a list of another length"),
    ({"MEL": "0.5", "NV": 0.25, "BCC": 0.25}, "a string"),
    ([0.5, 0.75, -0.25], "a negative value"),
    ([0.5, 0.25, 0.2], "a sum off 1 (0.95)"),
]


@pytest.mark.parametrize(("answer", "what"), JOB_ANSWER_REFUSALS)
def test_bad_probability_answers_are_one_line_naming_the_case(tmp_path, evaluate_cli, answer, what):
    done, metrics = run_probabilities(tmp_path, {}, answer, evaluate_cli)
    line = last_line(done.stderr)
    assert done.exit_code != 0 and metrics is None and "Traceback" not in done.stderr, what
    assert "C05" in line, (what, line)


def test_a_sum_within_the_tolerance_is_used_as_given(tmp_path, evaluate_cli):
    answer = [0.5, 0.3, 0.2005]  # sums to 1.0005: within the default 0.001, not renormalised
    done, metrics = run_probabilities(tmp_path, {}, answer, evaluate_cli)
    assert done.exit_code == 0, done.stderr
    data = probability_data()
    y, p = imputed(data)["dx"]
    p[IMAGES.index("C05")] = answer
    close(metrics["aggregates"]["brier"], brier(y, p), "brier with C05 as given")


def test_csv_phase_make_input_class_name_reference_and_phase_settings(tmp_path, evaluate_cli, capsys):
    """``make_input`` writes the CSV from each image's JSON (object or list); the same truth as a class-name
    column scores as the one-hot CSV; the phase settings say ``"submission_kind": "CSV"``."""
    from evaluation import phase

    data = csv_data()
    write_csv_phase(tmp_path / "direct", data)
    done, direct = evaluate_csv(tmp_path / "direct", CSV_PHASE, evaluate_cli)
    assert done.exit_code == 0, done.stderr
    # make_input from outputs/<image>/<slug>.json
    root = tmp_path / "built"
    write_csv_phase(root, data)
    for k, image in enumerate(ISIC):
        if image == NO_ROW:
            continue
        p = [float(v) for v in data["p"][k]]
        if image != BLANK_CLASSES:
            write_json(root / "outputs" / image / "diag.json", p if k % 2 else dict(zip(CSV_CLASSES, p, strict=True)))
        if image != BLANK_SCORE:
            write_json(root / "outputs" / image / "score.json", float(data["s"][k]))
    (root / "input" / "predictions.csv").unlink()
    declaration = root / "outsider-csv.toml"
    declaration.write_text(CSV_PHASE)
    built = make_input(declaration, root / "outputs")
    done = evaluate_cli(str(declaration), built, ground_truth=root / "gt")
    assert done.exit_code == 0, done.stderr
    made = json.loads((done.output / "metrics.json").read_text())
    assert made["aggregates"] == direct["aggregates"] and made["case"] == direct["case"]
    assert made["missing"]["diag"] == direct["missing"]["diag"]
    # the truth as a class-name column
    names = ["image_id,diagnosis,target"] + [
        f"{image},{CSV_CLASSES[data['y'][k]]},{data['target'][k]}" for k, image in enumerate(ISIC)
    ]
    (tmp_path / "direct" / "gt" / "names.csv").write_text("\n".join(names) + "\n")
    by_name = CSV_PHASE.replace('reference = "truth.csv"\nreference_columns = { MEL = "melanoma" }\n'
                                'reference_none = "UNK"', 'reference = "names.csv:diagnosis"')  # fmt: skip
    done, named = evaluate_csv(tmp_path / "direct", by_name, evaluate_cli)
    assert done.exit_code == 0, done.stderr
    assert named["aggregates"] == direct["aggregates"] and named["case"] == direct["case"]
    capsys.readouterr()
    assert phase.main(["--challenge", str(declaration)]) == 0
    assert json.loads(capsys.readouterr().out)["submission_kind"] == "CSV"


def test_one_hot_reference_none_skip_and_blank_skip(tmp_path, evaluate_cli):
    """``reference_none = "skip"``: a row without a class at 1 leaves the output; ``blank = "skip"``: an
    all-blank row too, while one blank class cell among others is refused with the README's line."""
    data = csv_data()
    rows = {6: "ISIC_0000005,0,0,1,1.0", 8: "ISIC_0000007,,,0,1.0"}
    write_csv_phase(tmp_path, data, rows)
    text = CSV_PHASE.replace('reference_none = "UNK"', 'reference_none = "skip"\nblank = "skip"')
    text = text.replace('"NV", "UNK"', '"NV"')
    csv = tmp_path / "input" / "predictions.csv"
    lines = [line.split(",") for line in csv.read_text().splitlines()]
    csv.write_text("\n".join(",".join(cells[:3] + cells[4:]) for cells in lines) + "\n")  # no UNK column
    # renormalise nothing: two classes with sum = "one" would refuse the rows; declare independent scores
    text = text.replace('missing = "uniform"', 'missing = "uniform"\nsum = "any"')
    done, metrics = evaluate_csv(tmp_path, text, evaluate_cli)
    assert done.exit_code == 0, done.stderr
    y, p = data["y"], data["p"].copy()
    for image in (NO_ROW, BLANK_CLASSES):
        p[ISIC.index(image)] = 0.5
    keep = np.array([image not in ("ISIC_0000005", "ISIC_0000007") and y[k] != 2 for k, image in enumerate(ISIC)])
    auroc = [skm.roc_auc_score(y[keep] == k, p[keep, k]) for k in range(2)]
    close(metrics["aggregates"]["auroc_MEL"], auroc[0], "auroc_MEL")
    close(metrics["aggregates"]["auroc_macro"], float(np.mean(auroc)), "auroc_macro")
    write_csv_phase(tmp_path, data, {6: "ISIC_0000005,1,,1,1.0"})
    csv.write_text("\n".join(",".join(cells[:3] + cells[4:]) for cells in lines) + "\n")
    done, metrics = evaluate_csv(tmp_path, text, evaluate_cli)
    assert done.exit_code != 0 and metrics is None
    assert last_line(done.stderr) == (
        "Line 6 of truth.csv has a blank cell for image ISIC_0000005 in column 'NV' (blank = 'skip' skips a row "
        "only when all its class cells are blank)."
    )


def test_worst_value_on_the_first_class_puts_the_mass_on_the_second(tmp_path, evaluate_cli):
    """A case of the first declared class (MEL) without its answer: all mass on NV."""
    data = probability_data()
    first = next(c for k, c in enumerate(IMAGES) if data["y"][k] == 0 and c not in DROP.values())
    done, _ = run_probabilities(tmp_path, {}, evaluate_cli=evaluate_cli)
    assert done.exit_code == 0, done.stderr
    (tmp_path / "outputs" / first / "dxw.json").rename(tmp_path / "kept.json")
    shutil.copytree(tmp_path / "outputs", tmp_path / "without")
    built = make_input(tmp_path / "outsider-probabilities.toml", tmp_path / "without")
    _, p = imputed(data)["dxw"]
    p[IMAGES.index(first)] = [0.0, 1.0, 0.0]
    done = evaluate_cli(str(tmp_path / "outsider-probabilities.toml"), built, ground_truth=tmp_path / "gt")
    assert done.exit_code == 0, done.stderr
    metrics = json.loads((done.output / "metrics.json").read_text())
    close(metrics["aggregates"]["brier_w"], brier(data["y"], p), "brier_w")
    assert metrics["missing"]["dxw"] == sorted([DROP["dxw"], first])
