"""LUNA16's point detection (evaluation/metrics/hit_radius.py) against the official numbers recorded in
test/metrics/golden/luna16.json (the LUNA16 script and the organizers' CPM calculator run on the demo's
synthetic scans, scripts/make_demo_luna16.py), and its edge cases by hand."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from evaluation.metrics import hit_radius as hr

REPO = Path(__file__).resolve().parents[2]
GOLDEN = json.loads((REPO / "test" / "metrics" / "golden" / "luna16.json").read_text())
sys.path.insert(0, str(REPO / "scripts"))

from make_demo_luna16 import luna_scans, scan_findings  # noqa: E402


def findings(seed: int, excluded: bool = True) -> list[hr.ScanFindings]:
    """The generator's scans as the metric takes them (excluded findings ignored, or left out)."""
    return scan_findings(luna_scans(seed), excluded)


@pytest.mark.parametrize("run", GOLDEN["runs"], ids=lambda r: f"seed{r['seed']}-cap{r['max_marks']}")
def test_official_numbers(run: dict) -> None:
    scans, cap = findings(run["seed"]), (run["max_marks"] if run["max_marks"] > 0 else None)
    np.testing.assert_allclose(hr.sensitivities(scans, max_marks=cap), run["nearest"], rtol=0, atol=1e-9)
    assert hr.cpm(scans, max_marks=cap) == pytest.approx(run["cpm"], abs=1e-9)
    interpolated = hr.sensitivities(scans, max_marks=cap, reading="interpolate")
    np.testing.assert_allclose(interpolated, run["interpolate"], rtol=0, atol=1e-9)
    entries = [hr.scan_entries(scan, max_marks=cap) for scan in scans]
    curve = hr.froc_curve(np.concatenate([h for h, _ in entries]), np.concatenate([f for _, f in entries]), len(scans))
    np.testing.assert_allclose(curve.fps, run["curve"]["fps"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(curve.sensitivity, run["curve"]["sensitivity"], rtol=0, atol=1e-12)
    calculator = hr.cpm(findings(run["seed"], excluded=False))  # no excluded findings, no cap
    assert calculator == pytest.approx(run["calculator_cpm_without_excluded_uncapped"], abs=1e-9)
    if "bootstrap" in run:
        boot = run["bootstrap"]
        found = hr.official_bootstrap(entries, boot["resamples"], boot["seed"])
        for key, values in (("grid_fps", found.rates), ("mean", found.mean), ("low", found.low), ("high", found.high)):
            np.testing.assert_allclose(values, boot[key], rtol=0, atol=1e-9, err_msg=key)


def scan(reference, diameters, points, scores, ignored=None) -> hr.ScanFindings:
    reference = np.array(reference, float).reshape(-1, 3)
    ignored = np.zeros(len(reference), bool) if ignored is None else np.array(ignored, bool)
    return hr.ScanFindings(reference, np.array(diameters, float), ignored, np.array(points, float).reshape(-1, 3),
                           np.array(scores, float))  # fmt: skip


def test_radius_strict_or_inclusive_and_unknown_size() -> None:
    np.testing.assert_array_equal(hr.hit_radius([10.0, -1.0, 0.0], 8.0), [5.0, 4.0, 0.0])
    on_radius = scan([[0, 0, 0]], [10.0], [[3, 4, 0]], [0.9])  # distance 5 = radius
    assert np.isnan(hr.scan_entries(on_radius)[0][0])  # strict: a miss, and a false positive
    np.testing.assert_array_equal(hr.scan_entries(on_radius)[1], [0.9])
    hits, fps = hr.scan_entries(on_radius, distance="inclusive")
    assert hits[0] == 0.9 and fps.size == 0
    unknown = scan([[0, 0, 0]], [-1.0], [[0, 0, 4.5]], [0.7])  # diameter -1: 10 mm
    assert hr.scan_entries(unknown)[0][0] == 0.7


def test_many_to_one_ignored_and_cap() -> None:
    two = scan([[0, 0, 0], [5, 0, 0], [40, 0, 0]], [8.0, 8.0, 6.0], [[2.5, 0, 0], [0, 0, 1], [41, 0, 0], [90, 0, 0]],
               [0.9, 0.95, 0.5, 0.3], ignored=[False, False, True])  # fmt: skip
    hits, fps = hr.scan_entries(two)
    np.testing.assert_array_equal(hits, [0.95, 0.9])  # each nodule once, at its best; 0.9 hits both
    np.testing.assert_array_equal(fps, [0.3])  # the mark on the ignored finding is neither
    np.testing.assert_array_equal(hr.capped([0.9, 0.5, 0.5, 0.1], 2), [True, False, False, False])  # ties dropped
    assert hr.capped([0.9, 0.5], 2).all() and hr.capped([0.9, 0.5, 0.1], None).all()


def test_reading_and_edges() -> None:
    fps, sens = np.array([0.0, 0.1, 1.0, 1.0, 3.0]), np.array([0.0, 0.2, 0.5, 0.6, 0.8])
    np.testing.assert_array_equal(hr.read_curve(fps, sens, [0.125, 1, 2, 8]), [0.2, 0.5, 0.5, 0.0])  # first tie; 8 far
    np.testing.assert_allclose(hr.read_curve(fps, sens, [0.55, 8], "interpolate"), [0.35, 0.8])
    nothing = [scan([[0, 0, 0]], [6.0], [[50, 0, 0]], [0.4]), scan(np.empty((0, 3)), [], np.empty((0, 3)), [])]
    assert hr.cpm(nothing) == 0.0  # no hit: the calculator's guard
    only_hits = [scan([[0, 0, 0]], [6.0], [[0, 0, 1]], [0.4])]
    assert hr.cpm(only_hits) == 0.0  # no false positive: every rate 0, no point nearer than the largest
    assert hr.cpm(only_hits, reading="interpolate") == 1.0
    with pytest.raises(ValueError, match="distance"):
        hr.scan_entries(only_hits[0], distance="loose")
    with pytest.raises(ValueError, match="reading"):
        hr.read_curve(fps, sens, reading="spline")
