"""ISIC 2019 / 2018 as declarations (issue 29): evaluation/declarations/isic2019.toml and isic2018.toml (with
isic_rules.py) replace the module evaluation/challenges/isic.py, and give what it gave, byte for byte.

The module's bytes were recorded before it was removed: each demo's metrics.json in test/expected/ (compared by
test/test_expected.py), its metrics.json under every ``--set`` option it offered and its phase under each target
metric in test/declarative/isic/expected/ (below), its last stderr line for every hostile input
(test/test_hostile.py) and for each submission check of the reference (test/challenges/test_isic.py, which also
compares every number with isic-challenge-scoring 5.6.0 run as the oracle). Before the removal the declarations
were compared with the module on generated weighted submissions (tied maxima, zero weights, ISIC_0035068, a
category without weighted positives) for each target metric: the same documents, byte for byte.
"""

from __future__ import annotations

import json

import pytest
from conftest import DEMO_INPUT, REPO

from evaluation.registry import get

RECORDED = REPO / "test" / "declarative" / "isic" / "expected"
EDITIONS = ("isic2019", "isic2018")
OPTIONS = ["target_metric=auc", "target_metric=ap", "max_file_mb=50"]
REFUSED = {  # the module's last stderr lines
    "max_file_mb=0.1": "The prediction file predictions.csv is 0.2 MB, more than the 0.1 MB allowed; a CSV of "
    "probabilities for every image is far smaller.",
    "target_metric=x": "Option target_metric must be one of balanced_accuracy, auc, ap; got 'x'.",
}


@pytest.mark.parametrize("option", OPTIONS)
@pytest.mark.parametrize("edition", EDITIONS)
def test_every_option_gives_the_modules_bytes(evaluate_cli, edition, option):
    """``overall`` and ``validation`` hold the target metric; a larger file is allowed."""
    run = evaluate_cli(edition, DEMO_INPUT / edition, "--set", option)
    assert run.exit_code == 0, run.last_error_line
    expected = (RECORDED / f"{edition}-{option.replace('=', '-')}.json").read_bytes()
    assert (run.output / "metrics.json").read_bytes() == expected


@pytest.mark.parametrize("option", list(REFUSED))
def test_a_refused_option_value_gives_the_modules_line(evaluate_cli, option):
    run = evaluate_cli("isic2019", DEMO_INPUT / "isic2019", "--set", option)
    assert (run.exit_code, run.wrote_metrics, run.last_error_line) == (1, False, REFUSED[option])


@pytest.mark.parametrize("target", ["balanced_accuracy", "auc", "ap"])
@pytest.mark.parametrize("edition", EDITIONS)
def test_the_phase_under_each_target_metric_is_the_modules(edition, target):
    """The leaderboard's title and columns move with target_metric (an option that sets the whole [leaderboard]),
    as ``python -m evaluation.phase --set target_metric=...`` printed them."""
    challenge = get(edition)
    phase = challenge.phase_for(challenge.settings({"target_metric": target}))
    expected = json.loads((RECORDED / f"{edition}-phase-{target}.json").read_text())
    assert {"challenge": challenge.name, **phase.settings_json()} == expected
