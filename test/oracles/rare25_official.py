"""The RARE25 official bootstrap restated as a plain loop, as an oracle for tests and benchmarks.

Semantics of TUE-VCA/Grand-Challenge-RARE25, open-development-phase/example-evaluation-method/
evaluate.py (``bootstrap_metrics``): global ``np.random`` draws with ``np.random.choice``, three
scikit-learn calls per iteration. Written from its description, not copied; deliberately slow. Also
the evaluation's other draws (``rng=generator``) and the website protocol, as loops.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from sklearn.metrics import average_precision_score, precision_recall_curve, roc_auc_score


def ppv90(labels, scores) -> float:
    precisions, recalls, _ = precision_recall_curve(labels, scores)
    return float(np.interp(0.9, recalls[::-1], precisions[::-1]))


def _metrics(labels, scores) -> tuple[float, float, float]:
    return roc_auc_score(labels, scores), average_precision_score(labels, scores), ppv90(labels, scores)


def official_bootstrap(labels, scores, patients, iterations=1000, sample_size=10, ratio=100, seed=0, rng="legacy"):
    """(per-iteration array of (auroc, auprc, ppv90), full-data (auroc, auprc, ppv90)).

    ``rng="generator"``: the same loop with ``numpy.random.default_rng(seed)`` drawing every
    iteration's neoplastic patients as one (iterations, sample_size) matrix, then the NDBE patients as
    one (iterations, sample_size * ratio) matrix (the evaluation's ``rng=generator`` option)."""
    labels, scores, patients = np.asarray(labels), np.asarray(scores), np.asarray(patients)
    frames_of: dict = {}
    for index, patient in enumerate(patients):
        frames_of.setdefault(patient, []).append(index)
    neo = [p for p, idx in frames_of.items() if labels[idx].any()]
    ndbe = [p for p, idx in frames_of.items() if not labels[idx].any()]
    if rng == "generator":
        generator = np.random.default_rng(seed)
        neo_draws = generator.integers(0, len(neo), size=(iterations, sample_size))
        ndbe_draws = generator.integers(0, len(ndbe), size=(iterations, sample_size * ratio))
    else:
        np.random.seed(seed)
    rows = []
    for iteration in range(iterations):
        if rng == "generator":
            drawn = [neo[k] for k in neo_draws[iteration]] + [ndbe[k] for k in ndbe_draws[iteration]]
        else:
            drawn = np.concatenate(
                [
                    np.random.choice(neo, size=sample_size, replace=True),
                    np.random.choice(ndbe, size=sample_size * ratio),
                ]
            )
        index = np.array([i for p in drawn for i in frames_of[p]])
        rows.append(_metrics(labels[index], scores[index]))
    return np.array(rows), _metrics(labels, scores)


def website_bootstrap(labels, scores, iterations=1000, ratio=100, seed=0, rng="legacy"):
    """The website protocol (spec challenges.md, RARE25) as a loop: every NDBE frame once, plus
    ``max(1, round(NDBE frames / ratio))`` neoplastic frames drawn with replacement per iteration
    (``RandomState(seed).randint`` per iteration, or one ``default_rng(seed).integers`` matrix)."""
    labels, scores = np.asarray(labels), np.asarray(scores)
    neo, ndbe = np.flatnonzero(labels == 1), np.flatnonzero(labels == 0)
    size = max(1, round(ndbe.size / ratio))
    if rng == "generator":
        draws = np.random.default_rng(seed).integers(0, neo.size, size=(iterations, size))
    else:
        state = np.random.RandomState(seed)
        draws = [state.randint(0, neo.size, size=size) for _ in range(iterations)]
    rows = [_metrics(labels[index], scores[index]) for index in (np.concatenate([ndbe, neo[d]]) for d in draws)]
    return np.array(rows), _metrics(labels, scores)


def summary(rows: np.ndarray, full) -> dict[str, float]:
    """The official metrics.json keys from the loop's results."""
    out = {"Score": float(np.median(rows[:, 2]))}
    for column, name in ((2, "PPV@90RECALL"), (0, "AUROC"), (1, "AUPRC")):
        out[name] = float(np.median(rows[:, column]))
        out[f"{name} 95% CI Lower Bound"] = float(np.percentile(rows[:, column], 2.5))
        out[f"{name} 95% CI Upper Bound"] = float(np.percentile(rows[:, column], 97.5))
    out["AUROC Full Dataset"], out["AUPRC Full Dataset"], out["PPV@90RECALL Full Dataset"] = map(float, full)
    return out


def platform_arrays(metadata_file, input_dir):
    """(labels, scores, patients) of a platform-layout RARE25 submission, read independently of the
    project's code: jobs sorted by input image name, frames by index (challenges.md)."""
    metadata = json.loads(Path(metadata_file).read_text())
    by_stack = {}
    for job in json.loads((Path(input_dir) / "predictions.json").read_text()):
        output = job["outputs"][0]["interface"]["relative_path"]
        path = Path(input_dir) / job["pk"] / "output" / output
        by_stack[job["inputs"][0]["image"]["name"]] = json.loads(path.read_text())
    labels, scores, patients = [], [], []
    for stack in sorted(metadata):
        frames = sorted(metadata[stack], key=lambda frame: frame["index"])
        labels += [frame["class"] == "neo" for frame in frames]
        patients += [frame["patient_id"] for frame in frames]
        scores += by_stack[stack]
    return np.array(labels, dtype=int), np.array(scores), patients
