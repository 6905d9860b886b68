"""The one-to-one assignment of least total cost (Kuhn 1955), by scipy's ``linear_sum_assignment``, imported on
first use: ``scipy.optimize`` costs about 0.6 s of start-up, paid only by a process that matches with it
(the Hungarian options of detection and lesion matching, PI-CAI's candidates), not by every evaluation."""

from __future__ import annotations

import numpy as np


def linear_sum_assignment(cost: np.ndarray, maximize: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """``scipy.optimize.linear_sum_assignment(cost, maximize)``: the (rows, columns) of the assignment."""
    from scipy.optimize import linear_sum_assignment as solve

    return solve(cost, maximize=maximize)
