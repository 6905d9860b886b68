"""Bootstrap of a ranking scheme and its summaries (seed 004 "Bootstrapping"; challengeR ``R/Bootstrap.R``).

Draw (or read) one index matrix per task, rank every resample in one vectorised call
(:func:`evaluation.ranking.schemes.rank_resamples`), then summarise: rank frequencies, how often each
algorithm is ranked first ("the winner remains the winner"), rank quantiles (numpy ``linear`` = R
type 7), the algorithms that win at least 1% of resamples without winning the full ranking, and
Kendall's tau between the full ranking and each resample (NaN for a constant resample ranking,
excluded and counted, as challengeR's ``kendall.bootstrap.list``).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from evaluation.errors import ConfigurationError
from evaluation.metrics.bootstrap import resample_indices
from evaluation.ranking.primitives import Record, kendall_tau_b
from evaluation.ranking.schemes import Ranking, Scheme, rank_resamples

WINNER_SHARE = 0.01
MAX_RESAMPLES = 100_000  # a larger count only makes an index matrix that fills the memory


@dataclass(frozen=True)
class TauSummary(Record):
    """Kendall's tau between the full ranking and each resample (undefined ones excluded and counted)."""

    mean: float | None
    median: float | None
    q25: float | None
    q75: float | None
    n_undefined: int


@dataclass(frozen=True)
class BootstrapResult(Record):
    """Every bootstrap number of one task (its ``tasks.<task>.bootstrap`` entry in ranking.json)."""

    n_resamples: int
    compat: str | None
    winner_frequency: dict[str, float]
    original_winners: list[str]
    winner_stays_winner: dict[str, float]
    other_winners: list[str]
    share_other_winners: float
    rank_quantiles: dict[str, list[float | None]]
    rank_frequencies: dict[str, dict[str, int]]
    kendall_tau: TauSummary
    kendall_tau_values: np.ndarray
    ranks: np.ndarray = field(repr=False, metadata={"internal": True})  # (resamples, algorithms)

    def share(self, algorithm: str, rank: float) -> float:
        """The share of resamples that rank ``algorithm`` at ``rank``."""
        return self.rank_frequencies[algorithm].get(f"{rank:g}", 0) / self.n_resamples


def read_indices(path: Path, n_cases: int, task: str) -> np.ndarray:
    """An injected resample matrix: one row per resample, 0-based indices into the sorted case list."""
    import pandas as pd  # only here: a run without injected resamples does not pay for pandas

    try:
        frame = pd.read_csv(path, header=None, dtype=str, keep_default_na=False)
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError) as error:
        raise ConfigurationError(f"The bootstrap index file {path} cannot be read ({error}).") from None
    if frame.shape[0] and not frame.iloc[0].str.strip().str.fullmatch(r"-?\d+").all():
        frame = frame.iloc[1:]  # a header row
    try:
        indices = frame.to_numpy().astype(np.int64)
    except (ValueError, OverflowError):
        raise ConfigurationError(f"The bootstrap index file {path} must hold integers only.") from None
    if indices.size == 0:
        raise ConfigurationError(f"The bootstrap index file {path} holds no resample.")
    if indices.shape[1] != n_cases or indices.min() < 0 or indices.max() >= n_cases:
        raise ConfigurationError(
            f"The bootstrap index file {path} must have {n_cases} columns of 0-based indices below {n_cases} "
            f"for task {task!r} (it has {indices.shape[1]} columns, values {indices.min()}..{indices.max()})."
        )
    return indices


def check_count(n_resamples: int) -> None:
    """Refuse a resample count that is negative or too large to hold (checked before any work)."""
    if not 0 <= n_resamples <= MAX_RESAMPLES:
        raise ConfigurationError(
            f"--bootstrap must be a number of resamples from 0 to {MAX_RESAMPLES:,}, not {n_resamples:,}."
        )


def draw(n_cases: int, n_resamples: int, seed: int) -> np.ndarray:
    """Seeded resamples of the cases with replacement (the same matrix for every scheme of a task)."""
    check_count(n_resamples)
    return resample_indices(n_cases, n_resamples, seed)


def rank_resamples_on_dask(
    values: np.ndarray,
    scheme: Scheme,
    indices: np.ndarray,
    compat: bool,
    task: str,
    scheduler: str | Any,
    resamples_per_task: int = 100,
) -> Ranking:
    """``rank_resamples`` with the resamples spread over a Dask cluster in blocks of rows.

    Every resample is ranked independently of the others, so the blocks give the same numbers as one
    local call (tested); only random tie-breaking, which draws from one generator in row order, is
    refused.
    """
    if scheme.ties == "random":
        raise ConfigurationError("--scheduler cannot spread a bootstrap with ties 'random'; run it locally.")
    from evaluation.dask_runner import client_for

    client = client_for(scheduler) if isinstance(scheduler, str) else scheduler
    table = client.scatter(values, broadcast=True)
    blocks = [indices[start : start + resamples_per_task] for start in range(0, len(indices), resamples_per_task)]
    futures = [client.submit(rank_resamples, table, scheme, block, compat, None, task, pure=False) for block in blocks]
    parts: list[Ranking] = client.gather(futures)
    wins = None if parts[0].wins is None else np.concatenate([part.wins for part in parts])
    return Ranking(
        np.concatenate([part.scores for part in parts]), np.concatenate([part.ranks for part in parts]), wins
    )


def _quantiles(values: np.ndarray, probabilities: list[float]) -> list[float | None]:
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return [None] * len(probabilities)
    return [float(q) for q in np.quantile(finite, probabilities, method="linear")]


def summarise(full: Ranking, resampled: Ranking, algorithms: tuple[str, ...], compat: bool) -> BootstrapResult:
    """Every bootstrap number the report and ranking.json show, for one task."""
    ranks = resampled.ranks
    first = ranks == 1
    winners = {a: float(f) for a, f in zip(algorithms, first.mean(axis=0), strict=True)}
    original_winners = {a for a, r in zip(algorithms, full.ranks, strict=True) if r == 1}
    others = [a for a in algorithms if a not in original_winners]
    frequent_others = [a for a in others if winners[a] >= WINNER_SHARE]
    tau = kendall_tau_b(ranks, full.ranks)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        mean_tau = float(np.nanmean(tau)) if np.isfinite(tau).any() else None
    q25, median, q75 = _quantiles(tau, [0.25, 0.5, 0.75])
    frequencies = {}
    for column, algorithm in enumerate(algorithms):
        observed, count = np.unique(ranks[:, column], return_counts=True)
        frequencies[algorithm] = {f"{r:g}": int(c) for r, c in zip(observed, count, strict=True)}
    return BootstrapResult(
        n_resamples=int(ranks.shape[0]),
        compat="challengeR" if compat else None,
        winner_frequency=winners,
        original_winners=sorted(original_winners),
        winner_stays_winner={a: winners[a] for a in sorted(original_winners)},
        other_winners=frequent_others,
        share_other_winners=len(frequent_others) / len(others) if others else 0.0,
        rank_quantiles={a: _quantiles(ranks[:, i], [0.025, 0.5, 0.975]) for i, a in enumerate(algorithms)},
        rank_frequencies=frequencies,
        kendall_tau=TauSummary(mean_tau, median, q25, q75, int(np.count_nonzero(~np.isfinite(tau)))),
        kendall_tau_values=tau,
        ranks=ranks,
    )
