"""challengeR 1.0.5 run live as the oracle of the ranking schemes, on 60 random tables: ties (values
rounded to one or two decimals), missing values, larger or smaller better, 2-6 algorithms x 3-24 cases;
every score (to 1e-12) and rank of eight schemes must be challengeR's. And of the bootstrap: on 12 of
those tables, challengeR's own 25 resamples of three schemes, their draws injected into ours with
``compat=True`` (challengeR's handling of a case drawn twice), every resample's ranks equal. And of
the multi-task consensus (``consensus(method = "euclidean")``) on 40 three-task tables with ties.

Runs where R and challengeR are installed (``Rscript -e 'library(challengeR)'`` succeeds; challengeR is
installed from its GitHub source, its dependencies from Debian's r-cran packages); skipped elsewhere.
The R side is ``test/oracles/challenger_*.R``; the golden
tests in ``test_schemes.py`` hold challengeR's recorded numbers for machines without R.
"""

from __future__ import annotations

import csv
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from evaluation.ranking.schemes import Scheme, consensus_euclidean, rank_resamples, rank_task

ORACLES = Path(__file__).resolve().parents[1] / "oracles"
SCHEMES = {
    "mean_na0": Scheme("aggregate-then-rank", "mean", na=0),
    "median_na0": Scheme("aggregate-then-rank", "median", na=0),
    "mean_drop": Scheme("aggregate-then-rank", "mean", na="drop"),
    "rank_mean": Scheme("rank-then-aggregate", "mean"),
    "rank_median": Scheme("rank-then-aggregate", "median"),
    "rank_mean_average": Scheme("rank-then-aggregate", "mean", ties="average"),
    "test_none": Scheme("test-then-rank", na=0, alpha=0.05, p_adjust="none"),
    "test_holm": Scheme("test-then-rank", na=0, alpha=0.05, p_adjust="holm"),
}
TABLES = 60


def challenger_installed() -> bool:
    if shutil.which("Rscript") is None:
        return False
    return subprocess.run(["Rscript", "-e", "library(challengeR)"], capture_output=True, check=False).returncode == 0


pytestmark = pytest.mark.skipif(not challenger_installed(), reason="R with challengeR 1.0.5 is not installed")


def random_table(seed: int) -> tuple[np.ndarray, bool]:
    """Algorithms of different skill on cases of different difficulty, rounded (ties); a third of the
    tables with 10% missing values; every fourth with smaller better."""
    rng = np.random.default_rng(seed)
    n_algorithms, n_cases = int(rng.integers(2, 7)), int(rng.integers(3, 25))
    values = rng.random(n_cases) + rng.normal(0, 0.2, (n_algorithms, n_cases)) + rng.normal(0, 0.1, (n_algorithms, 1))
    values = np.round(values, int(rng.integers(1, 3)))
    if seed % 3 == 0:
        values[rng.random(values.shape) < 0.1] = np.nan
    return values, seed % 4 == 1


def write_table(path: Path, values: np.ndarray) -> None:
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["alg", "case", "value"])
        for a, c in np.ndindex(values.shape):
            writer.writerow([f"A{a}", f"c{c:02d}", "NA" if np.isnan(values[a, c]) else repr(float(values[a, c]))])


def test_eight_schemes_equal_challenger_on_random_tables(tmp_path: Path) -> None:
    tables = {seed: random_table(seed) for seed in range(TABLES)}
    for seed, (values, smaller) in tables.items():
        write_table(tmp_path / f"{seed}.csv", values)
        (tmp_path / f"{seed}.direction").write_text("smaller" if smaller else "larger")
    subprocess.run(
        ["Rscript", str(ORACLES / "challenger_schemes.R"), str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    differences = []
    for seed, (values, smaller) in tables.items():
        rows = list(csv.DictReader((tmp_path / f"{seed}.ranks.csv").open()))
        for name, scheme in SCHEMES.items():
            ours = rank_task(values, Scheme(**{**scheme.describe(), "smaller_better": smaller}))
            theirs = {row["alg"]: row for row in rows if row["scheme"] == name}
            algorithms = [f"A{a}" for a in range(values.shape[0])]
            scores = np.array([float(theirs[a]["score"]) if theirs[a]["score"] != "NA" else np.nan for a in algorithms])
            ranks = np.array([float(theirs[a]["rank"]) for a in algorithms])
            if not (np.allclose(ours.scores, scores, rtol=0, atol=1e-12, equal_nan=True)
                    and np.array_equal(ours.ranks, ranks)):  # fmt: skip
                differences.append(f"table {seed} {name}: ours {ours.scores} {ours.ranks}, challengeR {scores} {ranks}")
    assert not differences, "\n".join(differences)


BOOTSTRAP_SCHEMES = {
    "mean_na0": Scheme("aggregate-then-rank", "mean", na=0),
    "rank_mean": Scheme("rank-then-aggregate", "mean"),
    "test_none": Scheme("test-then-rank", na=0, alpha=0.05, p_adjust="none"),
}


def test_bootstrap_ranks_equal_challengers_with_its_draws_injected(tmp_path: Path) -> None:
    tables = {seed: random_table(seed)[0] for seed in range(0, 24, 2)}  # larger better (challengeR's default)
    for seed, values in tables.items():
        write_table(tmp_path / f"{seed}.csv", values)
    subprocess.run(
        ["Rscript", str(ORACLES / "challenger_bootstrap_ranks.R"), str(tmp_path), "25"],
        capture_output=True, text=True, check=True, timeout=600,
    )  # fmt: skip
    differences = []
    for seed, values in tables.items():
        for name, scheme in BOOTSTRAP_SCHEMES.items():
            rows = list(csv.reader((tmp_path / f"{seed}.{name}.ranks.csv").open()))[1:]
            by_algorithm = {row[0]: [float(x) for x in row[1:]] for row in rows}
            theirs = np.array([by_algorithm[f"A{a}"] for a in range(values.shape[0])]).T  # resamples x algorithms
            draws = list(csv.reader((tmp_path / f"{seed}.{name}.cases.csv").open()))[1:]
            indices = np.array([[int(case[1:]) for case in draw] for draw in draws])  # "c07" is column 7
            ours = rank_resamples(values, scheme, indices, compat=True).ranks
            if not np.array_equal(ours, theirs):
                differences.append(f"table {seed} {name}: {int((ours != theirs).any(axis=1).sum())} resamples differ")
    assert not differences, "\n".join(differences)


def test_multi_task_consensus_equals_challengers(tmp_path: Path) -> None:
    tables = {}
    for seed in range(40):
        rng = np.random.default_rng(1000 + seed)
        n_algorithms = int(rng.integers(2, 7))
        tables[seed] = {
            f"T{k}": np.round(rng.random(n) + rng.normal(0, 0.2, (n_algorithms, n)), 1)  # ties within a task
            for k, n in enumerate(rng.integers(3, 15, 3))
        }
        with (tmp_path / f"{seed}.csv").open("w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["task", "alg", "case", "value"])
            for task, values in tables[seed].items():
                for a, c in np.ndindex(values.shape):
                    writer.writerow([task, f"A{a}", f"c{c:02d}", repr(float(values[a, c]))])
    consensus = ORACLES / "challenger_consensus.R"
    subprocess.run(["Rscript", str(consensus), str(tmp_path)], capture_output=True, text=True, check=True, timeout=600)
    differences = []
    for seed, tasks in tables.items():
        theirs = {
            row["alg"]: float(row["score"]) for row in csv.DictReader((tmp_path / f"{seed}.consensus.csv").open())
        }
        scheme = Scheme("aggregate-then-rank", "mean", na=0)
        ranks = {
            task: {f"A{a}": float(r) for a, r in enumerate(rank_task(v, scheme).ranks)} for task, v in tasks.items()
        }
        ours = consensus_euclidean(ranks)
        if ours.keys() != theirs.keys() or any(abs(ours[a] - theirs[a]) > 1e-12 for a in theirs):
            differences.append(f"table {seed}: ours {ours}, challengeR {theirs}")
    assert not differences, "\n".join(differences)
