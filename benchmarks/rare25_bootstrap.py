"""RARE25 bootstrap: the vectorised implementation against the official algorithm's plain loop
(three scikit-learn calls per iteration, test/oracles/rare25_official.py), on the bundled demo
(1,086 frames, 40 patients) and on a larger synthetic set; checks the numbers agree and prints
the speed-up. Goal (issue 2): at least 20x.

``--official CHECKOUT`` (a checkout of TUE-VCA/Grand-Challenge-RARE25): also times the challenge's own
``bootstrap_metrics`` as published (``open-development-phase/example-evaluation-method/evaluate.py``,
imported unmodified, ``np.random.seed(0)`` first) on the same arrays, and checks its numbers equal ours;
without it the output says that the published function was not run.

Usage: .venv/bin/python benchmarks/rare25_bootstrap.py [--frames N] [--patients N] [--official CHECKOUT] [--full]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

import harness
import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "test")]

from oracles.rare25_official import official_bootstrap, platform_arrays, summary  # noqa: E402
from rare25_end_to_end import OFFICIAL_FOLDER  # noqa: E402

from evaluation.metrics.prevalence_bootstrap import prevalence_bootstrap  # noqa: E402


def demo_data() -> tuple[np.ndarray, np.ndarray, list[str]]:
    return platform_arrays(REPO / "ground-truth/rare25/val_metadata.json", REPO / "test/input/rare25")


def synthetic_data(frames: int, patients: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, list[str]]:
    rng = np.random.default_rng(seed)
    patient = np.sort(rng.integers(0, patients, frames))
    neoplastic_patient = rng.random(patients) < 0.2
    labels = (neoplastic_patient[patient] & (rng.random(frames) < 0.6)).astype(int)
    scores = np.round(np.where(labels == 1, rng.beta(5, 2, frames), rng.beta(1.2, 6, frames)), 3)
    return labels, scores, [f"P{p}" for p in patient]


def ours(labels: np.ndarray, scores: np.ndarray, patients: list[str], iterations: int) -> dict[str, float]:
    """The pure function rare25_rules.py (the ``rare25`` declaration's own rule) calls, at its defaults."""
    return prevalence_bootstrap(labels.astype(np.int8), scores, patients, iterations=iterations)


def published_bootstrap(checkout: Path) -> Callable[..., dict[str, float]]:
    """``bootstrap_metrics`` of the challenge's evaluate.py, imported from ``checkout`` unmodified."""
    sys.path.insert(0, str(checkout / OFFICIAL_FOLDER))
    import evaluate  # the published script, from the checkout given

    return evaluate.bootstrap_metrics


def compare(
    name: str,
    labels: np.ndarray,
    scores: np.ndarray,
    patients: list[str],
    iterations: int,
    published: Callable[..., dict[str, float]] | None = None,
) -> float:
    if published is not None:
        np.random.seed(0)
        start = time.perf_counter()
        theirs = published(labels, scores, patients, n_iterations=iterations, sample_size=10, imbalance_ratio=100)
        published_seconds = time.perf_counter() - start
    start = time.perf_counter()
    reference = summary(*official_bootstrap(labels, scores, patients, iterations=iterations))
    loop_seconds = time.perf_counter() - start
    start = time.perf_counter()
    result = ours(labels, scores, patients, iterations)
    our_seconds = time.perf_counter() - start
    worst = max(abs(result[key] - reference[key]) for key in reference)
    status = f"{'identical' if worst <= 1e-12 else 'DIFFERENT'} (max |diff| {worst:.1e})"
    ratio = loop_seconds / our_seconds
    print(
        f"{name}: {labels.size} frames, {len(set(patients))} patients, {iterations} iterations | "
        f"official loop {loop_seconds:.2f} s | "
        f"vectorised {our_seconds:.3f} s | speed-up {ratio:.0f}x | numbers {status}"
    )
    if published is not None:
        differs = max(abs(result[key] - float(theirs[key])) for key in theirs)
        print(
            f"  published bootstrap_metrics {published_seconds:.2f} s: {published_seconds / our_seconds:.0f}x ours; "
            f"numbers {'identical' if differs <= 1e-12 else 'DIFFERENT'} (max |diff| {differs:.1e})"
        )
        worst = max(worst, differs)
    if worst > 1e-12:
        raise SystemExit(1)
    return ratio


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int)
    parser.add_argument("--patients", type=int)
    parser.add_argument("--iterations", type=int, help="bootstrap iterations (the official: 1000)")
    parser.add_argument("--official", type=Path, default=None, help="a checkout of TUE-VCA/Grand-Challenge-RARE25")
    arguments = harness.parse(
        parser, dict(frames=500, patients=40, iterations=20), dict(frames=5000, patients=200, iterations=1000)
    )
    published = None if arguments.official is None else published_bootstrap(arguments.official)
    if published is None:
        print("published bootstrap_metrics (TUE-VCA/Grand-Challenge-RARE25) not run: pass --official CHECKOUT")
    ratios = [
        compare("demo", *demo_data(), arguments.iterations, published),
        compare("synthetic", *synthetic_data(arguments.frames, arguments.patients), arguments.iterations, published),
    ]
    print(f"goal >= 20x: {'met' if min(ratios) >= 20 else 'NOT met'} (lowest {min(ratios):.0f}x)")


if __name__ == "__main__":
    main()
