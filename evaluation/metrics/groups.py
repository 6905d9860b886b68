"""Case groups: a metric per subset of cases, the groups' values combined, and scores combined.

A group is the set of cases sharing a value of a reference column (cohort, centre, tumour type,
scanner). ``per_group`` evaluates any catalogue metric on each group; ``over_groups`` combines the
groups' values: their ``mean`` (a multi-cohort challenge ranking on the mean of per-cohort
C-indices) or ``mean_minus_std``, the mean minus the population standard deviation (``np.var``,
ddof 0) of the CIBMTR "Equity in post-HCT Survival Predictions" stratified C-index (Kaggle 2024-25,
metric notebook ``metric/eefs-concordance-index``). ``combined_score`` is a weighted sum of scores
of several outputs, e.g. PI-CAI's (AUROC + AP) / 2 (``picai_eval.metrics.Metrics.score``).

A group whose metric is undefined (NaN: no comparable pair, no positive case) is handled by the
``undefined`` policy of ``over_groups``: ``"exclude"`` leaves it out of the combination, a number
counts it as that value, ``"error"`` refuses it (the CIBMTR code fails: lifelines raises
``ZeroDivisionError`` for a group without an admissible pair).

Bootstrap: ``weights`` (resamples x cases, the draw counts of ``bootstrap.resample_weights``) are
split by group and passed on to the metric, which must then accept ``weights`` and return one value
per row; a resample that drew no case of a group gives that group NaN, without calling the metric
(so ``undefined="error"``, the official rule, suits the point estimate; resamples take ``"exclude"``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from evaluation.metrics import checks

GROUP_FORMS = ("mean", "mean_minus_std")
UNDEFINED_POLICIES = ("exclude", "error")


def group_codes(groups: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The sorted distinct group labels and each case's index into them; ``ValueError`` on an empty
    or non-1-dimensional column, or a NaN / infinite numeric label."""
    groups = np.asarray(groups)
    if groups.ndim != 1:
        raise ValueError(f"groups must be 1-dimensional, got shape {groups.shape}")
    checks.nonempty("groups", groups.size)
    if groups.dtype.kind in "fc" and not np.all(np.isfinite(groups)):
        raise ValueError("groups contains NaN or infinite values")
    if groups.dtype.kind == "O" and any(label is None for label in groups):
        raise ValueError("groups contains a missing label")
    try:
        labels, codes = np.unique(groups, return_inverse=True)
    except TypeError as error:  # object labels of mixed types
        raise ValueError("groups must hold labels of one type (all text or all numbers)") from error
    return labels, codes.reshape(-1)


def per_group(
    metric: Callable[..., float | np.ndarray],
    groups: np.ndarray,
    *columns: np.ndarray,
    weights: np.ndarray | None = None,
    **parameters: object,
) -> tuple[np.ndarray, np.ndarray]:
    """``metric(*columns_of_group, **parameters)`` for each group of cases.

    ``columns`` are per-case arrays (first axis: cases, as ``groups``). Returns the sorted group
    labels and their values: shape (groups,), or (resamples, groups) with ``weights``.
    """
    labels, codes = group_codes(groups)
    columns = tuple(np.asarray(column) for column in columns)
    checks.same_length(groups=codes, **{f"column {k}": column for k, column in enumerate(columns)})
    if weights is not None:
        weights = np.asarray(weights)
        if weights.ndim != 2 or weights.shape[1] != codes.size:  # the wording of bootstrap.case_weights
            raise ValueError(f"weights must be (resamples, {codes.size}), got shape {weights.shape}")
        values = np.full((weights.shape[0], labels.size), np.nan)
    else:
        values = np.full(labels.size, np.nan)
    for code in range(labels.size):
        members = codes == code
        subset = tuple(column[members] for column in columns)
        if weights is None:
            values[code] = metric(*subset, **parameters)
            continue
        rows = weights[:, members]
        drawn = rows.sum(axis=1) > 0
        if np.any(drawn):
            values[drawn, code] = metric(*subset, weights=rows[drawn], **parameters)
    return labels, values


def over_groups(values: np.ndarray, form: str = "mean", undefined: str | float = "exclude") -> float | np.ndarray:
    """The groups' values (last axis) combined by ``form``; one value per row of a 2-D array.

    ``undefined``: ``"exclude"`` (NaN groups left out; NaN when no group is defined), ``"error"``
    (``ValueError`` on any NaN group), or a number a NaN group counts as.
    """
    if form not in GROUP_FORMS:
        raise ValueError(f"form must be one of {GROUP_FORMS}, got {form!r}")
    values = np.asarray(values, dtype=float)
    if values.ndim not in (1, 2) or values.shape[-1] == 0:
        raise ValueError(f"values must be (groups,) or (resamples, groups) with a group, got shape {values.shape}")
    if np.any(np.isinf(values)):
        raise ValueError("values contains infinite values")
    if isinstance(undefined, str):
        if undefined not in UNDEFINED_POLICIES:
            raise ValueError(f"undefined must be a number or one of {UNDEFINED_POLICIES}, got {undefined!r}")
        if undefined == "error" and np.any(np.isnan(values)):
            raise ValueError("a group's metric is undefined (NaN)")
    else:
        fill = float(undefined)
        if not np.isfinite(fill):
            raise ValueError(f"undefined must be finite, got {fill}")
        values = np.where(np.isnan(values), fill, values)
    defined = ~np.isnan(values)
    count = defined.sum(axis=-1)
    filled = np.where(defined, values, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = filled.sum(axis=-1) / count
        result = mean
        if form == "mean_minus_std":
            deviation = np.where(defined, values - mean[..., None], 0.0)
            result = mean - np.sqrt((deviation**2).sum(axis=-1) / count)
    result = np.where(count > 0, result, np.nan)
    return float(result) if result.ndim == 0 else result


def combined_score(
    scores: Sequence[float | np.ndarray], coefficients: Sequence[float] | None = None
) -> float | np.ndarray:
    """``sum(coefficients[k] * scores[k])``, by default the mean of the scores (PI-CAI: (AUROC + AP)
    / 2). Scores may be per-resample arrays of one shape; a NaN score makes the result NaN."""
    parts = [np.asarray(score, dtype=float) for score in scores]
    if not parts:
        raise ValueError("scores is empty")
    if len({part.shape for part in parts}) > 1:
        raise ValueError(f"scores must share one shape, got {[part.shape for part in parts]}")
    stacked = np.stack(parts)
    if coefficients is None:
        factors = np.full(len(parts), 1.0 / len(parts))
    else:
        factors = checks.as_finite("coefficients", coefficients, ndim=1)
        if factors.size != len(parts):
            raise ValueError(f"{factors.size} coefficients for {len(parts)} scores")
    result = np.tensordot(factors, stacked, axes=1)
    return float(result) if result.ndim == 0 else result
