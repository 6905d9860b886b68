"""The open interface on boxes outputs (issue 29): a whole-set function sees every image's parsed boxes and
reference boxes (arrays of objects, resampled by the bootstrap), a per-image function one image's; integers
stay integers, per-image flags booleans, a per-image None no entry; options without a declared target reach
the functions as ``context.options``. Hand-counted on the catalogue's detection example."""

from __future__ import annotations

import pytest
from declarative.helpers import bootstrap_ci, close_ci
from declarative.test_catalogue_metrics import DETECTION, PREDICTED_BOXES, REFERENCE_BOXES, detection_case

from evaluation.declarative.schema import parse
from evaluation.errors import ConfigurationError

RULES = '''
import numpy as np


def kept(predictions, references, context):
    """Over the set: the predictions scored at least the option 'cut', and the reference boxes."""
    assert predictions.dtype == object and references.dtype == object
    assert all(isinstance(p, tuple) and p[0].shape == (p[1].size, 4) for p in predictions)
    return {"kept": int(sum(int((scores >= context.options["cut"]).sum()) for _, scores in predictions)),
            "reference": int(sum(len(r) for r in references)),
            "share": float(np.mean([len(r) > 0 for r in references]))}


def image(prediction, reference, context):
    """One image: its predictions, whether it has no reference box, and (else) predictions per box."""
    boxes, scores = prediction
    return {"boxes": int(scores.size), "negative": not len(reference),
            "per_box": scores.size / len(reference) if len(reference) else None}
'''

OWN = (
    DETECTION.split("[[metrics]]")[0]
    + """
[[metrics]]
name = "objects"
metric = "python"
output = "cells"
over = "set"
function = "rules.py:kept"
returns = ["kept", "reference", "share"]
bootstrap = true

[[metrics]]
name = "image"
metric = "python"
output = "cells"
function = "rules.py:image"
returns = ["boxes", "negative", "per_box"]
aggregates = []
case_key = "{label}"

[[options]]
name = "cut"
default = 0.5
help = "the score a kept prediction reaches"

[bootstrap]
resamples = 50

[leaderboard]
score = "aggregates.objects_kept"
"""
)


def own_case(tmp_path):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "rules.py").write_text(RULES)
    return detection_case(tmp_path / "run", OWN)


@pytest.mark.parametrize("cut", [None, 0.8])
def test_functions_on_boxes_by_hand(tmp_path, evaluate_cli, cut):
    toml, ground_truth, input_dir = own_case(tmp_path)
    extra = ("--set", f"cut={cut}") if cut is not None else ()
    run = evaluate_cli(str(toml), input_dir, *extra, ground_truth=ground_truth)
    assert run.exit_code == 0, run.stderr
    aggregates, per_case = run.metrics["aggregates"], run.metrics["case"]
    scores = [row[4] for rows in PREDICTED_BOXES.values() for row in rows]
    kept = sum(score >= (cut or 0.5) for score in scores)  # 0.5: 6 of 8; 0.8: 4
    assert aggregates["objects_kept"] == kept and aggregates["objects_reference"] == 4
    assert aggregates["objects_share"] == pytest.approx(2 / 3)
    written = (run.output / "metrics.json").read_text()
    assert f'"objects_kept": {kept},' in written and '"objects_reference": 4,' in written  # integers
    per_image = [sum(row[4] >= (cut or 0.5) for row in rows) for rows in PREDICTED_BOXES.values()]
    close_ci(aggregates, "objects_kept", bootstrap_ci(lambda drawn: sum(per_image[i] for i in drawn), 3, 50, 0, 0.95))
    assert not any(key.startswith("image") for key in aggregates)  # per image only
    for case, rows in PREDICTED_BOXES.items():
        expected = {"boxes": len(rows), "negative": not REFERENCE_BOXES[case]}
        if REFERENCE_BOXES[case]:
            expected["per_box"] = len(rows) / len(REFERENCE_BOXES[case])
        assert per_case[case] == expected
    assert '"negative": true' in written and '"boxes": 4,' in written
    assert run.metrics["settings"]["cut"] == (cut or 0.5)


def test_an_option_without_a_target_needs_a_python_metric():
    text = DETECTION.replace("[bootstrap]", '[[options]]\nname = "cut"\ndefault = 0.5\n[bootstrap]')
    with pytest.raises(ConfigurationError, match=r"options\[0\]\.sets: needs at least one declared value"):
        parse(text, "det.toml")


def test_a_boolean_is_kept_only_where_nothing_aggregates_it(tmp_path, evaluate_cli):
    toml, ground_truth, input_dir = own_case(tmp_path)
    toml.write_text(toml.read_text().replace("aggregates = []\n", ""))
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert run.exit_code == 1 and run.last_error_line.startswith("rules.py: image: case i1: returned 'negative': bool")
