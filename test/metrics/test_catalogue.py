"""The catalogue registry: entries consistent with their functions, calls by name, no silent NaN."""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest

from evaluation.metrics import catalogue
from evaluation.metrics.detection import ImageDetections
from evaluation.metrics.detection_maps import CaseLesions
from evaluation.metrics.hit_radius import ScanFindings


def test_entries_match_their_functions():
    assert len(set(catalogue.names())) == len(catalogue.names())
    for name in catalogue.names():
        metric = catalogue.get(name)
        assert metric.kind in catalogue.KINDS, name
        leading = list(inspect.signature(metric.function).parameters)[: len(metric.inputs)]
        assert leading == list(metric.inputs), name
        assert set(metric.edge_cases) <= set(metric.parameters), name
        assert metric.function.__doc__ or metric.function.func.__doc__, name


def test_call_by_name_and_refusals():
    reference = np.zeros((4, 4, 4), dtype=bool)
    reference[1:3, 1:3, 1:3] = True
    prediction = np.roll(reference, 1, axis=2)
    assert catalogue.compute("dice", reference, prediction) == 0.5
    assert catalogue.compute("nsd", reference, prediction, (1.0, 1.0, 1.0), tolerance=1.0) == 1.0
    assert catalogue.get("hd95").parameters["percent"] == 95.0
    assert catalogue.get("nsd").required == ("tolerance",)
    assert catalogue.get("dice_per_label").required == ("labels",)
    assert catalogue.compute("dice_per_label", reference * 2, prediction * 2, labels=[2, 1]).tolist() == [0.5, 1.0]
    with pytest.raises(ValueError, match="needs the parameter 'tolerance'"):
        catalogue.compute("nsd", reference, prediction, (1.0, 1.0, 1.0))
    with pytest.raises(ValueError, match="has no parameter 'emtpy'"):
        catalogue.compute("dice", reference, prediction, emtpy=0.0)
    with pytest.raises(ValueError, match="takes inputs"):
        catalogue.compute("dice", reference)
    with pytest.raises(KeyError, match="unknown metric 'dise'"):
        catalogue.get("dise")


def test_per_class_by_name():
    truth = np.array([0, 1, 2, 0, 1, 2])
    scores = np.eye(3)[truth] * 0.5 + 0.25
    assert catalogue.per_class("auroc", truth, scores, [0, 1, 2]).tolist() == [1.0, 1.0, 1.0]
    assert catalogue.per_class("sensitivity", truth, scores, [0, 1, 2], threshold=0.8).tolist() == [0.0] * 3
    with pytest.raises(ValueError, match="not a binary classification metric"):
        catalogue.per_class("dice", truth, scores, [0, 1, 2])
    with pytest.raises(ValueError, match="has no parameter"):
        catalogue.per_class("auroc", truth, scores, [0, 1, 2], threshold=0.5)


def edge_inputs(name: str) -> list[tuple]:
    """Degenerate inputs for every metric: empty masks, one class, no objects, constants."""
    metric = catalogue.get(name)
    empty = np.zeros((3, 4, 5), dtype=bool)
    some = empty.copy()
    some[1, 1:3, 1:3] = True
    spacing = (1.0, 1.0, 1.0)
    masks = [(empty, empty), (some, empty), (empty, some)]
    if metric.inputs == ("reference", "prediction"):
        return masks
    if metric.inputs == ("reference", "prediction", "spacing"):
        return [(*m, spacing) for m in masks]
    if metric.inputs in (("truth", "scores"), ("truth", "probabilities")):
        return [(np.ones(3, int), np.array([0.1, 0.5, 0.5])), (np.zeros(3, int), np.full(3, 0.5))]
    if metric.inputs == ("truth_labels", "predicted_labels"):
        return [(np.ones(3, int), np.ones(3, int)), (np.zeros(3, int), np.ones(3, int))]
    if metric.inputs == ("truth_labels", "probabilities"):
        return [(np.zeros(2, int), np.array([[0.5, 0.5], [0.5, 0.5]])), (np.ones(1, int), np.array([[1.0, 0.0]]))]
    if metric.inputs == ("truth", "prediction"):
        return [(np.ones(3), np.array([1.0, 2.0, 3.0])), (np.array([1.0, 2.0, 3.0]), np.ones(3))]
    if metric.inputs == ("images",):
        return [
            ([ImageDetections(np.empty((0, 4)), np.empty((0, 4)), np.empty(0))],),
            ([ImageDetections(np.array([[0.0, 0, 1, 1]]), np.empty((0, 4)), np.empty(0))],),
        ]
    if metric.inputs == ("mask", "spacing"):
        return [(empty, spacing), (some, spacing)]
    if metric.inputs == ("intersections", "totals"):
        return [(np.zeros(2), np.zeros(2))]
    if metric.inputs == ("tp", "fp", "fn"):
        return [(0, 0, 0)]
    if metric.inputs == ("cases",):  # detection maps: no lesion anywhere, lesions in every case
        return [
            ([CaseLesions(np.zeros(1, bool), np.array([0.5]), 0.5)],),
            ([CaseLesions(np.ones(1, bool), np.array([0.5]), 0.5)],),
        ]
    if metric.inputs == ("scans",):  # LUNA16's CPM: no finding anywhere, a finding and no mark
        none, three = np.empty((0, 3)), np.empty(0)
        return [
            ([ScanFindings(none, three, three.astype(bool), none, three)],),
            ([ScanFindings(np.zeros((1, 3)), np.array([5.0]), np.zeros(1, bool), none, three)],),
        ]
    return []  # c_index: survival.py defines its own values


@pytest.mark.parametrize("name", catalogue.names())
def test_no_silent_nan_on_edge_cases(name):
    metric = catalogue.get(name)
    lists = {"labels": [1, 2], "classes": [0, 1]}
    parameters = {key: lists.get(key, 1.0) for key in metric.required}
    assert edge_inputs(name) or name == "c_index", name
    for inputs in edge_inputs(name):
        value = catalogue.compute(name, *inputs, **parameters)
        fields = vars(value).values() if hasattr(value, "__dict__") else (value,)  # (per-lesion arrays too)
        values = np.concatenate([np.ravel(np.asarray(v, dtype=float)) for v in fields])
        assert not any(math.isnan(float(v)) for v in values), (name, inputs)
