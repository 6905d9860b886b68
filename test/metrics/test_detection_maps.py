"""PI-CAI detection maps against the official code, run here on synthetic volumes.

Oracles (test-only, pinned in requirements-dev.txt): ``picai_eval`` 1.4.13 (github DIAGNijmegen/picai_eval)
and ``report_guided_annotation`` 0.3.4 (github DIAGNijmegen/Report-Guided-Annotation), which PI-CAI's
evaluation and baseline algorithms use. Each test computes the official numbers on volumes generated
below (benign cases, missed lesions, two candidates over one lesion, one candidate over two lesions,
tied confidences, components under the size limit, touching candidates) and compares to 1e-9.
"""

from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest

from evaluation.metrics import detection_maps as dm

with contextlib.redirect_stdout(io.StringIO()):  # both packages print a banner on import
    from picai_eval import evaluate
    from report_guided_annotation import extract_lesion_candidates

SHAPE = (6, 24, 24)
FP_RATES = (0.1, 0.25, 0.5, 1.0, 2.0, 5.0)


def _ball(centre: tuple[int, int, int], radius: float) -> np.ndarray:
    z, y, x = np.ogrid[: SHAPE[0], : SHAPE[1], : SHAPE[2]]
    return (z - centre[0]) ** 2 / 2 + (y - centre[1]) ** 2 + (x - centre[2]) ** 2 <= radius**2


def synthetic_case(rng: np.random.Generator, kind: int) -> tuple[np.ndarray, np.ndarray]:
    """A (heat map, reference) pair: ``kind`` % 4 picks benign / one lesion / two lesions / crowded."""
    reference = np.zeros(SHAPE, np.int32)
    heat = (rng.random(SHAPE) * 0.02).astype(np.float32)  # noise under the extraction's floor
    n_lesions = [0, 1, 2, 3][kind % 4]
    centres = [(3, 6, 6), (3, 6, 17), (3, 17, 11)]
    for i in range(n_lesions):
        reference[_ball(centres[i], 3.0)] = 1
    n_blobs = int(rng.integers(1, 5))
    for _ in range(n_blobs):
        if n_lesions and rng.random() < 0.7:
            base = centres[int(rng.integers(0, n_lesions))]
            centre = (3, base[1] + int(rng.integers(-3, 4)), base[2] + int(rng.integers(-3, 4)))
        else:
            centre = (3, int(rng.integers(3, 21)), int(rng.integers(3, 21)))
        peak = np.float32(rng.choice([0.3, 0.5, 0.7, 0.9, rng.random()]))  # repeated values: tied confidences
        ball = _ball(centre, float(rng.choice([1.0, 2.0, 3.0, 4.0])))
        distance = np.abs(np.indices(SHAPE) - np.array(centre)[:, None, None, None]).sum(axis=0)
        heat = np.where(ball, np.maximum(heat, peak * np.exp(-0.15 * distance).astype(np.float32)), heat)
    return heat.astype(np.float32), reference


def crowded_case() -> tuple[np.ndarray, np.ndarray]:
    """Two candidates over one lesion (one wins, the other is no entry by default) and one candidate
    over two lesions (one is missed)."""
    reference = np.zeros(SHAPE, np.int32)
    reference[1:5, 2:10, 2:10] = 1
    reference[1:5, 14:18, 14:17] = 1
    reference[1:5, 14:18, 18:21] = 1
    heat = np.zeros(SHAPE, np.float32)
    heat[1:5, 2:10, 2:6] = 0.8
    heat[1:5, 2:10, 7:10] = 0.6
    heat[1:5, 14:18, 14:21] = 0.7
    return heat, reference


def synthetic_set(seed: int, n: int = 12) -> tuple[list[np.ndarray], list[np.ndarray]]:
    rng = np.random.default_rng(seed)
    pairs = [synthetic_case(rng, kind) for kind in range(n - 1)] + [crowded_case()]
    return [p[0] for p in pairs], [p[1] for p in pairs]


def _official(maps, references, **kwargs):
    with contextlib.redirect_stdout(io.StringIO()):
        return evaluate(y_det=maps, y_true=references, num_parallel_calls=1, **kwargs)


def _official_sensitivity(metrics, rate: float) -> float:
    with np.errstate(invalid="ignore", divide="ignore"):
        return float(metrics.lesion_TPR_at_FPR(rate))


@pytest.mark.parametrize("threshold", ["dynamic-fast", "dynamic", "dynamic-v2", 0.25, 0.5])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_extraction_equals_report_guided_annotation(threshold, seed):
    heats, _ = synthetic_set(seed)
    for heat in heats:
        official = extract_lesion_candidates(heat, threshold=threshold)[0]
        ours = dm.extract_lesion_candidates(heat, threshold=threshold)
        assert ours.dtype == official.dtype
        np.testing.assert_array_equal(ours, official)


def test_extraction_options_equal_report_guided_annotation():
    heats, _ = synthetic_set(7)
    options = dict(min_voxels_detection=3, num_lesions_to_extract=2, dynamic_threshold_factor=1.5,
                   max_prob_round_decimals=2, remove_adjacent_lesion_candidates=False)  # fmt: skip
    for heat in heats:
        for threshold in ("dynamic", "dynamic-fast", 0.3):
            official = extract_lesion_candidates(heat, threshold=threshold, **options)[0]
            ours = dm.extract_lesion_candidates(
                heat, threshold, min_voxels=3, num_lesions=2, dynamic_threshold_factor=1.5, round_decimals=2,
                remove_adjacent=False,
            )  # fmt: skip
            np.testing.assert_array_equal(ours, official)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("threshold", ["dynamic", "dynamic-fast"])
def test_evaluation_equals_picai_eval(seed, threshold):
    heats, references = synthetic_set(seed)
    maps = [extract_lesion_candidates(heat, threshold=threshold)[0] for heat in heats]
    official = _official(maps, references)
    cases = [dm.case_lesions(m, r) for m, r in zip(maps, references, strict=True)]
    assert dm.lesion_average_precision(cases) == pytest.approx(official.AP, abs=1e-9)
    assert dm.case_auroc(cases) == pytest.approx(official.auroc, abs=1e-9)
    assert dm.picai_score(cases) == pytest.approx(official.score, abs=1e-9)
    expected = {rate: _official_sensitivity(official, rate) for rate in FP_RATES}
    assert dm.lesion_sensitivity_at_fp(cases, FP_RATES) == pytest.approx(expected, abs=1e-9)
    # extraction inside our function, from the heat maps: the same numbers
    extracted = [dm.case_lesions(h, r, candidates=threshold) for h, r in zip(heats, references, strict=True)]
    assert dm.picai_score(extracted) == pytest.approx(official.score, abs=1e-9)


@pytest.mark.parametrize("seed", [0, 1])
def test_extraction_in_the_evaluation_and_bayesian_case_score_equal_picai_eval(seed):
    """PI-CAI-style evaluations that take the heat map itself: picai_eval's ``y_det_postprocess_func``."""
    heats, references = synthetic_set(seed)
    official = _official(
        heats, references, case_confidence_func="bayesian",
        y_det_postprocess_func=lambda heat: extract_lesion_candidates(heat, threshold="dynamic")[0],
    )  # fmt: skip
    cases = [
        dm.case_lesions(h, r, candidates="dynamic", case_score="bayesian")
        for h, r in zip(heats, references, strict=True)
    ]
    assert [case.score for case in cases] == pytest.approx(
        [official.case_pred[i] for i in official.subject_list], abs=1e-12
    )
    assert dm.case_auroc(cases) == pytest.approx(official.auroc, abs=1e-9)
    assert dm.picai_score(cases) == pytest.approx(official.score, abs=1e-9)


@pytest.mark.parametrize("threshold", ["dynamic", "dynamic-fast", 0.3])
@pytest.mark.parametrize("seed", [0, 3])
def test_lesion_counts_and_entries_equal_picai_eval(seed, threshold):
    """Each case's lesion candidates as picai_eval's ``parse_detection_map`` counts them on the map
    report_guided_annotation extracts (also when our function extracts them), the reference lesions
    (``num_lesions``) and each case's entries in ``evaluate_case``'s order."""
    from picai_eval.analysis_utils import parse_detection_map

    heats, references = synthetic_set(seed)
    maps = [extract_lesion_candidates(heat, threshold=threshold)[0] for heat in heats]
    official = _official(maps, references, subject_list=[str(i) for i in range(len(maps))])
    given = [dm.case_lesions(m, r) for m, r in zip(maps, references, strict=True)]
    extracted = [dm.case_lesions(h, r, candidates=threshold) for h, r in zip(heats, references, strict=True)]
    expected = [len(parse_detection_map(m)[0]) for m in maps]
    assert dm.case_lesion_counts(given, "candidates").tolist() == expected
    assert dm.case_lesion_counts(extracted, "candidates").tolist() == expected
    assert dm.lesion_count(given) == dm.lesion_count(extracted) == official.num_lesions
    for index, case in enumerate(given):
        entries = official.lesion_results[str(index)]
        assert case.is_lesion.tolist() == [bool(hit) for hit, _, _ in entries]
        assert case.confidence.tolist() == [float(c) for _, c, _ in entries]
    with pytest.raises(ValueError, match="not counted"):
        dm.case_lesion_counts([dm.CaseLesions(np.ones(1, bool), np.zeros(1), 0.0)], "candidates")
    with pytest.raises(ValueError, match="unknown count"):
        dm.case_lesion_counts(given, "voxels")


@pytest.mark.parametrize("seed", [4, 5])
def test_options_equal_picai_eval(seed):
    heats, references = synthetic_set(seed)
    maps = [extract_lesion_candidates(heat, threshold=0.2, min_voxels_detection=2)[0] for heat in heats]
    for overlap, min_overlap, strict in (("dsc", 0.3, False), ("iou", 0.05, True), ("iou", 0.4, True)):
        official = _official(
            maps, references, overlap_func=overlap.upper() if overlap == "dsc" else "IoU", min_overlap=min_overlap,
            allow_unmatched_candidates_with_minimal_overlap=not strict,
        )  # fmt: skip
        cases = [
            dm.case_lesions(m, r, min_overlap, overlap, unmatched_overlapping=strict)
            for m, r in zip(maps, references, strict=True)
        ]
        for ours, theirs in zip(cases, official.subject_list, strict=True):
            entries = sorted(official.lesion_results[theirs])
            assert sorted(zip(ours.is_lesion.astype(int).tolist(), ours.confidence.tolist(), strict=True)) == [
                e[:2] for e in entries
            ]
        assert dm.lesion_average_precision(cases) == pytest.approx(official.AP, abs=1e-9)
        expected = {rate: _official_sensitivity(official, rate) for rate in FP_RATES}
        assert dm.lesion_sensitivity_at_fp(cases, FP_RATES) == pytest.approx(expected, abs=1e-9)


def test_edge_values_equal_picai_eval():
    heats, references = synthetic_set(0, n=5)
    maps = [extract_lesion_candidates(heat)[0] for heat in heats]
    benign = [np.zeros_like(r) for r in references]
    official = _official(maps, benign)  # no lesion anywhere: AP and AUROC undefined
    cases = [dm.case_lesions(m, r) for m, r in zip(maps, benign, strict=True)]
    assert dm.lesion_average_precision(cases) == official.AP == 0
    with np.errstate(invalid="ignore", divide="ignore"):
        assert np.isnan(official.auroc) and np.isnan(dm.case_auroc(cases))
        assert np.isnan(dm.lesion_sensitivity_at_fp(cases, 1.0))
        assert np.isnan(_official_sensitivity(official, 1.0))
    empty = [np.zeros(SHAPE, np.float32) for _ in references]
    official = _official(empty, references)  # no candidate anywhere: AP 0
    cases = [dm.case_lesions(m, r) for m, r in zip(empty, references, strict=True)]
    assert dm.lesion_average_precision(cases) == pytest.approx(official.AP, abs=1e-12)
    assert dm.lesion_sensitivity_at_fp(cases, 1.0) == _official_sensitivity(official, 1.0)


def test_many_thresholds_are_resampled_as_picai_eval():
    rng = np.random.default_rng(11)
    cases = [
        dm.CaseLesions(rng.random(1200) < 0.3, np.round(rng.random(1200), 7), 0.0) for _ in range(10)
    ]  # 12,000 distinct confidences: past the reference's 10,000
    from picai_eval.metrics import Metrics

    official = Metrics(
        lesion_results={
            i: [(int(a), float(b), 0.0) for a, b in zip(c.is_lesion, c.confidence, strict=True)]
            for i, c in enumerate(cases)
        }
    )
    expected = {rate: _official_sensitivity(official, rate) for rate in (10.0, 50.0, 84.0, 100.0)}
    assert dm.lesion_sensitivity_at_fp(cases, tuple(expected)) == pytest.approx(expected, abs=1e-9)


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="negative"):
        dm.case_lesions(-np.ones(SHAPE), np.zeros(SHAPE))
    with pytest.raises(ValueError, match="shapes differ"):
        dm.case_lesions(np.zeros(SHAPE), np.zeros((2, 2, 2)))
    heat = synthetic_case(np.random.default_rng(0), 1)[0]
    with pytest.raises(ValueError, match="heat map"):
        dm.case_lesions(heat, np.zeros(SHAPE))
    with pytest.raises(ValueError, match="unknown threshold"):
        dm.extract_lesion_candidates(heat, "median")
    with pytest.raises(ValueError, match="NaN"):
        dm.extract_lesion_candidates(np.full(SHAPE, np.nan))
    with pytest.raises(ValueError, match="non-empty"):
        dm.extract_lesion_candidates(np.zeros((0, 3, 3)))
    with pytest.raises(ValueError, match="whole numbers"):  # 1.5 lesions would extract 2
        dm.extract_lesion_candidates(heat, "dynamic", num_lesions=1.5)
    with pytest.raises(ValueError, match="round_decimals"):  # np.round's TypeError otherwise
        dm.extract_lesion_candidates(heat, round_decimals=0.5)
    with pytest.raises(ValueError, match="stop_below"):
        dm.extract_lesion_candidates(heat, "dynamic", stop_below=0)  # the reference would loop forever
    with pytest.raises(ValueError, match="whole numbers"):
        dm.case_lesions(np.zeros(SHAPE), np.full(SHAPE, 0.5))
    with pytest.raises(ValueError, match="unknown case_score"):
        dm.case_lesions(np.zeros(SHAPE), np.zeros(SHAPE), case_score="mean")
    with pytest.raises(ValueError, match="whole numbers"):  # not lesions of label -1
        dm.case_lesions(np.zeros(SHAPE), -np.ones(SHAPE, np.int32))
    with pytest.raises(ValueError, match="whole numbers"):
        dm.case_lesions(np.zeros(SHAPE), np.zeros(SHAPE, complex))
    with pytest.raises(ValueError, match="extraction parameters"):  # not silently unused
        dm.case_lesions(np.zeros(SHAPE), np.zeros(SHAPE), min_voxels=3)
    with pytest.raises(ValueError, match="NaN"):
        dm.lesion_sensitivity_at_fp([dm.CaseLesions(np.array([True]), np.array([np.nan]), 0.0)], 1.0)
