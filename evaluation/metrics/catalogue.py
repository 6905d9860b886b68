"""The metric catalogue: every metric a declared challenge can name, looked up by name.

How to call a metric by name::

    from evaluation.metrics import catalogue

    metric = catalogue.get("nsd")        # a Metric; KeyError names the known metrics
    metric.inputs                        # ('reference', 'prediction', 'spacing'): positional arrays
    metric.required                      # ('tolerance',): keywords without a default
    metric.parameters                    # {'both_empty': 1.0}: keywords with their defaults
    metric.edge_cases                    # ('both_empty',): the parameters that state edge-case values
    value = catalogue.compute("nsd", reference, prediction, (3.0, 1.0, 1.0), tolerance=1.0)

``compute(name, *inputs, **parameters)`` refuses a parameter the metric does not have (``ValueError``
naming it), so a declaration's typo is caught; every metric validates its inputs itself (shape,
length, finiteness) and raises ``ValueError`` with a one-line message.

Kinds: ``per-case`` metrics take one case's arrays (masks of one image) and return its value; the
challenge aggregates them (mean, ...). ``aggregate`` metrics take the arrays of the whole set of
cases at once (one score and one reference value per case, all images' detections, per-case counts
or sums) and return the set's value. Per-class and macro values of the binary classification metrics
(``inputs == ('truth', 'scores')`` or ``('truth', 'probabilities')``): :func:`per_class`.

Bootstrap confidence intervals: the metrics a declared challenge bootstraps (``aggregated_dice``,
``auroc``, ``average_precision``, ``accuracy``, ``balanced_accuracy``, ``brier_score``,
``expected_calibration_error``, ``multiclass_brier_score``, ``mae``, ``rmse``) take ``weights``, the
(resamples, n) draw counts of ``bootstrap.resample_weights``, and return one value per resample: the
metric of each resample's expanded set of cases, all at once.

Every edge case (empty masks, a single class, no reference object, constant values...) returns the
value of a parameter listed in ``edge_cases`` (or a constant stated in the function's docstring),
never NaN -- except ``c_index``, which :mod:`evaluation.metrics.survival` defines (NaN when no
pair is comparable). One default is not finite: ``volume_difference(relative=True)`` gives
``empty_reference=inf`` for an empty reference and a non-empty prediction; a declaration that ranks
it should state a finite value (metrics.json refuses inf on ranked keys).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from evaluation.metrics import (
    classification,
    detection,
    detection_maps,
    hit_radius,
    lesion_detection,
    lesion_wise,
    lesions,
    overlap,
    regression,
    surface,
    survival,
    volumes,
)

KINDS = ("per-case", "aggregate")


@dataclass(frozen=True)
class Metric:
    """A catalogue entry.

    ``inputs``: the positional arguments, in order (arrays, or for detection a list of
    ``detection.ImageDetections``); ``required``: keyword parameters without a default;
    ``parameters``: every other keyword parameter with its default (from the function's signature);
    ``edge_cases``: those of the parameters that give an edge case's value;
    ``returns``: what the value is; ``reference``: where the definition comes from (see the
    function's docstring for the full citation); ``deviation``: what differs from that reference's
    code ("": nothing).
    """

    name: str
    function: Callable[..., Any]
    kind: str
    inputs: tuple[str, ...]
    edge_cases: tuple[str, ...]
    returns: str
    reference: str
    deviation: str = ""

    @property
    def required(self) -> tuple[str, ...]:
        """Keyword parameters without a default (a declaration must give them)."""
        signature = inspect.signature(self.function)
        return tuple(
            name
            for name, p in signature.parameters.items()
            if name not in self.inputs
            and p.default is inspect.Parameter.empty
            and p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
        )

    @property
    def parameters(self) -> dict[str, Any]:
        signature = inspect.signature(self.function)
        return {
            name: p.default
            for name, p in signature.parameters.items()
            if name not in self.inputs and p.default is not inspect.Parameter.empty
        }


def _entry(
    name: str,
    function: Callable[..., Any],
    kind: str,
    inputs: Sequence[str],
    edge_cases: Sequence[str] = (),
    returns: str = "float",
    reference: str = "",
    deviation: str = "",
) -> Metric:
    return Metric(name, function, kind, tuple(inputs), tuple(edge_cases), returns, reference, deviation)


_MASKS = ("reference", "prediction")
_AUTOPET = ("autoPET (lab-midas/autoPET val_script.py, autoPET I; ClinicalDataScience/autoPETIII and lab-midas/"
            "autoPETCTIV evaluation_metrics/evaluation_metrics.py): 18-connected lesions sharing no voxel with the "
            "other mask, in ml")  # fmt: skip
_FLOAT32 = ("the official voxel volume is float32 (read from the NIfTI header): precision='nifti' reproduces it (I, "
            "IV), 'nifti-float32' also autoPET III's float32 volume under NumPy >= 2; the default 'float64' is up to "
            "~1e-7 relative apart; binary masks only")  # fmt: skip
_BRATS = "BraTS 2023 (rachitsaluja/BraTS-2023-Metrics metrics.py"
_ISLES = "ISLES 2022 (ezequieldlrosa/isles22_docker_evaluation eval_metrics_isles.py"
_ISLES_LESIONS = "connectivity 6 and 18 too (the official code: 26 only); 2D masks are one slice"
_SURFACE = (*_MASKS, "spacing")

_ENTRIES = (
    # segmentation, one case
    _entry("dice", overlap.dice, "per-case", _MASKS, ("empty",), reference="Dice 1945"),
    _entry("dice_per_label", overlap.dice_per_label, "per-case", _MASKS, ("empty",),
           "array (len(labels),)", "Dice 1945"),
    _entry("iou", overlap.iou, "per-case", _MASKS, ("empty",), reference="Jaccard 1912"),
    _entry("iou_per_label", overlap.iou_per_label, "per-case", _MASKS, ("empty",),
           "array (len(labels),)", "Jaccard 1912"),
    _entry("volume_difference", overlap.volume_difference, "per-case", _MASKS, ("empty_reference",),
           reference="MetricsReloaded pairwise_measures.py absolute_volume_difference_ratio"),
    _entry("hausdorff", surface.hausdorff_distance, "per-case", _SURFACE, ("both_empty", "one_empty"),
           "float, mm", "DeepMind surface-distance compute_robust_hausdorff"),
    _entry("hd95", partial(surface.hausdorff_distance, percent=95.0), "per-case", _SURFACE,
           ("both_empty", "one_empty"), "float, mm", "DeepMind surface-distance compute_robust_hausdorff(95)"),
    _entry("masd", surface.mean_average_surface_distance, "per-case", _SURFACE, ("both_empty", "one_empty"),
           "float, mm", "DeepMind surface-distance compute_average_surface_distance, mean of both"),
    _entry("nsd", surface.normalised_surface_dice, "per-case", _SURFACE,
           ("both_empty",), reference="Nikolov et al. 2021; DeepMind compute_surface_dice_at_tolerance"),
    _entry("lesion_f1", lesions.lesion_f1, "per-case", _MASKS, ("empty",), reference="HECKTOR 2025 task 1"),
    _entry("lesion_counts", lesions.match_lesions, "per-case", _MASKS, (),
           "LesionCounts(tp, fp, fn): sum them over cases for lesion_f1_from_counts", "HECKTOR 2025 task 1"),
    _entry("panoptic_quality", lesions.panoptic_quality, "per-case", _MASKS, ("empty",),
           "PanopticQuality(pq, sq, rq, tp, fp, fn)", "Kirillov et al., CVPR 2019"),
    # segmentation, the set of cases
    _entry("aggregated_dice", overlap.aggregated_dice, "aggregate", ("intersections", "totals"), ("empty",),
           reference="voreille/hecktor evaluate_segmentation2022.ipynb; HECKTOR2025 DiceAggScore"),
    _entry("lesion_f1_from_counts", lesions.f1_score, "aggregate", ("tp", "fp", "fn"), ("empty",),
           reference="HECKTOR 2025 task 1 (counts summed over cases)"),
    # classification, the set of cases
    _entry("auroc", classification.auroc, "aggregate", ("truth", "scores"), ("single_class",),
           reference="sklearn roc_auc_score"),
    _entry("average_precision", classification.binary_average_precision, "aggregate", ("truth", "scores"),
           ("no_positive",), reference="sklearn average_precision_score"),
    _entry("auroc_above_sensitivity", classification.auroc_above_sensitivity, "aggregate", ("truth", "scores"),
           ("single_class",), reference="isic-challenge-scoring metrics.auc_above_sensitivity"),
    _entry("accuracy", classification.accuracy, "aggregate", ("truth_labels", "predicted_labels"),
           reference="sklearn accuracy_score"),
    _entry("balanced_accuracy", classification.balanced_accuracy, "aggregate",
           ("truth_labels", "predicted_labels"), reference="sklearn balanced_accuracy_score"),
    _entry("sensitivity", classification.sensitivity, "aggregate", ("truth", "scores"), ("empty",)),
    _entry("specificity", classification.specificity, "aggregate", ("truth", "scores"), ("empty",)),
    _entry("sensitivity_at_specificity", classification.sensitivity_at_specificity, "aggregate",
           ("truth", "scores"), ("empty",), reference="MetricsReloaded prob_pairwise_measures.py"),
    _entry("specificity_at_sensitivity", classification.specificity_at_sensitivity, "aggregate",
           ("truth", "scores"), ("empty",), reference="MetricsReloaded prob_pairwise_measures.py"),
    _entry("cohen_kappa", classification.cohen_kappa, "aggregate", ("truth_labels", "predicted_labels"),
           ("perfect_chance",), reference="sklearn cohen_kappa_score"),
    _entry("brier_score", classification.brier_score, "aggregate", ("truth", "probabilities"),
           reference="sklearn brier_score_loss"),
    _entry("expected_calibration_error", classification.expected_calibration_error, "aggregate",
           ("truth", "probabilities"), reference="Naeini et al. 2015; Guo et al. 2017"),
    _entry("multiclass_brier_score", classification.multiclass_brier_score, "aggregate",
           ("truth_labels", "probabilities"), reference="Brier 1950; sklearn brier_score_loss (multi-class)"),
    _entry("top_label_calibration_error", classification.top_label_calibration_error, "aggregate",
           ("truth_labels", "probabilities"), reference="Guo et al. 2017, eq. 3"),
    # detection, the set of images
    _entry("detection_average_precision", detection.detection_average_precision, "aggregate", ("images",),
           ("no_reference",), reference="PASCAL VOC 2010-2012 all-point AP"),
    _entry("recall_at_precision", detection.recall_at_precision, "aggregate", ("images",), ("no_reference",)),
    _entry("froc", detection.froc_score, "aggregate", ("images",), ("no_reference",),
           "float: mean recall over fp_rates", "Bandos et al. 2009; LUNA16"),
    _entry("detection_decision", partial(detection.precision_recall_f1, empty=0.0), "aggregate", ("tp", "fp", "fn"),
           ("empty",), "(precision, recall, F1) of the counts summed over images (decision_counts per image)",
           "MIDOG 2021 evaluation.py (DeepMicroscopy/MIDOG_evaluation_docker)"),
    # detection maps (PI-CAI), the set of cases' lesion entries (``detection_maps.case_lesions`` per case)
    _entry("lesion_average_precision", detection_maps.lesion_average_precision, "aggregate", ("cases",),
           ("no_lesion",), reference="picai_eval 1.4.13 metrics.Metrics.AP"),
    _entry("lesion_sensitivity_at_fp", partial(detection_maps.lesion_sensitivity_at_fp, no_lesion=0.0), "aggregate",
           ("cases",), ("no_lesion",), reference="picai_eval 1.4.13 metrics.Metrics.lesion_TPR_at_FPR"),
    _entry("case_auroc", partial(detection_maps.case_auroc, single_class=0.5), "aggregate", ("cases",),
           ("single_class",), reference="picai_eval 1.4.13 metrics.Metrics.auroc (case score: the map's maximum)"),
    _entry("map_lesion_count", detection_maps.lesion_count, "aggregate", ("cases",), (), "int: the lesions summed over "
           "the cases", "picai_eval 1.4.13 metrics.Metrics.num_lesions; analysis_utils.parse_detection_map"),
    # regression and survival, the set of cases
    _entry("mae", regression.mean_absolute_error, "aggregate", ("truth", "prediction")),
    _entry("rmse", regression.root_mean_squared_error, "aggregate", ("truth", "prediction")),
    _entry("pearson", regression.pearson, "aggregate", ("truth", "prediction"), ("constant",),
           reference="scipy.stats.pearsonr"),
    _entry("spearman", regression.spearman, "aggregate", ("truth", "prediction"), ("constant",),
           reference="scipy.stats.spearmanr"),
    _entry("c_index", survival.concordance_index, "aggregate", ("time", "event", "risk"), ("policy",),
           "float (NaN when no pair is comparable)", "Harrell et al. 1982; lifelines concordance_index"),
    # segmentation of public challenges, one case
    _entry("false_positive_volume", volumes.false_positive_volume, "per-case", _SURFACE, (),
           "float, ml (unit)", f"{_AUTOPET}: the predicted ones (false_pos_pix)", _FLOAT32),
    _entry("false_negative_volume", partial(volumes.false_negative_volume, empty_reference=0.0), "per-case",
           _SURFACE, ("empty_reference",), "float, ml (unit)", f"{_AUTOPET}: the reference ones (false_neg_pix; "
           "autoPET I: 0.0 for an empty reference; III and IV NaN)", _FLOAT32),
    _entry("mask_volume", volumes.mask_volume, "per-case", ("mask", "spacing"), (), "float, ml (unit)",
           f"{_BRATS}): the legacy GT_Complete_Volume"),
    _entry("voxel_sensitivity", overlap.voxel_sensitivity, "per-case", _MASKS, ("both_empty", "one_empty"),
           reference=f"{_BRATS} get_sensitivity_and_specificity): the legacy sensitivity per region"),
    _entry("voxel_specificity", overlap.voxel_specificity, "per-case", _MASKS, ("empty",),
           reference=f"{_BRATS} get_sensitivity_and_specificity): the legacy specificity per region"),
    _entry("lesion_wise", lesion_wise.lesion_wise_scores, "per-case", _SURFACE, ("empty_dice", "empty_hd95"),
           "LesionWiseScores(dice, hd95, tp, fp, fn, ...)", f"{_BRATS} get_LesionWiseScores): lesion-wise Dice, "
           "HD95 and lesion TP / FP / FN, lesions merged and matched many-to-one by a dilation of the reference "
           "(GLI, SSA, PED 3; MEN, MET 1), lesions of at most minimum_volume mm³ (MET 2) left out",
           "dilation=0 matches on overlap (the official code cannot: SciPy dilates until stable at 0)"),
    _entry("overlap_lesion_f1", lesion_detection.overlap_lesion_f1, "per-case", _MASKS, ("empty",),
           reference=f"{_ISLES} compute_lesion_f1_score): lesions found by any overlap; golden "
           "test/metrics/golden/isles2022.json", deviation=_ISLES_LESIONS),
    _entry("lesion_count_difference", lesion_detection.lesion_count_difference, "per-case", _MASKS, (), "int",
           f"{_ISLES} compute_absolute_lesion_difference)", _ISLES_LESIONS),
)  # fmt: skip
_ENTRIES += (  # point detection scored as LUNA16 scores it, the set of scans
    _entry("cpm", hit_radius.cpm, "aggregate", ("scans",), (), "float: mean sensitivity over rates (0 without a hit)",
           "LUNA16 noduleCADEvaluationLUNA16.py; DIAGNijmegen/unicorn_eval sensitivity.py getCPM"),
)  # fmt: skip

CATALOGUE: dict[str, Metric] = {entry.name: entry for entry in _ENTRIES}


def names() -> tuple[str, ...]:
    """Every metric name, in catalogue order."""
    return tuple(CATALOGUE)


def get(name: str) -> Metric:
    """The metric called ``name``; ``KeyError`` listing the known names otherwise."""
    try:
        return CATALOGUE[name]
    except KeyError:
        raise KeyError(f"unknown metric {name!r}; known: {', '.join(CATALOGUE)}") from None


def compute(name: str, *inputs: Any, **parameters: Any) -> Any:
    """``get(name).function(*inputs, **parameters)`` after checking the input count and the
    parameter names (``ValueError`` naming the first bad one)."""
    metric = get(name)
    if len(inputs) != len(metric.inputs):
        raise ValueError(f"metric {name!r} takes inputs {metric.inputs}, got {len(inputs)} inputs")
    _check_parameters(metric, parameters)
    return metric.function(*inputs, **parameters)


def _check_parameters(metric: Metric, parameters: dict[str, Any]) -> None:
    """``ValueError`` naming the first parameter ``metric`` does not have, or the first required one missing."""
    allowed = (*metric.required, *metric.parameters)
    for key in parameters:
        if key not in allowed:
            raise ValueError(f"metric {metric.name!r} has no parameter {key!r}; it has {allowed}")
    for key in metric.required:
        if key not in parameters:
            raise ValueError(f"metric {metric.name!r} needs the parameter {key!r}")


def per_class(name: str, truth_labels: np.ndarray, scores: np.ndarray, classes: Sequence, **parameters: Any):
    """A binary classification metric per class, one-vs-rest (``classification.one_vs_rest``):
    (len(classes),) array, column ``j`` of the (n, len(classes)) ``scores`` for ``classes[j]``; the
    macro value is its mean."""
    metric = get(name)
    if metric.inputs not in (("truth", "scores"), ("truth", "probabilities")):
        raise ValueError(f"metric {name!r} is not a binary classification metric")
    _check_parameters(metric, parameters)
    return classification.one_vs_rest(metric.function, truth_labels, scores, classes, **parameters)
