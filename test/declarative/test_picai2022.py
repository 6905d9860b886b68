"""The declared PI-CAI 2022 challenge (evaluation/declarations/picai2022.toml) against the official
evaluation, run here: ``picai_eval`` 1.4.13 (github DIAGNijmegen/picai_eval, pinned in
requirements-dev.txt) on the synthetic cases of scripts/make_demo_picai2022.py (benign cases, missed
lesions, candidates below IoU 0.1, two candidates over one lesion, one over two lesions, tied
confidences, an all-zero map, a missing map scored as an all-zero one). The platform input is written
by ``python -m evaluation.make_input`` and scored by ``python -m evaluation``, each in a subprocess.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json

import numpy as np
import pytest
from declarative.helpers import REPO, TOL, evaluate, last_line, run

with contextlib.redirect_stdout(io.StringIO()):  # picai_eval prints a banner on import
    from picai_eval import evaluate as picai_evaluate

DECLARATION = REPO / "evaluation" / "declarations" / "picai2022.toml"
_spec = importlib.util.spec_from_file_location("make_demo_picai2022", REPO / "scripts" / "make_demo_picai2022.py")
demo = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(demo)


def official(found: dict) -> dict[str, float]:
    """picai_eval's numbers on the cases (a missing map: zeros, as the empty-mask policy scores it)."""
    maps = [np.zeros(demo.SHAPE, np.float32) if m is None else m for m, _ in found.values()]
    with contextlib.redirect_stdout(io.StringIO()):
        metrics = picai_evaluate(y_det=maps, y_true=[r for _, r in found.values()], num_parallel_calls=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        sensitivity = float(metrics.lesion_TPR_at_FPR(1.0))
    return {"auroc": metrics.auroc, "AP": metrics.AP, "sensitivity_at_1fp": sensitivity,
            "ranking_score": metrics.score}  # fmt: skip


def scored(tmp_path, seed: int) -> tuple[dict, dict]:
    """(our metrics.json through make_input and the evaluation, the cases)."""
    found = demo.generate(tmp_path / "gt", tmp_path / "outputs", seed)
    made = run("-m", "evaluation.make_input", "--challenge", str(DECLARATION), "--outputs", str(tmp_path / "outputs"),
               "--output", str(tmp_path / "input"))  # fmt: skip
    assert made.returncode == 0, made.stderr
    done = run("-m", "evaluation", "--challenge", str(DECLARATION), "--input", str(tmp_path / "input"),
               "--ground-truth", str(tmp_path / "gt"), "--output", str(tmp_path / "out"), "--workers", "2")  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads((tmp_path / "out" / "metrics.json").read_text()), found


@pytest.mark.parametrize("seed", [1, 5])
def test_the_declaration_equals_picai_eval(tmp_path, seed):
    metrics, found = scored(tmp_path, seed)
    expected = official(found)
    assert metrics["aggregates"] == pytest.approx(expected, abs=TOL)
    assert metrics["missing"]["cspca-detection-map"] == [demo.MISSING]


def test_the_bundled_demo_equals_picai_eval():
    metrics = json.loads((REPO / "test" / "expected" / "picai2022" / "metrics.json").read_text())
    assert metrics["aggregates"] == pytest.approx(official(demo.cases()), abs=TOL)


def test_a_heat_map_where_a_detection_map_is_expected_is_refused_in_one_line(tmp_path):
    found = demo.generate(tmp_path / "gt", tmp_path / "outputs")
    case = next(c for c, (m, _) in found.items() if m is not None)
    smooth = np.linspace(0, 1, int(np.prod(demo.SHAPE)), dtype=np.float32).reshape(demo.SHAPE)
    demo._write(smooth, tmp_path / "outputs" / case / "images" / demo.OUTPUT / "detection_map.mha")
    run("-m", "evaluation.make_input", "--challenge", str(DECLARATION), "--outputs", str(tmp_path / "outputs"),
        "--output", str(tmp_path / "input"))  # fmt: skip
    done = run("-m", "evaluation", "--challenge", str(DECLARATION), "--input", str(tmp_path / "input"),
               "--ground-truth", str(tmp_path / "gt"), "--output", str(tmp_path / "out"))  # fmt: skip
    assert done.returncode != 0 and not (tmp_path / "out" / "metrics.json").exists()
    assert last_line(done.stderr).endswith(
        f"The 'cspca-detection-map' map of {case} cannot be scored: the detection map has more distinct values "
        "than lesion candidates (a heat map?)."
    ), done.stderr


_PER_CASE = """
[[metrics]]
name = "lesions"
metric = "lesion_count"
output = "cspca-detection-map"
case_entries = true

[[metrics]]
name = "candidates"
metric = "lesion_count"
output = "cspca-detection-map"
count = "candidates"
__GROUPED__
[leaderboard]"""

_GROUPED = "".join(
    f"""
[[metrics]]
name = "{name}_by_cohort"
metric = "{metric}"
output = "cspca-detection-map"
groups = "cohorts.csv:cohort"
"""
    for name, metric in (("auroc", "case_auroc"), ("AP", "lesion_ap"), ("lesions", "lesion_count"))
)


def test_lesion_counts_entries_and_cohorts_equal_picai_eval(tmp_path):
    """lesion_count: picai_eval's num_lesions summed and per case (its lesion_results' lesions), each
    case's (score, lesion) entries in evaluate_case's order, each map's candidates as
    parse_detection_map counts them; case_auroc, lesion_ap and lesion_count by group equal picai_eval
    run on each cohort's cases alone."""
    from picai_eval.analysis_utils import parse_detection_map

    declaration = tmp_path / "picai2022.toml"
    text = DECLARATION.read_text().replace("\n[leaderboard]", _PER_CASE.replace("__GROUPED__", _GROUPED), 1)
    declaration.write_text(text)
    found = demo.generate(tmp_path / "gt", tmp_path / "outputs", 5)
    positives = [c for c in sorted(found) if found[c][1].any()]  # each cohort: cases with and without a lesion
    negatives = [c for c in sorted(found) if not found[c][1].any()]
    cohorts = {case: "ab"[index % 2] for group in (positives, negatives) for index, case in enumerate(group)}
    rows = "".join(f"{case},{cohort}\n" for case, cohort in cohorts.items())
    (tmp_path / "gt" / "cohorts.csv").write_text(f"case,cohort\n{rows}")
    done, metrics = evaluate(declaration, tmp_path / "outputs", tmp_path / "gt", tmp_path)
    assert done.returncode == 0, done.stderr
    cases = sorted(found)
    maps = [np.zeros(demo.SHAPE, np.float32) if found[c][0] is None else found[c][0] for c in cases]
    with contextlib.redirect_stdout(io.StringIO()):
        reference = picai_evaluate(y_det=maps, y_true=[found[c][1] for c in cases], subject_list=cases,
                                   num_parallel_calls=1)  # fmt: skip
    aggregates = metrics["aggregates"]
    assert aggregates["lesions"] == reference.num_lesions and isinstance(aggregates["lesions"], int)
    assert aggregates["candidates"] == sum(len(parse_detection_map(m)[0]) for m in maps)
    for case, detection_map in zip(cases, maps, strict=True):
        entries = reference.lesion_results[case]
        assert metrics["case"][case]["lesions"] == sum(is_lesion for is_lesion, *_ in entries)
        assert metrics["case"][case]["lesions_entries"] == [[float(c), bool(hit)] for hit, c, _ in entries]
        assert metrics["case"][case]["candidates"] == len(parse_detection_map(detection_map)[0])
    written = [pair for case in cases for pair in metrics["case"][case]["lesions_entries"]]
    assert {(score > 0, hit) for score, hit in written} == {(True, True), (False, True), (True, False)}  # TP, FN, FP
    official_by_group = {}
    for cohort in "ab":
        members = [c for c in cases if cohorts[c] == cohort]
        with contextlib.redirect_stdout(io.StringIO()):
            official_by_group[cohort] = picai_evaluate(
                y_det=[maps[cases.index(c)] for c in members], y_true=[found[c][1] for c in members],
                subject_list=members, num_parallel_calls=1,
            )  # fmt: skip
    for name, attribute in (("auroc", "auroc"), ("AP", "AP"), ("lesions", "num_lesions")):
        expected = {cohort: getattr(official_by_group[cohort], attribute) for cohort in "ab"}
        assert aggregates[f"{name}_by_cohort_by_group"] == pytest.approx(expected, abs=TOL)
        assert aggregates[f"{name}_by_cohort"] == pytest.approx(sum(expected.values()) / 2, abs=TOL)
