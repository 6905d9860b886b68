"""The declared MIDOG 2021 challenge (evaluation/declarations/midog2021.toml) against the official
evaluation's numbers recorded in test/metrics/golden/midog2021.json (github
DeepMicroscopy/MIDOG_evaluation_docker ``evaluation.py`` at the commit recorded there, evalutils 0.2.4),
on the images scripts/make_demo_midog2021.py writes from the golden's generator. The platform input is
written by ``python -m evaluation.make_input`` and scored by ``python -m evaluation``, each in a
subprocess. The official per-tumour values need case groups (not declared here).
"""

from __future__ import annotations

import importlib.util
import json

import pytest
from declarative.helpers import REPO, TOL, run

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
