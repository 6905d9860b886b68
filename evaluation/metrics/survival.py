"""Harrell's concordance index with right censoring, vectorised over pairs and bootstrap resamples.

Definition (Harrell et al., JAMA 1982; as ``lifelines.utils.concordance_index`` and the HECKTOR 2021
evaluator, github voreille/hecktor ``src/aicrowd_evaluator/survival_metrics.py``): an ordered pair
(i, j) is comparable when ``t_i < t_j`` and i had an event, or ``t_i == t_j`` and only i had an
event; it is concordant when i has the higher risk, and a tie in risk counts 0.5.

A patient without a prediction (``missing``): every comparable pair it is in counts 0
(``missing="non-concordant"``, the HECKTOR 2026 rule) or 0.5 (``missing="tie"``, what the 2021
code did with NaN predictions).
"""

from __future__ import annotations

import numpy as np

MISSING_POLICIES = ("non-concordant", "tie")


def _pair_matrices(
    time: np.ndarray, event: np.ndarray, risk: np.ndarray, missing: np.ndarray, policy: str
) -> tuple[np.ndarray, np.ndarray]:
    """(comparable, credit) n x n matrices of ordered pairs."""
    if policy not in MISSING_POLICIES:
        raise ValueError(f"missing policy must be one of {MISSING_POLICIES}, got {policy!r}")
    time = np.asarray(time, dtype=float)
    event = np.asarray(event, dtype=bool)
    risk = np.asarray(risk, dtype=float)
    missing = np.asarray(missing, dtype=bool) | ~np.isfinite(risk)
    earlier = time[:, None] < time[None, :]
    same = (time[:, None] == time[None, :]) & ~event[None, :]
    comparable = event[:, None] & (earlier | same)
    credit = (risk[:, None] > risk[None, :]) + 0.5 * (risk[:, None] == risk[None, :])
    either_missing = missing[:, None] | missing[None, :]
    credit = np.where(either_missing, 0.0 if policy == "non-concordant" else 0.5, credit)
    return comparable.astype(float), comparable * credit


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
    bootstrap resample at once: a pair counts ``w_i * w_j`` times.
    """
    risk = np.asarray(risk, dtype=float)
    if missing is None:
        missing = np.zeros(risk.shape, dtype=bool)
    comparable, credit = _pair_matrices(time, event, risk, missing, policy)
    if weights is None:
        pairs = comparable.sum()
        return float(credit.sum() / pairs) if pairs > 0 else float("nan")
    weights = np.asarray(weights, dtype=float)
    pairs = np.einsum("bi,bi->b", weights @ comparable, weights)
    credits = np.einsum("bi,bi->b", weights @ credit, weights)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(pairs > 0, credits / pairs, np.nan)
