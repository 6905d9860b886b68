"""Multi-class classification metrics as defined by the ISIC Challenge scoring package.

Definitions from ImageMarkup/isic-challenge-scoring 5.6.0, ``isic_challenge_scoring/metrics.py``
and ``confusion.py`` (read, not copied); its curves and areas are scikit-learn's, restated to the last bit
in ``evaluation.metrics.curves`` so that an evaluation need not import scikit-learn (issue 30):

- labels are each row's argmax; a row whose maximum is tied is *undecided* (always wrong);
- balanced multi-class accuracy is the mean over categories of weighted true positives over the
  weighted reference count, a category without (weighted) reference examples left out; rows whose
  reference label is undecided do not count;
- per-category confusion metrics binarise with ``> 0.5`` and score an empty denominator as 1.0
  (accuracy alone is NaN on zero total weight);
- ``auc_sens_80`` is the raw (not McClish-corrected) area of the ROC curve right of the point where
  the TPR first reaches 0.8, that point's FPR interpolated linearly on the crossing segment;
- AUROC and average precision are the catalogue's ``auroc`` / ``binary_average_precision`` below,
  with the rows' weights as ``sample_weight`` and the reference's edge values as their parameters.

All functions are pure; ``weights`` default to 1 for every row.

Below the ISIC functions, the catalogue's validated binary and multi-class metrics (AUROC, average
precision, accuracy, balanced accuracy, sensitivity / specificity at a threshold or at a target of the
other, Cohen's kappa, Brier score, expected calibration error) with every edge case a parameter, and
:func:`one_vs_rest` for per-class and macro values. Those scikit-learn has are computed as scikit-learn
1.9.1 computes them, equal to the last bit (its curves in ``evaluation.metrics.curves``, its label
metrics here; scikit-learn is the oracle of their tests, never imported by an evaluation). Those a
bootstrap needs also take ``weights``: (resamples, n) case weights (the draw counts of each resample,
``evaluation.metrics.bootstrap.resample_weights``) for one value per resample at once, each equal to
the metric of that resample's expanded set of cases (an edge case gives its parameter's value).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from evaluation.metrics import checks, curves
from evaluation.metrics.bootstrap import case_weights, resample_means

UNDECIDED = -1
CONFUSION_METRICS = ("accuracy", "sensitivity", "specificity", "dice", "ppv", "npv")


def argmax_labels(scores: np.ndarray) -> np.ndarray:
    """Column index of each row's maximum, ``UNDECIDED`` where the maximum is not unique."""
    is_max = scores == scores.max(axis=1, keepdims=True)
    labels = is_max.argmax(axis=1)
    labels[is_max.sum(axis=1) > 1] = UNDECIDED
    return labels


def balanced_multiclass_accuracy(
    truth_labels: np.ndarray, predicted_labels: np.ndarray, weights: np.ndarray | None = None
) -> float:
    """Mean per-category recall of argmax labels (``UNDECIDED`` predictions count as wrong).

    scikit-learn's balanced accuracy is the same mean once rows with an undecided reference are
    dropped: a label without weighted reference examples (``UNDECIDED`` among the predictions, a
    category absent or only zero-weighted) has a NaN recall, which it leaves out.
    """
    decided = truth_labels != UNDECIDED
    truth, predicted = truth_labels[decided], predicted_labels[decided]
    sample_weight = None if weights is None else weights[decided]
    if not decided.any() or (sample_weight is not None and not np.any(sample_weight)):
        return float("nan")
    return _counted_balanced_accuracy(truth, predicted, sample_weight)


def _counted_balanced_accuracy(truth: np.ndarray, predicted: np.ndarray, sample_weight: np.ndarray | None) -> float:
    """``sklearn.metrics.balanced_accuracy_score(truth, predicted, sample_weight=sample_weight)`` computed as
    scikit-learn 1.9.1 computes it (``sklearn/metrics/_classification.py``, ``balanced_accuracy_score`` and
    ``confusion_matrix``), in its order: the confusion matrix of the sorted labels (the weights added row by
    row, as its ``coo_array.toarray``; integer counts without weights), each label's diagonal over its row
    sum, the mean of those not NaN (NaN when none is; scikit-learn warns where a label has no reference row).
    Without its validation and its mapping of each label through a dict (strings, negative ``UNDECIDED``)."""
    labels, places = _sorted_labels(np.concatenate([truth, predicted]))
    n = labels.size
    matrix = np.bincount(places[: truth.size] * n + places[truth.size :], sample_weight, n * n).reshape(n, n)
    with np.errstate(divide="ignore", invalid="ignore"):
        recalls = np.diagonal(matrix) / matrix.sum(axis=1)
    kept = recalls[~np.isnan(recalls)]
    return float(np.mean(kept)) if kept.size else float("nan")  # (no weighted label: its NaN, without a warning)


def _sorted_labels(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(values, return_inverse=True)``; of integers within a span no wider than their count (class
    positions) counted (``np.bincount``), not sorted."""
    if values.dtype.kind in "iu" and values.size:
        low = int(values.min())
        span = int(values.max()) - low + 1
        if span <= values.size:
            present = np.bincount(values - low, minlength=span) > 0
            return np.flatnonzero(present).astype(values.dtype) + low, (np.cumsum(present) - 1)[values - low]
    return np.unique(values, return_inverse=True)


def _ratio(numerator: np.ndarray, denominator: np.ndarray, empty: float) -> np.ndarray:
    safe = np.where(denominator == 0, 1, denominator)
    return np.where(denominator == 0, empty, numerator / safe)


def confusion_metrics(
    truth: np.ndarray, predicted: np.ndarray, weights: np.ndarray | None = None
) -> dict[str, np.ndarray]:
    """Per-column accuracy, sensitivity, specificity, dice, PPV, NPV of two (n, k) boolean arrays."""
    row_weights = np.ones(truth.shape[0]) if weights is None else np.asarray(weights, dtype=float)
    # weighted counts as products (scikit-learn's multilabel_confusion_matrix refuses all-zero weights)
    tp, fp = row_weights @ (truth & predicted), row_weights @ (~truth & predicted)
    fn, tn = row_weights @ (truth & ~predicted), row_weights @ (~truth & ~predicted)
    total = tn + fp + fn + tp
    return {
        "accuracy": _ratio(tp + tn, total, float("nan")),
        "sensitivity": _ratio(tp, tp + fn, 1.0),
        "specificity": _ratio(tn, tn + fp, 1.0),
        "dice": _ratio(2 * tp, 2 * tp + fp + fn, 1.0),
        "ppv": _ratio(tp, tp + fp, 1.0),
        "npv": _ratio(tn, tn + fn, 1.0),
    }


def _all_zero(weights: np.ndarray | None) -> bool:
    return weights is not None and not np.any(weights)


def roc_auc(truth: np.ndarray, scores: np.ndarray, weights: np.ndarray | None = None) -> float:
    """The catalogue's :func:`auroc` with the rows' ``weights``; NaN when a class has no (weighted)
    examples (the reference's value there)."""
    return float(auroc(truth, scores, single_class=float("nan"), sample_weight=weights))


def average_precision(truth: np.ndarray, scores: np.ndarray, weights: np.ndarray | None = None) -> float:
    """The catalogue's :func:`binary_average_precision` with the rows' ``weights``: 0.0 without
    weighted positives (what scikit-learn 1.9 gives, the reference's value), NaN when every weight is 0."""
    if _all_zero(weights):
        return float("nan")
    return float(binary_average_precision(truth, scores, no_positive=0.0, sample_weight=weights))


def auc_above_sensitivity(
    truth: np.ndarray, scores: np.ndarray, weights: np.ndarray | None = None, sensitivity: float = 0.8
) -> float:
    """Raw partial ROC area for TPR >= ``sensitivity``; NaN without weighted positives or negatives.

    Zero-weighted rows are dropped before the curve is drawn (all thresholds kept); the curve is
    cut at the first point whose TPR reaches ``sensitivity``, preceded by the point at exactly that
    TPR on the segment from the previous curve point.
    """
    if not 0 < sensitivity <= 1:
        raise ValueError(f"sensitivity must be in (0, 1], got {sensitivity}")
    truth = np.asarray(truth, dtype=bool)
    if weights is not None:
        kept = weights != 0
        truth, scores, weights = truth[kept], scores[kept], weights[kept]
    row_weights = np.ones(truth.size) if weights is None else weights
    if not np.any(row_weights[truth]) or not np.any(row_weights[~truth]):
        return float("nan")
    fpr, tpr, _ = curves.roc_curve(truth, scores, sample_weight=weights, drop_intermediate=False)
    first = int(np.searchsorted(tpr, sensitivity, side="left"))
    fpr_at = np.interp(sensitivity, tpr[first - 1 : first + 1], fpr[first - 1 : first + 1])
    return curves.auc(np.r_[fpr_at, fpr[first:]], np.r_[sensitivity, tpr[first:]])


def curve_metrics(truth: np.ndarray, scores: np.ndarray, weights: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Per-column auc, auc_sens_80 and ap of (n, k) reference 0/1 values and scores."""
    columns = range(truth.shape[1])
    return {
        "auc": np.array([roc_auc(truth[:, c], scores[:, c], weights) for c in columns]),
        "auc_sens_80": np.array([auc_above_sensitivity(truth[:, c], scores[:, c], weights) for c in columns]),
        "ap": np.array([average_precision(truth[:, c], scores[:, c], weights) for c in columns]),
    }


def macro_mean(values: np.ndarray) -> float:
    """Mean over categories skipping NaN (pandas' default); NaN when every value is NaN."""
    values = np.asarray(values, dtype=float)
    finite = values[~np.isnan(values)]
    return float(finite.mean()) if finite.size else float("nan")


# ---- the catalogue's validated metrics -------------------------------------------------------------

KAPPA_WEIGHTS = (None, "linear", "quadratic")


def _binary_inputs(truth: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(n,) 0/1 reference and (n,) finite scores of one length, at least one sample."""
    truth = checks.binary("truth", truth)
    scores = checks.as_finite("scores", scores, ndim=1)
    if truth.ndim != 1:
        raise ValueError(f"truth must be 1-dimensional, got shape {truth.shape}")
    checks.nonempty("truth", checks.same_length(truth=truth, scores=scores))
    return truth, scores


def _sample_weight(sample_weight: np.ndarray | None, truth: np.ndarray, weights: np.ndarray | None) -> np.ndarray:
    """(n,) non-negative finite row weights (1 each when ``None``), as scikit-learn's ``sample_weight``;
    not with bootstrap ``weights``."""
    if sample_weight is None:
        return np.ones(truth.size)
    if weights is not None:
        raise ValueError("sample_weight and weights (resamples) cannot be combined")
    sample_weight = checks.as_finite("sample_weight", sample_weight, ndim=1)
    checks.same_length(truth=truth, sample_weight=sample_weight)
    if np.any(sample_weight < 0):
        raise ValueError("sample_weight must be non-negative")
    return sample_weight


def _ranked_counts(truth: np.ndarray, scores: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Weighted true and false positives (resamples x (1 + distinct scores), from 0) of the decision
    ``scores >= t`` for each distinct score t, descending: the points of the ROC and precision-recall
    curves of every weight row (tied scores share one point, as scikit-learn's ``_binary_clf_curve``)."""
    order = np.argsort(-scores, kind="stable")
    sorted_scores, positive = scores[order], truth[order]
    rows = weights[:, order]
    ends = np.r_[np.flatnonzero(np.diff(sorted_scores)), sorted_scores.size - 1]  # each tied group's last case
    zero = np.zeros((rows.shape[0], 1))
    tp = np.hstack([zero, np.cumsum(rows * positive, axis=1)[:, ends]])
    fp = np.hstack([zero, np.cumsum(rows * ~positive, axis=1)[:, ends]])
    return tp, fp


def auroc(
    truth: np.ndarray,
    scores: np.ndarray,
    single_class: float = 0.5,
    weights: np.ndarray | None = None,
    sample_weight: np.ndarray | None = None,
    max_fpr: float | None = None,
) -> float | np.ndarray:
    """Area under the ROC curve (trapezoidal, ties counted half): ``sklearn.metrics.roc_auc_score``.

    Hanley & McNeil, Radiology 1982. Parameters: ``truth`` (n,) 0/1 reference; ``scores`` (n,) finite
    scores, higher = more positive; ``single_class``: the value when ``truth`` holds one class only
    (AUROC undefined; 0.5 = chance), or one class only with a non-zero ``sample_weight``;
    ``weights``: (resamples, n) case weights, for one value per row (the trapezoidal area under each
    row's weighted ROC points, ``roc_auc_score`` with the row as ``sample_weight``); ``sample_weight``:
    (n,) non-negative row weights of the one value (``roc_auc_score``'s, ISIC's score weights);
    ``max_fpr``: in (0, 1], the partial area over false-positive rates [0, max_fpr] (specificity at
    least 1 - max_fpr), McClish-standardised to [0.5, 1] for a curve above the diagonal
    (McClish, Med Decis Making 1989): ``roc_auc_score(..., max_fpr=max_fpr)`` itself, which AIROGS's
    ``screening_partial_auc`` calls (qurAI-amsterdam/airogs-evaluation ``evaluation.py``).
    Returns a float in [0, 1] (an array of them with ``weights``).
    """
    truth, scores = _binary_inputs(truth, scores)
    rows = _sample_weight(sample_weight, truth, weights)
    if max_fpr is not None:
        max_fpr = checks.fraction("max_fpr", max_fpr, open_low=True)
        return _partial_auroc(truth, scores, float(single_class), (rows, sample_weight), weights, max_fpr)
    if weights is not None:
        tp, fp = _ranked_counts(truth, scores, case_weights(weights, truth.size))
        area = np.sum(np.diff(fp, axis=1) * (tp[:, 1:] + tp[:, :-1]) / 2.0, axis=1)
        defined = (tp[:, -1] > 0) & (fp[:, -1] > 0)
        return np.where(defined, area / np.where(defined, tp[:, -1] * fp[:, -1], 1.0), float(single_class))
    if not rows[truth].any() or not rows[~truth].any():
        return float(single_class)
    return curves.roc_auc_score(truth, scores, None if sample_weight is None else rows)


def _partial_auroc(
    truth: np.ndarray,
    scores: np.ndarray,
    single_class: float,
    sample_weights: tuple[np.ndarray, np.ndarray | None],
    weights: np.ndarray | None,
    max_fpr: float,
) -> float | np.ndarray:
    """``auroc`` with ``max_fpr``: scikit-learn's standardised partial area (``curves.roc_auc_score``), of
    the one value (``sample_weights``: its row weights, and the ``sample_weight`` given, passed on as it is)
    or of each bootstrap row of ``weights`` (its draw counts as ``sample_weight``; ``single_class`` where a
    row holds one class)."""
    if weights is None:
        rows, sample_weight = sample_weights
        if not rows[truth].any() or not rows[~truth].any():
            return single_class
        return curves.roc_auc_score(truth, scores, sample_weight, max_fpr)
    weights = case_weights(weights, truth.size)
    values = np.full(weights.shape[0], single_class)
    defined = (weights[:, truth].sum(axis=1) > 0) & (weights[:, ~truth].sum(axis=1) > 0)
    for row in np.flatnonzero(defined):  # one curve per resample (the weights form has no partial area)
        values[row] = curves.roc_auc_score(truth, scores, weights[row], max_fpr)
    return values


def binary_average_precision(
    truth: np.ndarray,
    scores: np.ndarray,
    no_positive: float = 0.0,
    weights: np.ndarray | None = None,
    sample_weight: np.ndarray | None = None,
) -> float | np.ndarray:
    """Average precision ``sum_k (R_k - R_{k-1}) P_k`` over the thresholds (no interpolation):
    ``sklearn.metrics.average_precision_score``.

    Parameters: ``truth`` (n,) 0/1; ``scores`` (n,) finite; ``no_positive``: the value without any
    positive (recall undefined), or without a positive of non-zero ``sample_weight``; ``weights``:
    (resamples, n) case weights, for one value per row (the same sum over each row's weighted
    precision-recall points); ``sample_weight``: (n,) non-negative row weights of the one value
    (``average_precision_score``'s). Returns a float in [0, 1] (an array of them with ``weights``).
    """
    truth, scores = _binary_inputs(truth, scores)
    rows = _sample_weight(sample_weight, truth, weights)
    if weights is not None:
        tp, fp = _ranked_counts(truth, scores, case_weights(weights, truth.size))
        called = tp[:, 1:] + fp[:, 1:]
        precision = np.divide(tp[:, 1:], called, out=np.zeros_like(called), where=called > 0)
        positives = tp[:, -1]
        value = np.sum(np.diff(tp, axis=1) * precision, axis=1) / np.where(positives > 0, positives, 1.0)
        return np.where(positives > 0, value, float(no_positive))
    if not rows[truth].any():
        return float(no_positive)
    return curves.average_precision_score(truth, scores, sample_weight)


def auroc_above_sensitivity(
    truth: np.ndarray,
    scores: np.ndarray,
    sensitivity: float = 0.8,
    single_class: float | None = None,
    sample_weight: np.ndarray | None = None,
) -> float:
    """Raw area under the part of the ROC curve where the sensitivity (TPR) is at least ``sensitivity``
    (over the false-positive rates from where it reaches it to 1; not McClish-normalised):
    isic-challenge-scoring 5.6.0 ``metrics.auc_above_sensitivity``
    (ImageMarkup/isic-challenge-scoring, ISIC 2019's ``auc_sens_80``), computed by
    :func:`auc_above_sensitivity`.

    Parameters: ``truth`` (n,) 0/1; ``scores`` (n,) finite; ``sensitivity`` in (0, 1]; ``single_class``:
    the value when ``truth`` holds one class only, or one class only with a non-zero ``sample_weight``
    (the area is undefined), None: the chance diagonal's area (1 - sensitivity²) / 2; ``sample_weight``:
    (n,) non-negative row weights (ISIC's score weights). Returns a float in [0, 1].
    """
    truth, scores = _binary_inputs(truth, scores)
    if not 0 < sensitivity <= 1:
        raise ValueError(f"sensitivity must be in (0, 1], got {sensitivity}")
    value = auc_above_sensitivity(truth, scores, sample_weight, sensitivity)
    if np.isnan(value):
        return (1 - sensitivity**2) / 2 if single_class is None else float(single_class)
    return value


def _labels(name: str, values: np.ndarray) -> np.ndarray:
    array = np.asarray(values)
    if array.ndim != 1:
        raise ValueError(f"{name} must be 1-dimensional, got shape {array.shape}")
    if array.dtype.kind == "f":
        checks.as_finite(name, array)
    return array


def _label_pairs(truth_labels: np.ndarray, predicted_labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two (n,) arrays of class labels, n >= 1, refused where scikit-learn's ``_check_targets`` refuses them
    (``sklearn/metrics/_classification.py``): fractional numbers (its "continuous" targets), or strings and
    numbers mixed."""
    truth = _labels("truth_labels", truth_labels)
    predicted = _labels("predicted_labels", predicted_labels)
    checks.nonempty("truth_labels", checks.same_length(truth_labels=truth, predicted_labels=predicted))
    for name, array in (("truth_labels", truth), ("predicted_labels", predicted)):
        if array.dtype.kind == "f" and np.any(np.mod(array, 1)):
            raise ValueError(f"{name} hold fractional numbers; class labels expected")
    if len({array.dtype.kind in "US" for array in (truth, predicted)}) > 1:
        raise ValueError("truth_labels and predicted_labels mix strings and numbers")
    return truth, predicted


def accuracy(
    truth_labels: np.ndarray, predicted_labels: np.ndarray, weights: np.ndarray | None = None
) -> float | np.ndarray:
    """The fraction of samples whose predicted label equals the reference: ``sklearn.metrics.accuracy_score``.

    Parameters: ``truth_labels``, ``predicted_labels`` (n,) class labels; ``weights``: (resamples, n)
    case weights, for one value per row. Defined on every non-empty input. Returns a float in [0, 1]
    (an array of them with ``weights``).
    """
    truth, predicted = _label_pairs(truth_labels, predicted_labels)
    if weights is not None:
        return resample_means(case_weights(weights, truth.size), (truth == predicted).astype(float))
    return float(np.mean(truth == predicted))  # as accuracy_score: the mean of the 0/1 matches


def balanced_accuracy(
    truth_labels: np.ndarray,
    predicted_labels: np.ndarray,
    weights: np.ndarray | None = None,
    sample_weight: np.ndarray | None = None,
) -> float | np.ndarray:
    """Mean per-class recall over the classes present in ``truth_labels``:
    ``sklearn.metrics.balanced_accuracy_score`` (Brodersen et al., ICPR 2010).

    Parameters: ``truth_labels``, ``predicted_labels`` (n,) class labels; ``weights``: (resamples, n)
    case weights, for one value per row (a class present only in zero-weighted samples adds no
    term). A predicted class absent from the reference adds no recall term (it only lowers the
    others'). A single reference class gives that class's recall. ``sample_weight``: (n,) non-negative
    row weights of the one value (``balanced_accuracy_score``'s, ISIC's score weights; a class whose
    samples all weigh 0 adds no term). Returns a float in [0, 1] (an array of them with ``weights``).
    """
    truth, predicted = _label_pairs(truth_labels, predicted_labels)
    if sample_weight is not None:
        rows = _sample_weight(sample_weight, truth, weights)
        if not np.any(rows):  # (scikit-learn's refusal)
            raise ValueError("sample_weight must contain at least one non-zero number")
        return _counted_balanced_accuracy(truth, predicted, rows)
    if weights is not None:
        weights = case_weights(weights, truth.size)
        is_class = truth[:, None] == np.unique(truth)[None, :]  # (n, classes)
        hits = weights @ (is_class & (predicted == truth)[:, None])
        support = weights @ is_class
        recalls = np.divide(hits, support, out=np.zeros_like(hits), where=support > 0)
        return recalls.sum(axis=1) / (support > 0).sum(axis=1)
    return _counted_balanced_accuracy(truth, predicted, None)


def _rates(truth: np.ndarray, predicted: np.ndarray, empty: float) -> tuple[float, float]:
    positives, negatives = int(truth.sum()), int((~truth).sum())
    sensitivity = np.count_nonzero(truth & predicted) / positives if positives else float(empty)
    specificity = np.count_nonzero(~truth & ~predicted) / negatives if negatives else float(empty)
    return float(sensitivity), float(specificity)


def sensitivity(truth: np.ndarray, scores: np.ndarray, threshold: float = 0.5, empty: float = 1.0) -> float:
    """Sensitivity TP / (TP + FN) of the decision ``scores >= threshold``.

    Parameters: ``truth`` (n,) 0/1; ``scores`` (n,) finite; ``threshold``; ``empty``: the value without
    any positive (0/0; 1.0 as ISIC's convention above). Returns a float in [0, 1].
    """
    truth, scores = _binary_inputs(truth, scores)
    return _rates(truth, scores >= threshold, empty)[0]


def specificity(truth: np.ndarray, scores: np.ndarray, threshold: float = 0.5, empty: float = 1.0) -> float:
    """Specificity TN / (TN + FP) of ``scores >= threshold``; ``empty`` without any negative."""
    truth, scores = _binary_inputs(truth, scores)
    return _rates(truth, scores >= threshold, empty)[1]


def _operating_points(truth: np.ndarray, scores: np.ndarray, empty: float) -> tuple[np.ndarray, np.ndarray]:
    """(sensitivity, specificity) of ``scores >= t`` for t = every distinct score and +inf."""
    thresholds = np.r_[np.inf, np.unique(scores)[::-1]]
    order = np.argsort(-scores, kind="stable")
    sorted_scores, sorted_truth = scores[order], truth[order]
    kept = np.searchsorted(-sorted_scores, -thresholds, side="right")  # samples with score >= t
    tp = np.r_[0, np.cumsum(sorted_truth)][kept]
    fp = kept - tp
    positives, negatives = int(truth.sum()), int((~truth).sum())
    sens = tp / positives if positives else np.full(kept.size, float(empty))
    spec = (negatives - fp) / negatives if negatives else np.full(kept.size, float(empty))
    return sens, spec


def sensitivity_at_specificity(truth: np.ndarray, scores: np.ndarray, target: float = 0.9, empty: float = 1.0) -> float:
    """The highest sensitivity among the thresholds whose specificity is >= ``target``.

    Thresholds are every distinct score and +inf (decision ``scores >= t``), the operating points of
    ``sklearn.metrics.roc_curve(..., drop_intermediate=False)``; no interpolation between them. As
    MetricsReloaded ``MetricsReloaded/metrics/prob_pairwise_measures.py`` (``sensitivity_at_specificity``,
    ``utility/utils.py`` ``max_x_at_y_more``). The +inf threshold (specificity 1) always qualifies.

    Parameters
    ----------
    truth : (n,) 0/1 reference.
    scores : (n,) finite scores, higher = more positive.
    target : the specificity to reach, in [0, 1] (e.g. 0.9).
    empty : the sensitivity or specificity of a set without positives or without negatives (0/0).

    Returns
    -------
    float in [0, 1].
    """
    truth, scores = _binary_inputs(truth, scores)
    target = checks.fraction("target", target)
    sens, spec = _operating_points(truth, scores, empty)
    eligible = spec >= target
    return float(sens[eligible].max()) if eligible.any() else float(empty)


def specificity_at_sensitivity(truth: np.ndarray, scores: np.ndarray, target: float = 0.9, empty: float = 1.0) -> float:
    """The highest specificity among the thresholds whose sensitivity is >= ``target``
    (e.g. specificity at 90% sensitivity); as :func:`sensitivity_at_specificity` with the roles
    swapped (MetricsReloaded ``specificity_at_sensitivity``). The lowest threshold (sensitivity 1)
    always qualifies."""
    truth, scores = _binary_inputs(truth, scores)
    target = checks.fraction("target", target)
    sens, spec = _operating_points(truth, scores, empty)
    eligible = sens >= target
    return float(spec[eligible].max()) if eligible.any() else float(empty)


def cohen_kappa(
    truth_labels: np.ndarray,
    predicted_labels: np.ndarray,
    weights: str | None = None,
    labels: Sequence | None = None,
    perfect_chance: float = 1.0,
) -> float:
    """Cohen's kappa ``1 - sum(w * O) / sum(w * E)``, unweighted or with linear / quadratic weights:
    ``sklearn.metrics.cohen_kappa_score`` (Cohen 1960; Cohen, Psychological Bulletin 1968 for weights).

    Parameters
    ----------
    truth_labels, predicted_labels : (n,) class labels (ordinal for weighted kappa).
    weights : ``None``, ``"linear"`` (|i - j|) or ``"quadratic"`` ((i - j)²) over the index of the
        label in ``labels``.
    labels : the ordered label set; ``None`` = the sorted union of both arrays.
    perfect_chance : the value when the expected (chance) disagreement is 0, i.e. both raters gave
        one and the same class to every sample (0/0); the observed agreement is then complete.

    Returns
    -------
    float in [-1, 1].
    """
    truth, predicted = _label_pairs(truth_labels, predicted_labels)
    if weights not in KAPPA_WEIGHTS:
        raise ValueError(f"unknown kappa weights {weights!r}; expected one of {KAPPA_WEIGHTS}")
    classes = np.unique(np.r_[truth, predicted]) if labels is None else np.asarray(labels)
    if not np.all(np.isin(truth, classes)) or not np.all(np.isin(predicted, classes)):
        raise ValueError("truth_labels or predicted_labels hold a label outside labels")
    seen = np.unique(np.r_[truth, predicted])
    if seen.size == 1:  # both raters constant and equal: sklearn's 0/0
        return float(perfect_chance)
    return _kappa(truth, predicted, classes, weights)


def _kappa(truth: np.ndarray, predicted: np.ndarray, classes: np.ndarray, weights: str | None) -> float:
    """``sklearn.metrics.cohen_kappa_score(truth, predicted, labels=classes, weights=weights)`` of labels all in
    ``classes`` and not one class alone, computed as scikit-learn 1.9.1 computes it
    (``sklearn/metrics/_classification.py``, ``cohen_kappa_score``), in its order: the confusion matrix of the
    counts (rows truth, columns prediction, in the order of ``classes``; a class named twice counts at its last
    place, as its dict) in float64, the expected matrix ``outer(column sums, row sums) / n``, the weights
    ``1 - I``, ``|i - j|`` or ``(i - j)²``, and ``1 - sum(w * O) / sum(w * E)``."""
    order = np.argsort(classes, kind="stable")
    ranked = classes[order]
    n = classes.size
    rows = order[np.searchsorted(ranked, truth, side="right") - 1]
    columns = order[np.searchsorted(ranked, predicted, side="right") - 1]
    confusion = np.bincount(rows * n + columns, minlength=n * n).reshape(n, n).astype(np.float64)
    expected = np.outer(confusion.sum(axis=0), confusion.sum(axis=1)) / np.sum(confusion.sum(axis=0))
    if weights is None:
        weight = np.ones((n, n))
        np.fill_diagonal(weight, 0)
    else:
        weight = np.zeros((n, n)) + np.arange(n)
        weight = np.abs(weight - weight.T) if weights == "linear" else (weight - weight.T) ** 2
    return float(1 - np.sum(weight * confusion) / np.sum(weight * expected))


def brier_score(truth: np.ndarray, probabilities: np.ndarray, weights: np.ndarray | None = None) -> float | np.ndarray:
    """Brier score ``mean((p - y)²)`` of positive-class probabilities: ``sklearn.metrics.brier_score_loss``
    (Brier, Monthly Weather Review 1950). ``truth`` (n,) 0/1, ``probabilities`` (n,) in [0, 1];
    ``weights``: (resamples, n) case weights, for one value per row. Defined on every non-empty input
    (lower is better, in [0, 1])."""
    truth, probabilities = _binary_inputs(truth, probabilities)
    checks.probabilities("probabilities", probabilities)
    if weights is not None:
        return resample_means(case_weights(weights, truth.size), (probabilities - truth) ** 2)
    # as scikit-learn 1.9's brier_score_loss computes it (sklearn/metrics/_classification.py), to the last bit
    # and without importing it (issue 30): half the mean over rows of the squared differences of the two
    # columns (1 - y, y) and (1 - p, p)
    positive = truth.astype(np.float64)
    rows = ((1 - positive) - (1 - probabilities)) ** 2 + (positive - probabilities) ** 2
    return float(np.mean(rows) * 0.5)


def expected_calibration_error(
    truth: np.ndarray, probabilities: np.ndarray, n_bins: int = 10, weights: np.ndarray | None = None
) -> float | np.ndarray:
    """Expected calibration error with equal-width bins:
    ``sum_m |B_m| / n * |mean(y in B_m) - mean(p in B_m)|``.

    Naeini, Cooper & Hauskrecht, AAAI 2015 (the binary form, observed positive frequency against the
    mean predicted probability); Guo et al., "On Calibration of Modern Neural Networks", ICML 2017
    (equal-width bins). Binning: edges ``numpy.linspace(0, 1, n_bins + 1)``, bin m holds
    ``edges[m-1] < p <= edges[m]`` (right-closed, as Guo et al.'s ``I_m = ((m-1)/M, m/M]``), and
    ``p = 0`` joins the first bin. An empty bin contributes 0. Per class and macro (the class-wise
    ECE of Kumar et al., NeurIPS 2019): :func:`one_vs_rest`.

    Parameters
    ----------
    truth : (n,) 0/1 reference.
    probabilities : (n,) predicted probabilities of the positive class, in [0, 1].
    n_bins : number of equal-width bins (>= 1).
    weights : (resamples, n) case weights, for one value per row (``|B_m|`` and ``n`` weighted).

    Returns
    -------
    float in [0, 1] (an array of them with ``weights``).
    """
    truth, probabilities = _binary_inputs(truth, probabilities)
    checks.probabilities("probabilities", probabilities)
    if int(n_bins) != n_bins or n_bins < 1:
        raise ValueError(f"n_bins must be a positive integer, got {n_bins}")
    edges = np.linspace(0.0, 1.0, int(n_bins) + 1)
    bins = np.clip(np.searchsorted(edges, probabilities, side="left") - 1, 0, int(n_bins) - 1)
    if weights is not None:
        weights = case_weights(weights, truth.size)
        in_bin = bins[:, None] == np.arange(int(n_bins))[None, :]  # (n, bins)
        gaps = weights @ (in_bin * (truth - probabilities)[:, None])  # Σ y - Σ p per resample and bin
        return np.abs(gaps).sum(axis=1) / weights.sum(axis=1)
    frequency_sum = np.bincount(bins, weights=truth.astype(float), minlength=int(n_bins))
    probability_sum = np.bincount(bins, weights=probabilities, minlength=int(n_bins))
    return float(np.sum(np.abs(frequency_sum - probability_sum)) / truth.size)


def top_label_calibration_error(
    truth_labels: np.ndarray, probabilities: np.ndarray, classes: Sequence, n_bins: int = 10
) -> float:
    """Top-label (confidence) ECE of a multi-class classifier: Guo et al., ICML 2017, eq. 3.

    The confidence of a row is its largest probability and its prediction that column's class (the
    first column on a tie, ``numpy.argmax``); the value is :func:`expected_calibration_error` of
    (prediction correct, confidence), with the same equal-width, right-closed bins.

    Parameters
    ----------
    truth_labels : (n,) class labels.
    probabilities : (n, len(classes)) class probabilities in [0, 1], column ``j`` for ``classes[j]``.
    classes : the classes, in column order.
    n_bins : number of equal-width bins.

    Returns
    -------
    float in [0, 1].
    """
    truth = _labels("truth_labels", truth_labels)
    probabilities = checks.as_finite("probabilities", probabilities, ndim=2)
    checks.same_length(truth_labels=truth, probabilities=probabilities)
    if probabilities.shape[1] != len(classes):
        raise ValueError(f"probabilities has {probabilities.shape[1]} columns for {len(classes)} classes")
    predicted = np.asarray(classes)[probabilities.argmax(axis=1)]
    return expected_calibration_error(predicted == truth, probabilities.max(axis=1), n_bins)


def multiclass_brier_score(
    truth_labels: np.ndarray, probabilities: np.ndarray, classes: Sequence, weights: np.ndarray | None = None
) -> float | np.ndarray:
    """Multi-class Brier score ``mean_i sum_k (p_ik - [y_i = k])²``: Brier's original definition
    (Brier, Monthly Weather Review 1950, eq. 1), in [0, 2], lower is better; for three or more classes
    equal to ``sklearn.metrics.brier_score_loss(truth_labels, probabilities, labels=classes)``
    (scikit-learn >= 1.7, ``scale_by_half=False``) once the columns are in sorted class order, the
    order scikit-learn assumes whatever ``labels`` says. With two classes it is twice the binary
    :func:`brier_score` of either class.

    Parameters
    ----------
    truth_labels : (n,) class labels, each one of ``classes``.
    probabilities : (n, len(classes)) class probabilities in [0, 1], column ``j`` for ``classes[j]``.
    classes : the classes, in column order.
    weights : (resamples, n) case weights, for one value per row.

    Returns
    -------
    float in [0, 2] (an array of them with ``weights``).
    """
    truth = _labels("truth_labels", truth_labels)
    probabilities = checks.as_finite("probabilities", probabilities, ndim=2)
    checks.nonempty("truth_labels", checks.same_length(truth_labels=truth, probabilities=probabilities))
    if probabilities.shape[1] != len(classes):
        raise ValueError(f"probabilities has {probabilities.shape[1]} columns for {len(classes)} classes")
    if probabilities.min() < 0 or probabilities.max() > 1:
        raise ValueError("probabilities must lie in [0, 1]")
    onehot = truth[:, None] == np.asarray(classes)[None, :]
    if not onehot.any(axis=1).all():
        raise ValueError("truth_labels hold a label outside classes")
    squared = np.sum((probabilities - onehot) ** 2, axis=1)
    if weights is not None:
        return resample_means(case_weights(weights, truth.size), squared)
    return float(squared.mean())


def one_vs_rest(
    metric: Callable[..., float],
    truth_labels: np.ndarray,
    scores: np.ndarray,
    classes: Sequence,
    **parameters: object,
) -> np.ndarray:
    """A binary metric per class, class ``classes[j]`` against the rest with score column ``j``.

    Parameters
    ----------
    metric : a binary metric ``metric(truth, scores, **parameters)`` of this module, e.g. :func:`auroc`.
    truth_labels : (n,) class labels.
    scores : (n, len(classes)) scores or probabilities, column ``j`` for ``classes[j]``.
    classes : the classes, in column order.
    parameters : passed on to ``metric`` (thresholds, targets and edge-case values).

    Returns
    -------
    (len(classes),) float array; its mean is the macro average.
    """
    truth = _labels("truth_labels", truth_labels)
    scores = checks.as_finite("scores", scores, ndim=2)
    checks.same_length(truth_labels=truth, scores=scores)
    if scores.shape[1] != len(classes):
        raise ValueError(f"scores has {scores.shape[1]} columns for {len(classes)} classes")
    return np.array([metric(truth == c, scores[:, j], **parameters) for j, c in enumerate(classes)])
