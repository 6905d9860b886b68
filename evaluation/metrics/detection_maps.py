"""Lesion detection from 3D detection maps, as the PI-CAI 2022 challenge evaluates it.

A detection map is a float volume whose non-zero 26-connected components are the lesion candidates,
each scored by its maximum value. Definitions of ``picai_eval`` 1.4.13 (github DIAGNijmegen/picai_eval,
``src/picai_eval/eval.py``, ``analysis_utils.py``, ``metrics.py``):

- a candidate and a reference lesion (26-connected component of the non-zero reference) overlap by
  IoU ``(|P & R| + 1e-8) / (|P | R| + 1e-8)`` (or Dice); pairs under ``min_overlap`` (0.1) cannot
  match; the matching maximises first the number of matches, then the total overlap
  (``scipy.optimize.linear_sum_assignment`` on the overlap + 1, so ties resolve as scipy does);
- each case yields entries (is lesion, confidence): a matched candidate (1, its confidence), a missed
  lesion (1, 0), a false positive (0, its confidence). By default a candidate that reaches
  ``min_overlap`` with some lesion but loses the matching is no entry at all (neither TP nor FP);
- lesion-level AP: scikit-learn's precision-recall curve over all entries, with precision 0 at
  threshold 0 (the missed lesions), summed as a step function;
- sensitivity at a mean number of false positives per case (the FROC's points), with the reference's
  float32 counts and its last-point and >10,000-threshold resampling rules;
- case-level AUROC with the case score = the map's maximum, and the ranking score (AUROC + AP) / 2.

A softmax-like heat map becomes a detection map through :func:`extract_lesion_candidates`, the
algorithm of ``report_guided_annotation`` 0.3.4 (github DIAGNijmegen/Report-Guided-Annotation,
``src/report_guided_annotation/extract_lesion_candidates.py``), which PI-CAI's baseline algorithms run
before they submit. ``picai_eval`` itself takes the submitted map as the candidates; so does
:func:`case_lesions` unless told to extract.

Components are labelled 26-connected by :func:`evaluation.metrics.lesions.connected_components`
(cc3d), which numbers them in the scan order of ``scipy.ndimage.label`` with the full 3x3x3 structure
that the references use: that order decides the references' ties.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from evaluation.metrics import checks
from evaluation.metrics.assignment import linear_sum_assignment
from evaluation.metrics.classification import auroc
from evaluation.metrics.curves import precision_recall_curve
from evaluation.metrics.lesions import connected_components, overlap_counts
from evaluation.metrics.options import CASE_SCORES, DYNAMIC, LESION_COUNTS, MIN_OVERLAP, OVERLAPS

OVERLAP_EPSILON = 1e-8
MAX_THRESHOLDS = 10_000
LARGEST = float(np.finfo(np.float32).max)  # maps are scored in float32, picai_eval's type: larger is no number
_STRUCTURE = np.ones((3, 3, 3))


def _volume(name: str, values: np.ndarray) -> np.ndarray:
    """A finite, non-negative 3D volume (a 2D image becomes one slice) as float32, the references' type."""
    array = np.asarray(values)
    if array.ndim == 2:
        array = array[np.newaxis]
    if array.ndim != 3 or array.size == 0:
        raise ValueError(f"{name} must be a non-empty 2D or 3D image, got shape {array.shape}")
    if array.dtype.kind not in "biuf":
        raise ValueError(f"{name} must hold real numbers, got {array.dtype}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} contains NaN or infinite values")
    if array.dtype.kind == "f" and np.abs(array).max() > LARGEST:
        raise ValueError(f"{name} holds {np.abs(array).max():g}, beyond float32's range (at most {LARGEST:.4g})")
    array = array.astype(np.float32)
    if array.min() < 0:
        raise ValueError(f"{name} must not be negative")
    return array


def _maxima(values: np.ndarray, labels: np.ndarray, count: int) -> np.ndarray:
    """(count + 1,) float64 maximum of ``values`` over each label (0 for the background and empty labels)."""
    maxima = np.zeros(count + 1)
    inside = labels > 0
    np.maximum.at(maxima, labels[inside], values[inside])
    return maxima


def _candidates(
    softmax: np.ndarray, threshold: float, min_voxels: int, decimals: int | None
) -> tuple[np.ndarray, np.ndarray]:
    """The components of the non-zero voxels >= threshold and each one's confidence (index 0 the
    background): its maximum (rounded to ``decimals`` when given), 0 with ``min_voxels`` voxels or fewer."""
    labels, count = connected_components((softmax >= threshold) & (softmax > 0))
    sizes = np.bincount(labels.ravel(), minlength=count + 1)
    confidence = _maxima(softmax, labels, count)  # float64 like the reference's, rounded there
    if decimals is not None:
        confidence = np.round(confidence, decimals)
    confidence[sizes <= min_voxels] = 0
    confidence[0] = 0
    return labels, confidence.astype(softmax.dtype)


def _static(softmax: np.ndarray, threshold: float, min_voxels: int, decimals: int | None) -> np.ndarray:
    """Candidates at one threshold: each component of :func:`_candidates` set to its confidence."""
    labels, confidence = _candidates(softmax, threshold, min_voxels, decimals)
    return confidence[labels]


def _touches(region: np.ndarray, others: np.ndarray) -> bool:
    """Whether ``region`` overlaps the 26-neighbour dilation of ``others`` (looked at in the
    region's bounding box grown by one voxel, all the dilation there depends on)."""
    from scipy import ndimage  # on first use: 0.3 s of start-up for every evaluation otherwise

    where = np.nonzero(region)
    box = tuple(slice(max(int(axis.min()) - 1, 0), int(axis.max()) + 2) for axis in where)
    return bool((region[box] & ndimage.binary_dilation(others[box], structure=_STRUCTURE)).any())


def extract_lesion_candidates(
    heatmap: np.ndarray,
    threshold: str | float = "dynamic-fast",
    min_voxels: int = 10,
    num_lesions: int = 5,
    dynamic_threshold_factor: float = 2.5,
    round_decimals: int | None = None,
    remove_adjacent: bool = True,
    stop_below: float = 0.01,
) -> np.ndarray:
    """A detection map from a heat map, as ``report_guided_annotation.extract_lesion_candidates``.

    ``threshold``: a number (static: components of the voxels >= it); ``"dynamic-fast"`` (static at
    the map's maximum / ``dynamic_threshold_factor``); ``"dynamic"`` (one lesion at a time: up to
    ``num_lesions`` times, threshold the remaining map at its maximum / factor, keep the component
    holding the highest candidate (the first in scan order on ties), unless ``remove_adjacent`` and
    it touches a kept one, and erase it; stop when the maximum falls under ``stop_below``; the
    reference's version 1, whose quirk when only small components remain is kept) or
    ``"dynamic-v2"`` (its fix). Components of ``min_voxels`` voxels or fewer are dropped; each kept
    one is set to its maximum. Returns a float32 map of the heat map's shape (3D).
    """
    softmax = _volume("heatmap", heatmap)
    if isinstance(threshold, str) and threshold not in DYNAMIC:
        raise ValueError(f"unknown threshold {threshold!r}; expected a number or one of {DYNAMIC}")
    counts = (min_voxels, num_lesions, 0 if round_decimals is None else round_decimals)
    whole = all(isinstance(n, int | np.integer) and not isinstance(n, bool) for n in counts)
    if not whole or min_voxels < 0 or num_lesions < 0 or not dynamic_threshold_factor > 0 or not stop_below > 0:
        raise ValueError(
            "min_voxels and num_lesions must be whole numbers >= 0 (round_decimals a whole number or None),"
            " dynamic_threshold_factor and stop_below > 0"
        )
    if not isinstance(threshold, str):
        if not np.isfinite(threshold):
            raise ValueError(f"threshold must be finite, got {threshold}")
        return _static(softmax, float(threshold), min_voxels, round_decimals)
    if threshold == "dynamic-fast":
        return _static(softmax, float(np.max(softmax) / dynamic_threshold_factor), min_voxels, round_decimals)
    working = softmax.copy()
    detection = np.zeros_like(softmax)
    found = 0
    while found < num_lesions:
        max_prob = np.max(working)
        if max_prob < stop_below:
            break
        level = max_prob / dynamic_threshold_factor
        labels, confidence = _candidates(working, level, min_voxels, round_decimals)
        best = int(np.argmax(confidence))  # the first component of the highest confidence
        if best == 0 and threshold == "dynamic-v2":
            working = working * ~(working > level)
            continue
        # without a candidate, version 1 takes the first component of the voxels outside any
        current = labels == best if best else connected_components(confidence[labels] == 0)[0] == 1
        if not (remove_adjacent and _touches(current, detection > 0)):
            detection[current] += confidence[best]
            found += 1
        working = working * ~current
    return detection


@dataclass(frozen=True)
class CaseLesions:
    """One case's lesion entries: ``is_lesion`` (TP and missed lesions) and ``confidence`` (0 for a
    missed lesion), in ``picai_eval``'s order (matched lesions, missed lesions, false positives);
    ``score`` the case-level score (the map's maximum); ``candidates`` the map's number of lesion
    candidates (None: not counted)."""

    is_lesion: np.ndarray
    confidence: np.ndarray
    score: float
    candidates: int | None = None

    @property
    def has_lesion(self) -> bool:
        return bool(self.is_lesion.any())


def _overlaps(
    candidates: np.ndarray, n_candidates: int, lesions: np.ndarray, n_lesions: int, overlap: str
) -> np.ndarray:
    """(n_lesions, n_candidates) IoU or Dice of every pair, with the reference's epsilon terms."""
    rows, columns, counts, sizes_lesion, sizes_candidate = overlap_counts(lesions, n_lesions, candidates, n_candidates)
    intersection = np.zeros((n_lesions, n_candidates))
    intersection[rows - 1, columns - 1] = counts
    sizes_lesion, sizes_candidate = sizes_lesion[1:, None], sizes_candidate[None, 1:]
    if overlap == "dsc":
        return (intersection * 2.0 + OVERLAP_EPSILON) / (sizes_candidate + sizes_lesion + OVERLAP_EPSILON)
    return (intersection + OVERLAP_EPSILON) / (sizes_candidate + sizes_lesion - intersection + OVERLAP_EPSILON)


def case_lesions(
    detection_map: np.ndarray,
    reference: np.ndarray,
    min_overlap: float = MIN_OVERLAP,
    overlap: str = "iou",
    candidates: str | float = "given",
    unmatched_overlapping: bool = False,
    case_score: str = "max",
    **extraction: float,
) -> CaseLesions:
    """Match one case's lesion candidates to its reference lesions (``picai_eval.eval.evaluate_case``).

    Parameters
    ----------
    detection_map : 3D (or 2D) non-negative map; its non-zero components are the candidates.
    reference : same shape, whole numbers; its non-zero 26-connected components are the lesions.
    min_overlap : the least IoU (or Dice) of a match (PI-CAI: 0.1).
    overlap : ``"iou"`` or ``"dsc"``.
    candidates : ``"given"`` (the map is a detection map, as ``picai_eval`` expects) or an
        :func:`extract_lesion_candidates` threshold to extract them from a heat map first.
    unmatched_overlapping : count a candidate that overlaps some lesion enough but is not matched as
        a false positive (``picai_eval``'s ``allow_unmatched_candidates_with_minimal_overlap=False``).
    case_score : ``"max"``, the map's maximum (PI-CAI), or ``"bayesian"``, 1 - prod(1 - confidence)
        over the candidates (the probability of at least one lesion).
    extraction : further :func:`extract_lesion_candidates` parameters.
    """
    if overlap not in OVERLAPS:
        raise ValueError(f"unknown overlap {overlap!r}; expected one of {OVERLAPS}")
    if case_score not in CASE_SCORES:
        raise ValueError(f"unknown case_score {case_score!r}; expected one of {CASE_SCORES}")
    if not np.isfinite(min_overlap):
        raise ValueError(f"min_overlap must be finite, got {min_overlap}")
    y_det = _volume("detection map", detection_map)
    truth = np.asarray(reference)
    truth = truth[np.newaxis] if truth.ndim == 2 else truth
    checks.same_shape(truth, y_det)
    if truth.dtype.kind not in "biuf" or not np.all((truth >= 0) & (truth == np.floor(truth))):
        raise ValueError("reference must hold non-negative whole numbers (0 = background)")
    if candidates != "given":
        y_det = extract_lesion_candidates(y_det, candidates, **extraction)
    elif extraction:
        raise ValueError(f"extraction parameters {sorted(extraction)} need candidates to be extracted")
    labels, n_candidates = connected_components(y_det > 0)
    if n_candidates < np.unique(y_det[y_det != 0]).size:
        raise ValueError("the detection map has more distinct values than lesion candidates (a heat map?)")
    confidence = _maxima(y_det, labels, n_candidates)[1:]
    score = float(1 - np.prod(1 - confidence)) if case_score == "bayesian" else float(np.max(y_det))
    lesions, n_lesions = connected_components(truth != 0)
    if n_lesions == 0:
        return CaseLesions(np.zeros(n_candidates, bool), confidence, score, n_candidates)
    matrix = _overlaps(labels, n_candidates, lesions, n_lesions, overlap)
    matrix[matrix < min_overlap] = 0
    matrix[matrix > 0] += 1
    rows, columns = linear_sum_assignment(matrix, maximize=True)
    keep = matrix[rows, columns] > 0
    matched = columns[keep]
    if unmatched_overlapping:
        false = np.setdiff1d(np.arange(n_candidates), matched)
    else:
        false = np.flatnonzero(~(matrix > 0).any(axis=0))
    missed = n_lesions - matched.size
    is_lesion = np.r_[np.ones(matched.size + missed, bool), np.zeros(false.size, bool)]
    return CaseLesions(is_lesion, np.r_[confidence[matched], np.zeros(missed), confidence[false]], score, n_candidates)


def _entries(cases: Sequence[CaseLesions]) -> tuple[np.ndarray, np.ndarray]:
    checks.nonempty("cases", len(cases))
    is_lesion = np.concatenate([case.is_lesion for case in cases]).astype(bool)
    confidence = checks.as_finite("confidence", np.concatenate([case.confidence for case in cases]), ndim=1)
    checks.same_length(is_lesion=is_lesion, confidence=confidence)
    return is_lesion, confidence


def lesion_average_precision(cases: Sequence[CaseLesions], no_lesion: float = 0.0) -> float:
    """Lesion-level AP (``picai_eval.metrics.Metrics.AP``): scikit-learn's precision-recall curve
    over every case's entries, precision 0 at the missed lesions' threshold 0, step-summed.
    ``no_lesion``: the value when no case has a reference lesion (recall undefined; the reference's 0)."""
    is_lesion, confidence = _entries(cases)
    if not is_lesion.any():
        return float(no_lesion)
    precision, recall, thresholds = precision_recall_curve(is_lesion, confidence)
    precision[:-1][thresholds == 0] = 0
    return float(-np.sum(np.diff(recall) * precision[:-1]))


def _thresholds(confidence: np.ndarray) -> np.ndarray:
    """The distinct confidences, descending; past 10,000 the reference's resampling (every
    n/10,000-th, the 20 lowest and all above 0.8)."""
    thresholds = np.unique(confidence)[::-1]
    if thresholds.size > MAX_THRESHOLDS:
        picks = thresholds[np.arange(1, thresholds.size, thresholds.size / MAX_THRESHOLDS, dtype=np.int32)]
        keep = (thresholds > 0.8) | np.isin(thresholds, picks) | np.isin(thresholds, thresholds[-20:])
        thresholds = thresholds[keep]
    return thresholds


def lesion_sensitivity_at_fp(
    cases: Sequence[CaseLesions], fp_per_case: float | Sequence[float], no_lesion: float = float("nan")
) -> float | dict[float, float]:
    """Lesion sensitivity at a mean number of false positives per case
    (``picai_eval.metrics.Metrics.lesion_TPR_at_FPR``), for one rate or a list (then a dict).

    The operating points are the distinct confidences, counted in float32 like the reference; the
    lowest one is replaced by (the previous sensitivity, infinite FPs); 0 when even the first point
    has more false positives than the rate. ``no_lesion``: the value without any reference lesion
    (where the rate is reached; the reference's NaN).
    """
    rates = np.atleast_1d(checks.as_finite("fp_per_case", fp_per_case))
    if rates.ndim != 1 or rates.size == 0 or np.any(rates < 0):
        raise ValueError("fp_per_case must be one or more non-negative numbers")
    is_lesion, confidence = _entries(cases)
    thresholds = _thresholds(confidence)
    ranked_lesion, ranked_other = np.sort(confidence[is_lesion]), np.sort(confidence[~is_lesion])
    tp = (ranked_lesion.size - np.searchsorted(ranked_lesion, thresholds)).astype(np.float32)
    fp = (ranked_other.size - np.searchsorted(ranked_other, thresholds)).astype(np.float32)
    if tp.size >= 2:
        tp[-1], fp[-1] = tp[-2], np.inf
    else:
        tp, fp = np.zeros(2, np.float32), np.array([0, np.inf], np.float32)
    fp_rate = fp / len(cases)
    sensitivity = tp / ranked_lesion.size if ranked_lesion.size else np.full(tp.size, float(no_lesion))
    values = [0.0 if fp_rate.min() > rate else float(sensitivity[fp_rate <= rate][-1]) for rate in rates.tolist()]
    if np.ndim(fp_per_case) == 0:
        return float(values[0])
    return dict(zip((float(rate) for rate in fp_per_case), (float(v) for v in values), strict=True))


def case_auroc(cases: Sequence[CaseLesions], single_class: float = float("nan")) -> float:
    """Case-level AUROC of the case scores (the maps' maxima) against "has a reference lesion"
    (``picai_eval.metrics.Metrics.auroc``); ``single_class``: the value when one class is missing."""
    checks.nonempty("cases", len(cases))
    truth = np.array([case.has_lesion for case in cases], dtype=float)
    scores = np.array([case.score for case in cases], dtype=float)
    return float(auroc(truth, scores, single_class=single_class))


def case_lesion_counts(cases: Sequence[CaseLesions], count: str = "reference") -> np.ndarray:
    """(cases,) int: each case's number of reference lesions (``"reference"``: its entries that are
    lesions, whose sum is ``picai_eval.metrics.Metrics.num_lesions``) or of lesion candidates
    (``"candidates"``: the non-zero 26-connected components of the detection map after any
    extraction, ``picai_eval.analysis_utils.parse_detection_map``'s count)."""
    if count not in LESION_COUNTS:
        raise ValueError(f"unknown count {count!r}; expected one of {LESION_COUNTS}")
    if count == "reference":
        return np.array([int(np.count_nonzero(case.is_lesion)) for case in cases], dtype=np.int64)
    if any(case.candidates is None for case in cases):
        raise ValueError("a case's lesion candidates were not counted")
    return np.array([case.candidates for case in cases], dtype=np.int64)


def lesion_count(cases: Sequence[CaseLesions], count: str = "reference") -> int:
    """The lesions of every case (:func:`case_lesion_counts`) summed: ``"reference"`` is
    ``picai_eval.metrics.Metrics.num_lesions``."""
    checks.nonempty("cases", len(cases))
    return int(case_lesion_counts(cases, count).sum())


def picai_score(cases: Sequence[CaseLesions]) -> float:
    """The PI-CAI 2022 ranking score (case AUROC + lesion AP) / 2 (``picai_eval.metrics.Metrics.score``)."""
    return (case_auroc(cases) + lesion_average_precision(cases)) / 2
