"""Ranking robustness analyses of Maier-Hein et al. 2018 (seed 004) beyond the bootstrap.

Leave one case out ("Leave-one-out" in its Methods), the five schemes challengeR's ``methodsplot``
compares (``R/methodsplot.R``: testBased, meanThenRank, medianThenRank, rankThenMean, rankThenMedian,
ties ``min``) with Kendall's tau between each pair, tau between metric variants (tasks) and between
annotators, the missing-data manipulation check (its RQ6: drop each algorithm's results below a
threshold, t = 0.5 for the DSC, and re-rank with missing values ignored) and the significance map
(challengeR ``R/significanceMap.R``: one-sided Wilcoxon tests, Holm by default).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np

from evaluation.errors import ConfigurationError
from evaluation.ranking.data import Task
from evaluation.ranking.primitives import Record, kendall_tau_b
from evaluation.ranking.schemes import Ranking, Scheme, rank_resamples, rank_task

TauMatrix = dict[str, dict[str, float | None]]


@dataclass(frozen=True)
class LeaveOneOut(Record):
    """The rankings without each case in turn, against the full ranking."""

    n_rankings: int
    winner_changes: int
    cases_changing_winner: list[str]
    winner_counts: dict[str, int]
    kendall_tau_min: float | None
    ranks: dict[str, dict[str, float]]


@dataclass(frozen=True)
class SchemeSensitivity(Record):
    """The ranks under challengeR's five schemes, tau between each pair, and the schemes skipped (why)."""

    ranks: dict[str, dict[str, float]]
    kendall_tau: TauMatrix
    skipped: dict[str, str]


@dataclass(frozen=True)
class AnnotatorSensitivity(Record):
    """The ranking per annotator and tau between annotators."""

    ranks: dict[str, dict[str, float]]
    kendall_tau: TauMatrix


@dataclass(frozen=True)
class Withheld(Record):
    """One algorithm's ranks when its results worse than the threshold are withheld."""

    withheld_cases: int
    original_rank: float
    rank_if_ignored: float
    rank_under_chosen_design: float | None  # None: the design refuses missing values


@dataclass(frozen=True)
class ManipulationCheck(Record):
    """Seed 004's RQ6: who could win by withholding their worst cases, and whether the design prevents it."""

    threshold: float
    threshold_rule: str
    algorithms: dict[str, Withheld]
    could_win_by_withholding: list[str]
    wins_under_chosen_design: list[str]
    prevented_by_chosen_design: bool


@dataclass(frozen=True)
class SignificanceMap(Record):
    """Pairwise one-sided test decisions: ``matrix[i][j]`` = 1 when algorithm i is significantly better than j."""

    p_adjust: str
    alpha: float
    better: dict[str, list[str]]
    matrix: list[list[int]]


def tau(a: np.ndarray, b: np.ndarray) -> float | None:
    """Kendall's tau-b of two rankings, None when one of them is constant."""
    value = float(kendall_tau_b(np.asarray(a, dtype=float)[None, :], np.asarray(b, dtype=float))[0])
    return value if np.isfinite(value) else None


def leave_one_out(task: Task, scheme: Scheme, full: Ranking) -> LeaveOneOut:
    """Rank without each case in turn: how often the winner set changes, who wins, tau to the full ranking."""
    n = task.n_units
    indices = np.array([np.delete(np.arange(n), left) for left in range(n)])
    result = rank_resamples(task.values, scheme, task.columns(indices), task=task.name)
    names = task.unit_names
    winners = set(np.flatnonzero(full.ranks == 1))
    changed = [names[i] for i in range(n) if set(np.flatnonzero(result.ranks[i] == 1)) != winners]
    taus = kendall_tau_b(result.ranks, full.ranks)
    return LeaveOneOut(
        n_rankings=n,
        winner_changes=len(changed),
        cases_changing_winner=changed,
        winner_counts={a: int(np.count_nonzero(result.ranks[:, i] == 1)) for i, a in enumerate(task.algorithms)},
        kendall_tau_min=float(np.nanmin(taus)) if np.isfinite(taus).any() else None,
        ranks={
            case: dict(zip(task.algorithms, map(float, result.ranks[i]), strict=True)) for i, case in enumerate(names)
        },
    )


def five_schemes(base: Scheme) -> dict[str, Scheme]:
    """The rankings challengeR's methodsplot compares, with the base scheme's NA rule, tests and direction."""
    common = {"ties": "min", "na": base.na, "smaller_better": base.smaller_better}
    return {
        "test-then-rank": Scheme("test-then-rank", alpha=base.alpha, p_adjust=base.p_adjust, **common),
        "mean-then-rank": Scheme("aggregate-then-rank", "mean", **common),
        "median-then-rank": Scheme("aggregate-then-rank", "median", **common),
        "rank-then-mean": Scheme("rank-then-aggregate", "mean", **common),
        "rank-then-median": Scheme("rank-then-aggregate", "median", **common),
    }


def tau_matrix(rankings: Mapping[str, Mapping[str, float]]) -> TauMatrix:
    """Kendall's tau-b between every two rankings, over the algorithms both rank."""
    matrix: TauMatrix = {}
    for first, a in rankings.items():
        matrix[first] = {}
        for second, b in rankings.items():
            common = sorted(set(a) & set(b))
            matrix[first][second] = tau([a[x] for x in common], [b[x] for x in common]) if len(common) > 1 else None
    return matrix


def scheme_sensitivity(task: Task, base: Scheme) -> SchemeSensitivity:
    """Ranks under the five schemes and tau between each pair; a scheme needing an NA rule is skipped without one."""
    ranks: dict[str, dict[str, float]] = {}
    skipped: dict[str, str] = {}
    for label, scheme in five_schemes(base).items():
        try:
            result = rank_task(task.values, scheme, task=task.name)
        except ConfigurationError as error:
            skipped[label] = str(error)
            continue
        ranks[label] = dict(zip(task.algorithms, map(float, result.ranks), strict=True))
    return SchemeSensitivity(ranks, tau_matrix(ranks), skipped)


def annotator_sensitivity(task: Task, scheme: Scheme) -> AnnotatorSensitivity | None:
    """The ranking per annotator and tau between annotators (None without an annotator column)."""
    if task.annotators is None:
        return None
    ranks = {}
    for annotator in sorted(set(task.annotators)):
        result = rank_task(task.for_annotator(annotator).values, scheme, task=task.name)
        ranks[annotator] = dict(zip(task.algorithms, map(float, result.ranks), strict=True))
    return AnnotatorSensitivity(ranks, tau_matrix(ranks))


def manipulation_threshold(values: np.ndarray, smaller_better: bool) -> tuple[float, str]:
    """Seed 004's t = 0.5 for Dice-like values (larger-better, within [0, 1]); else the worst decile."""
    observed = values[np.isfinite(values)]
    if not smaller_better and observed.min() >= 0 and observed.max() <= 1:
        return 0.5, "0.5 (Dice-like values in [0, 1])"
    quantile = 0.9 if smaller_better else 0.1
    return float(np.quantile(observed, quantile)), f"the task's worst decile ({quantile:.0%} quantile)"


def manipulation_check(task: Task, scheme: Scheme, threshold: float | None = None) -> ManipulationCheck:
    """Could an algorithm have climbed by withholding its worst cases? (seed 004, RQ6)

    For each algorithm, its results worse than the threshold become missing; the table is re-ranked with
    missing values ignored (mean, then rank, NAs dropped: the common practice the paper tests) and under
    the chosen design. The chosen design prevents the manipulation when no algorithm that could win by
    withholding wins under it; a design without an NA rule refuses the manipulated table outright.
    """
    if threshold is None:
        threshold, rule = manipulation_threshold(task.values, scheme.smaller_better)
    else:
        rule = "given"
    ignoring = Scheme("aggregate-then-rank", "mean", ties="min", na="drop", smaller_better=scheme.smaller_better)
    original = rank_task(task.values, scheme, task=task.name).ranks
    per_algorithm: dict[str, Withheld] = {}
    for i, algorithm in enumerate(task.algorithms):
        row = task.values[i]
        worse = (row > threshold) if scheme.smaller_better else (row < threshold)
        manipulated = task.values.copy()
        manipulated[i, worse] = np.nan
        ignored_rank = float(rank_task(manipulated, ignoring, task=task.name).ranks[i])
        try:
            chosen_rank: float | None = float(rank_task(manipulated, scheme, task=task.name).ranks[i])
        except ConfigurationError:
            chosen_rank = None  # the design refuses missing values without an NA rule
        per_algorithm[algorithm] = Withheld(int(np.count_nonzero(worse)), float(original[i]), ignored_rank, chosen_rank)
    could_win = [a for a, r in per_algorithm.items() if r.rank_if_ignored == 1 and r.original_rank != 1]
    still_win = [a for a in could_win if per_algorithm[a].rank_under_chosen_design == 1]
    return ManipulationCheck(threshold, rule, per_algorithm, could_win, still_win, not still_win)


def significance_map(task: Task, scheme: Scheme, p_adjust: str = "holm") -> SignificanceMap | None:
    """Pairwise one-sided test decisions (row significantly better than column), Holm-adjusted by default."""
    test = replace(scheme, kind="test-then-rank", p_adjust=p_adjust)
    try:
        result = rank_task(task.values, test, task=task.name)
    except ConfigurationError:
        return None
    return SignificanceMap(
        p_adjust=p_adjust,
        alpha=scheme.alpha,
        better={a: [task.algorithms[j] for j in np.flatnonzero(result.wins[i])] for i, a in enumerate(task.algorithms)},
        matrix=result.wins.astype(int).tolist(),
    )
