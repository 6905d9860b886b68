"""The metric adapters of declared challenges: a declared metric name -> a call of the metric catalogue
(``evaluation.metrics``) on the small per-case numbers the workers return (segmentation) or on the
case-level outputs (values). No metric is defined here: each comes from the catalogue, and this
module only maps the declaration onto it (names, parameters, edge values, aggregate forms), as each
metric's record says (``metric_records.RECORDS``: the tables below are views of them).

- Dice per case ``overlap.dice_from_counts`` and aggregated (dataset) Dice ``overlap.aggregated_dice``
  (voreille/hecktor); IoU = D / (2 - D), an identity that holds per case and for the dataset form
  ΣI / Σ|R∪P|; HD95, HD (maximum), MASD and NSD as ``evaluation.metrics.surface`` (DeepMind
  surface-distance, one ``SurfaceDistances`` per label and case); volume difference as
  ``overlap.volume_difference``; lesion F1 (greedy or Hungarian matching) and panoptic quality as
  ``evaluation.metrics.lesions``;
- value metrics: ``VALUE_METRICS`` maps a declared name to its catalogue entry (``auroc``,
  ``average_precision``, ``brier_score``, ``expected_calibration_error``, ``mae``, ``rmse``,
  ``accuracy``, ``balanced_accuracy``), ``PARAMETERS`` a declared key to the catalogue's parameter
  (``bins`` -> ``n_bins``); a declared edge value (``single_class``, ``no_positive``) is the
  catalogue's parameter of that name, ``"error"`` asks the engine to refuse the edge case;
- probabilities outputs (an (n, classes) matrix): ``PER_CLASS`` metrics one-vs-rest per class through
  ``catalogue.per_class`` and their macro mean, a class at its edge case given its declared value or
  (``"exclude"``) left out of the macro; ``multiclass_brier_score``, ``top_label_calibration_error``,
  and accuracy, balanced accuracy and kappa of the argmax classes (a tie: the first declared class, or
  with ``ties = "wrong"`` no class); ``sample_weights``: each case's weight in the one value.
Bootstrap CIs pass the resamples' draw counts as the catalogue's ``weights`` (one value per
resample, equal to the metric of the expanded resample); a resample that hits an edge case is NaN,
left out of the percentile interval.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from functools import cache, partial
from typing import TYPE_CHECKING, Any

import numpy as np

from evaluation.declarative.metric_records import RECORD, RECORDS
from evaluation.declarative.output_kinds import KINDS
from evaluation.metrics.bootstrap import drawn_cases

if TYPE_CHECKING:
    from evaluation.metrics.detection import ImageDetections
    from evaluation.metrics.hit_radius import ScanFindings

# ------------------------------------------------------------------------- segmentation, per case


def _edge(values: np.ndarray, where: np.ndarray, value: float | str) -> np.ndarray:
    """``values`` with the declared ``value`` at ``where``; "exclude" is NaN (left out of means)."""
    return np.where(where, np.nan if isinstance(value, str) else float(value), values)


def dice_values(inter: np.ndarray, ref: np.ndarray, pred: np.ndarray, both_empty: float | str) -> np.ndarray:
    """Per-case Dice; ``both_empty`` (a number, or "exclude" = NaN) where both masks lack the label."""
    from evaluation.metrics.overlap import dice_from_counts

    return _edge(dice_from_counts(inter, ref + pred, empty=np.nan), ref + pred == 0, both_empty)


def iou_values(inter: np.ndarray, ref: np.ndarray, pred: np.ndarray, both_empty: float | str) -> np.ndarray:
    """Per-case IoU = D / (2 - D); ``both_empty`` as for Dice."""
    dice = dice_values(inter, ref, pred, np.nan)
    return _edge(dice / (2.0 - dice), ref + pred == 0, both_empty)


def surface_values(
    raw: np.ndarray, ref: np.ndarray, pred: np.ndarray, both_empty: float | str, one_empty: float | str
) -> np.ndarray:
    """A surface metric (HD95, HD, MASD, NSD) per case with the declared edge values: ``both_empty`` (a
    number or "exclude"), and ``one_empty`` (a number, or "diagonal": the raw value, the image diagonal
    in mm, for the distances)."""
    one = (ref == 0) != (pred == 0)
    values = raw if one_empty == "diagonal" else _edge(raw, one, one_empty)
    return _edge(values, (ref == 0) & (pred == 0), both_empty)


def lesion_f1_values(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray, no_lesions: float) -> np.ndarray:
    """Per-case lesion F1 2TP / (2TP + FP + FN); ``no_lesions`` when neither mask has a lesion."""
    from evaluation.metrics.lesions import f1_score

    return np.atleast_1d(f1_score(tp, fp, fn, empty=no_lesions))


def volume_difference_values(raw: np.ndarray, empty_reference: float | str) -> np.ndarray:
    """Per-case volume difference (``overlap.volume_difference``, computed by the worker with NaN for
    the relative form's empty reference); ``empty_reference`` there (a number, or "exclude")."""
    return _edge(raw, np.isnan(raw), empty_reference)


def panoptic_values(raw: np.ndarray, no_instances: float | str) -> np.ndarray:
    """Per-case PQ, SQ or RQ (``lesions.panoptic_quality``, NaN when neither mask has an instance);
    ``no_instances`` there (a number, or "exclude")."""
    return _edge(raw, np.isnan(raw), no_instances)


def edge_at(values: np.ndarray, where: np.ndarray, value: float | str) -> np.ndarray:
    """``values`` with a declared edge value at ``where`` (a number, or "null": no value, left out of
    means; autoPET's Dice and false-negative volume of an empty reference)."""
    return _edge(values, where, value)


def voxel_sensitivity_values(
    inter: np.ndarray, ref: np.ndarray, pred: np.ndarray, both_empty: float | str, one_empty: float | str
) -> np.ndarray:
    """Per-case ``overlap.voxel_sensitivity`` |R∩P| / |R| from voxel counts (BraTS 2023); ``both_empty``
    and ``one_empty`` (an empty reference, a prediction) as declared ("null", "exclude": no value)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        values = inter / ref
    return _edge(_edge(values, (ref == 0) & (pred > 0), one_empty), (ref == 0) & (pred == 0), both_empty)


def voxel_specificity_values(
    inter: np.ndarray, ref: np.ndarray, pred: np.ndarray, size: np.ndarray, full_reference: float | str
) -> np.ndarray:
    """Per-case ``overlap.voxel_specificity`` |¬R∩¬P| / |¬R| from voxel counts and the maps' ``size``
    (BraTS 2023); ``full_reference`` where the reference covers every voxel."""
    negatives = size - ref
    with np.errstate(invalid="ignore", divide="ignore"):
        values = (negatives - pred + inter) / negatives
    return _edge(values, negatives == 0, full_reference)


# --------------------------------------------------------------------- segmentation, over cases


def mean_over_cases(values: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray | float:
    """The mean of the non-NaN per-case values (NaN = excluded); per weight row when ``weights``."""
    counted = np.isfinite(values)
    if weights is None:
        return float(values[counted].mean()) if counted.any() else float("nan")
    sums, counts = weights[:, counted] @ values[counted], weights[:, counted].sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, sums / counts, np.nan)


def overlap_dataset(
    metric: str, inter: np.ndarray, totals: np.ndarray, absent: float, weights: np.ndarray | None = None
) -> np.ndarray | float:
    """Dataset-level Dice 2ΣI / Σ(|R|+|P|) or IoU ΣI / Σ|R∪P| (= D / (2 - D)); ``absent`` when the
    label is in no reference and no prediction (in mm³ or voxels, as the caller scaled them)."""
    from evaluation.metrics.overlap import aggregated_dice

    dice = aggregated_dice(inter, totals, weights, empty=np.nan)
    value = dice if metric == "dice" else dice / (2.0 - dice)
    return np.where(np.isnan(dice), absent, value) if weights is not None else (absent if np.isnan(dice) else value)


def lesion_f1_dataset(counts: np.ndarray, no_lesions: float, weights: np.ndarray | None = None) -> Any:
    """F1 of TP / FP / FN summed over cases (``counts``: cases x 3)."""
    from evaluation.metrics.lesions import f1_score

    summed = counts.sum(axis=0) if weights is None else weights @ counts
    return f1_score(*summed.T, empty=no_lesions)


# -------------------------------------------------------------------------- case-level outputs

VALUE_METRICS = {
    r.name: r.catalogue for r in RECORDS if not r.segmentation and not r.detection and not r.heat_map and not r.decision
}
DECISION_METRICS = {r.name: r.catalogue for r in RECORDS if r.decision}  # counts per image at a decision
HEAT_MAP_METRICS = {r.name: r.catalogue for r in RECORDS if r.heat_map}  # each case's lesion entries (a worker's)
DETECTION_METRICS = {r.name: r.catalogue for r in RECORDS if r.detection}  # the set of images at once
# a declared key -> the catalogue's parameter, where they differ
PARAMETERS = {p.key: p.parameter for r in RECORDS for p in r.params if p.parameter} | {"classes": "labels"}
# every edge-case parameter of a catalogue entry (the declared key, "error" or a number) -> what it means
EDGE_CASES = {e.key: e.means for r in RECORDS for e in r.edges if e.default == "error"}
# the metrics computed with NaN at their edge case (declared edge key -> the catalogue's parameter, None: the
# catalogue's NaN), the declared value put in its place afterwards
DECLARED_EDGES: dict[str, dict[str, str | None]] = {
    r.name: {e.key: e.parameter for e in r.edges} for r in RECORDS if r.substituted
}
# the declared metrics whose catalogue entry takes the bootstrap's (resamples, n) ``weights``; the others are
# evaluated on each resample's drawn cases
RESAMPLE_WEIGHTS = tuple(r.name for r in RECORDS if r.resampling == "weights")


@cache
def sample_weight_metrics() -> tuple[str, ...]:
    """The declared metrics whose catalogue entry takes (n,) case weights as scikit-learn's ``sample_weight``:
    a declared ``sample_weights`` column goes there; the other ``weighted_metrics()`` take it as one row of
    ``weights`` (read from the catalogue's signatures when first asked: the catalogue imports every metric
    module, which a run of other metrics does not need)."""
    from evaluation.metrics import catalogue

    return tuple(r.name for r in RECORDS if r.catalogue in catalogue.CATALOGUE
                 and "sample_weight" in catalogue.get(r.catalogue).parameters)  # fmt: skip


@cache
def weighted_metrics() -> tuple[str, ...]:
    """The declared metrics a declaration may weigh (``sample_weights``)."""
    return tuple(dict.fromkeys((*RESAMPLE_WEIGHTS, *sample_weight_metrics())))


KAPPA_WEIGHTS = dict(next(p for p in RECORD["cohen_kappa"].params if p.key == "weights").values)  # -> sklearn's


def value_metric(
    metric: str,
    truth: np.ndarray,
    predicted: np.ndarray,
    params: Mapping[str, Any],
    weights: np.ndarray | None = None,
    event: np.ndarray | None = None,
    sample: np.ndarray | None = None,
) -> float | np.ndarray:
    """The catalogue's ``VALUE_METRICS[metric]`` of the scored cases with the declared ``params``; with
    ``weights`` (resamples x cases draw counts) one value per resample, NaN for a resample that hits an
    edge case. A declared edge value ``"error"`` gives NaN (the engine refuses it with a message).
    ``event``: c_index's event indicators (the reference ``truth`` is then the time); ``sample``: (n,)
    case weights of the one value (``sample_weights``)."""
    from evaluation.metrics import catalogue  # (on first use: it imports every metric module)

    if sample is not None:
        if metric in sample_weight_metrics():
            params = {**params, "sample_weight": sample}
        else:
            found = value_metric(metric, truth, predicted, params, sample[None, :], event)
            return _declared_edge(metric, params, float(np.asarray(found).reshape(-1)[0]))
    if metric in DECLARED_EDGES:
        return _substituted(metric, truth, predicted, params, weights, event)
    entry = catalogue.get(VALUE_METRICS[metric])
    keywords: dict[str, Any] = {PARAMETERS.get(key, key): value for key, value in params.items()}
    for edge in entry.edge_cases:
        if weights is not None or keywords.get(edge) == "error":
            keywords[edge] = float("nan")
    if weights is not None:
        keywords["weights"] = weights
    return catalogue.compute(entry.name, truth, predicted, **keywords)


def _declared_edge(metric: str, params: Mapping[str, Any], value: float) -> float:
    """``value``, or where it is NaN (an edge case) the metric's declared edge value when that is a number."""
    declared = next((params[edge.key] for edge in RECORD[metric].edges if edge.key in params), "error")
    return float(declared) if math.isnan(value) and not isinstance(declared, str) else value


def _substituted(
    metric: str,
    truth: np.ndarray,
    predicted: np.ndarray,
    params: Mapping[str, Any],
    weights: np.ndarray | None,
    event: np.ndarray | None,
) -> float | np.ndarray:
    """A ``DECLARED_EDGES`` metric: the catalogue's value with NaN for its edge case, then the declared
    edge value there ("error" stays NaN); with ``weights`` one value per resample (NaN at an edge case),
    through the catalogue's ``weights`` form where it has one, else on each resample's drawn cases."""
    from evaluation.metrics import catalogue  # (on first use: it imports every metric module)

    entry = catalogue.get(VALUE_METRICS[metric])
    edges = DECLARED_EDGES[metric]
    keywords: dict[str, Any] = {}
    for key, value in params.items():
        if key in edges:
            if edges[key] is not None:
                keywords[edges[key]] = float("nan")
        elif key != "sign":
            keywords[PARAMETERS.get(key, key)] = KAPPA_WEIGHTS[value] if metric == "cohen_kappa" and key == "weights" \
                else value  # fmt: skip
    inputs: tuple[np.ndarray, ...] = (truth, predicted)
    if metric == "c_index":  # (time, event, risk): a predicted time is a risk with its sign reversed
        inputs = (truth, np.asarray(event, dtype=bool), predicted if params["sign"] == "risk" else -predicted)
    if weights is None:
        value = float(catalogue.compute(entry.name, *inputs, **keywords))
        declared = next(params[key] for key in edges)
        return float(declared) if math.isnan(value) and not isinstance(declared, str) else value
    if metric in RESAMPLE_WEIGHTS:
        return catalogue.compute(entry.name, *inputs, **keywords, weights=weights)
    drawn = drawn_cases(weights)
    return np.array([catalogue.compute(entry.name, *(x[rows] for x in inputs), **keywords) for rows in drawn], float)


# ------------------------------------------------------------------------- probabilities outputs

# a per-class metric of a probabilities output -> (catalogue entry, its edge parameter or None, the declared
# edge key): one-vs-rest, class k's truth ``y == k`` against column k (sensitivity / specificity: against
# the argmax decision, column k's one-hot)
PER_CLASS = {
    r.name: (r.catalogue, r.edges[0].parameter, r.edges[0].key) if r.edges else (r.catalogue, None, None)
    for r in RECORDS
    if r.per_class
}
ARGMAX_METRICS = tuple(r.name for r in RECORDS if r.argmax)  # scored on each case's argmax class


def argmax_classes(probabilities: np.ndarray, classes: tuple[str, ...]) -> np.ndarray:
    """Each row's class of highest probability; a tie goes to the first declared class (``numpy.argmax``,
    as ``classification.top_label_calibration_error``)."""
    return np.asarray(classes)[np.asarray(probabilities).argmax(axis=1)]


def per_class_metric(
    metric: str,
    truth: np.ndarray,
    probabilities: np.ndarray,
    classes: tuple[str, ...],
    params: Mapping[str, Any],
    weights: np.ndarray | None = None,
    sample: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray | float]:
    """A ``PER_CLASS`` metric of a probabilities output: (per-class values, macro mean) through
    ``catalogue.per_class``. A class at its edge case (e.g. absent from the reference) gets the
    declared value; "exclude" leaves it NaN and out of the macro mean, "error" leaves it NaN (the
    engine refuses it). With ``weights`` ((resamples, n) draw counts): (classes, resamples) values and
    one macro per resample, a class at its edge case NaN there (left out of the percentile interval,
    and of the macro under "exclude"; any other macro with a NaN class is NaN). ``sample``: (n,) case
    weights of the one value (``sample_weights``)."""
    from evaluation.metrics import catalogue  # (on first use: it imports every metric module)

    name, parameter, declared_key = PER_CLASS[metric]
    keywords: dict[str, Any] = {parameter: float("nan")} if parameter else {}
    if metric == "ece":
        keywords["n_bins"] = params["bins"]
    if metric == "auroc_above_sensitivity":
        keywords["sensitivity"] = params["sensitivity"]
    scores = probabilities
    if metric in ("sensitivity", "specificity"):  # the decision "argmax is class k" as a 0/1 score, threshold 0.5
        scores = (argmax_classes(probabilities, classes)[:, None] == np.asarray(classes)[None, :]).astype(float)
        keywords["threshold"] = 0.5
    declared = params[declared_key] if declared_key else "error"
    if sample is not None and metric in sample_weight_metrics():
        keywords["sample_weight"] = sample
    if weights is None:
        if sample is not None and metric not in sample_weight_metrics():  # one row of the catalogue's weights form
            rows = np.asarray(catalogue.per_class(name, truth, scores, classes, **keywords, weights=sample[None, :]))
            values = rows.reshape(len(classes), -1)[:, 0]
        else:
            values = np.asarray(catalogue.per_class(name, truth, scores, classes, **keywords), dtype=float)
        if not isinstance(declared, str):
            values = np.where(np.isnan(values), float(declared), values)
        return values, _macro(values, declared == "exclude")
    if metric in RESAMPLE_WEIGHTS:
        values = np.asarray(catalogue.per_class(name, truth, scores, classes, **keywords, weights=weights), float)
    else:
        drawn = drawn_cases(weights)
        values = np.array([catalogue.per_class(name, truth[r], scores[r], classes, **keywords) for r in drawn]).T
    return values, _macro(values, declared == "exclude")


def _macro(values: np.ndarray, exclude: bool) -> np.ndarray | float:
    """The mean over classes (axis 0); with ``exclude`` over the non-NaN ones (NaN when none is)."""
    if not exclude:
        return values.mean(axis=0) if values.ndim > 1 else float(values.mean())
    counted = ~np.isnan(values)
    if values.ndim == 1:  # the mean of the defined values alone (as pandas' skipna, the same floats)
        return float(values[counted].mean()) if counted.any() else math.nan
    total, count = np.where(counted, values, 0.0).sum(axis=0), counted.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        macro = np.where(count > 0, total / np.maximum(count, 1), np.nan)
    return macro if values.ndim > 1 else float(macro)


def class_positions(truth: Sequence[str] | np.ndarray, classes: tuple[str, ...]) -> np.ndarray:
    """Each reference class name's position in ``classes`` (every one of them), one comparison per class."""
    names = np.asarray(truth)
    numbered = np.full(names.shape, -1, np.intp)
    for position, name in enumerate(classes):
        numbered[names == name] = position
    if (numbered < 0).any():
        raise KeyError(names[numbered < 0][0])
    return numbered


def probability_metric(
    metric: str,
    truth: np.ndarray,
    probabilities: np.ndarray,
    classes: tuple[str, ...],
    params: Mapping[str, Any],
    weights: np.ndarray | None = None,
    sample: np.ndarray | None = None,
) -> float | np.ndarray:
    """A one-value metric of a probabilities output: the multi-class Brier score
    (``multiclass_brier_score``), the top-label calibration error, or accuracy, balanced accuracy and
    Cohen's kappa of the argmax classes (``value_metric``); with ``weights`` one value per resample;
    ``sample``: (n,) case weights of the one value (``sample_weights``: one row of ``weights``)."""
    from evaluation.metrics import catalogue, classification  # (on first use: the catalogue imports every metric)

    if metric == "cohen_kappa":  # kappa's weights: the declared order
        predicted = argmax_classes(probabilities, classes)
        return value_metric(metric, truth, predicted, {**params, "classes": classes}, weights, sample=sample)
    if metric in ARGMAX_METRICS:  # the classes as their columns' positions (a tie "wrong": -1, no class), so that
        numbered = class_positions(truth, classes)  # scikit-learn sums per class in the declared order
        found = np.asarray(probabilities).argmax(axis=1)
        if params.get("ties") == "wrong":
            found = classification.argmax_labels(np.asarray(probabilities))
        kept = {key: value for key, value in params.items() if key != "ties"}
        return value_metric(metric, numbered, found, kept, weights, sample=sample)
    if sample is not None:
        return float(np.asarray(probability_metric(metric, truth, probabilities, classes, params, sample[None, :]))[0])
    if RECORD[metric].probability_catalogue:  # brier: the multi-class Brier score
        name = RECORD[metric].probability_catalogue
        return catalogue.compute(name, truth, probabilities, classes=classes, weights=weights)
    if weights is None:
        return float(catalogue.compute(metric, truth, probabilities, classes=classes, n_bins=params["bins"]))
    drawn = drawn_cases(weights)
    top_label = partial(catalogue.compute, metric, classes=classes, n_bins=params["bins"])
    return np.array([top_label(truth[r], probabilities[r]) for r in drawn])


# ------------------------------------------------------------------------------------ detection


def detection_metric(
    metric: str, images: list[ImageDetections], params: Mapping[str, Any], weights: np.ndarray | None = None
) -> float | np.ndarray:
    """The catalogue's ``DETECTION_METRICS[metric]`` over the scored images with the declared matching
    (``match`` iou | distance of box centres, or of points for ``objects = "points"``; ``threshold``,
    ``matching`` greedy | hungarian); the
    declared ``no_reference`` where no image has a reference box ("error": NaN). With ``weights``
    one value per resample, each the metric of the resample's drawn images (NaN at the edge case)."""
    from evaluation.metrics import catalogue  # (on first use: it imports every metric module)

    keywords: dict[str, Any] = {
        "criterion": KINDS[params["objects"]].criteria[params["match"]],  # as the output's kind matches
        "threshold": params["threshold"],
        "method": params["matching"],
        "no_reference": float("nan"),
    }
    keywords.update({key: params[key] for key in ("precision", "fp_rates", "fp_images") if key in params})
    name = DETECTION_METRICS[metric]
    if weights is not None:
        drawn = drawn_cases(weights)
        return np.array([_detection_resample(name, [images[i] for i in rows], keywords) for rows in drawn], float)
    value = float(catalogue.compute(name, images, **keywords))
    declared = params["no_reference"]
    return float(declared) if math.isnan(value) and not isinstance(declared, str) else value


def _detection_resample(name: str, images: list[ImageDetections], keywords: Mapping[str, Any]) -> float:
    """One resample's value; NaN when it draws no image without boxes but FPs count on those only."""
    from evaluation.metrics import catalogue  # (on first use: it imports every metric module)

    if keywords.get("fp_images") == "negative" and all(len(image.reference) for image in images):
        return float("nan")
    return float(catalogue.compute(name, images, **keywords))


# --------------------------------------------------------------------- detection at a decision

DECISION_VALUES = ("detection_precision", "detection_recall", "detection_f1")  # the catalogue's triple, in order


def decision_counts(images: list[ImageDetections], params: Mapping[str, Any]) -> np.ndarray:
    """Each image's (TP, FP, FN) of the predictions the declared decision keeps (``score_threshold``,
    ``classes``, ``keep_unnamed``), matched as declared (``detection.decision_counts``)."""
    from evaluation.metrics.detection import decision_counts as decision_counts_of

    found = decision_counts_of(
        images, KINDS[params["objects"]].criteria[params["match"]], params["threshold"], params["matching"],
        params.get("score_threshold"), params.get("classes"), params["keep_unnamed"],
    )  # fmt: skip
    return np.stack(found, axis=1).reshape(len(images), 3)


def decision_value(
    metric: str, counts: np.ndarray, params: Mapping[str, Any], weights: np.ndarray | None = None
) -> float | np.ndarray:
    """Precision, recall or F1 of the counts summed over the images (the catalogue's
    ``detection_decision`` with the declared ``epsilon`` and ``no_objects``); with ``weights`` one
    value per resample, of its drawn images' counts."""
    from evaluation.metrics import catalogue  # (on first use: it imports every metric module)

    index = DECISION_VALUES.index(metric)

    def value(rows: np.ndarray) -> float:
        triple = catalogue.compute(DECISION_METRICS[metric], *rows.T, epsilon=params["epsilon"],
                                   empty=params["no_objects"])  # fmt: skip
        return float(triple[index])

    if weights is None:
        return value(counts)
    return np.array([value(counts * row[:, None]) for row in np.asarray(weights, dtype=float)])


# ---------------------------------------------------------- hit radius detection (LUNA16's CPM)


def _scan_entries(scans: list[ScanFindings], params: Mapping[str, Any]) -> list[tuple[np.ndarray, np.ndarray]]:
    from evaluation.metrics import hit_radius  # (where points are scored: not at the engine's start)

    return [hit_radius.scan_entries(scan, params["default_diameter"], params["distance"], params.get("max_marks"))
            for scan in scans]  # fmt: skip


def hit_radius_metric(
    scans: list[ScanFindings], params: Mapping[str, Any], weights: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray | None]:
    """The sensitivity at each declared rate over the scans (the catalogue's ``cpm`` is their mean) and,
    with ``weights``, each resample's of its drawn scans (resamples x rates; None without)."""
    from evaluation.metrics import hit_radius

    entries = _scan_entries(scans, params)
    rates, reading = params["fp_rates"], params["reading"]
    found = hit_radius.resampled_sensitivities(entries, [np.arange(len(scans))], rates, reading)[0]
    if weights is None:
        return found, None
    return found, hit_radius.resampled_sensitivities(entries, drawn_cases(weights), rates, reading)


def legacy_bootstrap(
    scans: list[ScanFindings], params: Mapping[str, Any], resamples: int, seed: int, level: float
) -> list[tuple[float, float]]:
    """The LUNA16 script's bounds (``hit_radius.official_bootstrap``, after ``np.random.seed(seed)``) of
    the CPM (the script's rule on each resample's mean sensitivity; the script reports none) and of
    each rate."""
    from evaluation.metrics import hit_radius

    found = hit_radius.official_bootstrap(_scan_entries(scans, params), resamples, seed, params["fp_rates"], level)
    _, low, high = hit_radius.script_bounds(found.values.astype(float).mean(axis=1, keepdims=True), level)
    return [(float(low[0]), float(high[0])), *zip(found.low.tolist(), found.high.tolist(), strict=True)]
