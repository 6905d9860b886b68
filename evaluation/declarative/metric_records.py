"""One record per declarable metric: everything a declaration may say about it, as data.

A ``MetricRecord`` names the catalogue entry (``evaluation.metrics.catalogue``) a declared metric
calls, the output kinds it scores, its aggregate forms, its parameters with their defaults and
constraints, its edge values, and how a bootstrap resamples it. The schema's checks
(``schema._metric`` loops over ``params`` and ``edges``), the adapters (``measures``), the site's
table of metrics and the editors' JSON Schema (``json_schema``) are all derived from these records.

The models: panoptica's metric records (``panoptica/metrics/metrics.py``: ``_Metric("DSC", "Dice",
False, ...)`` with edge cases as ``MetricZeroTPEdgeCaseHandling`` records) and scikit-learn's
constraints as data (``sklearn/utils/_param_validation.py``: ``Interval(Real, 0, 1, closed="right")``,
``StrOptions({...})``), here with the one-line ``file: key: problem`` messages of the schema.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evaluation.declarative.output_kinds import Boxes, Points
from evaluation.metrics.options import (
    CPM_FP_RATES,
    DEFAULT_DIAMETER,
    DISTANCES,
    LESION_COUNTS,
    PRECISIONS,
    READINGS,
    VOLUME_UNITS,
)
from evaluation.metrics.summary_statistics import STATISTICS

REQUIRED: Any = ...  # a parameter without a default: the declaration must give it
OMITTED = "omitted"  # a parameter without a default that is left out of the settings unless declared
MEAN_OVER = ("all", "present", "positives")
VOLUMES = ("voxels", "mm3")
MATCHINGS = ("greedy", "hungarian")
PER_CLASS_FORMS = ("per_class", "macro")  # one value per class (one-vs-rest); their mean
COUNT_FORMS = ("tp", "fp", "fn")  # lesion_f1's summed lesion counts: integers, never bootstrapped
NULL = "null"  # an edge value: the case has no value (null in metrics.json); means average the defined values
RESAMPLINGS = {  # how a bootstrap resamples a metric (README "[bootstrap]")
    "cases": "the per-case values of the resampled cases",
    "weights": "the catalogue's vectorised weights form",
    "drawn": "the metric of each resample's drawn cases",
    "images": "the metric of each resample's drawn images",
    "maps": "the metric of each resample's drawn cases' lesion entries",
    "decision": "the summed counts of each resample's drawn images",
}


@dataclass(frozen=True)
class Interval:
    """The numbers a parameter accepts, as scikit-learn's ``Interval``: ``low`` / ``high`` (None:
    unbounded), ``closed`` "both", "left", "right" or "neither"; ``text`` replaces the problem a
    value outside gives ("must be in [0, 1)"), ``why`` follows it in parentheses."""

    low: float | None
    high: float | None
    closed: str = "both"
    text: str = ""
    why: str = ""

    def holds(self, value: float) -> bool:
        above = self.low is None or (value >= self.low if self.closed in ("both", "left") else value > self.low)
        below = self.high is None or (value <= self.high if self.closed in ("both", "right") else value < self.high)
        return above and below

    @property
    def problem(self) -> str:
        if self.text:
            return self.text
        return f"must be in {self.shown} ({self.why})" if self.why else f"must be in {self.shown}"

    @property
    def json(self) -> dict[str, float]:
        """The interval as JSON Schema keywords."""
        bounds: dict[str, float] = {}
        if self.low is not None:
            bounds["minimum" if self.closed in ("both", "left") else "exclusiveMinimum"] = self.low
        if self.high is not None:
            bounds["maximum" if self.closed in ("both", "right") else "exclusiveMaximum"] = self.high
        return bounds

    @property
    def shown(self) -> str:
        """The interval as the README shows it."""
        left = "[" if self.closed in ("both", "left") else "("
        right = "]" if self.closed in ("both", "right") else ")"
        low = "-inf" if self.low is None else f"{self.low:g}"
        high = "inf" if self.high is None else f"{self.high:g}"
        return f"{left}{low}, {high}{right}"


@dataclass(frozen=True)
class Param:
    """One declared key of a metric.

    ``kind``: the TOML type (a tuple: any of them); ``default``: ``REQUIRED``, ``OMITTED`` or the
    value; ``choices``: the values allowed (``choices_by_kind``: other choices for an output kind, the
    first the default); ``words``: the strings a number-or-word key accepts ("a number or 'exclude'");
    ``interval``: the numbers allowed (each item's, for a list); ``when``: (key, value) -- the key is
    read only when the value read before it (or ``per_class``) is that; ``derived``: not declared but
    set from the output (``schema.DERIVED``); ``edge``: the edge case this value is given for;
    ``parameter``: the catalogue's parameter name where it differs; ``values``: declared value ->
    the catalogue's; ``doc``: the README's words for it; ``items``: a list's items (float or str)."""

    key: str
    kind: Any = float
    default: Any = REQUIRED
    choices: tuple[Any, ...] = ()
    words: tuple[str, ...] = ()
    interval: Interval | None = None
    when: tuple[str, Any] | None = None
    choices_by_kind: tuple[tuple[str, tuple[str, ...]], ...] = ()
    derived: bool = False
    edge: str = ""
    parameter: str = ""
    values: tuple[tuple[str, Any], ...] = ()
    doc: str = ""
    items: type = float  # a list's items: numbers, or (str) names

    def choices_for(self, kind: str) -> tuple[Any, ...]:
        return dict(self.choices_by_kind).get(kind, self.choices)

    def default_for(self, kind: str) -> Any:
        return dict(self.choices_by_kind)[kind][0] if kind in dict(self.choices_by_kind) else self.default


@dataclass(frozen=True)
class Edge:
    """An edge case of a value or detection metric that the catalogue defines (its ``parameter``,
    None: the catalogue's NaN): declared as a number, or "error" (the run fails naming ``means``)
    unless ``default`` is a number (a participant's answers can cause it: never an error); per
    class on probabilities also "exclude" (the class leaves the macro mean)."""

    key: str
    parameter: str | None
    means: str = ""
    default: float | str = "error"

    def param(self, per_class: bool) -> Param:
        """The declared key, checked as any parameter."""
        if not isinstance(self.default, str):
            return Param(self.key, float, self.default, edge=self.means)
        words = ("error", "exclude") if per_class else ("error",)
        return Param(self.key, (float, str), self.default, words=words, edge=self.means)


@dataclass(frozen=True)
class MetricRecord:
    """A declarable metric.

    ``catalogue``: its catalogue entry (on probabilities: ``probability_catalogue`` when another);
    ``kinds``: the output kinds it scores; ``forms``: a segmentation metric's aggregate forms (the
    first the default); ``params`` then ``edges``: its keys in the order settings echo them;
    ``substituted``: computed with NaN at its edge case, the declared value put there afterwards;
    ``per_class``: per class and macro on probabilities (one-vs-rest); ``argmax``: on probabilities,
    scored on each case's argmax class; ``three_d``: 3D masks only; ``label_image``: not on a
    "nonzero" mask; ``binary_reference``: a number output's reference must be 0 / 1;
    ``probability``: a number output must have range [0, 1]; ``resampling``: ``RESAMPLINGS``."""

    name: str
    catalogue: str
    kinds: tuple[str, ...]
    doc: str
    forms: tuple[str, ...] = ()
    params: tuple[Param, ...] = ()
    edges: tuple[Edge, ...] = ()
    substituted: bool = False
    per_class: bool = False
    argmax: bool = False
    three_d: bool = False
    label_image: bool = False
    binary_reference: bool = False
    probability: bool = False
    resampling: str = "drawn"
    probability_catalogue: str = ""

    @property
    def segmentation(self) -> bool:
        return self.kinds == ("segmentation",)

    @property
    def detection(self) -> bool:
        return self.resampling == "images"

    @property
    def decision(self) -> bool:
        return self.resampling == "decision"

    @property
    def heat_map(self) -> bool:
        return self.resampling == "maps"


def _both_empty(default: float) -> Param:
    return Param("both_empty", (float, str), default, words=("exclude",), edge="neither mask has the label")


_MEAN_OVER = Param("mean_over", str, "all", MEAN_OVER, doc="the cases the mean form averages")
_OVERLAP = (
    Param("absent_everywhere", float, 1.0, edge="no reference and no prediction has the label (dataset form)"),
    Param("volume", str, "voxels", VOLUMES),
)
_COMPUTE = Param("compute", bool, OMITTED, doc="false: not computed (null)")
_ONE_EMPTY = Param("one_empty", (float, str), "diagonal", words=("diagonal", NULL), edge="one mask lacks the label")
_MATCH_IOU = "a match needs IoU strictly above it"


def _distance(name: str, doc: str) -> MetricRecord:
    return MetricRecord(
        name, name, ("segmentation",), doc, ("mean",), (_both_empty(0.0), _MEAN_OVER, _ONE_EMPTY, _COMPUTE),
        three_d=True, label_image=True, resampling="cases",
    )  # fmt: skip


_BINARY = ("number", "probabilities")
_CLASSES = ("boolean", "choice", "probabilities")
_THRESHOLD = Param("threshold", when=("per_class", False), doc="the decision: positive when output >= threshold")
_TARGET = Param("target", interval=Interval(0, 1))
_TIES = Param("ties", str, OMITTED, ("first", "wrong"), doc="a tied maximum of a probabilities output: the first "
              "declared class, or no class (always wrong; isic-challenge-scoring's undecided predictions)")  # fmt: skip
_BINS = Param("bins", int, 10, interval=Interval(1, None, "left", "must be at least 1"), parameter="n_bins")
_CONSTANT = Edge("constant", "constant", "constant values", 0.0)
_DETECTION = (
    Param("objects", str, derived=True),
    Param("match", str, next(iter(Boxes.criteria)), tuple(Boxes.criteria),
          choices_by_kind=(("points", tuple(Points.criteria)),)),
    Param("threshold", float, 0.5, interval=Interval(0, 1, "left", why=_MATCH_IOU), when=("match", "iou")),
    Param("threshold", float, interval=Interval(0, None, "left", "must be a non-negative distance"),
          when=("match", "distance"), doc="in the objects' unit"),
    Param("matching", str, "greedy", MATCHINGS),
)  # fmt: skip
_NO_REFERENCE = Edge("no_reference", "no_reference", "no reference object")
_DECISION = (
    *_DETECTION[:4],
    Param("matching", str, "greedy", (*MATCHINGS, "reference"),
          doc="reference: each reference object in turn takes its nearest free prediction (evalutils)"),
    Param("score_threshold", float, OMITTED, interval=Interval(0, 1),
          doc="a prediction is kept when its score is above it (strict); not set: every prediction"),
    Param("classes", list, OMITTED, items=str, doc="the point names kept (points only)"),
    Param("keep_unnamed", bool, True, doc="with classes: a point without a name is kept"),
    Param("epsilon", float, 0.0, interval=Interval(0, None, "left", "must be a non-negative number"),
          doc="the formula's epsilon terms (MIDOG 2021: 1e-6)"),
    Param("case_counts", bool, False, doc="true: each image's TP, FP, FN as <name>_tp, <name>_fp, <name>_fn"),
)  # fmt: skip
_NO_OBJECTS = Edge("no_objects", "empty", "a ratio whose denominator is 0 (no prediction kept, no reference object)",
                   0.0)  # fmt: skip

RECORDS: tuple[MetricRecord, ...] = (
    # segmentation: per case, then over cases
    MetricRecord("dice", "dice", ("segmentation",), "Dice 2|R∩P| / (|R| + |P|)", ("mean", "dataset"),
                 (_both_empty(1.0), _MEAN_OVER, *_OVERLAP,
                  Param("empty_reference", (float, str), OMITTED, words=(NULL,),
                        edge="an empty reference, a non-empty prediction (0 unless declared)")),
                 resampling="cases"),
    MetricRecord("iou", "iou", ("segmentation",), "IoU |R∩P| / |R∪P| = D / (2 - D)", ("mean", "dataset"),
                 (_both_empty(1.0), _MEAN_OVER, *_OVERLAP), resampling="cases"),
    _distance("hd95", "95th percentile Hausdorff distance (mm)"),
    MetricRecord("nsd", "nsd", ("segmentation",), "normalised surface Dice at tolerance_mm", ("mean",),
                 (_both_empty(1.0), _MEAN_OVER, _COMPUTE,
                  Param("tolerance_mm", interval=Interval(0, None, "neither", "must be positive")),
                  Param("one_empty", (float, str), 0.0, words=(NULL,), edge="one mask lacks the label")),
                 three_d=True, label_image=True, resampling="cases"),
    MetricRecord("lesion_f1", "lesion_f1", ("segmentation",), "F1 of 26-connected lesions matched by IoU",
                 ("mean", "dataset", *COUNT_FORMS),
                 (Param("iou_threshold", float, 0.3, interval=Interval(0, 1, "left", why=_MATCH_IOU)),
                  Param("matching", str, "greedy", MATCHINGS), Param("connectivity", int, 26, (26,)),
                  Param("no_lesions", float, 1.0, edge="neither mask has a lesion")),
                 label_image=True, resampling="cases"),
    _distance("hausdorff", "Hausdorff distance (maximum, mm)"),
    _distance("masd", "mean average surface distance (mm)"),
    MetricRecord("volume_difference", "volume_difference", ("segmentation",), "volume difference", ("mean",),
                 (Param("relative", bool, False, doc="true: divided by V(R)"),
                  Param("absolute", bool, True, doc="|V(P) - V(R)|; false: signed, positive = over-segmentation"),
                  Param("volume", str, "voxels", (*VOLUMES, "ml")),
                  Param("empty_reference", (float, str), "exclude", words=("exclude",), when=("relative", True),
                        edge="an empty reference (relative)")),
                 label_image=True, resampling="cases"),
    MetricRecord("panoptic_quality", "panoptic_quality", ("segmentation",), "panoptic quality (or SQ, RQ)",
                 ("mean",),
                 (Param("iou_threshold", float, 0.5,
                        interval=Interval(0.5, 1, "left", why=f"{_MATCH_IOU}, and is then unique")),
                  Param("quality", str, "pq", ("pq", "sq", "rq")),
                  Param("no_instances", (float, str), 1.0, words=("exclude",), edge="neither mask has an instance")),
                 label_image=True, resampling="cases"),
    # case-level values: the set of cases
    MetricRecord("auroc", "auroc", _BINARY, "area under the ROC curve",
                 params=(Param("max_fpr", float, OMITTED, interval=Interval(0, 1, "right"), when=("per_class", False),
                               doc="the partial area over false-positive rates up to it, McClish-standardised "
                               "(scikit-learn roc_auc_score(max_fpr=...))"),),
                 edges=(Edge("single_class", "single_class", "a single class"),), per_class=True,
                 binary_reference=True, resampling="weights"),
    MetricRecord("average_precision", "average_precision", _BINARY, "average precision",
                 edges=(Edge("no_positive", "no_positive", "no positive case"),), per_class=True,
                 binary_reference=True, resampling="weights"),
    MetricRecord("brier", "brier_score", _BINARY, "Brier score", binary_reference=True, probability=True,
                 resampling="weights", probability_catalogue="multiclass_brier_score"),
    MetricRecord("ece", "expected_calibration_error", _BINARY, "expected calibration error", params=(_BINS,),
                 per_class=True, binary_reference=True, probability=True, resampling="weights"),
    MetricRecord("top_label_calibration_error", "top_label_calibration_error", ("probabilities",),
                 "ECE of the argmax class", params=(_BINS,)),
    MetricRecord("mae", "mae", ("number",), "mean absolute error", resampling="weights"),
    MetricRecord("rmse", "rmse", ("number",), "root mean squared error", resampling="weights"),
    MetricRecord("balanced_accuracy", "balanced_accuracy", _CLASSES, "balanced accuracy", params=(_TIES,),
                 argmax=True, resampling="weights"),
    MetricRecord("accuracy", "accuracy", _CLASSES, "accuracy", params=(_TIES,), argmax=True, resampling="weights"),
    MetricRecord("sensitivity", "sensitivity", _BINARY, "sensitivity (recall) at a threshold", params=(_THRESHOLD,),
                 edges=(Edge("no_positive", "empty", "no positive case"),), substituted=True, per_class=True,
                 binary_reference=True),
    MetricRecord("specificity", "specificity", _BINARY, "specificity at a threshold", params=(_THRESHOLD,),
                 edges=(Edge("no_negative", "empty", "no negative case"),), substituted=True, per_class=True,
                 binary_reference=True),
    MetricRecord("sensitivity_at_specificity", "sensitivity_at_specificity", ("number",),
                 "the highest sensitivity at specificity >= target", params=(_TARGET,),
                 edges=(Edge("single_class", "empty", "a single class"),), substituted=True, binary_reference=True),
    MetricRecord("specificity_at_sensitivity", "specificity_at_sensitivity", ("number",),
                 "the highest specificity at sensitivity >= target", params=(_TARGET,),
                 edges=(Edge("single_class", "empty", "a single class"),), substituted=True, binary_reference=True),
    MetricRecord("cohen_kappa", "cohen_kappa", _CLASSES, "Cohen's kappa",
                 params=(Param("weights", str, "none", ("none", "linear", "quadratic"),
                               values=(("none", None), ("linear", "linear"), ("quadratic", "quadratic"))),),
                 edges=(Edge("perfect_chance", "perfect_chance", "one and the same class everywhere", 1.0),),
                 substituted=True, argmax=True),
    MetricRecord("pearson", "pearson", ("number",), "Pearson correlation", edges=(_CONSTANT,), substituted=True),
    MetricRecord("spearman", "spearman", ("number",), "Spearman correlation", edges=(_CONSTANT,), substituted=True),
    MetricRecord("c_index", "c_index", ("number",), "Harrell's concordance index",
                 params=(Param("sign", str, "risk", ("risk", "time"), doc="the output: a risk or a predicted time"),
                         Param("policy", str, derived=True)),
                 edges=(Edge("no_comparable_pair", None,
                             "no comparable pair (no event before another case's time)"),),
                 substituted=True, resampling="weights"),
    # detection: the set of images
    MetricRecord("detection_average_precision", "detection_average_precision", ("boxes", "points"),
                 "all-point interpolated AP (PASCAL VOC)", params=_DETECTION, edges=(_NO_REFERENCE,),
                 resampling="images"),
    MetricRecord("recall_at_precision", "recall_at_precision", ("boxes", "points"),
                 "the highest recall at precision >= precision",
                 params=(*_DETECTION, Param("precision", interval=Interval(0, 1))), edges=(_NO_REFERENCE,),
                 resampling="images"),
    MetricRecord("froc", "froc", ("boxes", "points"), "mean recall at fp_rates false positives per image",
                 params=(*_DETECTION,
                         Param("fp_rates", list, [1, 2, 4, 8, 16, 32],
                               interval=Interval(0, None, "left", "must be a non-empty list of non-negative numbers "
                                                 "(false positives per image)")),
                         Param("fp_images", str, "all", ("all", "negative"))),
                 edges=(_NO_REFERENCE,), resampling="images"),
    # detection at a decision: counts per image, then their sums
    *(MetricRecord(name, "detection_decision", ("boxes", "points"), doc, params=_DECISION, edges=(_NO_OBJECTS,),
                   resampling="decision")
      for name, doc in (("detection_f1", "F1 (2TP + eps) / (2TP + FP + FN + eps) of the kept predictions"),
                        ("detection_precision", "precision TP / (TP + FP + eps) of the kept predictions"),
                        ("detection_recall", "recall TP / (TP + FN + eps) of the kept predictions"))),
    # detection maps: each case's lesion entries (matched in a worker), then the set of cases
    MetricRecord("lesion_ap", "lesion_average_precision", ("heat_map",), "lesion-level average precision (PI-CAI)",
                 edges=(Edge("no_lesion", "no_lesion", "no reference lesion", 0.0),), resampling="maps"),
    MetricRecord("lesion_sensitivity_at_fp", "lesion_sensitivity_at_fp", ("heat_map",),
                 "lesion sensitivity at fp_per_case false positives per case (PI-CAI)",
                 params=(Param("fp_per_case", interval=Interval(0, None, "left", "must be a non-negative number of "
                                                                 "false positives per case")),),
                 edges=(Edge("no_lesion", "no_lesion", "no reference lesion"),), resampling="maps"),
    MetricRecord("case_auroc", "case_auroc", ("heat_map",), "AUROC of the case scores (each map's maximum; PI-CAI)",
                 edges=(Edge("single_class", "single_class", "a single class"),), resampling="maps"),
)  # fmt: skip

# segmentation metrics of public challenges (README "Segmentation metrics of public challenges")
_CONNECTIVITY = Param("connectivity", int, 18, (6, 18, 26), doc="lesions: the masks' connected components")
_PRECISION = Param("precision", str, "float64", PRECISIONS, doc="'nifti': the voxel volume in float32, as autoPET")
_UNIT = Param("unit", str, "ml", VOLUME_UNITS)


MAX_DILATION = 1000  # iterations: more merges nothing more on any grid a challenge uses, and takes hours
_DILATION = Interval(0, MAX_DILATION, "both", f"must be a whole number of voxels from 0 to {MAX_DILATION} (BraTS: 1-3)")


def _lesion_wise(name: str, doc: str) -> MetricRecord:
    return MetricRecord(
        name, "lesion_wise", ("segmentation",), doc, ("mean", *COUNT_FORMS),
        (Param("dilation", int, 3, interval=_DILATION),
         Param("minimum_volume", float, 50.0, interval=Interval(0, None, "left", "must be non-negative"),
               doc="reference lesions of at most this volume are left out"),
         Param("volume_unit", str, "mm3", VOLUME_UNITS), Param("connectivity", int, 26, (6, 18, 26)),
         Param("penalty", float, 374.0, interval=Interval(0, None, "left", "must be a non-negative distance"),
               doc="HD95 of an unmatched lesion, mm")),
        three_d=True, label_image=True, resampling="cases",
    )  # fmt: skip


PUBLIC_SEGMENTATION: tuple[MetricRecord, ...] = (
    MetricRecord("false_positive_volume", "false_positive_volume", ("segmentation",),
                 "volume of the predicted lesions overlapping no reference voxel (autoPET)", ("mean",),
                 (_CONNECTIVITY, _UNIT, _PRECISION), label_image=True, resampling="cases"),
    MetricRecord("false_negative_volume", "false_negative_volume", ("segmentation",),
                 "volume of the reference lesions overlapping no predicted voxel (autoPET)", ("mean",),
                 (_CONNECTIVITY, _UNIT, _PRECISION,
                  Param("empty_reference", (float, str), NULL, words=(NULL,), edge="an empty reference")),
                 label_image=True, resampling="cases"),
    MetricRecord("reference_volume", "mask_volume", ("segmentation",), "volume of the reference mask", ("mean",),
                 (_UNIT, _PRECISION), label_image=True, resampling="cases"),
    MetricRecord("voxel_sensitivity", "voxel_sensitivity", ("segmentation",), "voxel-wise sensitivity |R∩P| / |R|",
                 ("mean",), (Param("both_empty", (float, str), 1.0, words=(NULL,), edge="neither mask has the label"),
                             Param("one_empty", (float, str), 0.0, words=(NULL,),
                                   edge="an empty reference, a non-empty prediction")),
                 label_image=True, resampling="cases"),
    MetricRecord("voxel_specificity", "voxel_specificity", ("segmentation",), "voxel-wise specificity |¬R∩¬P| / |¬R|",
                 ("mean",), (Param("full_reference", (float, str), 0.0, words=(NULL,),
                                   edge="the reference covers every voxel"),),
                 label_image=True, resampling="cases"),
    _lesion_wise("lesion_wise_dice", "lesion-wise Dice (BraTS 2023): per lesion, unmatched lesions 0"),
    _lesion_wise("lesion_wise_hd95", "lesion-wise HD95 (BraTS 2023): per lesion, unmatched lesions penalty"),
)  # fmt: skip
RECORDS += PUBLIC_SEGMENTATION

# lesion detection by any overlap (ISLES 2022; README "Segmentation metrics of public challenges")
_ANY_OVERLAP = Param("connectivity", int, 26, (6, 18, 26), doc="lesions: the masks' connected components")
OVERLAP_DETECTION: tuple[MetricRecord, ...] = (
    MetricRecord("overlap_lesion_f1", "overlap_lesion_f1", ("segmentation",),
                 "F1 of lesions found by any overlap, not one-to-one (ISLES 2022)", ("mean", "dataset", *COUNT_FORMS),
                 (_ANY_OVERLAP, Param("no_lesions", float, 1.0, edge="neither mask has a lesion")),
                 label_image=True, resampling="cases"),
    MetricRecord("lesion_count_difference", "lesion_count_difference", ("segmentation",),
                 "|#predicted - #reference lesions| (ISLES 2022)", ("mean",), (_ANY_OVERLAP,),
                 label_image=True, resampling="cases"),
)  # fmt: skip
RECORDS += OVERLAP_DETECTION

# point detection scored as LUNA16 scores it (README "LUNA16: the CPM"): the set of scans
HIT_RADIUS: tuple[MetricRecord, ...] = (
    MetricRecord("cpm", "cpm", ("points",),
                 "mean sensitivity at fp_rates FPs per scan, hits within each reference's radius (LUNA16)",
                 params=(Param("fp_rates", list, list(CPM_FP_RATES), parameter="rates",
                               interval=Interval(0, None, "neither", "must be a non-empty list of positive numbers "
                                                 "(false positives per scan)")),
                         Param("reading", str, "nearest", READINGS,
                               doc="the curve's nearest point (the leaderboard's) or np.interp"),
                         Param("distance", str, "strict", DISTANCES,
                               doc="strict: a hit is closer than the radius (LUNA16); inclusive: within it"),
                         Param("default_diameter", float, DEFAULT_DIAMETER,
                               interval=Interval(0, None, "neither", "must be a positive diameter"),
                               doc="of a reference point without (or with a negative) reference_diameter"),
                         Param("max_marks", int, OMITTED, interval=Interval(1, None, "left", "must be at least 1"),
                               doc="at most this many marks per scan, by score (LUNA16: 100); not set: all"),
                         Param("bootstrap_draws", str, "project", ("project", "legacy"),
                               doc="legacy: the LUNA16 script's bootstrap (np.random.seed(seed), its bounds)")),
                 resampling="images"),
)  # fmt: skip
RECORDS += HIT_RADIUS
COUNTED = tuple(r.name for r in RECORDS if r.segmentation and "tp" in r.forms)  # per-case TP / FP / FN keys

RECORD: dict[str, MetricRecord] = {record.name: record for record in RECORDS}

# detection maps, per case: lesion counts and entries (README "Detection maps")
HEAT_MAP_CASES: tuple[MetricRecord, ...] = (
    MetricRecord("lesion_count", "map_lesion_count", ("heat_map",),
                 "lesions per case (case.<case>.<name>) and summed over the cases (picai_eval num_lesions)",
                 params=(Param("count", str, "reference", LESION_COUNTS,
                               doc="reference: the reference lesions; candidates: the map's lesion candidates"),
                         Param("case_entries", bool, False,
                               doc="true: each case's lesion entries [score, lesion] as <name>_entries")),
                 resampling="maps"),
)  # fmt: skip
RECORDS += HEAT_MAP_CASES
RECORD.update((record.name, record) for record in HEAT_MAP_CASES)

# the summary statistics of a segmentation metric's per-case values beside its mean, as pandas describe()
# gives them and every evalutils container writes them (``metrics.summary_statistics``); "evalutils": all
STATISTIC_FORMS = STATISTICS[1:]
EVALUTILS = "evalutils"


def declarable_forms(record: MetricRecord) -> tuple[str, ...]:
    """The aggregate forms a declaration may list for ``record``: its own, and with a mean the statistics."""
    return (*record.forms, *STATISTIC_FORMS) if "mean" in record.forms else record.forms


# a partial area of the ROC curve: ISIC 2019's auc_sens_80 (isic-challenge-scoring metrics.auc_above_sensitivity)
PARTIAL_ROC: tuple[MetricRecord, ...] = (
    MetricRecord("auroc_above_sensitivity", "auroc_above_sensitivity", _BINARY,
                 "raw ROC area where the sensitivity is at least sensitivity (ISIC's auc_sens_80)",
                 params=(Param("sensitivity", float, 0.8, interval=Interval(0, 1, "right"),
                               doc="the area under the ROC curve from where its TPR reaches it (not normalised)"),),
                 edges=(Edge("single_class", "single_class", "a single class"),), substituted=True, per_class=True,
                 binary_reference=True),
)  # fmt: skip
RECORDS += PARTIAL_ROC
RECORD.update((record.name, record) for record in PARTIAL_ROC)
