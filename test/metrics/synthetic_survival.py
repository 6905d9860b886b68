"""Synthetic multi-cohort survival data for the grouped C-index goldens (golden/cibmtr2025.json).

Cohorts of different sizes, about half censored, times on a coarse grid (tied times, an event and a
censoring at the same time) and risks rounded to one decimal (tied predictions); the last cohort
has no comparable pair (everyone censored).
"""

from __future__ import annotations

import numpy as np

COHORT_SIZES = {"cohort_a": 40, "cohort_b": 17, "cohort_c": 6, "cohort_d": 2, "no_event": 4}


def cohorts(seed: int) -> dict[str, np.ndarray]:
    """``time``, ``event`` (0/1), ``risk`` (higher = earlier event) and ``group`` per patient, the
    cohorts interleaved in a shuffled order."""
    rng = np.random.default_rng(seed)
    group = np.repeat(list(COHORT_SIZES), list(COHORT_SIZES.values()))
    n = group.size
    time = rng.integers(1, 25, n) * 30.0
    event = (rng.random(n) < 0.5).astype(int)
    in_d = group == "cohort_d"
    time[in_d], event[in_d] = time[in_d][0], [1, 0]  # an event and a censoring at one time: comparable
    event[group == "no_event"] = 0
    risk = np.round(rng.normal(size=n) - 0.002 * time, 1)
    order = rng.permutation(n)
    return {"time": time[order], "event": event[order], "risk": risk[order], "group": group[order]}
