"""ISIC 2019 scoring of 25,000 images: ours against isic-challenge-scoring 5.6.0 in the same run.

Both read the same truth.csv and predictions.csv (synthetic, scripts/make_demo_isic.py's
generator: weights, ties, ``.jpg`` suffixes, shuffled rows) and compute every metric for each
target metric. Timed: the reference's ``ClassificationScore.from_file`` as shipped (it also
simplifies a ROC curve per category for display; the headline ratio), for information the same
patched to skip those curves, and ours in-process (load the truth, check and read the CSV, score,
build the document). Every number is compared; prints the ratios. Goal (issue 3): ours not slower
than the reference as shipped. Ours is the declaration evaluation/declarations/isic2019.toml (issue 29): its
reader returns columns, scored whole (0.24-0.35 s at 25,000 images, 0.27-0.42 s before its balanced accuracy was
counted without scikit-learn's label mapping; 1.40-2.18 s before, row by row; the module it replaced, run from commit
156e73b in the same session, 0.19-0.23 s).

Usage: .venv/bin/python benchmarks/isic_scoring.py [--images N] [--repeats N] [--full]
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import harness
import numpy as np
from isic_challenge_scoring import classification as reference_classification
from isic_challenge_scoring.classification import ClassificationMetric, ClassificationScore

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from evaluation.platform.metrics_json import json_safe  # noqa: E402
from evaluation.registry import get  # noqa: E402


def _demo_generator() -> Any:
    spec = importlib.util.spec_from_file_location("make_demo_isic", REPO / "scripts" / "make_demo_isic.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_case(root: Path, n_images: int) -> tuple[Path, Path]:
    demo = _demo_generator()
    rng = np.random.default_rng(25)
    truth = demo.truth_table(rng, demo.PREVALENCE_2019, n_images)
    (root / "gt").mkdir()
    (root / "input").mkdir()
    truth.to_csv(root / "gt" / "truth.csv", index=False, float_format="%g")
    demo.submission_table(rng, truth, decimals=6).to_csv(root / "input" / "predictions.csv", index=False)
    return root / "gt", root / "input"


def reference(truth: Path, predictions: Path, target: str) -> dict[str, float]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        score = ClassificationScore.from_file(truth, predictions, ClassificationMetric(target))
    numbers = {"overall": score.overall, "validation": score.validation}
    numbers["aggregates.balanced_accuracy"] = score.aggregate["balanced_accuracy"]
    numbers |= {f"aggregates.{k}": v for k, v in score.macro_average.items() if k in ("auc", "ap", "auc_sens_80")}
    for category, row in score.per_category.iterrows():
        numbers |= {f"per_category.{category}.{name}": value for name, value in row.items()}
    return {key: float(value) for key, value in numbers.items()}


def document_of(challenge: Any, ground_truth: Path, input_dir: Path, target: str) -> dict[str, Any]:
    """metrics.json's document in process: load the truth, check and read the CSV, score, aggregate."""
    settings = challenge.settings({"target_metric": target})
    truth = challenge.load_reference(ground_truth, settings)
    prepared = challenge.prepare(input_dir, truth, settings)
    results = prepared.scored  # (as columns; else a task per case, as evaluation.pipeline)
    if results is None:
        results = {task.case: challenge.score_case(task, settings) for task in prepared.tasks}
    return json_safe(challenge.aggregate(results, prepared.missing, truth, settings))


def ours(ground_truth: Path, input_dir: Path, target: str) -> dict[str, float]:
    document = document_of(get("isic2019"), ground_truth, input_dir, target)
    numbers = {"overall": document["overall"], "validation": document["validation"]}
    numbers |= {f"aggregates.{k}": document["aggregates"][k] for k in ("balanced_accuracy", "auc", "ap", "auc_sens_80")}
    for category, values in document["per_category"].items():
        numbers |= {f"per_category.{category}.{name}": value for name, value in values.items()}
    return {key: float("nan") if value is None else value for key, value in numbers.items()}


def timed(function: Callable[[], dict[str, float]], repeats: int) -> tuple[float, dict[str, float]]:
    best, result = float("inf"), {}
    for _ in range(repeats):
        start = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - start)
    return best, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int)
    parser.add_argument("--repeats", type=int, help="best of N timings of each")
    arguments = harness.parse(parser, dict(images=1000, repeats=1), dict(images=25_000, repeats=1))
    with tempfile.TemporaryDirectory() as scratch:
        ground_truth, input_dir = write_case(Path(scratch), arguments.images)
        truth, predictions = ground_truth / "truth.csv", input_dir / "predictions.csv"
        size = predictions.stat().st_size / 1e6
        print(f"{arguments.images} images, predictions.csv {size:.1f} MB")
        ratios = []
        for target in (metric.value for metric in ClassificationMetric):
            shipped, expected = timed(lambda t=target: reference(truth, predictions, t), arguments.repeats)
            original_roc = reference_classification.metrics.roc
            reference_classification.metrics.roc = lambda *args: None  # no display curves
            try:
                no_curves, _ = timed(lambda t=target: reference(truth, predictions, t), arguments.repeats)
            finally:
                reference_classification.metrics.roc = original_roc
            our_seconds, got = timed(lambda t=target: ours(ground_truth, input_dir, t), arguments.repeats)
            worst = max(abs(got[key] - value) for key, value in expected.items())
            same = worst <= 1e-12 and len(got) == len(expected)
            ratios.append(shipped / our_seconds)
            print(
                f"target {target}: reference as shipped {shipped:.2f} s | ours {our_seconds:.2f} s | "
                f"speed-up {shipped / our_seconds:.1f}x (for information: {no_curves / our_seconds:.1f}x against the "
                f"reference patched to skip its display ROC curves, {no_curves:.2f} s) | "
                f"{len(expected)} numbers {'identical' if same else 'DIFFERENT'} (max |diff| {worst:.1e})"
            )
            if not same:
                raise SystemExit(1)
        print(f"goal: not slower than the reference: {'met' if min(ratios) >= 1 else 'NOT met'} "
              f"(lowest {min(ratios):.1f}x against the reference as shipped, unpatched)")  # fmt: skip


if __name__ == "__main__":
    main()
