"""Harrell's concordance index with right censoring, in O(n log n) time and O(n) memory per weight row.

Definition (Harrell et al., JAMA 1982; as ``lifelines.utils.concordance_index`` and the HECKTOR 2021
evaluator, github voreille/hecktor ``src/aicrowd_evaluator/survival_metrics.py``): an ordered pair
(i, j) is comparable when ``t_i < t_j`` and i had an event, or ``t_i == t_j`` and only i had an
event; it is concordant when i has the higher risk, and a tie in risk counts 0.5.

A patient without a prediction (``missing``): every comparable pair it is in counts 0
(``missing="non-concordant"``, the HECKTOR 2026 rule) or 0.5 (``missing="tie"``, what the 2021
code did with NaN predictions).

Counting, without enumerating pairs: patients are sorted by time, events before the censored
patients of the same time, so the patients comparable to an event i fill the positions from ``s_i``
(just after the last event at ``t_i``) to the end. Within that suffix, the weight of patients with a
lower or equal risk is a dominance count, taken on a merge-sort tree over positions: at level ``L``
the positions form blocks of ``2**L`` sorted by risk rank; a prefix ``[0, s)`` is one block per set
bit of ``s``; a block's weight below a rank is a ``searchsorted`` into its sorted ranks and a
difference of cumulative weights. The suffix is the whole minus the prefix. Every level serves many
weight rows (bootstrap resamples) at once, and with integer weights every count is an exact integer
until the final division.

Multi-cohort survival: ``concordance_index_by_group`` is the C-index of each cohort (centre, race
group) on its own, as the CIBMTR 2024-25 stratified C-index computes it per race group with
``lifelines.utils.concordance_index``; ``groups.over_groups`` combines the cohorts' values.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evaluation.metrics import checks, groups

MISSING_POLICIES = ("non-concordant", "tie")
_BLOCK_ELEMENTS = 2_000_000  # weight rows x patients handled together (int32: 8 MB per array)


@dataclass(frozen=True)
class _Level:
    """One level of the tree: the permutation sorting each block by risk rank, and for the events
    whose prefix holds a block of this level, that block's start and the ends of their lower / not
    higher ranks in the permuted order; ``sign`` -1 for prefix blocks, +1 for the whole."""

    order: np.ndarray
    events: np.ndarray
    start: np.ndarray
    below: np.ndarray
    not_above: np.ndarray
    sign: int


def _tree(rank: np.ndarray, event_rank: np.ndarray, suffix_start: np.ndarray) -> list[_Level]:
    """Levels for patients of risk ``rank`` (by position) and events of rank ``event_rank`` whose
    comparable patients are the positions ``suffix_start`` onwards: one level per bit of the prefix
    lengths (blocks of ``2**L``, subtracted), then one block holding every position (added)."""
    n = rank.size
    width = np.int64(rank.max(initial=0)) + 1
    positions = np.arange(n, dtype=np.int64)
    levels = []
    for level in [*range(n.bit_length()), None]:
        if level is None:
            block, events, shift, sign = np.zeros(n, dtype=np.int64), np.arange(suffix_start.size), 0, 1
            event_block = np.zeros(events.size, dtype=np.int64)
        else:
            block, events, shift, sign = positions >> level, np.flatnonzero((suffix_start >> level) & 1), level, -1
            event_block = (suffix_start[events] >> level) - 1
        keys = block * width + rank
        order = np.argsort(keys, kind="stable")
        sorted_keys = keys[order]
        event_keys = event_block * width + event_rank[events]
        below = np.searchsorted(sorted_keys, event_keys, "left")
        not_above = np.searchsorted(sorted_keys, event_keys, "right")
        levels.append(_Level(order, events, event_block << shift, below, not_above, sign))
    return levels


def _cumulative(weights: np.ndarray) -> np.ndarray:
    """Row-wise exclusive cumulative sums: ``out[:, k]`` = sum of the first ``k`` columns."""
    out = np.zeros((weights.shape[0], weights.shape[1] + 1), dtype=weights.dtype)
    np.cumsum(weights, axis=1, out=out[:, 1:])
    return out


def _pair_sums(
    weights: np.ndarray,
    predicted: np.ndarray,
    event_position: np.ndarray,
    scored_event: np.ndarray,
    suffix_start: np.ndarray,
    tree: list[_Level],
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per weight row (columns in position order): the comparable pair weight, the same for pairs of
    two predicted patients, and twice their concordance credit (lower risk counts 2, equal risk 1)."""
    accumulate = np.int64 if weights.dtype.kind in "iu" else np.float64
    scored = weights * predicted
    event_weights = weights[:, event_position].astype(accumulate)
    scored_event_weights = event_weights * scored_event

    def suffix_pairs(row_weights: np.ndarray, per_event: np.ndarray) -> np.ndarray:
        cumulative = _cumulative(row_weights)
        return np.einsum("ij,ij->i", per_event, (cumulative[:, -1:] - cumulative[:, suffix_start]).astype(accumulate))

    credit = np.zeros(weights.shape[0], dtype=accumulate)
    for level in tree:
        cumulative = _cumulative(scored[:, level.order])
        counts = cumulative[:, level.below] + cumulative[:, level.not_above] - 2 * cumulative[:, level.start]
        credit += level.sign * np.einsum("ij,ij->i", scored_event_weights[:, level.events], counts.astype(accumulate))
    return suffix_pairs(weights, event_weights), suffix_pairs(scored, scored_event_weights), credit


def concordance_index(
    time: np.ndarray,
    event: np.ndarray,
    risk: np.ndarray,
    missing: np.ndarray | None = None,
    policy: str = "non-concordant",
    weights: np.ndarray | None = None,
) -> float | np.ndarray:
    """Harrell's C-index (higher ``risk`` = earlier event); NaN when no pair is comparable.

    ``weights`` (resamples x patients, how often each patient is drawn) gives one C-index per
    bootstrap resample at once: a pair counts ``w_i * w_j`` times. Memory is O(patients) per block
    of resamples; the resamples are processed in blocks of about ``_BLOCK_ELEMENTS`` values.
    """
    if policy not in MISSING_POLICIES:
        raise ValueError(f"missing policy must be one of {MISSING_POLICIES}, got {policy!r}")
    time = checks.as_finite("time", time, ndim=1)
    event = checks.binary("event", event)
    risk = np.asarray(risk, dtype=float)  # NaN / inf: a missing prediction
    if event.ndim != 1 or risk.ndim != 1:
        raise ValueError(f"event and risk must be 1-dimensional, got shapes {event.shape} and {risk.shape}")
    checks.same_length(time=time, event=event, risk=risk, **({} if missing is None else {"missing": missing}))
    absent = ~np.isfinite(risk) if missing is None else np.asarray(missing, dtype=bool) | ~np.isfinite(risk)
    order = np.lexsort((~event, time))  # by time, events first among equal times
    sorted_event, predicted = event[order], ~absent[order]
    time_group = np.unique(time[order], return_inverse=True)[1].astype(np.int64)
    group_key = 2 * time_group + ~sorted_event  # event i is comparable to every position after its group's events
    event_position = np.flatnonzero(sorted_event)
    suffix_start = np.searchsorted(group_key, group_key[event_position], "right")
    rank = np.zeros(time.size, dtype=np.int64)
    rank[predicted] = np.unique(risk[order][predicted], return_inverse=True)[1]
    tree = _tree(rank, rank[event_position], suffix_start)
    missing_credit = 0 if policy == "non-concordant" else 1  # twice the credit of a pair with a missing patient

    rows = np.ones((1, time.size), dtype=np.int32) if weights is None else np.atleast_2d(np.asarray(weights))
    if rows.ndim != 2:
        raise ValueError(f"weights must be 2-dimensional, got shape {rows.shape}")
    if rows.shape[1] != time.size:  # the wording of bootstrap.case_weights
        raise ValueError(f"weights has {rows.shape[1]} columns for {time.size} cases")
    if rows.dtype.kind in "iub":
        totals = rows.sum(axis=1, dtype=np.int64)
        dtype = np.int32 if totals.size == 0 or totals.max() < 2**29 else np.int64  # 2 x sums fit int32
    else:
        dtype = np.float64
    block = max(1, _BLOCK_ELEMENTS // max(1, time.size))
    results = []
    for first in range(0, rows.shape[0], block):
        chunk = rows[first : first + block][:, order].astype(dtype, copy=False)
        pairs, scored_pairs, credit = _pair_sums(
            chunk, predicted, event_position, predicted[event_position], suffix_start, tree
        )
        numerator = (credit + missing_credit * (pairs - scored_pairs)).astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            results.append(np.where(pairs > 0, numerator / (2.0 * pairs), np.nan))
    values = np.concatenate(results) if results else np.empty(0)
    return float(values[0]) if weights is None else values


def concordance_index_by_group(
    time: np.ndarray,
    event: np.ndarray,
    risk: np.ndarray,
    group: np.ndarray,
    missing: np.ndarray | None = None,
    policy: str = "non-concordant",
    weights: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Harrell's C-index within each group of patients (pairs never cross groups): the sorted group
    labels and their C-indices, NaN for a group without a comparable pair; (resamples, groups)
    values with bootstrap ``weights``."""
    columns = (time, event, risk) if missing is None else (time, event, risk, missing)
    return groups.per_group(concordance_index, group, *columns, weights=weights, policy=policy)
