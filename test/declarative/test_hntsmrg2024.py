"""The declared HNTS-MRG 2024 challenge (evaluation/declarations/hntsmrg2024.toml) against the official
notebook's numbers recorded in test/metrics/golden/hntsmrg2024.json (github kwahid/HNTSMRG_2024
``Evaluation_example/DSCagg_calculation.ipynb`` at the commit recorded there): all 23 -- each case's
Dice of GTVp and GTVn, the aggregated Dice of each and their mean, the means over cases with and
without the cases whose reference lacks the label -- on the cases scripts/make_demo_hntsmrg2024.py
writes (``hntsmrg_cases``), both in the bundled demo's metrics.json and written afresh through
``python -m evaluation.make_input`` and ``python -m evaluation`` in a subprocess.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from declarative.helpers import REPO, TOL, evaluate

from evaluation.declarative.engine import DeclaredChallenge
from evaluation.declarative.schema import parse

DECLARATION = REPO / "evaluation" / "declarations" / "hntsmrg2024.toml"
GOLDEN = json.loads((REPO / "test" / "metrics" / "golden" / "hntsmrg2024.json").read_text())
_spec = importlib.util.spec_from_file_location("make_demo_hntsmrg2024", REPO / "scripts" / "make_demo_hntsmrg2024.py")
demo = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(demo)


def _compare(metrics: dict) -> int:
    """Every official number equals ours (1e-9); how many were compared."""
    pairs = []
    assert sorted(metrics["case"]) == sorted(GOLDEN["cases"])
    for case, row in GOLDEN["cases"].items():
        pairs += [(metrics["case"][case]["dsc_gtvp"], row["DSC1"]), (metrics["case"][case]["dsc_gtvn"], row["DSC2"])]
    aggregates, official = metrics["aggregates"], GOLDEN["AggregatedDsc"]
    pairs += [(aggregates["dsc_gtvp_dataset"], official["GTVp"]), (aggregates["dsc_gtvn_dataset"], official["GTVn"])]
    pairs.append((aggregates["dsc_agg"], official["mean"]))
    for label, k in (("gtvp", 1), ("gtvn", 2)):
        pairs.append((aggregates[f"dsc_{label}_mean"], GOLDEN[f"mean_DSC{k}"]))
        pairs.append((aggregates[f"dsc_positives_{label}_mean"], GOLDEN[f"mean_DSC{k}_nozeros"]))
    for ours, value in pairs:
        assert abs(ours - value) <= TOL, (ours, value)
    return len(pairs)


def test_the_bundled_demo_equals_the_official_notebook():
    assert _compare(json.loads((REPO / "test" / "expected" / "hntsmrg2024" / "metrics.json").read_text())) == 23


def test_the_declaration_equals_the_official_notebook(tmp_path: Path):
    demo.generate(tmp_path / "ground-truth", tmp_path / "outputs")
    done, metrics = evaluate(DECLARATION, tmp_path / "outputs", tmp_path / "ground-truth", tmp_path)
    assert done.returncode == 0, done.stderr
    assert _compare(metrics) == 23


def test_the_phase_ranks_the_mean_aggregated_dice():
    settings = DeclaredChallenge(parse(DECLARATION.read_text(), DECLARATION.name)).phase.settings_json()
    assert settings["score_jsonpath"] == "aggregates.dsc_agg"
    assert settings["score_default_sort"] == "desc"
    assert [c["path"] for c in settings["extra_results_columns"]] == [
        "aggregates.dsc_gtvp_dataset",
        "aggregates.dsc_gtvn_dataset",
    ]
