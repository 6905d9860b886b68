"""Bootstrap: vectorised resamples equal the resample written out; compat reproduces challengeR's merge."""

from __future__ import annotations

import numpy as np
import pytest

from evaluation.ranking.bootstrap import summarise
from evaluation.ranking.primitives import aggregate, rank_na
from evaluation.ranking.schemes import Scheme, rank_resamples, rank_task

RNG = np.random.default_rng(11)
VALUES = RNG.integers(0, 8, size=(5, 12)) / 8.0  # ties within cases
VALUES[2, 4] = np.nan
INDICES = RNG.integers(0, 12, size=(25, 12))

SCHEMES = [
    Scheme("aggregate-then-rank", "mean", na=0.0),
    Scheme("aggregate-then-rank", "median", na="drop"),
    Scheme("rank-then-aggregate", "mean"),
    Scheme("rank-then-aggregate", "median", ties="average"),
    Scheme("test-then-rank", na="drop"),
    Scheme("test-then-rank", na=0.0, p_adjust="holm"),
]


@pytest.mark.parametrize("scheme", SCHEMES, ids=lambda s: s.label())
def test_copies_as_separate_cases_equal_the_written_out_resample(scheme: Scheme) -> None:
    batched = rank_resamples(VALUES, scheme, INDICES)
    for b, row in enumerate(INDICES):
        single = rank_task(VALUES[:, row], scheme)
        np.testing.assert_allclose(batched.scores[b], single.scores, rtol=1e-12)
        np.testing.assert_array_equal(batched.ranks[b], single.ranks)


def challenger_rank_then_aggregate(values: np.ndarray, row: np.ndarray, scheme: Scheme) -> np.ndarray:
    """challengeR's bootstrap written out (R/Bootstrap.R merges the drawn case ids into the data;
    R/Rank.R then ranks all rows of one case id together with rankNA2; aggregate drops NA ranks)."""
    per_row_ranks = []
    for case in row:  # one group per drawn position, holding every copy of that case id
        copies = int(np.count_nonzero(row == case))
        joint = np.tile(values[:, case], copies)  # k copies of every algorithm's value
        ranks = rank_na(joint, scheme.ties, scheme.smaller_better, compat=True)
        per_row_ranks.append(ranks[: values.shape[0]])  # every copy of an algorithm has the same rank
    stacked = np.array(per_row_ranks).T  # (algorithms, rows of the merged data)
    return aggregate(stacked, scheme.aggregate)


@pytest.mark.parametrize("ties", ["min", "average", "max"])
@pytest.mark.parametrize("how", ["mean", "median"])
def test_compat_rank_then_aggregate_ranks_copies_jointly(ties: str, how: str) -> None:
    scheme = Scheme("rank-then-aggregate", how, ties=ties)
    batched = rank_resamples(VALUES, scheme, INDICES, compat=True)
    for b, row in enumerate(INDICES):
        np.testing.assert_allclose(batched.scores[b], challenger_rank_then_aggregate(VALUES, row, scheme), rtol=1e-12)


def test_compat_test_then_rank_keeps_one_copy() -> None:
    scheme = Scheme("test-then-rank", na=0.0)
    batched = rank_resamples(VALUES, scheme, INDICES, compat=True)
    for b, row in enumerate(INDICES):
        unique = np.unique(row)  # challengeR's Decision matches cases by id: copies collapse
        np.testing.assert_array_equal(batched.ranks[b], rank_task(VALUES[:, unique], scheme).ranks)


def test_summary_numbers() -> None:
    scheme = Scheme("aggregate-then-rank", "mean", na=0.0)
    full = rank_task(VALUES, scheme)
    resampled = rank_resamples(VALUES, scheme, INDICES)
    algorithms = tuple("ABCDE")
    summary = summarise(full, resampled, algorithms, compat=False)
    first = resampled.ranks == 1
    assert summary.winner_frequency == {a: pytest.approx(first[:, i].mean()) for i, a in enumerate(algorithms)}
    assert summary.rank_quantiles["A"] == pytest.approx(np.percentile(resampled.ranks[:, 0], [2.5, 50, 97.5]))
    assert sum(summary.rank_frequencies["B"].values()) == 25
    assert summary.kendall_tau.n_undefined == 0
