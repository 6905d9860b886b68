"""Phase settings: printed in the platform's field names; --check catches values the leaderboard
would drop; the evaluation refuses to write such a metrics.json."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest
from conftest import REPO

from evaluation import phase
from evaluation.phase import main
from evaluation.registry import get, names

FIELDS = {
    "score_title", "score_jsonpath", "score_error_jsonpath", "score_default_sort", "score_decimal_places",
    "extra_results_columns", "scoring_method_choice", "algorithm_inputs", "algorithm_outputs",
}  # fmt: skip


@pytest.mark.parametrize("name", names())
def test_settings_json_uses_platform_field_names(capsys, name):
    assert main(["--challenge", name]) == 0
    settings = json.loads(capsys.readouterr().out)
    assert set(settings) >= FIELDS
    assert settings["score_default_sort"] in ("asc", "desc")
    assert settings["scoring_method_choice"] in ("abs", "avg", "med")
    for column in settings["extra_results_columns"]:
        assert {"title", "path", "order"} <= set(column)


@pytest.mark.parametrize("name", [n for n in names() if (REPO / "test" / "expected" / n / "metrics.json").exists()])
def test_check_passes_on_bundled_demo_metrics(name):
    assert main(["--challenge", name, "--check", str(REPO / "test" / "expected" / name / "metrics.json")]) == 0


@pytest.mark.parametrize(
    ("document", "reason"),
    [
        ({"Score": None}, "'Score' is null"),
        ({"Score": "0.5"}, "'Score' is a str, not a number"),
        ({}, "'Score' is missing"),
        ({"Score.x": 0.5}, "'Score' is missing"),
    ],
)
def test_check_fails_naming_the_path(tmp_path, capsys, document, reason):
    path = tmp_path / "metrics.json"
    path.write_text(json.dumps({"AUROC": 0.9, "AUPRC": 0.8, **document}))
    assert main(["--challenge", "rare25", "--check", str(path)]) == 1
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert reason in last


def test_score_nested_under_a_dotted_key_is_unreachable(tmp_path, capsys):
    path = tmp_path / "metrics.json"
    path.write_text(json.dumps({"AUROC": 0.9, "AUPRC": 0.8, "results.v1": {"Score": 0.5}}))
    assert get("rare25").phase.score_jsonpath == "Score"
    assert main(["--challenge", "rare25", "--check", str(path)]) == 1
    assert "'Score' is missing" in capsys.readouterr().err


@pytest.fixture(scope="module")
def rare25_limits() -> dict:
    """One real --limits run on the bundled RARE25 demo (a subprocess evaluation, measured)."""
    run = subprocess.run(
        [sys.executable, "-m", "evaluation.phase", "--challenge", "rare25", "--limits", "--cases", "500",
         "--workers", "3", "--safety", "1.5"],
        cwd=REPO, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def test_limits_measure_the_demo(rare25_limits):
    measured = rare25_limits["measured"]
    assert rare25_limits["challenge"] == "rare25"
    assert measured["demo_cases"] == len(json.loads((REPO / "test/input/rare25/predictions.json").read_text()))
    # a Python process that imported numpy: tens of MB at least, far below the machine
    assert 20 < measured["peak_rss_mb_per_process"] < 8192
    assert measured["seconds_total"] > 0
    assert measured["seconds_per_case"] == pytest.approx(measured["seconds_total"] / measured["demo_cases"], abs=1e-3)


def test_limits_scale_the_measurement_with_the_stated_formula(rare25_limits):
    limits, measured = rare25_limits, rare25_limits["measured"]
    assert (limits["for_cases"], limits["workers"], limits["safety_factor"]) == (500, 3, 1.5)
    # memory: (workers + main process) x peak x safety + the platform's 1 GB, rounded up to whole GB
    assert limits["recommended_memory_gb"] == math.ceil(1.5 * 4 * measured["peak_rss_mb_per_process"] / 1024 + 1)
    # time: seconds per case x cases x safety, rounded up (rounding of the printed figures aside)
    assert abs(limits["recommended_time_limit_s"] - 1.5 * measured["seconds_per_case"] * 500) <= 2
    assert any("RLIMIT_DATA" in line for line in limits["assumptions"])


def test_limits_scale_with_the_cases_by_hand(monkeypatch):
    """A fixed measurement (demo run 3 s at 300 MB, 6 demo cases: 0.5 s per case) scaled by hand: time grows
    with the cases, memory per process does not."""
    monkeypatch.setattr(phase, "timed_run", lambda command, cwd: (0, 3.0, 300.0, ""))
    small, large = (phase.measure_limits("rare25", cases, 2, 2.0) for cases in (10, 1000))
    assert small["measured"]["seconds_per_case"] == 0.5
    assert small["recommended_time_limit_s"] == 10  # 2 x 0.5 x 10
    assert large["recommended_time_limit_s"] == 1000  # 2 x 0.5 x 1000
    assert small["recommended_memory_gb"] == large["recommended_memory_gb"] == 3  # ceil(2 x 3 x 300 / 1024 + 1)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--cases", "0"], "--cases and --workers must be at least 1"),
        (["--safety", "0.5"], "--safety at least 1"),
        (["--safety", "nan"], "--safety at least 1"),
        (["--safety", "inf"], "--safety at least 1"),  # was measured, then math.ceil(inf): a traceback
        (["--safety", "1e308"], "--safety at least 1 (at most 100)"),
        (["--cases", "1" + "0" * 400], "--cases and --workers must be at least 1 (at most 1000000000 and 10000)"),
    ],
)
def test_limits_refuse_bad_arguments(capsys, arguments, message):
    assert main(["--challenge", "rare25", "--limits", *arguments]) == 1
    assert message in capsys.readouterr().err.strip().splitlines()[-1]


def test_limits_fail_with_the_demo_message(monkeypatch, capsys):
    monkeypatch.setattr(phase, "timed_run", lambda command, cwd: (1, 1.0, 100.0, "Traceback\nbad demo case X\n"))
    assert main(["--challenge", "rare25", "--limits"]) == 1
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        "The rare25 demo evaluation failed (exit 1): bad demo case X"
    )
