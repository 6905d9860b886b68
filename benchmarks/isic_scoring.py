"""ISIC 2019 scoring of 25,000 images: ours against isic-challenge-scoring 5.6.0 in the same run.

Both read the same truth.csv and predictions.csv (synthetic, scripts/make_demo_isic.py's
generator: weights, ties, ``.jpg`` suffixes, shuffled rows) and compute every metric for each
target metric. Timed: the reference's ``ClassificationScore.from_file`` as shipped (it also
simplifies a ROC curve per category for display; the headline ratio), for information the same
patched to skip those curves, and ours in-process (load the truth, check and read the CSV, score,
build the document). Every number is compared; prints the ratios. Goal (issue 3): ours not slower
than the reference as shipped. Ours is the declaration evaluation/declarations/isic2019.toml (issue 29): its
reader returns columns, scored whole (0.23-0.35 s at 25,000 images as timed below, 0.24-0.35 s before ``overall``
read the catalogue's value instead of computing it again, 0.27-0.42 s before its balanced accuracy was counted
without scikit-learn's label mapping; 1.40-2.18 s before, row by row). Against the module it replaced
(``--against-tree``, 27 Nov): 0.92-1.01x by target at issue 29's close, medians of the rounds 0.90-1.02x, under a load
of about 1 (1.11-1.21x, medians 1.04-1.15x, at its previous stop under a load of 3-4; docs/benchmarks.md).

``--against-tree TREE``: also the module the declaration replaced (``evaluation/challenges/isic.py``), from a tree
of a commit that still had it (``git -C REPO archive 156e73b | tar -x -C TREE``), against ours (issue 29's
acceptance: within 10%): each in a process of its own (this script's ``--serve``), the same in-process steps,
after a first untimed run, alternated ``--rounds`` times per target; prints the ratio of the best times and the
median of the rounds' ratios, and checks that both documents are equal.

Usage: .venv/bin/python benchmarks/isic_scoring.py [--images N] [--repeats N] [--full] [--against-tree TREE]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import subprocess
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
TREE = Path(sys.argv[sys.argv.index("--serve") + 1]) if "--serve" in sys.argv else REPO  # the evaluation imported
sys.path.insert(0, str(TREE))

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
    results = getattr(prepared, "scored", None)  # (as columns; else a task per case, as evaluation.pipeline)
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


def serve(ground_truth: Path, input_dir: Path) -> None:
    """``--serve TREE``: for each target read from stdin, ``document_of`` timed with TREE's evaluation in this
    process; writes the seconds and the document as a line of JSON."""
    challenge = get("isic2019")
    for line in sys.stdin:
        start = time.perf_counter()
        document = document_of(challenge, ground_truth, input_dir, line.strip())
        seconds = time.perf_counter() - start
        print(json.dumps({"seconds": seconds, "document": document}), flush=True)


def against_former(tree: Path, ground_truth: Path, input_dir: Path, rounds: int) -> None:
    """Ours against the module it replaced, each served by a process of its own, alternated per target."""
    command = [sys.executable, __file__, "--ground-truth", str(ground_truth), "--input", str(input_dir), "--serve"]
    servers = {side: subprocess.Popen([*command, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
               for side, path in (("former", tree), ("ours", REPO))}  # fmt: skip

    def run(side: str, target: str) -> dict[str, Any]:
        servers[side].stdin.write(target + "\n")
        servers[side].stdin.flush()
        return json.loads(servers[side].stdout.readline())

    try:
        for side in servers:  # a first run of each, untimed: its imports (pandas, the metrics' first use)
            run(side, ClassificationMetric.BALANCED_ACCURACY.value)
        for target in (metric.value for metric in ClassificationMetric):
            times: dict[str, list[float]] = {"former": [], "ours": []}
            documents = {}
            for _ in range(rounds):
                for side in times:
                    answer = run(side, target)
                    times[side].append(answer["seconds"])
                    documents[side] = answer["document"]
            ratios = sorted(o / f for o, f in zip(times["ours"], times["former"], strict=True))
            same = documents["ours"] == documents["former"]
            print(f"target {target} against the former module ({tree}): module {min(times['former']):.3f} s | ours "
                  f"{min(times['ours']):.3f} s | {min(times['ours']) / min(times['former']):.2f}x the module (best of "
                  f"{rounds}; per round {ratios[0]:.2f}-{ratios[-1]:.2f}x, median {statistics.median(ratios):.2f}x; "
                  f"acceptance <= 1.10x) | documents {'equal' if same else 'DIFFERENT'}")  # fmt: skip
            if not same:
                raise SystemExit(1)
    finally:
        for server in servers.values():
            server.stdin.close()
            server.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int)
    parser.add_argument("--repeats", type=int, help="best of N timings of each")
    parser.add_argument("--against-tree", type=Path, default=None, help="a tree of commit 156e73b (see above)")
    parser.add_argument("--rounds", type=int, help="alternated rounds against the former module")
    parser.add_argument("--serve", type=Path, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--ground-truth", type=Path, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--input", type=Path, default=None, help=argparse.SUPPRESS)
    arguments = harness.parse(parser, dict(images=1000, repeats=1, rounds=2), dict(images=25_000, repeats=1, rounds=5))
    if arguments.serve is not None:
        serve(arguments.ground_truth, arguments.input)
        return
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
        if arguments.against_tree is None:
            print("the former module not run: pass --against-tree TREE (a tree of commit 156e73b)")
        else:
            against_former(arguments.against_tree, ground_truth, input_dir, arguments.rounds)


if __name__ == "__main__":
    main()
