"""The aggregation of a declared challenge: the per-case numbers and values into every declared metric.

``aggregate_metrics`` computes each metric per case and over cases, with percentile bootstrap CIs over cases
(the numbers are resampled, never the images; detection metrics resample the images' parsed objects and match
them again), through the adapters of ``measures`` onto the metric catalogue (``evaluation.metrics``), laid out
as the declaration's ``[report]`` table says.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from operator import itemgetter
from typing import Any

import numpy as np

from evaluation.declarative import measures, python_metric
from evaluation.declarative.columns import ColumnResults
from evaluation.declarative.metric_records import COUNTED, HEAT_MAP_CASES, NULL, PUBLIC_SEGMENTATION, RECORD
from evaluation.declarative.output_kinds import MISCLASSIFIED, OutputSpec
from evaluation.declarative.reference import ByCase, DeclaredReference
from evaluation.declarative.schema import (
    COMBINED,
    COUNT_FORMS,
    HIT_RADIUS_METRICS,
    SEGMENTATION_METRICS,
    SURFACE_METRICS,
    Declaration,
    MetricSpec,
    metric_keys,
)
from evaluation.declarative.segmentation import (
    LESION_VOLUMES,
    OVERLAP_LESIONS,
    CaseResult,
    lesion_volume_key,
    lesion_wise_key,
    volume_key,
)
from evaluation.errors import ConfigurationError
from evaluation.metrics.bootstrap import percentile_interval, resample_weights
from evaluation.metrics.groups import over_groups
from evaluation.metrics.options import UNITS
from evaluation.metrics.summary_statistics import STATISTICS, resampled_statistic, statistic
from evaluation.platform.metrics_json import CaseColumns


def aggregate_metrics(
    declaration: Declaration,
    declared: Declaration,
    results: Mapping[str, CaseResult],
    missing: Sequence[str],
    reference: DeclaredReference,
    settings: Mapping[str, Any],
) -> dict[str, Any]:
    """metrics.json without its settings: the aggregates, the per-case values and the missing lists of
    ``declaration`` (the one in force); ``declared`` (the challenge's own) orders per-case keys label by label."""
    level = declaration.level
    aggregates: dict[str, Any] = {}
    per_case: dict[str, dict[str, Any]] = (
        _Entries() if isinstance(results, ColumnResults) else {case: {} for case in reference.cases}
    )
    computed: dict[str, tuple[float, np.ndarray]] = {}  # aggregate path -> value, resamples
    made_by: dict[str, MetricSpec] = {}  # aggregate path -> the metric that computed it
    counted: dict[str, int] = {}  # mean aggregate path -> the cases it averaged
    slots: dict[str, tuple[int, ...]] = {}  # per-case key -> its place label by label
    by_group: list[tuple[MetricSpec, dict[str, float]]] = []  # each grouped metric's value per group
    intervals: dict[str, tuple[float, float]] = {}  # aggregate path -> bounds a metric gives itself (LUNA16's)
    for position, metric in enumerate(declaration.metrics):
        if metric.metric == COMBINED:  # the mean of earlier aggregates, resample by resample
            parts = [computed[path] for path in metric.param("of")]
            key = metric.key("", "value")
            values = {key: float(np.mean([value for value, _ in parts]))}
            resamples = {key: np.mean([boot for _, boot in parts], axis=0)}
        elif metric.metric == python_metric.PYTHON and not metric.groups:  # the organizer's function
            earlier = {path: computed[path] for path in computed if made_by[path].output == metric.output}
            values, resamples = _python_metric(declaration, metric, results, reference, settings, per_case, earlier)
        elif (output := declaration.output(metric.output)).type.scoring == "segmentation" and not metric.groups:
            cases = [c for c in reference.cases if output.slug in results[c].segmentations]
            place = (declaration.outputs.index(output), position)
            values, resamples = _segmentation_metric(
                declared, metric, cases, results, settings, per_case, counted, place, slots
            )
        elif metric.metric in HIT_RADIUS_METRICS:  # LUNA16's CPM and sensitivities (legacy: the script's bounds)
            cases = [c for c in reference.cases if output.slug in results[c].values]
            found = _hit_radius_metric(metric, output, cases, results, reference, settings, level, intervals)
            values, resamples = found
        elif metric.groups:  # the metric per group of cases, combined over the groups
            score = partial(_case_set_values, output, results, reference, settings, per_case)
            if metric.metric == python_metric.PYTHON:
                score = partial(_python_set_values, declaration.folder, output, results, reference)
            elif output.type.scoring == "segmentation":
                place = (declaration.outputs.index(output), position)
                score = partial(_segmentation_values, declared, results, settings, per_case, counted, place, slots)
            values, resamples, found = _grouped_metric(metric, output, results, reference, score)
            by_group.append((metric, found))
        else:
            cases = _scored(output, reference.cases, results)
            values, resamples = _case_set_metric(metric, output, cases, results, reference, settings, per_case)
        for _, _, key in metric_keys(metric):
            computed[metric.path(key)] = (values[key], resamples[key])
            made_by[metric.path(key)] = metric
    for metric, form, key in _written(declaration):
        target = aggregates.setdefault(metric.group, {}) if metric.group else aggregates
        value, resamples_of_key = computed[metric.path(key)]
        target[key] = value
        if metric.bootstrap and form not in COUNT_FORMS:
            path = metric.path(key)
            low, high = intervals[path] if path in intervals else percentile_interval(resamples_of_key, level)
            target[f"{key}_ci_low"], target[f"{key}_ci_high"] = low, high
    for metric, found in by_group:  # each group's value beside the combined one
        (aggregates.setdefault(metric.group, {}) if metric.group else aggregates)[f"{metric.name}_by_group"] = found
    report = declaration.report
    if report.absent_labels is not None:
        path, slug = report.absent_labels
        scored = [results[c].segmentations[slug] for c in reference.cases if slug in results[c].segmentations]
        group, _, key = path.rpartition(".")
        (aggregates.setdefault(group, {}) if group else aggregates)[key] = [
            label for label, _ in declaration.output(slug).labels
            if sum(n.labels[label].reference + n.labels[label].prediction for n in scored) == 0
        ]  # fmt: skip
    if report.order == "label":  # segmentation keys label by label, then the others as written
        for case, entries in per_case.items():
            ordered = sorted(entries, key=lambda k: (0, *slots[k]) if k in slots else (1,))
            per_case[case] = {k: entries[k] for k in ordered}
    for key, what in report.counts:
        aggregates[key] = len(reference.cases) if what == "cases" else counted[what]
    lists: dict[str, list[str]] = {declaration.submission.missing_key: list(missing)}
    names = dict(report.missing_names)
    section: Mapping[str, Mapping[str, Any]] = per_case
    if isinstance(results, ColumnResults):  # every case submitted every output
        lists.update((names.get(o.slug, o.slug), []) for o in declaration.outputs)
        columns = {o.slug: results.column(o.slug, reference.cases) for o in declaration.outputs}
        inner = {slug: results.classes[slug] for slug in columns if slug in results.classes}
        same = tuple(reference.cases) == results.cases
        texts, ids = (results.texts, results.ids) if same else ({}, None)
        section = _case_columns(reference.cases, per_case, columns if report.case_values else {}, inner, texts, ids)
    row_results = () if isinstance(results, ColumnResults) else declaration.outputs
    for output in row_results:  # (cases skipped for a blank reference have no entry)
        scored = [c for c in reference.cases if output.slug in results[c].submitted]
        lists[names.get(output.slug, output.slug)] = [c for c in scored if not results[c].submitted[output.slug]]
        if output.type.scoring == "segmentation" and report.label_presence:
            for case in (c for c in reference.cases if output.slug in results[c].segmentations):
                for label, numbers in results[case].segmentations[output.slug].labels.items():
                    per_case[case][f"{label}_in_reference"] = numbers.reference > 0
        if output.type.value and report.case_values:  # (segmentations, detections: none)
            for case in scored:  # the participant's own value, never an imputed one (it would reveal the
                submitted = results[case].submitted[output.slug]  # reference)
                per_case[case][output.slug] = results[case].values[output.slug] if submitted else None
    return {
        "aggregates": aggregates,
        "case": section if report.per_case else {},
        **({"missing": lists} if report.missing else {}),
    }


def _values_of(values: Mapping[str, Any], cases: Sequence[str]) -> Sequence[Any]:
    """The values of ``cases``: a reference column read whole (``ByCase``) of these very cases as it is (its
    numbers' array, read-only, when it has one)."""
    if isinstance(values, ByCase) and values.of(cases):
        return values.cells if values.numbers is None else values.numbers
    return list(map(values.__getitem__, cases))


def _class_names(values: Mapping[str, Any], cases: Sequence[str]) -> np.ndarray:
    """The class names of ``cases`` as an array of strings: of a column read whole of these very cases, made once
    for all the metrics of its output (``ByCase.strings``, read-only)."""
    if isinstance(values, ByCase) and values.of(cases):
        return values.strings()
    return np.array(list(map(values.__getitem__, cases)), dtype=str)


class _Entries(dict[str, dict[str, Any]]):
    """The per-case entries the metrics write of a submission scored as columns: a case's made when first
    written (most metrics of values write none); ``_case_columns`` puts them in case order."""

    def __missing__(self, case: str) -> dict[str, Any]:
        self[case] = entries = {}
        return entries


def _case_columns(
    cases: Sequence[str],
    per_case: dict[str, dict[str, Any]],
    columns: dict[str, np.ndarray],
    inner: dict[str, tuple[str, ...]],
    texts: Mapping[str, list[np.ndarray]],
    ids: np.ndarray | None,
) -> Mapping[str, Mapping[str, Any]]:
    """The per-case section of a submission scored as columns: each output's values (``columns``, in the
    order of ``cases``; ``inner``: a probabilities output's classes; ``texts``: their ``repr`` when known; ``ids``:
    the cases' ``printable_texts`` when made) after the entries the metrics wrote (``per_case``); held by columns
    when they wrote none."""
    held = CaseColumns(cases, columns, inner, texts, ids)
    if columns and not any(per_case.values()):
        return held
    return {case: {**per_case.get(case, {}), **held[case]} for case in cases}


def _sample(metric: MetricSpec, cases: Sequence[str], reference: DeclaredReference) -> np.ndarray | None:
    """The declared case weights of ``cases`` (``sample_weights``), None without; all 0 is the organizer's error."""
    if not metric.sample_weights:
        return None
    return _weights_of(metric, metric.sample_weights[0], cases, reference)


def _weights_of(metric: MetricSpec, text: str, cases: Sequence[str], reference: DeclaredReference) -> np.ndarray:
    """The weights of ``cases`` in the ``sample_weights`` column ``text`` of ``metric``; all 0 is the organizer's
    error."""
    weights = reference.weights[metric.name][text]
    if tuple(cases) != reference.cases:
        index = {case: k for k, case in enumerate(reference.cases)}
        weights = weights[[index[case] for case in cases]]
    if not weights.any():
        raise ConfigurationError(f"{text}: every scored case has the weight 0 ({metric.name}).")
    return weights


def _weights(n_cases: int, settings: Mapping[str, Any], metric: MetricSpec) -> np.ndarray | None:
    if not metric.bootstrap or n_cases == 0:
        return None
    return resample_weights(n_cases, settings["bootstrap_resamples"], settings["seed"])


def _segmentation_metric(
    declared: Declaration,
    metric: MetricSpec,
    cases: list[str],
    results: Mapping[str, CaseResult],
    settings: Mapping[str, Any],
    per_case: dict[str, dict[str, Any]],
    counted: dict[str, int],
    place: tuple[int, int],
    slots: dict[str, tuple[int, ...]],
) -> tuple[dict[str, float], dict[str, np.ndarray]]:
    """The aggregates of one segmentation metric (and its resamples); writes the per-case values
    to ``per_case``, per mean aggregate path how many cases it averaged to ``counted``, and each
    per-case key's place label by label (output, label, metric, entry; ``place``: the first and
    third) to ``slots``; the labels' order is ``declared``'s."""
    weights = _weights(len(cases), settings, metric)
    numbers = [results[c].segmentations[metric.output] for c in cases]
    values: dict[str, float] = {}
    resamples: dict[str, np.ndarray] = {}
    label_names = [name for name, _ in declared.output(metric.output).labels]
    compute = dict(metric.params).get("compute", True)  # false: surfaces not computed (schema)
    for label in metric.labels:
        rows = [n.labels[label] for n in numbers]
        ref, pred, inter = (np.array([getattr(r, f) for r in rows], dtype=float)
                            for f in ("reference", "prediction", "intersection"))  # fmt: skip
        counts = np.zeros((len(rows), 3))
        if not compute:  # not computed: null, but where both maps are empty
            both_empty = metric.param("both_empty")
            value = math.nan if isinstance(both_empty, str) else float(both_empty)
            per = np.where([n.empty for n in numbers], value, math.nan)
        elif metric.metric == "dice":
            per = measures.dice_values(inter, ref, pred, metric.param("both_empty"))
            if "empty_reference" in dict(metric.params):  # autoPET III / IV: no value
                per = measures.edge_at(per, (ref == 0) & (pred > 0), metric.param("empty_reference"))
        elif metric.metric == "iou":
            per = measures.iou_values(inter, ref, pred, metric.param("both_empty"))
        elif metric.metric in PUBLIC_METRICS:
            per, counts = _public_segmentation(metric, rows, numbers, inter, ref, pred)
        elif metric.metric in SURFACE_METRICS:  # one distance per case (nsd: at its tolerance)
            if metric.metric == "nsd":
                raw = np.array([dict(r.nsd)[metric.param("tolerance_mm")] for r in rows], dtype=float)
            else:
                raw = np.array([getattr(r, metric.metric) for r in rows], dtype=float)
            per = measures.surface_values(raw, ref, pred, metric.param("both_empty"), metric.param("one_empty"))
        elif metric.metric == "volume_difference":
            raw = np.array([dict(r.volumes)[volume_key(metric)] for r in rows], dtype=float)
            if metric.param("volume") == "ml" and not metric.param("relative"):  # the worker's mm³ in ml
                raw = raw / UNITS["ml"]
            per = measures.volume_difference_values(raw, dict(metric.params).get("empty_reference", "exclude"))
        elif metric.metric in OVERLAP_LESIONS:  # lesions detected by any overlap (ISLES 2022)
            found_overlap = [dict(r.overlap_lesions)[metric.param("connectivity")] for r in rows]
            counts = np.array([[c.tp, c.fp, c.fn] for c in found_overlap], dtype=float).reshape(-1, 3)
            per = np.array([c.count_difference for c in found_overlap], dtype=float)
            if metric.metric == "overlap_lesion_f1":
                per = measures.lesion_f1_values(*counts.T, metric.param("no_lesions"))
        elif metric.metric == "panoptic_quality":
            found_pq = [dict(r.panoptic)[metric.param("iou_threshold")] for r in rows]
            raw = np.array([getattr(q, metric.param("quality")) for q in found_pq], dtype=float)
            per = measures.panoptic_values(raw, metric.param("no_instances"))
        else:
            source = "hungarian" if metric.param("matching") == "hungarian" else "lesions"
            found = [dict(getattr(r, source))[metric.param("iou_threshold")] for r in rows]
            counts = np.array([[c.tp, c.fp, c.fn] for c in found], dtype=float).reshape(-1, 3)
            per = measures.lesion_f1_values(*counts.T, metric.param("no_lesions"))
        keys = [metric.per_case_key(label)] if metric.case_key else []
        if metric.metric in COUNTED and metric.case_count_key:
            keys += [metric.count_key(label, count) for count in COUNT_FORMS]
        for entry, key in enumerate(keys):
            slots[key] = (place[0], label_names.index(label), place[1], entry)
        for index, case in enumerate(cases):
            if metric.case_key:
                per_case[case][keys[0]] = float(per[index])
            if len(keys) > 1:
                per_case[case].update(zip(keys[-3:], (int(v) for v in counts[index]), strict=True))
        scale = 1.0
        if metric.metric in ("dice", "iou") and metric.param("volume") == "mm3":
            scale = np.array([n.voxel_volume for n in numbers])
        for form in metric.aggregates:
            key = metric.key(label, form)
            if form in COUNT_FORMS:  # the lesion counts summed over the cases
                values[key] = int(counts[:, COUNT_FORMS.index(form)].sum())
                resamples[key] = np.array([np.nan])
                continue
            averaged = per
            mean_over = dict(metric.params).get("mean_over", "all") if form in STATISTICS else "all"
            if not compute:
                averaged = np.full_like(per, np.nan)  # not computed: a null mean, never one of the empty cases only
            elif mean_over == "present":
                averaged = np.where(ref + pred == 0, np.nan, per)  # the mean skips cases without the label
            elif mean_over == "positives":
                averaged = np.where(ref == 0, np.nan, per)  # the mean of the cases with the label in the reference
                if cases and not (ref > 0).any():
                    raise ConfigurationError(
                        f"No reference case has the label '{label}': aggregates.{key} (mean over positives) is "
                        "undefined."
                    )
            path = metric.path(key)
            counted[path] = int(np.count_nonzero(np.isfinite(averaged)))
            arguments = (metric, form, averaged, counts, inter * scale, (ref + pred) * scale)
            values[key] = float(_form(*arguments, None)) if cases else float("nan")
            if form == "count":  # the cases with a value, an integer
                values[key] = int(np.count_nonzero(~np.isnan(averaged)))
            boot = _form(*arguments, weights) if weights is not None else np.array([np.nan])
            resamples[key] = np.asarray(boot, dtype=float)
    return values, resamples


PUBLIC_METRICS = tuple(r.name for r in PUBLIC_SEGMENTATION)
HEAT_MAP_CASE_METRICS = tuple(r.name for r in HEAT_MAP_CASES)  # per-case keys of a heat-map output


def _public_segmentation(
    metric: MetricSpec, rows: list[Any], numbers: list[Any], inter: np.ndarray, ref: np.ndarray, pred: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per-case values (and lesion counts, cases x 3) of a metric of a public challenge's segmentation
    (``metric_records.PUBLIC_SEGMENTATION``), from the numbers the workers measured."""
    counts = np.zeros((len(rows), 3))
    params = dict(metric.params)
    if metric.metric in LESION_VOLUMES:
        raw = np.array([dict(r.lesion_volumes)[lesion_volume_key(metric)] for r in rows], dtype=float)
        return measures.edge_at(raw, np.isnan(raw), params.get("empty_reference", math.nan)), counts
    if metric.metric == "voxel_sensitivity":
        return measures.voxel_sensitivity_values(inter, ref, pred, params["both_empty"], params["one_empty"]), counts
    if metric.metric == "voxel_specificity":
        sizes = np.array([n.size for n in numbers], dtype=float)
        return measures.voxel_specificity_values(inter, ref, pred, sizes, params["full_reference"]), counts
    scores = [dict(r.lesion_wise)[lesion_wise_key(metric)] for r in rows]
    counts = np.array([[s.tp, s.fp, s.fn] for s in scores], dtype=float).reshape(-1, 3)
    which = "dice" if metric.metric == "lesion_wise_dice" else "hd95"
    return np.array([getattr(s, which) for s in scores], dtype=float), counts


def _value_metric(
    metric: MetricSpec,
    output: OutputSpec,
    cases: list[str],
    results: Mapping[str, CaseResult],
    reference: DeclaredReference,
    settings: Mapping[str, Any],
) -> tuple[dict[str, float], dict[str, np.ndarray]]:
    kind = float if output.type.numeric else str
    truths = _values_of(reference.values[output.slug], cases)
    truth = np.array(truths, np.float64) if kind is float else np.array(list(map(kind, truths)))
    if isinstance(results, ColumnResults):  # (number outputs: floats)
        predicted = results.column(output.slug, cases)
    else:
        predicted = np.array([kind(results[c].values[output.slug]) for c in cases])
    params = dict(metric.params)
    event = np.array([reference.events[output.slug][c] for c in cases], bool) if output.event else None
    if metric.metric == "cohen_kappa":  # the declared order; a missing answer is a class of its own (unweighted)
        params["classes"] = output.type.class_order(output) + (
            (MISCLASSIFIED,) if output.missing == "misclassification" else ()
        )
    sample = _sample(metric, cases, reference)
    value = float(measures.value_metric(metric.metric, truth, predicted, params, event=event, sample=sample)) \
        if cases else math.nan  # fmt: skip
    for edge, what in measures.EDGE_CASES.items():  # (no scored case: a null value, as a probabilities metric's)
        if cases and math.isnan(value) and params.get(edge) == "error":
            raise ConfigurationError(
                f"The reference of output '{output.slug}' holds {what} over the scored cases: "
                f"{metric.metric} is undefined (declare {edge} = <number> to give it a value)."
            )
    weights = _weights(len(cases), settings, metric)
    boot = (
        np.array([np.nan])
        if weights is None
        else measures.value_metric(metric.metric, truth, predicted, params, weights, event)
    )
    key = metric.key("", "value")
    return {key: value}, {key: boot}


def _probability_metric(
    metric: MetricSpec,
    output: OutputSpec,
    cases: list[str],
    results: Mapping[str, CaseResult],
    reference: DeclaredReference,
    settings: Mapping[str, Any],
) -> tuple[dict[str, float], dict[str, np.ndarray]]:
    """A metric of a probabilities output over the scored cases: per class and macro, or one value."""
    truth = _class_names(reference.values[output.slug], cases)
    matrix = _class_matrix(output, cases, results)
    params, classes = dict(metric.params), output.classes
    keys = metric_keys(metric)
    if not cases:  # every case excluded: no value (null; a ranked path fails the run)
        return {key: math.nan for _, _, key in keys}, {key: np.array([np.nan]) for _, _, key in keys}
    weights = _weights(len(cases), settings, metric)
    sample = _sample(metric, cases, reference)
    if not metric.aggregates:  # one value: Brier, top-label calibration, the argmax metrics
        key = metric.key("", "value")
        value = float(measures.probability_metric(metric.metric, truth, matrix, classes, params, sample=sample))
        boot = np.array([np.nan])
        if weights is not None:
            boot = measures.probability_metric(metric.metric, truth, matrix, classes, params, weights)
        return {key: value}, {key: np.asarray(boot, dtype=float)}
    per_class, macro = measures.per_class_metric(metric.metric, truth, matrix, classes, params, sample=sample)
    edge = measures.PER_CLASS[metric.metric][2]
    if edge and params[edge] == "error" and np.isnan(per_class).any():
        undefined = classes[int(np.flatnonzero(np.isnan(per_class))[0])]
        holds = "no case" if not (truth == undefined).any() else "only cases"
        raise ConfigurationError(
            f"The reference of output '{output.slug}' holds {holds} of class '{undefined}' over the scored cases: "
            f"{metric.metric} is undefined for it (declare {edge} = <number> or 'exclude')."
        )
    if math.isnan(macro):
        raise ConfigurationError(
            f"The reference of output '{output.slug}' leaves no class for the macro {metric.metric}: every "
            f"class is excluded ({edge} = 'exclude')."
        )
    boot_classes, boot_macro = np.full((len(classes), 1), np.nan), np.array([np.nan])
    if weights is not None:
        boot_classes, boot_macro = measures.per_class_metric(metric.metric, truth, matrix, classes, params, weights)
    values: dict[str, float] = {}
    resamples: dict[str, np.ndarray] = {}
    for label, form, key in keys:
        if form == "macro":
            values[key], resamples[key] = float(macro), np.asarray(boot_macro, dtype=float)
        else:
            j = classes.index(label)
            values[key], resamples[key] = float(per_class[j]), np.asarray(boot_classes[j], dtype=float)
    return values, resamples


def _detection_metric(
    metric: MetricSpec,
    output: OutputSpec,
    cases: list[str],
    results: Mapping[str, CaseResult],
    reference: DeclaredReference,
    settings: Mapping[str, Any],
) -> tuple[dict[str, float], dict[str, np.ndarray]]:
    """A detection metric over the scored images (reference boxes, submitted boxes and scores)."""
    from evaluation.metrics.detection import ImageDetections

    images = [ImageDetections(reference.values[output.slug][c], *results[c].values[output.slug]) for c in cases]
    params = dict(metric.params)
    if images and params.get("fp_images") == "negative" and all(len(image.reference) for image in images):
        raise ConfigurationError(
            f"The reference of output '{output.slug}' has no image without boxes: {metric.metric} with "
            "fp_images = 'negative' counts false positives on those images only."
        )
    value = measures.detection_metric(metric.metric, images, params) if images else math.nan
    if images and math.isnan(value) and params["no_reference"] == "error":
        raise ConfigurationError(
            f"The reference of output '{output.slug}' holds no reference box over the scored images: "
            f"{metric.metric} is undefined (declare no_reference = <number> to give it a value)."
        )
    weights = _weights(len(cases), settings, metric)
    boot = np.array([np.nan]) if weights is None else measures.detection_metric(metric.metric, images, params, weights)
    key = metric.key("", "value")
    return {key: value}, {key: boot}


def _hit_radius_metric(
    metric: MetricSpec,
    output: OutputSpec,
    cases: list[str],
    results: Mapping[str, CaseResult],
    reference: DeclaredReference,
    settings: Mapping[str, Any],
    level: float,
    intervals: dict[str, tuple[float, float]],
) -> tuple[dict[str, float], dict[str, np.ndarray]]:
    """The CPM and the sensitivity at each rate over the scored scans (``metrics.hit_radius``); with
    ``bootstrap_draws = "legacy"`` the LUNA16 script's bootstrap bounds go to ``intervals``."""
    from evaluation.metrics.hit_radius import ScanFindings  # (where points are scored: not at the engine's start)

    keys = [key for _, _, key in metric_keys(metric)]
    if not cases:
        return {key: math.nan for key in keys}, {key: np.array([np.nan]) for key in keys}
    findings = reference.findings.get(output.slug, {})
    if set(cases) <= set(findings):  # in the order of reference_cases (the script's bootstrap draws)
        cases = sorted(cases, key=list(findings).index)
    scans = []
    for case in cases:
        points = reference.values[output.slug][case]
        diameters, ignored = findings.get(case, (np.full(len(points), -1.0), np.zeros(len(points), bool)))
        scans.append(ScanFindings(points, diameters, ignored, *results[case].values[output.slug][:2]))
    params = dict(metric.params)
    legacy = metric.bootstrap and params["bootstrap_draws"] == "legacy"
    weights = None if legacy else _weights(len(cases), settings, metric)
    sensitivities, boot = measures.hit_radius_metric(scans, params, weights)
    values = dict(zip(keys, (float(np.mean(sensitivities)), *map(float, sensitivities)), strict=True))
    resamples = {key: np.array([np.nan]) for key in keys}
    if boot is not None:
        resamples = dict(zip(keys, (boot.mean(axis=1), *boot.T), strict=True))
    if legacy:
        found = measures.legacy_bootstrap(scans, params, settings["bootstrap_resamples"], settings["seed"], level)
        for key, bounds in zip(keys, found, strict=True):
            intervals[metric.path(key)] = bounds
    return values, resamples


def _scored(output: OutputSpec, cases: Sequence[str], results: Mapping[str, CaseResult]) -> list[str]:
    """The cases of ``cases`` that have a scored ``output``: a worker's numbers (an image), or a value."""
    where = "segmentations" if output.type.image else "values"
    if isinstance(results, ColumnResults) and where == "values":  # every case has every output
        return list(cases)
    return [c for c in cases if output.slug in getattr(results[c], where)]


def _case_set_metric(
    metric: MetricSpec,
    output: OutputSpec,
    cases: list[str],
    results: Mapping[str, CaseResult],
    reference: DeclaredReference,
    settings: Mapping[str, Any],
    per_case: dict[str, dict[str, Any]],
) -> tuple[dict[str, float], dict[str, np.ndarray]]:
    """A metric of one value (or per class) over a set of scored cases: the kind's own aggregation
    (a worker's numbers), counts per image at a decision (per-case keys), or the kind's aggregation
    of the cases' values."""
    if output.type.aggregation is not None:
        entry = RECORD[metric.metric].catalogue
        if metric.metric not in HEAT_MAP_CASE_METRICS:
            return output.type.aggregation(metric, entry, output, cases, results, settings)
        from evaluation.declarative.heat_maps import heat_map_case_values  # (where a heat map is scored)

        for case, entries in heat_map_case_values(metric, output, cases, results).items():  # per case, then summed
            per_case[case].update(entries)
        counting = dataclasses.replace(metric, params=tuple((k, v) for k, v in metric.params if k != "case_entries"))
        values, resamples = output.type.aggregation(counting, entry, output, cases, results, settings)
        return {key: int(value) if math.isfinite(value) else value for key, value in values.items()}, resamples
    if metric.metric in measures.DECISION_METRICS:
        return _decision_metric(metric, output, cases, results, reference, settings, per_case)
    return _AGGREGATIONS[output.type.scoring](metric, output, cases, results, reference, settings)


def _case_set_values(
    output: OutputSpec,
    results: Mapping[str, CaseResult],
    reference: DeclaredReference,
    settings: Mapping[str, Any],
    per_case: dict[str, dict[str, Any]],
    metric: MetricSpec,
    cases: list[str],
) -> dict[str, float]:
    """``_case_set_metric``'s values (a group's)."""
    return _case_set_metric(metric, output, cases, results, reference, settings, per_case)[0]


def _python_set_values(
    folder: str,
    output: OutputSpec,
    results: Mapping[str, CaseResult],
    reference: DeclaredReference,
    metric: MetricSpec,
    cases: list[str],
) -> dict[str, float]:
    """A whole-set python metric's values on a group's cases; a NaN leaves the group undefined."""
    return _python_set(metric, folder, output, cases, results, reference, {}, math.nan)[0]


def _segmentation_values(
    declared: Declaration,
    results: Mapping[str, CaseResult],
    settings: Mapping[str, Any],
    per_case: dict[str, dict[str, Any]],
    counted: dict[str, int],
    place: tuple[int, int],
    slots: dict[str, tuple[int, ...]],
    metric: MetricSpec,
    cases: list[str],
) -> dict[str, float]:
    """``_segmentation_metric``'s values (a group's); the cases a mean averaged add up over the groups."""
    tally: dict[str, int] = {}
    values = _segmentation_metric(declared, metric, cases, results, settings, per_case, tally, place, slots)[0]
    counted.update({path: counted.get(path, 0) + n for path, n in tally.items()})
    return values


def _grouped_metric(
    metric: MetricSpec,
    output: OutputSpec,
    results: Mapping[str, CaseResult],
    reference: DeclaredReference,
    score: Callable[[MetricSpec, list[str]], dict[str, float]],
) -> tuple[dict[str, float], dict[str, np.ndarray], dict[str, float]]:
    """A metric of one value per group of cases (the reference column ``groups``; sorted labels; ``score``:
    its aggregates over a group's cases) and its ``over_groups`` form (``metrics.groups.over_groups``); a
    group where it is undefined (NaN) is refused, left out or counted as the declared ``undefined_group``.
    With ``incomplete_group = "null"`` a group holding a case without its output (``missing`` other than
    "error") has no value (null) and the combination is over the other groups (LEOPARD's "N/A" cohort)."""
    ((_, _, key),) = metric_keys(metric)
    cases = _scored(output, reference.cases, results)
    own = reference.groups[metric.name]
    incomplete: set[str] = set()
    listed = cases
    if metric.incomplete_group == NULL:  # every group of a case with an entry for the output, complete or not
        listed = [c for c in reference.cases if output.slug in results[c].submitted]
        incomplete = {own[c] for c in listed if not results[c].submitted[output.slug]}
    lenient = dataclasses.replace(metric, groups="", params=_lenient(metric), bootstrap=False)
    found: dict[str, float] = {}
    for label in np.unique(np.array([own[c] for c in listed], dtype=str)).tolist():
        group = [c for c in cases if own[c] == label]  # (an incomplete group still writes its per-case keys)
        value = score(lenient, group)[key] if group else math.nan
        found[label] = math.nan if label in incomplete else value
    undefined = next((label for label, value in found.items() if math.isnan(value) and label not in incomplete), None)
    if undefined is not None and metric.undefined_group == "error":
        raise ConfigurationError(
            f"The reference of output '{output.slug}' makes {metric.metric} undefined in group '{undefined}' "
            f"({metric.groups}): declare undefined_group = 'exclude' or a number."
        )
    scored = [value for label, value in found.items() if label not in incomplete]
    value = float(over_groups(np.array(scored), metric.over_groups, metric.undefined_group)) if scored else math.nan
    return {key: value}, {key: np.array([np.nan])}, found


def _lenient(metric: MetricSpec) -> tuple[tuple[str, Any], ...]:
    """The metric's parameters with its edge values "error" as NaN (the group policy decides)."""
    return tuple((k, math.nan if k in measures.EDGE_CASES and v == "error" else v) for k, v in metric.params)


def _decision_metric(
    metric: MetricSpec,
    output: OutputSpec,
    cases: list[str],
    results: Mapping[str, CaseResult],
    reference: DeclaredReference,
    settings: Mapping[str, Any],
    per_case: dict[str, dict[str, Any]],
) -> tuple[dict[str, float], dict[str, np.ndarray]]:
    """Detection at a decision over the scored images: each image's TP, FP, FN (written per case as
    ``<name>_tp``, ... with ``case_counts``), then precision, recall or F1 of their sums."""
    from evaluation.metrics.detection import ImageDetections

    key = metric.key("", "value")
    if not cases:
        return {key: math.nan}, {key: np.array([np.nan])}
    images = [ImageDetections(reference.values[output.slug][c], *results[c].values[output.slug]) for c in cases]
    params = dict(metric.params)
    counts = measures.decision_counts(images, params)
    if params["case_counts"]:
        for case, row in zip(cases, counts, strict=True):
            per_case[case].update({f"{metric.name}_{count}": int(n) for count, n in zip(COUNT_FORMS, row, strict=True)})
    weights = _weights(len(cases), settings, metric)
    boot = np.array([np.nan]) if weights is None else measures.decision_value(metric.metric, counts, params, weights)
    return {key: float(measures.decision_value(metric.metric, counts, params))}, {key: boot}


def _written(declaration: Declaration) -> list[tuple[MetricSpec, str, str]]:
    """(metric, form, key) of every aggregate in the order metrics.json writes them: metric by
    metric, or (``[report] order = "label"``) each run of consecutive segmentation metrics of one
    output and group label by label."""
    if declaration.report.order == "metric":
        return [(m, form, key) for m in declaration.metrics for _, form, key in metric_keys(m)]
    order: list[tuple[MetricSpec, str, str]] = []
    run: list[MetricSpec] = []

    def flush() -> None:
        for label, _ in declaration.output(run[0].output).labels:
            order.extend((m, form, key) for m in run for name, form, key in metric_keys(m) if name == label)
        run.clear()

    for metric in declaration.metrics:
        segmentation = metric.metric in SEGMENTATION_METRICS
        if run and (not segmentation or (metric.output, metric.group) != (run[0].output, run[0].group)):
            flush()
        if segmentation:
            run.append(metric)
        else:
            order.extend((metric, form, key) for _, form, key in metric_keys(metric))
    if run:
        flush()
    return order


def _form(
    metric: MetricSpec,
    form: str,
    per_case: np.ndarray,
    counts: np.ndarray,
    intersections: np.ndarray,
    totals: np.ndarray,
    weights: np.ndarray | None,
) -> Any:
    """One aggregate form of a segmentation metric over cases (per weight row when ``weights``)."""
    if form == "mean":
        return measures.mean_over_cases(per_case, weights)
    if form in STATISTICS:  # as pandas describe(), evalutils' aggregates
        return statistic(per_case, form) if weights is None else resampled_statistic(per_case, form, weights)
    if metric.metric in COUNTED:  # lesion_f1, overlap_lesion_f1: F1 of the summed counts
        return measures.lesion_f1_dataset(counts, metric.param("no_lesions"), weights)
    return measures.overlap_dataset(metric.metric, intersections, totals, metric.param("absent_everywhere"), weights)


def _python_metric(
    declaration: Declaration,
    metric: MetricSpec,
    results: Mapping[str, CaseResult],
    reference: DeclaredReference,
    settings: Mapping[str, Any],
    per_case: dict[str, dict[str, Any]],
    earlier: Mapping[str, tuple[float, np.ndarray]],
) -> tuple[dict[str, float], dict[str, np.ndarray]]:
    """A python metric (``python_metric``): per case, the values the workers returned (written per case,
    then the declared forms over the cases); over the set, the function on the scored cases' values, with
    ``earlier`` (the same output's values computed before it, and their resamples) in its context."""
    output = declaration.output(metric.output)
    if metric.param("over") == "set":
        cases = _scored(output, reference.cases, results)
        options = declaration.option_values()
        return _python_set(metric, declaration.folder, output, cases, results, reference, settings, options=options,
                           earlier=earlier)  # fmt: skip
    cases = [c for c in reference.cases if metric.name in results[c].python]
    labels = metric.labels or ("",)
    found = {label: [results[c].python[metric.name][label] for c in cases] for label in labels}
    per = {label: np.array([math.nan if v is None else v for v in found[label]], dtype=float) for label in labels}
    if metric.case_key:  # as returned (a float, an integer, a boolean); None: no entry
        for index, case in enumerate(cases):
            per_case[case].update({metric.per_case_key(label): _written_value(found[label][index])
                                   for label in labels if found[label][index] is not None})  # fmt: skip
    return python_metric.case_aggregates(metric, per, _weights(len(cases), settings, metric))


def _python_set(
    metric: MetricSpec,
    folder: str,
    output: OutputSpec,
    cases: list[str],
    results: Mapping[str, CaseResult],
    reference: DeclaredReference,
    settings: Mapping[str, Any],
    nan: float | str | None = None,
    options: Mapping[str, Any] | None = None,
    earlier: Mapping[str, tuple[float, np.ndarray]] | None = None,
) -> tuple[dict[str, float], dict[str, np.ndarray]]:
    """A whole-set python metric on ``cases``' values (a probabilities output: a cases x classes matrix) and
    references, in case order; ``nan``: the declared one unless given; ``options`` and ``earlier`` (values
    computed before it, with their resamples): the context's."""
    if not cases:  # nothing scored: no value (null), the function is not called
        keys = [key for _, _, key in metric_keys(metric)]
        return {key: math.nan for key in keys}, {key: np.array([np.nan]) for key in keys}
    if output.type.per_class:
        predictions = _class_matrix(output, cases, results)
    elif output.type.objects:  # each case's parsed objects: arrays of objects, one item per case
        predictions = _objects([results[c].values[output.slug] for c in cases])
    elif isinstance(results, ColumnResults):
        predictions = np.array(results.column(output.slug, cases))
    else:
        predictions = np.array([results[c].values[output.slug] for c in cases])
    found = _values_of(reference.values[output.slug], cases)
    references = _objects(found) if output.type.objects else np.array(found)
    fields = {name: tuple(_values_of(by_case, cases)) for name, by_case in reference.fields.items()}
    own = dict(metric.params).get("params", {})
    weights = {text.partition(":")[2]: _weights_of(metric, text, cases, reference) for text in metric.sample_weights}
    earlier = earlier or {}
    context = python_metric.SetContext(tuple(cases), output.slug, output.classes, options=options or {}, fields=fields,
                                       params=own, weights=weights,
                                       aggregates={path: value for path, (value, _) in earlier.items()})  # fmt: skip
    if nan is not None:
        metric = dataclasses.replace(metric, params=(*metric.params, ("nan", nan)))
    fn = python_metric.function_of(dict(metric.params), folder)
    drawn = _weights(len(cases), settings, metric)
    boots = {path: boot for path, (_, boot) in earlier.items()}
    return python_metric.set_aggregates(metric, fn, predictions, references, context, drawn, boots)


def _class_matrix(output: OutputSpec, cases: Sequence[str], results: Mapping[str, CaseResult]) -> np.ndarray:
    """A probabilities output's answers of ``cases`` as a cases x classes matrix (declared class order)."""
    if isinstance(results, ColumnResults):  # (a row per case, a column per class)
        return results.column(output.slug, cases).reshape(len(cases), len(output.classes))
    row = itemgetter(*output.classes)  # (two or more classes: a tuple per case)
    return np.array([row(results[c].values[output.slug]) for c in cases], float).reshape(len(cases), -1)


def _written_value(value: float | int | bool) -> float | int | bool:
    """A python metric's per-case value as metrics.json writes it: integers and booleans as returned."""
    return value if isinstance(value, (int, bool)) else float(value)


def _objects(items: Sequence[Any]) -> np.ndarray:
    """``items`` (tuples of arrays, arrays of several shapes) as a 1D array of objects (resampled by rows)."""
    array = np.empty(len(items), dtype=object)
    for index, item in enumerate(items):
        array[index] = item
    return array


# an output kind's ``scoring`` -> the aggregation of its metrics over the cases with a value
_AGGREGATIONS = {"values": _value_metric, "probabilities": _probability_metric, "detection": _detection_metric}
