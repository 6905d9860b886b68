"""Per-case results kept private (--case-results private): aggregates only in the public metrics.json,
every per-case value in case-results.json for the organizer; the ranking tools read either form."""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import DEMO_INPUT

from evaluation.ranking.cli import main as ranking_main
from evaluation.ranking.data import collect

CHALLENGE = "hecktor2026"


@pytest.fixture
def runs(evaluate_cli):
    public = evaluate_cli(CHALLENGE, DEMO_INPUT / CHALLENGE)
    private = evaluate_cli(CHALLENGE, DEMO_INPUT / CHALLENGE, "--case-results", "private")
    assert public.exit_code == 0 and private.exit_code == 0, private.stderr
    return public, private


def test_public_file_has_no_per_case_value_and_the_organizer_file_has_them_all(runs):
    public, private = runs
    shown = private.metrics
    organizer = json.loads((private.output / "case-results.json").read_text())
    assert "case" not in shown and public.metrics["case"]
    assert organizer["case"] == public.metrics["case"]
    assert shown["aggregates"] == public.metrics["aggregates"] and shown["missing"] == public.metrics["missing"]
    assert organizer["settings"] == public.metrics["settings"]
    assert shown["settings"] == {**public.metrics["settings"], "case_results": "private: per-case values in "
                                 "case-results.json"}  # fmt: skip
    assert set(shown) == set(public.metrics) - {"case"}


def test_default_stays_public_with_no_second_file(runs):
    public, _ = runs
    assert not (public.output / "case-results.json").exists()
    assert "case_results" not in public.metrics["settings"]


def test_ranking_collects_and_ranks_the_same_from_either_form(runs, tmp_path):
    public, private = runs
    for form, run in (("public", public), ("private", private)):
        for name in ("team-a", "team-b"):
            shutil.copytree(run.output, tmp_path / form / name)
    assert collect(tmp_path / "public").equals(collect(tmp_path / "private"))
    outputs = []
    for form in ("public", "private"):
        args = ["--leaderboard", "gc-absolute", "--metrics-dir", str(tmp_path / form), "--output",
                str(tmp_path / f"board-{form}"), "--path", "aggregates.segmentation.score"]  # fmt: skip
        assert ranking_main(args) == 0
        outputs.append(json.loads((tmp_path / f"board-{form}/leaderboard.json").read_text())["ranks"])
    assert outputs[0] == outputs[1] == {"team-a": 1, "team-b": 1}


def test_a_failed_run_leaves_neither_file(evaluate_cli, tmp_path):
    broken = tmp_path / "input"
    shutil.copytree(DEMO_INPUT / CHALLENGE, broken)
    next(broken.rglob("rfs.json")).write_text("NaN")
    run = evaluate_cli(CHALLENGE, broken, "--case-results", "private")
    assert run.exit_code == 1
    assert not run.wrote_metrics and not (run.output / "case-results.json").exists()


def test_an_unknown_mode_is_one_line_for_the_organizer(evaluate_cli, monkeypatch):
    monkeypatch.setenv("EVALUATION_CASE_RESULTS", "secret")
    run = evaluate_cli("rare25", DEMO_INPUT / "rare25")
    assert run.exit_code == 1 and not run.wrote_metrics
    assert run.last_error_line == "--case-results (or EVALUATION_CASE_RESULTS) must be public or private; got 'secret'."


def test_phase_check_warns_when_per_case_values_would_be_public(runs, capsys):
    from evaluation.phase import main as phase_main

    public, private = runs
    for run, warned in ((public, True), (private, False)):
        capsys.readouterr()
        assert phase_main(["--challenge", CHALLENGE, "--check", str(run.output / "metrics.json")]) == 0
        out = capsys.readouterr().out
        assert ("Warning: " in out) is warned
    assert phase_main(["--challenge", CHALLENGE, "--check", str(public.output / "metrics.json")]) == 0
    assert f"holds per-case values ({len(public.metrics['case'])} cases under 'case')" in capsys.readouterr().out
