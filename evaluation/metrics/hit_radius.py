"""Point detection scored as LUNA16 scores it: a candidate hits a reference finding within its radius,
and the FROC curve of all scans is read at fixed false-positive rates (the CPM).

Definitions of the LUNA16 evaluation script (Setio et al., MedIA 2017; ``evaluationScript.zip`` of
luna16.grand-challenge.org, ``noduleCADEvaluationLUNA16.py``, a verbatim copy at github
fionaxzhou/cancer ``noduleCADEvaluationLUNA16.py``, commit 9e14215) and of the organizers' CPM
calculator (github DIAGNijmegen/unicorn_eval ``src/unicorn_eval/metrics/sensitivity.py``, "the metric
displayed on the leaderboard"):

- a reference finding's hit radius is half its diameter; a negative diameter (unknown size) is
  ``default_diameter`` (10 mm);
- a candidate hits a finding when its squared distance is below the squared radius (strict: a
  candidate exactly on the radius misses; ``inclusive`` hits it);
- ignored findings (``annotations_excluded.csv``): a candidate hitting one is neither a hit nor a
  false positive; a candidate hitting any finding is no false positive;
- many-to-one: a finding hit by several candidates counts once, at their highest score; one
  candidate may hit several findings (each counts it);
- at most ``max_marks`` candidates per scan (the script's ``maxNumberOfCADMarks``, 100 in its
  ``noduleCADEvaluation``): those whose score is above the score ranked ``max_marks + 1`` (strictly,
  so candidates tied there are all dropped);
- the FROC curve is scikit-learn's ``roc_curve`` (``curves.roc_curve``) of the hits and false positives, its
  false-positive rate scaled to false positives per scan and its true-positive rate to the found share of
  all findings (a finding never hit lowers the sensitivity and is left out of the curve); without any
  false positive every rate is 0;
- the sensitivity at each rate (1/8, 1/4, 1/2, 1, 2, 4, 8 per scan) is read at the curve's nearest
  point (the first on ties; 0 when no point is nearer than the curve's largest rate, the calculator's
  ``getCPM``), or ``interpolate``: ``np.interp`` on the curve, as the script plots it; the CPM is their
  mean; without any hit every sensitivity is 0 (the calculator's guard);
- the script's bootstrap (:func:`official_bootstrap`): scans drawn with NumPy's legacy
  ``np.random.randint(n, size=n)``, each resample's curve interpolated on ``np.linspace(0.125, 8,
  10000)`` in float32, the mean and the ``floor(0.025 n)``-th and ``floor(0.975 n)``-th sorted values
  per rate; read here at the grid point nearest each rate.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from evaluation.metrics import checks
from evaluation.metrics.curves import roc_curve
from evaluation.metrics.options import CPM_FP_RATES, DEFAULT_DIAMETER, DISTANCES, READINGS

OFFICIAL_GRID = (0.125, 8.0, 10000)  # the script's bootstrap grid: np.linspace(FROC_minX, FROC_maxX, 10000)


@dataclass(frozen=True)
class ScanFindings:
    """One scan: its reference findings (n, d) with their ``diameters`` (n,) and ``ignored`` flags
    (n,), and the scored candidates (m, d) with ``scores`` (m,)."""

    reference: np.ndarray
    diameters: np.ndarray
    ignored: np.ndarray
    points: np.ndarray
    scores: np.ndarray


def hit_radius(diameters: np.ndarray, default_diameter: float = DEFAULT_DIAMETER) -> np.ndarray:
    """Half of each diameter, ``default_diameter`` / 2 where a diameter is negative (unknown)."""
    diameters = checks.as_finite("diameters", np.atleast_1d(diameters), ndim=1)
    return np.where(diameters < 0, float(default_diameter), diameters) / 2.0


def capped(scores: np.ndarray, max_marks: int | None) -> np.ndarray:
    """Which candidates the cap keeps: all, or (more than ``max_marks``) those scoring above the
    score ranked ``max_marks + 1`` (ties there all dropped)."""
    scores = np.asarray(scores, dtype=float)
    if max_marks is None or max_marks <= 0 or scores.size <= max_marks:
        return np.ones(scores.size, dtype=bool)
    return scores > np.sort(scores)[::-1][max_marks]


def scan_entries(
    scan: ScanFindings,
    default_diameter: float = DEFAULT_DIAMETER,
    distance: str = "strict",
    max_marks: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """One scan's FROC entries: (the highest hitting score of each reference finding not ignored, NaN
    where none hits it; the scores of the false positives).

    Parameters
    ----------
    scan : the scan's findings and candidates (coordinates in one unit, e.g. world mm).
    default_diameter : the diameter of a finding whose diameter is negative.
    distance : ``"strict"`` (a hit is closer than the radius, LUNA16) or ``"inclusive"`` (within it).
    max_marks : at most this many candidates (:func:`capped`); None: every candidate.
    """
    if distance not in DISTANCES:
        raise ValueError(f"unknown distance {distance!r}; expected one of {DISTANCES}")
    scores = checks.as_finite("scores", scan.scores, ndim=1)
    diameters = checks.as_finite("diameters", np.atleast_1d(scan.diameters), ndim=1)
    ignored = np.asarray(scan.ignored, dtype=bool).reshape(-1)
    reference = _rows("reference", scan.reference, diameters.size)
    checks.same_length(reference=reference, diameters=diameters, ignored=ignored)
    points = _rows("points", scan.points, scores.size)
    if reference.size and points.size and reference.shape[1] != points.shape[1]:
        raise ValueError(f"reference points have {reference.shape[1]} coordinates, candidates {points.shape[1]}")
    keep = capped(scores, max_marks)
    points, scores = points[keep], scores[keep]
    squared = np.zeros((reference.shape[0], scores.size))
    for axis in range(reference.shape[1] if reference.size and scores.size else 0):
        squared = squared + (reference[:, axis, None] - points[None, :, axis]) ** 2  # x, y, z in the script's order
    radius_squared = (hit_radius(diameters, default_diameter) ** 2)[:, None]
    hits = squared < radius_squared if distance == "strict" else squared <= radius_squared
    best = np.where(hits[~ignored], scores[None, :], -np.inf).max(axis=1, initial=-np.inf)
    return np.where(np.isfinite(best), best, np.nan), scores[~hits.any(axis=0)]


def _rows(name: str, values: np.ndarray, n: int) -> np.ndarray:
    """``values`` as n finite rows of coordinates (three when there are none)."""
    array = np.asarray(values, dtype=float)
    return checks.as_finite(name, array.reshape(n, -1) if n else np.empty((0, 3)))


@dataclass(frozen=True)
class FrocCurve:
    """The FROC curve of a set of scans (scikit-learn ``roc_curve`` points, highest threshold first)."""

    fps: np.ndarray  # mean false positives per scan
    sensitivity: np.ndarray  # found share of all reference findings
    thresholds: np.ndarray
    hits: int  # findings hit
    findings: int  # findings not ignored


def froc_curve(hit_scores: np.ndarray, fp_scores: np.ndarray, n_scans: int) -> FrocCurve:
    """The script's ``computeFROC``: the ROC curve of the hit findings' scores (positives) and the
    false positives' (negatives), rates scaled to false positives per scan and to all findings.

    ``hit_scores``: every finding's score, NaN where none hits it; without a hit the sensitivities
    are NaN (as the script's, whose ``roc_curve`` has no positive). ``n_scans``: every scan, with
    findings or not."""
    hit_scores = np.asarray(hit_scores, dtype=float).reshape(-1)
    fp_scores = checks.as_finite("fp_scores", fp_scores, ndim=1)
    found = hit_scores[np.isfinite(hit_scores)]
    labels = np.r_[np.ones(found.size), np.zeros(fp_scores.size)]
    if labels.size == 0:  # only missed findings (the script's roc_curve fails): no curve
        return FrocCurve(np.zeros(1), np.full(1, np.nan), np.full(1, np.inf), 0, int(hit_scores.size))
    fpr, tpr, thresholds = roc_curve(labels, np.r_[found, fp_scores])  # (NaN rates without a positive)
    with np.errstate(divide="ignore", invalid="ignore"):
        fps = np.zeros(fpr.size) if fp_scores.size == 0 else fpr * fp_scores.size / n_scans
        sensitivity = tpr * found.size / hit_scores.size
    return FrocCurve(fps, sensitivity, thresholds, int(found.size), int(hit_scores.size))


def read_curve(
    fps: np.ndarray, sensitivity: np.ndarray, rates: Sequence[float] = CPM_FP_RATES, reading: str = "nearest"
) -> np.ndarray:
    """The sensitivity at each rate: at the curve's nearest point (``getCPM``: the first of equally
    near points, 0 unless one is nearer than the curve's largest rate) or by ``np.interp``."""
    if reading not in READINGS:
        raise ValueError(f"unknown reading {reading!r}; expected one of {READINGS}")
    rates = checks.as_finite("rates", rates, ndim=1)
    fps, sensitivity = np.asarray(fps, dtype=float), np.asarray(sensitivity, dtype=float)
    if reading == "interpolate":
        return np.interp(rates, fps, sensitivity)
    gaps = np.abs(fps[None, :] - rates[:, None])
    nearest = np.argmin(gaps, axis=1)
    return np.where(gaps[np.arange(rates.size), nearest] < fps.max(), sensitivity[nearest], 0.0)


def _entries(
    scans: Sequence[ScanFindings], default_diameter: float, distance: str, max_marks: int | None
) -> list[tuple[np.ndarray, np.ndarray]]:
    checks.nonempty("scans", len(scans))
    return [scan_entries(scan, default_diameter, distance, max_marks) for scan in scans]


def _sensitivities(
    entries: Sequence[tuple[np.ndarray, np.ndarray]], rates: Sequence[float], reading: str
) -> np.ndarray:
    hit_scores = np.concatenate([hits for hits, _ in entries] + [np.empty(0)])
    if not np.isfinite(hit_scores).any():  # no finding hit (or none at all): the calculator's guard
        return np.zeros(len(rates))
    curve = froc_curve(hit_scores, np.concatenate([fps for _, fps in entries] + [np.empty(0)]), len(entries))
    return read_curve(curve.fps, curve.sensitivity, rates, reading)


def sensitivities(
    scans: Sequence[ScanFindings],
    rates: Sequence[float] = CPM_FP_RATES,
    default_diameter: float = DEFAULT_DIAMETER,
    distance: str = "strict",
    max_marks: int | None = None,
    reading: str = "nearest",
) -> np.ndarray:
    """The sensitivity at each false-positive rate per scan (LUNA16; see the module docstring).

    Parameters
    ----------
    scans : every scan (:class:`ScanFindings`), with reference findings or not.
    rates : false positives per scan (LUNA16: 1/8 ... 8).
    default_diameter, distance, max_marks : the hits (:func:`scan_entries`).
    reading : ``"nearest"`` (the leaderboard's) or ``"interpolate"``.

    Returns
    -------
    (len(rates),) sensitivities in [0, 1]; all 0 when no finding is hit.
    """
    return _sensitivities(_entries(scans, default_diameter, distance, max_marks), rates, reading)


def cpm(
    scans: Sequence[ScanFindings],
    rates: Sequence[float] = CPM_FP_RATES,
    default_diameter: float = DEFAULT_DIAMETER,
    distance: str = "strict",
    max_marks: int | None = None,
    reading: str = "nearest",
) -> float:
    """The competition performance metric: the mean of :func:`sensitivities` (same parameters)."""
    return float(np.mean(sensitivities(scans, rates, default_diameter, distance, max_marks, reading)))


def resampled_sensitivities(
    entries: Sequence[tuple[np.ndarray, np.ndarray]], drawn: Sequence[np.ndarray], rates: Sequence[float], reading: str
) -> np.ndarray:
    """(resamples, len(rates)): the sensitivities of each resample's drawn scans (indices into
    ``entries``, the scans' :func:`scan_entries`)."""
    found = [_sensitivities([entries[i] for i in rows], rates, reading) for rows in drawn]
    return np.array(found).reshape(-1, len(rates))


def legacy_draws(n_scans: int, n_resamples: int, seed: int) -> list[np.ndarray]:
    """The script's draws after ``np.random.seed(seed)``: ``np.random.randint(n, size=n)`` per resample
    (NumPy's legacy ``RandomState``, whose stream NumPy keeps fixed)."""
    state = np.random.RandomState(seed)
    return [state.randint(n_scans, size=n_scans) for _ in range(n_resamples)]


@dataclass(frozen=True)
class OfficialBootstrap:
    """The script's bootstrap at each rate: the mean and the bounds of the resampled sensitivities."""

    rates: np.ndarray  # the grid points read (nearest to each requested rate)
    mean: np.ndarray
    low: np.ndarray
    high: np.ndarray
    values: np.ndarray  # (resamples, rates) float32: each resample's interpolated sensitivities


def script_bounds(values: np.ndarray, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The script's ``compute_mean_ci`` per column of ``values`` (resamples, k): the float32 mean of
    the sorted column and its values at ``floor(p n)`` and ``floor((1 - p) n)``, ``p = (1 - confidence) / 2``
    (NaNs sort last)."""
    values = np.asarray(values, dtype="float32").reshape(len(values), -1)
    tail = (1.0 - confidence) / 2.0
    mean, low, high = (np.zeros(values.shape[1], dtype="float32") for _ in range(3))
    for column in range(values.shape[1]):
        vector = np.sort(values[:, column])
        mean[column] = np.average(vector)
        low[column] = vector[math.floor(tail * len(vector))]
        high[column] = vector[math.floor((1.0 - tail) * len(vector))]
    return mean.astype(float), low.astype(float), high.astype(float)


def official_bootstrap(
    entries: Sequence[tuple[np.ndarray, np.ndarray]],
    n_resamples: int = 1000,
    seed: int = 0,
    rates: Sequence[float] = CPM_FP_RATES,
    confidence: float = 0.95,
    grid: tuple[float, float, int] = OFFICIAL_GRID,
) -> OfficialBootstrap:
    """The LUNA16 script's ``computeFROC_bootstrap`` read at the grid point nearest each rate.

    ``entries``: each scan's :func:`scan_entries`, in the scans' order (the script's series list).
    Each resample draws scans as :func:`legacy_draws`; its curve (:func:`froc_curve`, NaN without a
    hit, as the script's) is interpolated with ``np.interp`` in float32; per rate the values are
    sorted, averaged in float32 and read at ``floor(p n)`` for ``p = (1 - confidence) / 2`` and
    ``1 - p``. A resample drawing only scans without entries has no curve (the script fails): NaN.
    """
    checks.nonempty("scans", len(entries))
    if n_resamples < 1:
        raise ValueError("n_resamples must be at least 1")
    axis = np.linspace(*grid)
    wanted = checks.as_finite("rates", rates, ndim=1)
    points = axis[np.argmin(np.abs(axis[None, :] - wanted[:, None]), axis=1)]
    values = np.zeros((n_resamples, points.size), dtype="float32")
    for row, drawn in enumerate(legacy_draws(len(entries), n_resamples, seed)):
        chosen = [entries[i] for i in drawn if entries[i][0].size or entries[i][1].size]
        if not chosen:
            values[row] = np.nan
            continue
        hits = np.concatenate([h for h, _ in chosen])
        curve = froc_curve(hits, np.concatenate([f for _, f in chosen]), len(entries))
        values[row] = np.interp(points, curve.fps, curve.sensitivity)
    return OfficialBootstrap(points, *script_bounds(values, confidence), values)
