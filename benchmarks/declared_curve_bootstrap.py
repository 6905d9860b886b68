"""Bootstrap CIs of AUROC and average precision in declared challenges: every resample at once
(evaluation/metrics/classification.py ``auroc`` / ``binary_average_precision`` with ``weights``, one sort and
cumulative sums over the draw-count matrix) against one scikit-learn call per resample with the
draw counts as sample weights, timed in the same run. Checks the largest difference and prints
the ratio.

Usage: .venv/bin/python benchmarks/declared_curve_bootstrap.py [--cases 12 500] [--resamples 1000] [--full]
"""

from __future__ import annotations

import argparse
import sys
import time
from functools import partial
from pathlib import Path

import harness
import numpy as np
from sklearn.metrics import average_precision_score, roc_auc_score

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from evaluation.metrics.bootstrap import resample_weights  # noqa: E402
from evaluation.metrics.classification import auroc, binary_average_precision  # noqa: E402


def reference(function, truth: np.ndarray, scores: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """One scikit-learn call per resample; NaN where the metric is undefined (AUROC: one class drawn;
    average precision: no positive drawn), the value our functions are given for those rows."""
    values = []
    for row in weights:
        keep = row > 0
        drawn = set(truth[keep])
        undefined = len(drawn) < 2 if function is roc_auc_score else 1 not in drawn
        values.append(np.nan if undefined else function(truth[keep], scores[keep], sample_weight=row[keep]))
    return np.array(values)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, nargs="+")
    parser.add_argument("--resamples", type=int)
    arguments = harness.parse(parser, dict(cases=[12, 100], resamples=50), dict(cases=[12, 500], resamples=1000))
    for n in arguments.cases:
        rng = np.random.default_rng(n)
        truth = (rng.random(n) < 0.4).astype(float)
        scores = np.round(rng.random(n), 2)
        weights = resample_weights(n, arguments.resamples, 0)
        for name, ours, theirs in (("AUROC", partial(auroc, single_class=np.nan), roc_auc_score),
                                   ("AP", partial(binary_average_precision, no_positive=np.nan),
                                    average_precision_score)):  # fmt: skip
            start = time.perf_counter()
            fast = ours(truth, scores, weights=weights)
            mid = time.perf_counter()
            slow = reference(theirs, truth, scores, weights)
            end = time.perf_counter()
            assert np.array_equal(np.isnan(fast), np.isnan(slow))
            difference = float(np.nanmax(np.abs(fast - slow)))
            if difference > 1e-12:
                raise SystemExit(f"{name}: the vectorised values differ from scikit-learn's by {difference:.1e}")
            print(f"{name} {n} cases x {arguments.resamples} resamples: vectorised {mid - start:.4f} s, "
                  f"scikit-learn loop {end - mid:.2f} s ({(end - mid) / (mid - start):.0f}x), "
                  f"max difference {difference:.1e}")  # fmt: skip


if __name__ == "__main__":
    main()
