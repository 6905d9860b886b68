"""Edge values as null: "null" is a documented edge value (no value, left out of the means, null in
metrics.json), and a non-finite number is refused in one line wherever a number is declared."""

from __future__ import annotations

import numpy as np
import pytest
import surface_distance
from conftest import REPO
from declarative.helpers import A1, A1_SHIFTED, A2, tiny_case, tiny_data, volume

from evaluation.declarative.schema import parse
from evaluation.errors import ConfigurationError

KITS = (REPO / "evaluation" / "declarations" / "kits-example.toml").read_text(encoding="utf-8")
ONE_EMPTY = 'one_empty = "diagonal"'


def test_null_is_an_edge_value():
    declaration = parse(KITS.replace(ONE_EMPTY, 'one_empty = "null"', 1), "kits.toml")
    (hd95,) = (m for m in declaration.metrics if m.metric == "hd95")
    assert hd95.param("one_empty") == "null"


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (ONE_EMPTY, "one_empty = nan", "metrics[2].one_empty: must be a finite number, not nan"),
        (ONE_EMPTY, "one_empty = inf", "metrics[2].one_empty: must be a finite number, not inf"),
        ("both_empty = 1.0 ", "both_empty = nan ", "metrics[0].both_empty: must be a finite number"),
        ("tolerance_mm = 2.0", "tolerance_mm = inf", "metrics[1].tolerance_mm: must be a finite number, not inf"),
        (ONE_EMPTY, 'one_empty = "none"', "metrics[2].one_empty: must be a number or 'diagonal' or 'null', not 'none'"),
    ],
)  # fmt: skip
def test_non_finite_edge_values_are_refused(old, new, message):
    assert old in KITS
    with pytest.raises(ConfigurationError) as caught:
        parse(KITS.replace(old, new, 1), "kits.toml")
    assert f"kits.toml: {message}" in str(caught.value)
    assert "\n" not in str(caught.value)


_SURFACES = """
[[metrics]]
metric = "nsd"
output = "seg"
labels = ["a"]
tolerance_mm = 1.0
one_empty = __NSD__
[[metrics]]
metric = "hausdorff"
output = "seg"
labels = ["a"]
one_empty = __HD__
[[metrics]]
metric = "masd"
output = "seg"
labels = ["a"]
one_empty = __HD__
"""


def test_one_empty_null_for_every_surface_metric(tmp_path, evaluate_cli):
    """c4's prediction is missing (an empty mask against a reference lesion): with one_empty = "null"
    its nsd, hd95, hausdorff and masd are null and each mean is over c1..c3 (c1's NSD by DeepMind's
    surface_distance, c2 equal masks 1, c3 both empty 1); the defaults give 0 and the diagonal."""
    root, references, predictions, likelihoods, grades = tiny_data(tmp_path)
    runs = {}
    for name, nsd, distance in (("null", '"null"', '"null"'), ("default", "0.0", '"diagonal"')):
        toml, ground_truth, input_dir = tiny_case(root / name, predictions, references, likelihoods, grades,
                                                  ONE_EMPTY=distance)  # fmt: skip
        toml.write_text(toml.read_text().replace("[leaderboard]", _SURFACES + "[leaderboard]")
                        .replace("__NSD__", nsd).replace("__HD__", distance))  # fmt: skip
        run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
        assert run.exit_code == 0, run.stderr
        runs[name] = run.metrics
    distances = surface_distance.compute_surface_distances(
        volume(A1).astype(bool), volume(A1_SHIFTED, A2).astype(bool), (1.0, 1.0, 1.0)
    )
    c1 = surface_distance.compute_surface_dice_at_tolerance(distances, 1.0)
    case, aggregates = runs["null"]["case"], runs["null"]["aggregates"]
    assert case["c1"]["nsd_a"] == pytest.approx(c1, abs=1e-12)
    assert [case[c]["nsd_a"] for c in ("c2", "c3", "c4")] == [1.0, 1.0, None]
    assert aggregates["nsd_a_mean"] == pytest.approx((c1 + 2) / 3, abs=1e-12)
    for metric in ("hd95", "hausdorff", "masd"):
        values = [case[c][f"{metric}_a"] for c in ("c1", "c2", "c3", "c4")]
        assert values[1:] == [0.0, 0.0, None]
        assert aggregates[f"{metric}_a_mean"] == pytest.approx(values[0] / 3, abs=1e-12)
    default = runs["default"]["case"]
    assert default["c4"]["nsd_a"] == 0.0 and runs["default"]["aggregates"]["nsd_a_mean"] == pytest.approx((c1 + 2) / 4)
    assert default["c4"]["hausdorff_a"] == pytest.approx(np.linalg.norm([6, 8, 8]))  # the image diagonal, mm
    assert runs["default"]["settings"]["metrics"]["nsd"]["one_empty"] == 0.0
    assert runs["null"]["settings"]["metrics"]["nsd"]["one_empty"] == "null"
