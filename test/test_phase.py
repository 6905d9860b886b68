"""Phase settings: printed in the platform's field names; --check catches values the leaderboard
would drop; the evaluation refuses to write such a metrics.json."""

from __future__ import annotations

import json

import pytest
from conftest import REPO

from evaluation.challenges import get, names
from evaluation.phase import main

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
