"""One curve call as the LUNA16 FROC bootstrap makes 1,000 of them (issue 30): ``evaluation.metrics.curves``
(``roc_curve``, ``precision_recall_curve``, ``average_precision_score``) against scikit-learn 1.9.1's function of
the same name on the same input, in the same process, in turn, best of ``--repeats`` batches of ``--calls``. The
results must be equal (``==``); prints each ratio. scikit-learn's import (about a second) is not counted here
(benchmarks/startup.py counts it).

Usage: .venv/bin/python benchmarks/curve_calls.py [--sizes 50 1000] [--calls 200] [--repeats 5] [--full]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import harness
import numpy as np
from sklearn import metrics as oracle

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from evaluation.metrics import curves  # noqa: E402

FUNCTIONS = ("roc_curve", "precision_recall_curve", "average_precision_score")


def best(function, inputs: tuple, calls: int, repeats: int) -> float:
    """Seconds per call of ``function(*inputs)``, best of ``repeats`` batches."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            function(*inputs)
        times.append((time.perf_counter() - start) / calls)
    return min(times)


def equal(ours: tuple | float, theirs: tuple | float) -> bool:
    """The same arrays (a curve) or the same number (an area)."""
    if isinstance(theirs, tuple):
        return all(np.array_equal(a, b) for a, b in zip(ours, theirs, strict=True))
    return ours == theirs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=None)
    parser.add_argument("--calls", type=int, default=None)
    parser.add_argument("--repeats", type=int, default=None)
    arguments = harness.parse(
        parser, {"sizes": [50], "calls": 20, "repeats": 2}, {"sizes": [50, 1000, 20000], "calls": 200, "repeats": 5}
    )
    rng = np.random.default_rng(0)
    for n in arguments.sizes:
        truth, scores = (rng.random(n) < 0.3).astype(float), np.round(rng.random(n), 3)  # ties, as FROC scores
        for name in FUNCTIONS:
            ours, theirs = getattr(curves, name), getattr(oracle, name)
            expected, got = theirs(truth, scores), ours(truth, scores)
            if not equal(got, expected):
                raise SystemExit(f"{name} at n={n}: ours differs from scikit-learn's")
            reference = best(theirs, (truth, scores), arguments.calls, arguments.repeats)
            mine = best(ours, (truth, scores), arguments.calls, arguments.repeats)
            print(f"{name:24} n={n:6d}: scikit-learn {reference * 1e3:.3f} ms, ours {mine * 1e3:.3f} ms a call: "
                  f"{reference / mine:.1f}x (equal)")  # fmt: skip


if __name__ == "__main__":
    main()
