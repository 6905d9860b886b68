"""Rank primitive, NA treatment, aggregation, Holm adjustment and Kendall's tau-b, batched with numpy.

Semantics from challengeR 1.0.5 (github wiesenfa/challengeR): ``R/rankNA2.R`` (ranks with NAs kept
aside, then NAs placed after the worst rank), ``R/Aggregate.R`` (``na.treat``: a number replaces NAs,
``na.rm`` drops them), ``R/compareRanks.R`` (Kendall's tau = R's ``cor(method = "kendall")``, tau-b).
Every function works on the LAST axis so that thousands of resamples are ranked in one call.
:class:`Record` is the base of the tool's typed results (their ranking.json form).
"""

from __future__ import annotations

import warnings
from dataclasses import fields
from typing import Any, Literal

import numpy as np

from evaluation.errors import ConfigurationError

Ties = Literal["min", "average", "max", "first", "random"]
TIES: tuple[str, ...] = ("min", "average", "max", "first", "random")
_RANKDATA = {"min": "min", "average": "average", "max": "max", "first": "ordinal"}


def rankdata(values: np.ndarray, method: str = "average") -> np.ndarray:
    """``scipy.stats.rankdata(values, method, axis=-1)`` for NaN-free input, as floats, in numpy alone
    (scipy.stats costs most of the tool's start-up): 1-based ranks along the last axis, ties given the
    ``min``, ``max`` or ``average`` rank of their group, or ranked in order of appearance (``ordinal``)."""
    x = np.asarray(values, dtype=float)
    order = np.argsort(x, axis=-1, kind="stable")
    ordered = np.take_along_axis(x, order, axis=-1)
    position = np.broadcast_to(np.arange(x.shape[-1]), x.shape)
    starts = np.ones(x.shape, dtype=bool)
    starts[..., 1:] = ordered[..., 1:] != ordered[..., :-1]
    ends = np.ones(x.shape, dtype=bool)
    ends[..., :-1] = starts[..., 1:]
    first = np.maximum.accumulate(np.where(starts, position, 0), axis=-1) + 1.0
    last = np.flip(np.minimum.accumulate(np.flip(np.where(ends, position, x.shape[-1]), -1), axis=-1), -1) + 1.0
    by_method = {"min": first, "max": last, "average": (first + last) / 2.0, "ordinal": position + 1.0}
    ranks = np.empty(x.shape, dtype=float)
    np.put_along_axis(ranks, order, by_method[method], axis=-1)
    return ranks


def rank_na(
    values: np.ndarray,
    ties: str = "min",
    smaller_better: bool = True,
    rng: np.random.Generator | None = None,
    compat: bool = False,
) -> np.ndarray:
    """challengeR's ``rankNA2`` along the last axis (NaN = NA).

    Non-missing values are ranked with R's ``ties.method``; then NAs get max rank + 1 (``min``,
    ``random``) or max rank + mean(1..k) (``average``). Under ``max`` / ``first`` challengeR leaves NAs
    unranked (NaN here) so that they drop out of later aggregation; that is reproduced only with
    ``compat`` (the caller warns). Otherwise NAs are ranked last as ``max`` / ``first`` would rank k
    values tied behind every observed one.
    """
    x = np.asarray(values, dtype=float)
    missing = np.isnan(x)
    oriented = np.where(missing, np.inf, x if smaller_better else -x)
    if ties == "random":
        generator = rng if rng is not None else np.random.default_rng(0)
        order = np.lexsort((generator.random(x.shape), oriented), axis=-1)
        ranks = np.empty(x.shape, dtype=float)
        np.put_along_axis(ranks, order, np.broadcast_to(np.arange(1.0, x.shape[-1] + 1), x.shape), axis=-1)
    elif ties in _RANKDATA:
        ranks = rankdata(oriented, method=_RANKDATA[ties])
    else:
        raise ConfigurationError(f"Unknown ties method {ties!r}; use one of {', '.join(TIES)}.")
    if not missing.any():
        return ranks
    observed_max = np.where(missing, -np.inf, ranks).max(axis=-1, keepdims=True)
    observed_max = np.where(np.isfinite(observed_max), observed_max, 0.0)
    n_missing = missing.sum(axis=-1, keepdims=True)
    if ties in ("min", "random"):
        filled = np.broadcast_to(observed_max + 1.0, x.shape)
    elif ties == "average":
        filled = np.broadcast_to(observed_max + (n_missing + 1.0) / 2.0, x.shape)
    elif compat:
        filled = np.full(x.shape, np.nan)
    else:
        return ranks  # max: all NAs tied at n; first: NAs in order after the observed values
    return np.where(missing, filled, ranks)


def treat_na(values: np.ndarray, na: str | float | None, smaller_better: bool, task: str) -> np.ndarray:
    """challengeR's ``na.treat``: a number replaces NAs, ``drop`` (``na.rm``) keeps them as NaN to be skipped.

    ``worst`` replaces NAs by the task's worst observed value (challengeR's function form cannot do this:
    it receives only the NA values, so ``function(x) min(x)`` yields NA). Without a rule, NAs are an error.
    """
    missing = np.isnan(values)
    if not missing.any() or na == "drop":
        return values
    if na is None:
        i, j = np.argwhere(missing)[0]
        raise ConfigurationError(
            f"Task {task!r} has {int(missing.sum())} missing value(s) (first: algorithm #{i + 1}, case #{j + 1}); "
            "choose how to treat them with --na drop, --na worst or --na NUMBER."
        )
    if na == "worst":
        observed = values[~missing]
        fill = observed.max() if smaller_better else observed.min()
    else:
        fill = float(na)
    return np.where(missing, fill, values)


def r_mean(values: np.ndarray, axis: int = -1) -> np.ndarray:
    """R's ``mean`` with NaNs skipped: extended-precision sum, then one correction pass (R ``summary.c``).

    So that equal multisets of values in a different order give equal means, as in challengeR (a plain
    float64 sum can differ in the last bit and break a tie).
    """
    x = np.asarray(values, dtype=np.longdouble)
    observed = ~np.isnan(x)
    n = observed.sum(axis=axis, keepdims=True)
    first = np.where(observed, x, 0).sum(axis=axis, keepdims=True) / n
    correction = np.where(observed, x - first, 0).sum(axis=axis, keepdims=True) / n
    return np.squeeze(first + correction, axis=axis).astype(float)


def aggregate(values: np.ndarray, how: str | float, axis: int = -1) -> np.ndarray:
    """Mean, median or a quantile (R type 7 = numpy ``linear``) along ``axis``, NaNs skipped."""
    with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN slices give NaN, ranked as NA
        if how == "mean":
            return r_mean(values, axis=axis)
        if how == "median":
            return np.nanmedian(values, axis=axis)
        return np.nanquantile(values, float(how), axis=axis, method="linear")


def holm(pvalues: np.ndarray) -> np.ndarray:
    """Holm's step-down adjustment over the last axis (R ``p.adjust(method = "holm")``)."""
    m = pvalues.shape[-1]
    order = np.argsort(pvalues, axis=-1, kind="stable")
    ordered = np.take_along_axis(pvalues, order, axis=-1) * (m - np.arange(m))
    adjusted_sorted = np.minimum(np.maximum.accumulate(ordered, axis=-1), 1.0)
    adjusted = np.empty_like(adjusted_sorted)
    np.put_along_axis(adjusted, order, adjusted_sorted, axis=-1)
    return adjusted


def kendall_tau_b(rankings: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """Kendall's tau-b of each row of ``rankings`` against ``reference`` (NaN when either is constant).

    Equal to ``scipy.stats.kendalltau`` (variant b) and R's ``cor(method = "kendall")``.
    """
    rankings = np.atleast_2d(rankings)
    i, j = np.triu_indices(rankings.shape[-1], 1)
    a = np.sign(rankings[..., i] - rankings[..., j])
    b = np.sign(reference[i] - reference[j])
    untied_a = np.count_nonzero(a, axis=-1)
    untied_b = np.count_nonzero(b)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (a * b).sum(axis=-1) / np.sqrt(untied_a * float(untied_b))


class Record:
    """A typed result (a dataclass) whose fields are its ranking.json keys, in order; a field with
    ``metadata={"internal": True}`` is kept for the report and left out of the JSON."""

    def to_json(self) -> dict[str, Any]:
        return {f.name: _json(getattr(self, f.name)) for f in fields(self) if not f.metadata.get("internal")}  # type: ignore[arg-type]


def _json(value: Any) -> Any:
    if isinstance(value, Record):
        return value.to_json()
    if isinstance(value, dict):
        return {key: _json(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json(item) for item in value]
    return value
