"""The declared CIBMTR 2025 challenge (evaluation/declarations/cibmtr2025.toml): the C-index per race
group, then mean minus standard deviation, against the official numbers recorded in
test/metrics/golden/cibmtr2025.json (the competition's ``score()``, repository and commit recorded
there, lifelines 0.30.3) on the cohorts of test/metrics/synthetic_survival.py. The participant's CSV is
written by ``python -m evaluation.make_input`` and scored by ``python -m evaluation``, each in a
subprocess. The official code fails on the cohort without a comparable pair; the declaration leaves it
out (the golden's ``without_no_event``) or, with ``undefined_group = "error"``, refuses it in one line.
"""

from __future__ import annotations

import importlib.util
import json

import pytest
from declarative.helpers import REPO, TOL, evaluate, last_line, run

DECLARATION = REPO / "evaluation" / "declarations" / "cibmtr2025.toml"
GOLDEN = json.loads((REPO / "test" / "metrics" / "golden" / "cibmtr2025.json").read_text())
_spec = importlib.util.spec_from_file_location("make_demo_cibmtr2025", REPO / "scripts" / "make_demo_cibmtr2025.py")
demo = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(demo)


def _evaluate(tmp_path, seed: int, declaration=DECLARATION):
    demo.generate(tmp_path / "gt", tmp_path / "outputs", seed)
    made = run("-m", "evaluation.make_input", "--challenge", str(declaration), "--outputs", str(tmp_path / "outputs"),
               "--output", str(tmp_path / "input"))  # fmt: skip
    assert made.returncode == 0, made.stderr
    return run("-m", "evaluation", "--challenge", str(declaration), "--input", str(tmp_path / "input"),
               "--ground-truth", str(tmp_path / "gt"), "--output", str(tmp_path / "out"))  # fmt: skip


def _compare(aggregates: dict, golden_run: dict) -> None:
    assert aggregates["stratified_c_index"] == pytest.approx(golden_run["without_no_event"], abs=TOL)
    per_cohort = {k: (None if isinstance(v, dict) else v) for k, v in golden_run["per_cohort"].items()}
    assert aggregates["stratified_c_index_by_group"] == pytest.approx(per_cohort, abs=TOL)


@pytest.mark.parametrize("golden_run", GOLDEN["runs"], ids=lambda r: f"seed{r['seed']}")
def test_the_declaration_equals_the_official_score(tmp_path, golden_run):
    done = _evaluate(tmp_path, golden_run["seed"])
    assert done.returncode == 0, done.stderr
    _compare(json.loads((tmp_path / "out" / "metrics.json").read_text())["aggregates"], golden_run)


def test_the_bundled_demo_equals_the_official_score():
    metrics = json.loads((REPO / "test" / "expected" / "cibmtr2025" / "metrics.json").read_text())
    _compare(metrics["aggregates"], next(r for r in GOLDEN["runs"] if r["seed"] == 0))


def test_an_undefined_group_is_refused_in_one_line_when_declared_so(tmp_path):
    strict = tmp_path / "cibmtr2025.toml"
    strict.write_text(DECLARATION.read_text().replace('undefined_group = "exclude"', 'undefined_group = "error"'))
    done = _evaluate(tmp_path, 0, strict)
    assert done.returncode != 0 and not (tmp_path / "out" / "metrics.json").exists()
    assert last_line(done.stderr).endswith(
        "The reference of output 'prediction' makes c_index undefined in group 'no_event' "
        "(solution.csv:race_group): declare undefined_group = 'exclude' or a number."
    ), done.stderr


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ('groups = "solution.csv:race_group"', 'groups = "race_group"', r"metrics\[0\]\.groups: 'race_group' is not"),
        ('over_groups = "mean_minus_std"', 'over_groups = "median"', r"metrics\[0\]\.over_groups: 'median' is not one"),
        ('undefined_group = "exclude"', 'undefined_group = "skip"', r"metrics\[0\]\.undefined_group: must be a number"),
        ('sign = "risk"', 'sign = "risk"\nbootstrap = true', r"metrics\[0\]\.bootstrap: a metric by group is not"),
        (
            '\nundefined_group = "exclude"',
            '\nincomplete_group = "skip"',
            r"metrics\[0\]\.incomplete_group: 'skip' is not one of score, null",
        ),
    ],
)
def test_bad_group_keys_are_named(old, new, message):
    from evaluation.declarative.schema import parse
    from evaluation.errors import ConfigurationError

    text = DECLARATION.read_text()
    assert old in text
    with pytest.raises(ConfigurationError, match=message):
        parse(text.replace(old, new), "cibmtr2025.toml")


def test_a_cohort_with_a_patient_without_prediction_is_null_and_the_mean_is_over_the_others(tmp_path):
    """LEOPARD-style "N/A" cohort (``incomplete_group = "null"``): patient p000's row is missing, so its
    cohort has no value and mean minus std is over the other scored cohorts' official C-indices (the
    cohort without a comparable pair still left out)."""
    golden_run = next(r for r in GOLDEN["runs"] if r["seed"] == 0)
    text = DECLARATION.read_text().replace(
        'event = "solution.csv:efs"', 'event = "solution.csv:efs"\nmissing = "exclude"'
    )
    declaration = tmp_path / "cibmtr2025.toml"
    declaration.write_text(
        text.replace('\nundefined_group = "exclude"', '\nincomplete_group = "null"\nundefined_group = "exclude"')
    )
    demo.generate(tmp_path / "gt", tmp_path / "outputs", 0)
    (tmp_path / "outputs" / "p000" / "prediction.json").unlink()
    (tmp_path / "outputs" / "p000").rmdir()
    done, metrics = evaluate(declaration, tmp_path / "outputs", tmp_path / "gt", tmp_path)
    assert done.returncode == 0, done.stderr
    solution = (tmp_path / "gt" / "solution.csv").read_text().splitlines()
    cohort = next(line.split(",")[3] for line in solution if line.startswith("p000,"))
    found = metrics["aggregates"]["stratified_c_index_by_group"]
    assert found[cohort] is None and metrics["missing"]["rows"] == ["p000"]
    others = {k: v for k, v in golden_run["per_cohort"].items() if k != cohort and not isinstance(v, dict)}
    assert {k: v for k, v in found.items() if k in others} == pytest.approx(others, abs=TOL)
    values = list(others.values())  # by hand: mean minus the population standard deviation
    mean = sum(values) / len(values)
    expected = mean - (sum((v - mean) ** 2 for v in values) / len(values)) ** 0.5
    assert metrics["aggregates"]["stratified_c_index"] == pytest.approx(expected, abs=TOL)


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("metric = \"dice\"\n", "metric = \"dice\"\ngroups = \"truth.csv:grade\"\n",
         r"metrics\[0\]\.groups: dice cannot be scored by group \(a metric of one value can: a segmentation"),
        ("[leaderboard]", "[[metrics]]\nmetric = \"mean\"\nof = [\"auroc\", \"balanced_accuracy\"]\n"
         "groups = \"truth.csv:grade\"\n[leaderboard]", r"metrics\[6\]\.groups: mean cannot be scored by group"),
    ],
)  # fmt: skip
def test_groups_are_refused_where_a_metric_has_more_than_one_value(old, new, message):
    from declarative.helpers import tiny_text

    from evaluation.declarative.schema import parse
    from evaluation.errors import ConfigurationError

    text = tiny_text()
    assert old in text
    with pytest.raises(ConfigurationError, match=message):
        parse(text.replace(old, new, 1), "tiny.toml")
    grouped = parse(text.replace('output = "p"\n', 'output = "p"\ngroups = "truth.csv:grade"\n', 1), "tiny.toml")
    (auroc,) = (m for m in grouped.metrics if m.groups)
    assert (auroc.metric, auroc.over_groups, auroc.undefined_group, auroc.incomplete_group) == (
        "auroc",
        "mean",
        "error",
        "score",
    )
