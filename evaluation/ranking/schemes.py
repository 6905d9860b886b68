"""challengeR's three ranking schemes and its euclidean consensus, for one table or many resamples.

From challengeR 1.0.5 (github wiesenfa/challengeR): ``R/rankingMethods.R`` (aggregateThenRank,
rankThenAggregate, testThenRank), ``R/Aggregate.R`` and ``R/testBased.R`` (significance: wins over
n - 1 after adjusting over n(n-1) ordered tests), ``R/Rank.aggregated.list.R`` (aggregates ranked with
``rankNA2``; significance scores larger-better; mean/median ranks smaller-better),
``R/consensus.R`` (euclidean = mean over tasks of each task's average-tie ranks).

A resample is given as an index matrix (resamples, positions) into the task's cases. By default the
copies of a drawn case are separate cases. ``compat=True`` reproduces challengeR's bootstrap, which
merges the drawn case ids back into the data (``R/Bootstrap.R``): rank-then-aggregate then ranks
the k copies of a case jointly (so ranks scale with k), and test-then-rank keeps one copy (its
``Decision`` matches cases by id).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import asdict, dataclass

import numpy as np

from evaluation.errors import ConfigurationError
from evaluation.metrics.bootstrap import row_counts
from evaluation.ranking.primitives import aggregate, rank_na, rankdata, treat_na
from evaluation.ranking.significance import better_pvalues, decisions

SCHEMES = ("aggregate-then-rank", "rank-then-aggregate", "test-then-rank")
_ROWS_PER_CHUNK = 2_000_000


@dataclass(frozen=True)
class Scheme:
    """A ranking design: what is ranked and how (the "rank computation method" of seed 004's Table 1)."""

    kind: str = "aggregate-then-rank"
    aggregate: str | float = "mean"
    ties: str = "min"
    na: str | float | None = None
    smaller_better: bool = False
    alpha: float = 0.05
    p_adjust: str = "none"

    def describe(self) -> dict[str, object]:
        return asdict(self)

    def label(self) -> str:
        if self.kind == "test-then-rank":
            return f"test-then-rank (Wilcoxon, alpha {self.alpha}, {self.p_adjust})"
        if self.kind == "aggregate-then-rank":
            return f"{self.aggregate}-then-rank"
        return f"rank-then-{self.aggregate}"


@dataclass(frozen=True)
class Ranking:
    """Scores (what was ranked) and ranks, shaped (algorithms,) or (resamples, algorithms)."""

    scores: np.ndarray
    ranks: np.ndarray
    wins: np.ndarray | None = None  # test-then-rank: significant wins [.., i, j]


def warn_compat_na(scheme: Scheme, values: np.ndarray, compat: bool) -> str | None:
    """The warning owed when challengeR semantics silently drop missing cases (seed 004, RQ6)."""
    if compat and scheme.kind == "rank-then-aggregate" and scheme.ties in ("max", "first") and np.isnan(values).any():
        return (
            f"challengeR leaves NAs unranked under ties '{scheme.ties}', so missing cases are silently dropped "
            "from rank-then-aggregate: an algorithm can climb by not submitting its worst cases."
        )
    return None


def _rank_scores(
    scores: np.ndarray, scheme: Scheme, smaller_better: bool, rng: np.random.Generator | None
) -> np.ndarray:
    return rank_na(scores, scheme.ties, smaller_better=smaller_better, rng=rng)


def _all_rows(n_cases: int) -> np.ndarray:
    return np.arange(n_cases)[None, :]


def _chunks(n_resamples: int, per_resample: int) -> list[slice]:
    step = max(1, _ROWS_PER_CHUNK // max(1, per_resample))
    return [slice(start, start + step) for start in range(0, n_resamples, step)]


def _compat_coefficients(values: np.ndarray, scheme: Scheme) -> tuple[np.ndarray, np.ndarray]:
    """Per (algorithm, case) a, b such that a case drawn k times gets joint rank k*a + b in every copy.

    Ranking k copies of a case together (rankNA2 over k*n values): an algorithm with ``better`` strictly
    better and ``tied`` equal observed values gets k*better + 1 (min), k*better + (k*tied + 1)/2
    (average) or k*(better + tied) (max); NAs follow rankNA2's rule relative to the worst observed rank.
    """
    cases = values.T
    missing = np.isnan(cases)
    lowest = rank_na(cases, "min", scheme.smaller_better, compat=True)
    highest = rank_na(cases, "max", scheme.smaller_better, compat=True)
    better = lowest - 1.0
    tied = highest - lowest + 1.0
    if scheme.ties == "min":
        a, b = better, np.ones_like(better)
    elif scheme.ties == "average":
        a, b = better + tied / 2.0, np.full_like(better, 0.5)
    else:
        a, b = better + tied, np.zeros_like(better)
    if missing.any():
        worst = np.where(missing, -np.inf, a).max(axis=1, keepdims=True)  # the observed value ranked last
        n_missing = missing.sum(axis=1, keepdims=True)
        none_observed = missing.all(axis=1, keepdims=True)
        if scheme.ties == "min":
            fill_a, fill_b = np.where(none_observed, 0.0, worst), np.where(none_observed, 1.0, 2.0)
        elif scheme.ties == "average":
            fill_a = np.where(none_observed, 0.0, worst) + n_missing / 2.0
            fill_b = np.where(none_observed, 0.5, 1.0)
        else:
            fill_a = fill_b = np.full(n_missing.shape, np.nan)
        a = np.where(missing, fill_a, a)
        b = np.where(missing, fill_b, b)
    return a.T, b.T


def rank_resamples(
    values: np.ndarray,
    scheme: Scheme,
    indices: np.ndarray | None = None,
    compat: bool = False,
    rng: np.random.Generator | None = None,
    task: str = "task",
) -> Ranking:
    """Apply ``scheme`` to each resample (rows of ``indices``; None = the table itself, one row)."""
    n_algorithms, n_cases = values.shape
    if indices is None:
        indices = _all_rows(n_cases)
    if scheme.kind == "aggregate-then-rank":
        treated = treat_na(values, scheme.na, scheme.smaller_better, task)
        scores = np.concatenate(
            [
                aggregate(treated[:, indices[part]].transpose(1, 0, 2), scheme.aggregate)
                for part in _chunks(indices.shape[0], n_algorithms * indices.shape[1])
            ]
        )
        return Ranking(scores, _rank_scores(scores, scheme, scheme.smaller_better, rng))
    if scheme.kind == "rank-then-aggregate":
        # without --na, NAs get the worst rank of their case (rankNA2); with one, challengeR's as.challenge
        # treats them first: a number replaces them, na.rm removes the rows (their ranks skipped below)
        treated = values if scheme.na in (None, "drop") else treat_na(values, scheme.na, scheme.smaller_better, task)
        dropped = np.isnan(values) if scheme.na == "drop" else np.zeros(values.shape, dtype=bool)
        if compat and scheme.ties in ("min", "average", "max"):
            a, b = _compat_coefficients(treated, scheme)
            a = np.where(dropped, np.nan, a)
            multiplicity = np.take_along_axis(row_counts(indices, n_cases), indices, axis=1)
            parts = [
                multiplicity[part][:, None, :] * a[:, indices[part]].transpose(1, 0, 2)
                + b[:, indices[part]].transpose(1, 0, 2)
                for part in _chunks(indices.shape[0], n_algorithms * indices.shape[1])
            ]
            scores = np.concatenate([aggregate(part, scheme.aggregate) for part in parts])
        else:
            if compat and np.any(row_counts(indices, n_cases) > 1):
                raise ConfigurationError(
                    "--compat challengeR reproduces rank-then-aggregate resamples for ties min, average and max, "
                    f"not {scheme.ties!r} (its result depends on R's row order or random numbers)."
                )
            case_ranks = rank_na(treated.T, scheme.ties, scheme.smaller_better, rng=rng, compat=compat).T
            case_ranks = np.where(dropped, np.nan, case_ranks)
            scores = np.concatenate(
                [
                    aggregate(case_ranks[:, indices[part]].transpose(1, 0, 2), scheme.aggregate)
                    for part in _chunks(indices.shape[0], n_algorithms * indices.shape[1])
                ]
            )
        return Ranking(scores, _rank_scores(scores, scheme, True, rng))
    if scheme.kind == "test-then-rank":
        treated = treat_na(values, scheme.na, scheme.smaller_better, task)
        weights = row_counts(indices, n_cases)
        if compat:
            weights = (weights > 0).astype(float)
        wins = decisions(better_pvalues(treated, weights, scheme.smaller_better), scheme.alpha, scheme.p_adjust)
        scores = wins.sum(axis=2) / (n_algorithms - 1.0)
        return Ranking(scores, _rank_scores(scores, scheme, False, rng), wins)
    raise ConfigurationError(f"Unknown scheme {scheme.kind!r}; use one of {', '.join(SCHEMES)}.")


def rank_task(
    values: np.ndarray,
    scheme: Scheme,
    rng: np.random.Generator | None = None,
    task: str = "task",
    compat: bool = False,
) -> Ranking:
    """The ranking of the full table (one resample holding every case once)."""
    result = rank_resamples(values, scheme, None, compat=compat, rng=rng, task=task)
    return Ranking(result.scores[0], result.ranks[0], None if result.wins is None else result.wins[0])


def consensus_euclidean(
    task_ranks: Mapping[str, Mapping[str, float]], weights: Mapping[str, float] | None = None
) -> dict[str, float]:
    """challengeR's ``consensus(method = "euclidean")``: weighted mean over tasks of average-tie ranks.

    Each task's ranking is first re-ranked with ties averaged (relations' euclidean consensus of weak
    orders); an algorithm absent from a task is left out of that task's mean.
    """
    algorithms = sorted({a for ranks in task_ranks.values() for a in ranks})
    total = dict.fromkeys(algorithms, 0.0)
    weight_sum = dict.fromkeys(algorithms, 0.0)
    for task, ranks in task_ranks.items():
        names = list(ranks)
        averaged = rankdata([ranks[a] for a in names], method="average")
        weight = 1.0 if weights is None else float(weights.get(task, 0.0))
        for name, rank in zip(names, averaged, strict=True):
            total[name] += weight * rank
            weight_sum[name] += weight
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return {a: total[a] / weight_sum[a] if weight_sum[a] else float("nan") for a in algorithms}
