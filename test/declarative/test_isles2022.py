"""The declared ISLES 2022 challenge (evaluation/declarations/isles2022.toml) against the official
evaluation's numbers recorded in test/metrics/golden/isles2022.json (github
ezequieldlrosa/isles22_docker_evaluation ``evaluation.py`` / ``eval_metrics_isles.py`` at the commit
recorded there, evalutils 0.3.1): every number the official container writes -- each case's Dice, volume
difference (ml), lesion count difference and lesion F1, and each metric's mean, std, min, 25pc, 50pc,
75pc, max and count -- on the cases scripts/make_demo_isles2022.py writes. The platform input is
written by ``python -m evaluation.make_input`` and scored by ``python -m evaluation`` in a subprocess.
Also: the statistics of null cases (pandas describe() as the oracle), the leaderboard's error paths
(mean ± std), the declaration's refusals, and -- where its checkout and pinned Python are at hand -- the
official container run live on other random lesions.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import uuid
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from declarative.helpers import REPO, TOL, evaluate, evaluate_input, last_line

from evaluation.declarative.engine import DeclaredChallenge
from evaluation.declarative.schema import parse
from evaluation.errors import ConfigurationError

DECLARATION = REPO / "evaluation" / "declarations" / "isles2022.toml"
GOLDEN = json.loads((REPO / "test" / "metrics" / "golden" / "isles2022.json").read_text())
_spec = importlib.util.spec_from_file_location("make_demo_isles2022", REPO / "scripts" / "make_demo_isles2022.py")
demo = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(demo)
FIRST_FORMS = 'aggregates = ["evalutils"]         # mean, std, min, 25pc, 50pc, 75pc, max, count ...'
METRICS = ("Dice", "Volume_difference", "Lesion_count_difference", "Lesion_F1_score")


def _compare(metrics: dict, golden: dict = GOLDEN) -> int:
    """Every official number equals ours (1e-9); how many were compared."""
    compared = 0
    assert sorted(metrics["case"]) == sorted(golden["cases"])
    for case, values in golden["cases"].items():
        assert metrics["case"][case].keys() == values.keys()  # the official container's per-case values only
        for metric, value in values.items():
            assert abs(metrics["case"][case][metric] - value) <= TOL, f"{case} {metric}"
            compared += 1
    assert metrics["aggregates"].keys() == golden["aggregates"].keys()
    for metric, statistics in golden["aggregates"].items():
        assert metrics["aggregates"][metric].keys() == statistics.keys()
        for statistic, value in statistics.items():
            assert abs(metrics["aggregates"][metric][statistic] - value) <= TOL, f"{metric} {statistic}"
            compared += 1
    return compared


def test_the_declaration_equals_the_official_evaluation(tmp_path: Path):
    demo.generate(tmp_path / "ground-truth", tmp_path / "outputs")
    done, metrics = evaluate(DECLARATION, tmp_path / "outputs", tmp_path / "ground-truth", tmp_path)
    assert done.returncode == 0, done.stderr
    assert _compare(metrics) == 72  # 4 metrics x (10 cases + 8 statistics)


def test_the_bundled_demo_equals_the_official_evaluation():
    assert _compare(json.loads((REPO / "test" / "expected" / "isles2022" / "metrics.json").read_text())) == 72


def test_the_phase_shows_mean_and_std():
    """The leaderboard's error paths: score_error_jsonpath and each column's error_path, as the platform
    names them; each is among the paths metrics.json must hold as a finite number."""
    phase = DeclaredChallenge(parse(DECLARATION.read_text(), DECLARATION.name)).phase
    settings = phase.settings_json()
    assert settings["score_jsonpath"] == "aggregates.Dice.mean"
    assert settings["score_error_jsonpath"] == "aggregates.Dice.std"
    assert [(c["path"], c["error_path"]) for c in settings["extra_results_columns"]] == [
        (f"aggregates.{m}.mean", f"aggregates.{m}.std") for m in METRICS[1:]
    ]
    assert "aggregates.Lesion_F1_score.std" in phase.leaderboard_paths


def _declaration(**changes: str) -> str:
    text = DECLARATION.read_text()
    for old, new in changes.items():
        assert old in text
        text = text.replace(old, new)
    return text


def test_statistics_skip_null_cases_as_pandas_describe(tmp_path: Path):
    """A case without a value (here Dice with both_empty = "exclude") is skipped by every statistic and
    not counted, as pandas describe() skips NaN."""
    declaration = tmp_path / "nulls.toml"
    declaration.write_text(_declaration(**{"both_empty = 1.0": 'both_empty = "exclude"'}))
    demo.generate(tmp_path / "ground-truth", tmp_path / "outputs")
    done, metrics = evaluate(declaration, tmp_path / "outputs", tmp_path / "ground-truth", tmp_path)
    assert done.returncode == 0, done.stderr
    assert metrics["case"]["both_empty"]["Dice"] is None
    values = pd.Series([np.nan if v["Dice"] is None else v["Dice"] for v in metrics["case"].values()])
    oracle = {key.replace("%", "pc"): float(value) for key, value in values.describe().items()}
    assert metrics["aggregates"]["Dice"]["count"] == 9
    assert metrics["aggregates"]["Dice"] == pytest.approx(oracle, abs=TOL)


def test_statistics_are_bootstrapped_except_none(tmp_path: Path):
    """With bootstrap = true each statistic has its percentile CI beside it."""
    declaration = tmp_path / "boot.toml"
    declaration.write_text(_declaration(**{'name = "Dice"\n': 'name = "Dice"\nbootstrap = true\n'}))
    platform_input = REPO / "test" / "input" / "isles2022"
    done, metrics = evaluate_input(declaration, platform_input, REPO / "ground-truth" / "isles2022", tmp_path,
                                   "--set", "bootstrap_resamples=200")  # fmt: skip
    assert done.returncode == 0, done.stderr
    dice = metrics["aggregates"]["Dice"]
    for statistic in ("mean", "std", "min", "25pc", "50pc", "75pc", "max"):
        assert dice[f"{statistic}_ci_low"] <= dice[f"{statistic}_ci_high"], statistic


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {FIRST_FORMS: 'aggregates = ["evalutils", "mean"]'},
            "metrics[0].aggregates: needs one or more distinct forms",
        ),
        (
            {FIRST_FORMS: 'aggregates = ["median"]'},
            "metrics[0].aggregates: 'median' is not one of mean, dataset (for dice) nor a statistic (std, min, 25pc, "
            "50pc, 75pc, max, count or 'evalutils')",
        ),
        (
            {'error = "aggregates.Dice.std"': 'error = "aggregates.Dice.sd"'},
            "leaderboard.error: 'aggregates.Dice.sd' is not a value this declaration writes",
        ),
        (
            {'error = "aggregates.Volume_difference.std"': 'error = "aggregates.Volume_difference.variance"'},
            "leaderboard.columns[0].error: 'aggregates.Volume_difference.variance' is not a value",
        ),
        ({'volume = "ml"': 'volume = "litres"'}, "metrics[1].volume: 'litres' is not one of voxels, mm3, ml"),
        (
            {"connectivity = 26                  # scipy": "connectivity = 8                  # scipy"},
            "metrics[2].connectivity: 8 is not one of 6, 18, 26",
        ),
    ],
    ids=["duplicate-form", "unknown-form", "unknown-error-path", "unknown-column-error", "unit", "connectivity"],
)
def test_the_declaration_refuses(changes: dict[str, str], message: str):
    with pytest.raises(ConfigurationError) as raised:
        parse(_declaration(**changes), "isles2022.toml")
    assert message in str(raised.value)


def test_a_null_error_path_fails_the_run_in_one_line(tmp_path: Path):
    """One case: std is undefined (ddof 1), so the ranked error path is null and the run refuses it."""
    outputs, ground_truth = tmp_path / "outputs", tmp_path / "ground-truth"
    reference, prediction = demo.cases()["overlap"]
    demo.write(reference, ground_truth / "labels" / "overlap.mha")
    demo.write(prediction, outputs / "overlap" / "images" / demo.OUTPUT / "overlap.mha")
    done, metrics = evaluate(DECLARATION, outputs, ground_truth, tmp_path)
    assert done.returncode != 0 and metrics is None
    assert "aggregates.Dice.std" in last_line(done.stderr)


# The official container run live, where its checkout and a Python with its pinned dependencies are at hand
# (here: /tmp/isles-official/code, a worktree of the golden's commit, and /tmp/isles-venv with evalutils 0.3.1,
# numpy 1.23.5, pandas 1.5.3; the golden's "environment"); skipped elsewhere (CI has neither).
OFFICIAL_CHECKOUT = Path(os.environ.get("ISLES22_CHECKOUT", "/tmp/isles-official/code"))
OFFICIAL_PYTHON = Path(os.environ.get("ISLES22_PYTHON", "/tmp/isles-venv/bin/python"))
_HARNESS = """
import json, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
import evaluation, jsonloader
from evalutils.validators import NumberOfCasesValidator, UniqueImagesValidator, UniquePathIndicesValidator
data = Path(sys.argv[2])
evaluation.load_predictions_json = lambda _: jsonloader.load_predictions_json(data / "predictions.json")
official = evaluation.Isles22()
cases = len(json.loads((data / "predictions.json").read_text()))
official._validators = (NumberOfCasesValidator(num_cases=cases), UniquePathIndicesValidator(), UniqueImagesValidator())
official._ground_truth_path, official._predictions_path = data / "ground-truth", data / "input"
official._output_file = data / "metrics.json"
official.evaluate()
"""


def _official(cases: dict[str, tuple[np.ndarray, np.ndarray]], data: Path) -> dict:
    """The official evaluation's metrics.json of ``cases`` written in its container's flat layout (the
    ground truth named as the input image, each prediction by its job's output pk), re-keyed by case."""
    entries = []
    for index, (case, (reference, prediction)) in enumerate(cases.items()):
        name, pk = f"case{index + 1:02d}_{case}.mha", str(uuid.UUID(int=(index + 1) << 96))  # a distinct first int
        demo.write(reference, data / "ground-truth" / name)
        demo.write(prediction, data / "input" / f"{pk}.mha")
        entries.append({"inputs": [{"interface": {"slug": "dwi-brain-mri"}, "image": {"name": name}}],
                        "outputs": [{"interface": {"slug": demo.OUTPUT}, "image": {"pk": pk}}]})  # fmt: skip
    (data / "predictions.json").write_text(json.dumps(entries))
    done = subprocess.run([str(OFFICIAL_PYTHON), "-c", _HARNESS, str(OFFICIAL_CHECKOUT), str(data)],
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    written = json.loads((data / "metrics.json").read_text())
    names = list(cases)  # the official index: the place in the sorted ground-truth names (= the case order)
    return {
        "cases": {names[int(i)]: {m: written["case"][m][i] for m in written["case"]} for i in written["case"]["Dice"]},
        "aggregates": written["aggregates"],
    }


_NO_OFFICIAL = not (OFFICIAL_CHECKOUT / "eval_metrics_isles.py").is_file() or not OFFICIAL_PYTHON.is_file()


@pytest.mark.skipif(
    _NO_OFFICIAL, reason="needs the official checkout and its Python (ISLES22_CHECKOUT, ISLES22_PYTHON)"
)
@pytest.mark.parametrize("seed", [1, 7, 2023])
def test_the_declaration_equals_the_official_code_run_live(tmp_path: Path, seed: int):
    """Other random lesions than the golden's, every number compared as ``_compare`` does."""
    cases = demo.cases(seed)
    official = _official(cases, tmp_path / "official")
    demo.generate(tmp_path / "ground-truth", tmp_path / "outputs", seed)
    done, metrics = evaluate(DECLARATION, tmp_path / "outputs", tmp_path / "ground-truth", tmp_path)
    assert done.returncode == 0, done.stderr
    assert _compare(metrics, official) == 72
