"""The declared MIDOG 2021 challenge (evaluation/declarations/midog2021.toml) against the official
evaluation's numbers recorded in test/metrics/golden/midog2021.json (github
DeepMicroscopy/MIDOG_evaluation_docker ``evaluation.py`` at the commit recorded there, evalutils 0.2.4),
on the images scripts/make_demo_midog2021.py writes from the golden's generator. The platform input is
written by ``python -m evaluation.make_input`` and scored by ``python -m evaluation``, each in a
subprocess. The official per-tumour values are declared as case groups (``groups = "tumours.csv:tumour"``).
"""

from __future__ import annotations

import importlib.util
import json

import pytest
from declarative.helpers import REPO, TOL, evaluate, run

DECLARATION = REPO / "evaluation" / "declarations" / "midog2021.toml"
GOLDEN = json.loads((REPO / "test" / "metrics" / "golden" / "midog2021.json").read_text())
_spec = importlib.util.spec_from_file_location("make_demo_midog2021", REPO / "scripts" / "make_demo_midog2021.py")
demo = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(demo)
SCORES = ("precision", "recall", "f1_score")


def _compare(metrics: dict, golden_run: dict) -> None:
    official = golden_run["aggregates"]
    assert metrics["aggregates"] == pytest.approx({key: official[key] for key in SCORES}, abs=TOL)
    counts = {image.removesuffix(".tiff"): case for image, case in golden_run["case"].items()}
    assert metrics["case"] == {
        case: {"f1_score_tp": c["true_positives"], "f1_score_fp": c["false_positives"],
               "f1_score_fn": c["false_negatives"]}
        for case, c in counts.items()
    }  # fmt: skip


@pytest.mark.parametrize("golden_run", GOLDEN["runs"], ids=lambda r: f"seed{r['seed']}")
def test_the_declaration_equals_the_official_evaluation(tmp_path, golden_run):
    demo.generate(tmp_path / "gt", tmp_path / "outputs", golden_run["seed"])
    made = run("-m", "evaluation.make_input", "--challenge", str(DECLARATION), "--outputs", str(tmp_path / "outputs"),
               "--output", str(tmp_path / "input"))  # fmt: skip
    assert made.returncode == 0, made.stderr
    done = run("-m", "evaluation", "--challenge", str(DECLARATION), "--input", str(tmp_path / "input"),
               "--ground-truth", str(tmp_path / "gt"), "--output", str(tmp_path / "out"))  # fmt: skip
    assert done.returncode == 0, done.stderr
    _compare(json.loads((tmp_path / "out" / "metrics.json").read_text()), golden_run)


def test_the_bundled_demo_equals_the_official_evaluation():
    metrics = json.loads((REPO / "test" / "expected" / "midog2021" / "metrics.json").read_text())
    _compare(metrics, next(r for r in GOLDEN["runs"] if r["seed"] == 0))


_PER_TUMOUR = "".join(
    f"""
[[metrics]]
name = "tumour_{name}"
metric = "detection_{metric}"
output = "mitotic-figures"
match = "distance"
threshold = 7.5e-3
matching = "reference"
classes = ["mitotic figure"]
epsilon = 1e-6
groups = "tumours.csv:tumour"
"""
    for name, metric in (("precision", "precision"), ("recall", "recall"), ("f1", "f1"))
)


def _per_tumour(tmp_path, seed: int, extra: str = "", drop: str = "") -> dict:
    """The official per-tumour scores declared as groups: images 001-010 are tumour 0, 011-020
    tumour 1 (the golden's split, test/metrics/test_detection_decision.py); ``drop``: an image
    whose output is removed."""
    text = DECLARATION.read_text().replace("\n[leaderboard]", _PER_TUMOUR.replace("\n\n", f"{extra}\n\n") +
                                           f"{extra}\n\n[leaderboard]", 1)  # fmt: skip
    tmp_path.mkdir(exist_ok=True)
    declaration = tmp_path / "midog2021-tumours.toml"
    declaration.write_text(text)
    demo.generate(tmp_path / "gt", tmp_path / "outputs", seed)
    rows = "".join(f"{index:03d},{(index - 1) // 10}\n" for index in range(1, 21))
    (tmp_path / "gt" / "tumours.csv").write_text(f"case,tumour\n{rows}")
    if drop:
        (tmp_path / "outputs" / drop / "mitotic-figures.json").unlink()
    done, metrics = evaluate(declaration, tmp_path / "outputs", tmp_path / "gt", tmp_path)
    assert done.returncode == 0, done.stderr
    return metrics


@pytest.mark.parametrize("golden_run", GOLDEN["runs"], ids=lambda r: f"seed{r['seed']}")
def test_the_per_tumour_scores_declared_as_groups_equal_the_official_evaluation(tmp_path, golden_run):
    metrics = _per_tumour(tmp_path, golden_run["seed"])
    official, aggregates = golden_run["aggregates"], metrics["aggregates"]
    for name in ("precision", "recall", "f1"):
        expected = {str(t): official[f"tumor_{t}_{name}"] for t in range(2)}
        assert aggregates[f"tumour_{name}_by_group"] == pytest.approx(expected, abs=TOL)
        assert aggregates[f"tumour_{name}"] == pytest.approx(sum(expected.values()) / 2, abs=TOL)
    assert aggregates["f1_score"] == pytest.approx(official["f1_score"], abs=TOL)  # the pooled F1 unchanged
    assert metrics["settings"]["metrics"]["tumour_f1"]["groups"] == "tumours.csv:tumour"
    assert "incomplete_group" not in metrics["settings"]["metrics"]["tumour_f1"]  # the default is not echoed


def test_a_tumour_with_an_image_without_output_is_null_when_declared_so(tmp_path):
    """LEOPARD-style "N/A" cohort: image 003 has no output, so tumour 0 has no value and the mean over
    the tumours is tumour 1's official F1; by default the image counts as no detection (missing = "empty")."""
    golden_run = next(r for r in GOLDEN["runs"] if r["seed"] == 0)
    metrics = _per_tumour(tmp_path, 0, '\nincomplete_group = "null"', drop="003")
    aggregates, tumour_1 = metrics["aggregates"], golden_run["aggregates"]["tumor_1_f1"]
    assert aggregates["tumour_f1_by_group"]["0"] is None
    assert aggregates["tumour_f1_by_group"]["1"] == pytest.approx(tumour_1, abs=TOL)
    assert aggregates["tumour_f1"] == pytest.approx(tumour_1, abs=TOL)
    assert metrics["settings"]["metrics"]["tumour_f1"]["incomplete_group"] == "null"
    assert metrics["missing"]["mitotic-figures"] == ["003"]
    assert set(metrics["case"]["003"]) == {"f1_score_tp", "f1_score_fp", "f1_score_fn"}  # (per-image counts kept)
    scored = _per_tumour(tmp_path / "default", 0, drop="003")["aggregates"]["tumour_f1_by_group"]
    assert scored["0"] is not None and scored["0"] != pytest.approx(golden_run["aggregates"]["tumor_0_f1"], abs=TOL)
    assert scored["1"] == pytest.approx(tumour_1, abs=TOL)
