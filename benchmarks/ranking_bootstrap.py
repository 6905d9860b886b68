"""Ranking bootstrap: 1,000 resamples of test-then-rank (20 algorithms x 500 cases) and of
rank-then-aggregate (5 x 500), timed, against two references:

- challengeR 1.0.5's measured cost recorded in ../shared/spec/ranking.md (2-core machine):
  test-then-rank 1.24 s per resample at 20 x 500 (about 21 minutes for 1,000), rank-then-aggregate
  0.20 s per resample at 5 x 500 (197 s for 1,000);
- measured in this run: the plain approach (scipy.stats.wilcoxon per ordered pair per resample;
  scipy.stats.rankdata per case per resample), timed on a few resamples and scaled to 1,000; the
  first resamples' ranks must agree with the vectorised ones.

Goals (issue 5): <= 15 s and <= 0.5 s for 1,000 resamples (scaled to the count run). challengeR itself
is run (``benchmarks/challenger_bootstrap.R``, a few resamples, scaled) only where R and challengeR are
installed; otherwise the output says so and shows the recorded figure.
Sizes: a smoke run by default (20 resamples, one plain resample: seconds, for CI) and ``--full``
(1,000 resamples, three and twenty plain ones).
Usage: .venv/bin/python benchmarks/ranking_bootstrap.py [--full | --resamples N] [--compat]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from functools import lru_cache
from pathlib import Path

import numpy as np
from scipy.stats import rankdata, wilcoxon

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evaluation.metrics.bootstrap import resample_indices
from evaluation.ranking.schemes import Scheme, rank_resamples

CHALLENGER_TEST_SECONDS = 21 * 60.0
CHALLENGER_RANK_SECONDS = 197.0


def table(n_algorithms: int, n_cases: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    skill = rng.normal(0.7, 0.05, size=(n_algorithms, 1))
    return np.clip(np.round(skill + rng.normal(0, 0.1, size=(n_algorithms, n_cases)), 3), 0, 1)


def plain_test_then_rank(values: np.ndarray, row: np.ndarray) -> np.ndarray:
    """One resample the plain way: a scipy Wilcoxon test per ordered pair, wins / (n - 1), min ranks."""
    drawn = values[:, row]
    n = drawn.shape[0]
    wins = np.zeros(n)
    for i in range(n):
        for j in range(n):
            if i != j and np.any(drawn[i] != drawn[j]):
                p = wilcoxon(drawn[i], drawn[j], alternative="greater", zero_method="wilcox", method="approx").pvalue
                wins[i] += p <= 0.05
    return rankdata(-wins / (n - 1), method="min")


def plain_rank_then_mean(values: np.ndarray, row: np.ndarray) -> np.ndarray:
    drawn = values[:, row]
    ranks = np.column_stack([rankdata(-drawn[:, c], method="min") for c in range(drawn.shape[1])])
    return rankdata(ranks.mean(axis=1), method="min")


@lru_cache(maxsize=1)
def challenger_installed() -> bool:
    """Whether R can load challengeR (asked once: R takes a second to start)."""
    if shutil.which("Rscript") is None:
        return False
    return subprocess.run(["Rscript", "-e", "library(challengeR)"], capture_output=True, check=False).returncode == 0


def challenger_seconds_now(values: np.ndarray, r_scheme: str, n_resamples: int) -> float | None:
    """Seconds challengeR's ``bootstrap`` takes for ``n_resamples`` of ``values`` (benchmarks/challenger_bootstrap.R),
    or None where R or challengeR is not installed."""
    if not challenger_installed():
        return None
    with tempfile.TemporaryDirectory() as scratch:
        data = Path(scratch) / "table.csv"
        rows = [f"A{a},c{c},{float(values[a, c])!r}" for a in range(values.shape[0]) for c in range(values.shape[1])]
        data.write_text("alg,case,value\n" + "\n".join(rows) + "\n")
        script = Path(__file__).with_name("challenger_bootstrap.R")
        done = subprocess.run(
            ["Rscript", str(script), str(data), r_scheme, str(n_resamples)], capture_output=True, text=True, check=True
        )
    return float(done.stdout.split()[-1])


def bench(
    name: str,
    values: np.ndarray,
    scheme: Scheme,
    plain,
    n_resamples: int,
    n_plain: int,
    challenger_seconds: float,
    goal: float,
    compat: bool,
    r_scheme: str,
    n_challenger: int,
) -> None:
    indices = resample_indices(values.shape[1], n_resamples, seed=0)
    start = time.perf_counter()
    result = rank_resamples(values, scheme, indices, compat=compat)
    ours = time.perf_counter() - start
    start = time.perf_counter()
    plain_ranks = [plain(values, row) for row in indices[:n_plain]]
    plain_seconds = (time.perf_counter() - start) / n_plain * n_resamples
    if not compat:
        assert np.array_equal(np.array(plain_ranks), result.ranks[:n_plain]), "plain and vectorised ranks differ"
    scale = n_resamples / 1000.0
    print(
        f"{name}: {n_resamples} resamples in {ours:.2f} s (goal {goal * scale:g} s: "
        f"{'met' if ours <= goal * scale else 'MISSED'})"
    )
    measured = challenger_seconds_now(values, r_scheme, n_challenger)
    if measured is None:
        why = "challengeR is not installed in R" if shutil.which("Rscript") else "R is not installed"
        print(
            f"  vs challengeR recorded {challenger_seconds * scale:.0f} s: "
            f"{challenger_seconds * scale / ours:.0f}x faster (challengeR not run in this process tree: {why})"
        )
    else:
        theirs = measured / n_challenger * n_resamples
        print(
            f"  vs challengeR 1.0.5 measured now ({n_challenger} resamples by Rscript, scaled): {theirs:.0f} s, "
            f"{theirs / ours:.0f}x faster"
        )
    print(
        f"  vs plain scipy loop measured now ({n_plain} resamples, scaled): {plain_seconds:.1f} s, "
        f"{plain_seconds / ours:.0f}x faster"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="1,000 resamples (default: a 20-resample smoke run)")
    parser.add_argument("--resamples", type=int, help="resamples to time (default 20, or 1,000 with --full)")
    parser.add_argument("--compat", action="store_true", help="challengeR's handling of copies")
    args = parser.parse_args()
    args.resamples = args.resamples or (1000 if args.full else 20)
    plain = (3, 20) if args.full else (1, 1)
    challenger = (10, 50) if args.full else (2, 5)  # resamples challengeR runs, where installed
    bench(
        "test-then-rank 20 x 500",
        table(20, 500),
        Scheme("test-then-rank"),
        plain_test_then_rank,
        args.resamples,
        plain[0],
        CHALLENGER_TEST_SECONDS,
        15.0,
        args.compat,
        "test-then-rank",
        challenger[0],
    )
    bench(
        "rank-then-mean 5 x 500",
        table(5, 500),
        Scheme("rank-then-aggregate", "mean"),
        plain_rank_then_mean,
        args.resamples,
        plain[1],
        CHALLENGER_RANK_SECONDS,
        0.5,
        args.compat,
        "rank-then-mean",
        challenger[1],
    )


if __name__ == "__main__":
    main()
