"""A bootstrap at a set prevalence: PPV at a recall level, AUROC and AUPRC with their medians and 95%
percentile intervals, drawing patients (or frames) so that every resample holds one positive per
``imbalance_ratio`` negatives.

Reference: TUE-VCA/Grand-Challenge-RARE25, open-development-phase/example-evaluation-method/evaluate.py
(``bootstrap_metrics``): per iteration ``np.random.choice`` of ``sample_size`` positive patients and
``sample_size * imbalance_ratio`` negative patients with replacement (positives first), every frame of
each drawn patient, then AUROC, AUPRC and PPV at 90% recall; medians and the 2.5/97.5 percentiles; the
full-dataset values beside them. ``protocol="website"`` is the challenge website's description: every
negative frame once plus ``max(1, round(negatives / imbalance_ratio))`` positive frames drawn.

The iterations are computed at once from how often each patient is drawn (``precision_recall``'s
``grouped_curve_metrics``: one matrix product of the draw counts with per-patient counts).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from evaluation.metrics.bootstrap import row_counts
from evaluation.metrics.precision_recall import CurveMetrics, curve_metrics, grouped_curve_metrics


def _draw_counts(neo: int, ndbe: int, iterations: int, sample_size: int, ratio: int, rng: str, seed: int) -> np.ndarray:
    """How often each patient is drawn per iteration, positive then negative draws in each iteration:
    (iterations, neo + ndbe), the positive list's patients first."""
    n_ndbe_draws = sample_size * ratio
    if rng == "legacy":
        # np.random.choice(population, size, replace=True) draws RandomState.randint(0, len, size);
        # the two calls per iteration interleave, so the stream is consumed in the official order.
        state = np.random.RandomState(seed)
        counts = np.empty((iterations, neo + ndbe), dtype=np.int64)
        for iteration in range(iterations):
            counts[iteration, :neo] = np.bincount(state.randint(0, neo, size=sample_size), minlength=neo)
            counts[iteration, neo:] = np.bincount(state.randint(0, ndbe, size=n_ndbe_draws), minlength=ndbe)
        return counts
    generator = np.random.default_rng(seed)
    neo_draws = generator.integers(0, neo, size=(iterations, sample_size))
    ndbe_draws = generator.integers(0, ndbe, size=(iterations, n_ndbe_draws))
    return np.hstack([row_counts(neo_draws, neo), row_counts(ndbe_draws, ndbe)])


def official_bootstrap_counts(
    labels: np.ndarray,
    patients: Sequence[str],
    *,
    iterations: int,
    sample_size: int,
    imbalance_ratio: int,
    rng: str,
    seed: int,
) -> tuple[np.ndarray, np.ndarray]:
    """(patient of each frame, draws: iterations x patients): how often each patient, numbered in
    order of first appearance, is in each iteration's sample of ``sample_size`` positive and
    ``sample_size * imbalance_ratio`` negative patients (a patient is positive when any of its frames
    is; ``rng="legacy"``: ``np.random.seed(seed)`` and the official loop's draws, ``"generator"``:
    ``numpy.random.default_rng(seed)``). ValueError without positive or negative patients."""
    first_seen: dict[str, int] = {}
    for patient in patients:
        first_seen.setdefault(patient, len(first_seen))
    patient_index = np.array([first_seen[p] for p in patients], dtype=np.int64)
    neoplastic = np.zeros(len(first_seen), dtype=bool)
    np.logical_or.at(neoplastic, patient_index, np.asarray(labels).astype(bool))
    neo_patients, ndbe_patients = np.flatnonzero(neoplastic), np.flatnonzero(~neoplastic)
    if neo_patients.size == 0 or ndbe_patients.size == 0:
        raise ValueError("needs both positive and negative patients")
    drawn = _draw_counts(neo_patients.size, ndbe_patients.size, iterations, sample_size, imbalance_ratio, rng, seed)
    counts = np.empty_like(drawn)
    counts[:, np.concatenate([neo_patients, ndbe_patients])] = drawn
    return patient_index, counts


def website_bootstrap_counts(
    labels: np.ndarray, *, iterations: int, imbalance_ratio: int, rng: str, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """(group of each frame, draws: iterations x groups) for the website protocol: each positive
    frame is a group drawn with replacement (``round(negative frames / imbalance_ratio)`` draws, at
    least one); the negative frames are one last group, taken once. ValueError without positive or
    negative frames."""
    labels = np.asarray(labels)
    neo_frames = np.flatnonzero(labels == 1)
    n_ndbe = int(np.count_nonzero(labels == 0))
    if neo_frames.size == 0 or n_ndbe == 0:
        raise ValueError("needs both positive and negative frames")
    size = max(1, round(n_ndbe / imbalance_ratio))
    if rng == "legacy":
        state = np.random.RandomState(seed)
        draws = np.stack([state.randint(0, neo_frames.size, size=size) for _ in range(iterations)])
    else:
        draws = np.random.default_rng(seed).integers(0, neo_frames.size, size=(iterations, size))
    group = np.full(labels.size, neo_frames.size, dtype=np.int64)
    group[neo_frames] = np.arange(neo_frames.size)
    counts = np.hstack([row_counts(draws, neo_frames.size), np.ones((iterations, 1), dtype=np.int64)])
    return group, counts


def _median(values: np.ndarray) -> float:
    """``np.median`` of a 1-D array to the bit, as numpy computes it (numpy/lib/_function_base_impl.py, ``_median``:
    the middle value, or the mean of the middle two, ``(a + b) / 2``), without the import of ``numpy.ma`` that its
    NaN check makes on first use (5-8 ms of a run's start); with a NaN among the values, ``np.median`` itself."""
    half = values.size // 2
    if values.size == 0 or np.isnan(values).any():
        return float(np.median(values))
    if values.size % 2:
        return float(np.partition(values, half)[half])
    low, high = np.partition(values, (half - 1, half))[half - 1 : half + 1]
    return float((low + high) / 2)


def _summary(name: str, values: np.ndarray) -> dict[str, float]:
    low, high = np.percentile(values, [2.5, 97.5])
    return {
        name: _median(values),
        f"{name} 95% CI Lower Bound": float(low),
        f"{name} 95% CI Upper Bound": float(high),
    }


def prevalence_bootstrap(
    labels: np.ndarray,
    scores: np.ndarray,
    patients: Sequence[str],
    *,
    recall: float = 0.9,
    protocol: str = "official",
    iterations: int = 1000,
    sample_size: int = 10,
    imbalance_ratio: int = 100,
    rng: str = "legacy",
    seed: int = 0,
    ppv_at_recall: str = "interp",
) -> dict[str, float]:
    """The official evaluation's numbers under their official names (``PPV@90RECALL`` for the default
    recall): ``Score`` (the median bootstrap PPV), the medians and 95% bounds of PPV, AUROC and AUPRC,
    and the three full-dataset values. ``labels``, ``scores``, ``patients``: one per frame, frames in
    the official order (stacks by name, frames by index). ValueError without both classes."""
    full = curve_metrics(labels, scores, recall, ppv_at_recall)
    draws = {"iterations": iterations, "imbalance_ratio": imbalance_ratio, "rng": rng, "seed": seed}
    if protocol == "official":
        group, counts = official_bootstrap_counts(labels, patients, sample_size=sample_size, **draws)
    else:
        group, counts = website_bootstrap_counts(labels, **draws)
    boot: CurveMetrics = grouped_curve_metrics(labels, scores, group, counts, recall, ppv_at_recall)
    ppv_name = f"PPV@{round(recall * 100)}RECALL"
    ppv = _summary(ppv_name, boot.ppv)
    return {
        "Score": ppv[ppv_name],
        **ppv,
        **_summary("AUROC", boot.auroc),
        **_summary("AUPRC", boot.auprc),
        "AUROC Full Dataset": float(full.auroc[0]),
        "AUPRC Full Dataset": float(full.auprc[0]),
        f"{ppv_name} Full Dataset": float(full.ppv[0]),
    }
