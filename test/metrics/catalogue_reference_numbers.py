"""Print the panoptica and MetricsReloaded numbers written in the catalogue's golden tests.

Neither reference can live in the project's venv (panoptica 2.1.7 requires connected-components-3d < 4,
the project pins 4.1.1; MetricsReloaded is not on PyPI), so they run elsewhere::

    python -m venv /tmp/oracles && /tmp/oracles/bin/pip install panoptica==2.1.7
    git clone https://github.com/Project-MONAI/MetricsReloaded /tmp/MetricsReloaded  # commit cb38dfc
    /tmp/oracles/bin/python test/metrics/catalogue_reference_numbers.py /tmp/MetricsReloaded

Not a test (pytest does not collect it); it only calls the two packages' public classes.
"""

from __future__ import annotations

import sys
import types
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from catalogue_fixtures import (
    binary_case,
    greedy_trap_case,
    lesion_case,
    multiclass_case,
    ordinal_case,
)


def panoptica_numbers() -> None:
    from panoptica import (
        ConnectedComponentsInstanceApproximator,
        InputType,
        MaxBipartiteMatching,
        Metric,
        NaiveThresholdMatching,
        Panoptica_Evaluator,
    )
    from panoptica.utils.constants import CCABackend

    def run(reference, prediction, matcher):
        evaluator = Panoptica_Evaluator(
            expected_input=InputType.SEMANTIC,
            instance_approximator=ConnectedComponentsInstanceApproximator(cca_backend=CCABackend.cc3d),
            instance_matcher=matcher,
            instance_metrics=[Metric.IOU],
            global_metrics=[Metric.DSC],
        )
        result = evaluator.evaluate(prediction.astype(np.uint8), reference.astype(np.uint8), verbose=False)
        return result["ungrouped"]

    for index in range(4):
        reference, prediction = lesion_case(index)
        r = run(reference, prediction, NaiveThresholdMatching(Metric.IOU, 0.5, strict_threshold=True))
        print("PQ", index, repr(r.pq), repr(r.sq), repr(r.rq), r.tp, r.fp, r.fn)
        for threshold in (0.1, 0.3):
            for matcher in (NaiveThresholdMatching, MaxBipartiteMatching):
                r = run(reference, prediction, matcher(Metric.IOU, threshold, strict_threshold=True))
                print("F1", index, threshold, matcher.__name__, repr(r.rq), r.tp, r.fp, r.fn)
    reference, prediction = greedy_trap_case()
    for matcher in (NaiveThresholdMatching, MaxBipartiteMatching):
        r = run(reference, prediction, matcher(Metric.IOU, 0.2, strict_threshold=True))
        print("TRAP", matcher.__name__, repr(r.rq), r.tp, r.fp, r.fn)


def metrics_reloaded_numbers(checkout: str) -> None:
    sys.path.insert(0, checkout)
    sys.modules.setdefault("nibabel", types.ModuleType("nibabel"))  # imported by its processes, unused here
    from MetricsReloaded.metrics.calibration_measures import CalibrationMeasures
    from MetricsReloaded.metrics.pairwise_measures import BinaryPairwiseMeasures, MultiClassPairwiseMeasures
    from MetricsReloaded.metrics.prob_pairwise_measures import ProbabilityPairwiseMeasures

    truth, scores = binary_case()
    for bins in (5, 10, 15):
        found = CalibrationMeasures(np.stack([1 - scores, scores], axis=1), truth, dict_args={"bins_ece": bins})
        print("ECE", bins, repr(found.expectation_calibration_error()))
    for value in (0.5, 0.8, 0.9):
        found = ProbabilityPairwiseMeasures(
            scores, truth, dict_args={"value_specificity": value, "value_sensitivity": value}
        )
        print(
            "SENS@SPEC",
            value,
            repr(found.sensitivity_at_specificity()),
            "SPEC@SENS",
            repr(found.specificity_at_sensitivity()),
        )
    truth, probabilities = multiclass_case()
    found = CalibrationMeasures(probabilities, truth, dict_args={"bins_ece": 10})
    print("CWECE", repr(found.class_wise_expectation_calibration_error()))
    correct = (probabilities.argmax(1) == truth).astype(int)
    confidence = probabilities.max(1)
    found = CalibrationMeasures(np.stack([1 - confidence, confidence], 1), correct, dict_args={"bins_ece": 10})
    print("TOP-LABEL ECE", repr(found.expectation_calibration_error()))
    print("BA", repr(MultiClassPairwiseMeasures(probabilities.argmax(1), truth, [0, 1, 2]).balanced_accuracy()))
    truth, predicted = ordinal_case()
    k = np.arange(4)
    for name, weights in (
        ("none", 1 - np.eye(4)),
        ("linear", np.abs(k[:, None] - k[None, :]).astype(float)),
        ("quadratic", ((k[:, None] - k[None, :]) ** 2).astype(float)),
    ):
        found = MultiClassPairwiseMeasures(predicted, truth, [0, 1, 2, 3], dict_args={"weights": weights})
        print("KAPPA", name, repr(found.weighted_cohens_kappa()))
    for index in range(4):
        reference, prediction = lesion_case(index)
        found = BinaryPairwiseMeasures(prediction.astype(int), reference.astype(int))
        print("SEG", index, repr(found.dsc()), repr(found.intersection_over_union()),
              repr(found.absolute_volume_difference_ratio()))  # fmt: skip


if __name__ == "__main__":
    panoptica_numbers()
    metrics_reloaded_numbers(sys.argv[1])
