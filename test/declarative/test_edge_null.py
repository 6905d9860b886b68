"""Edge values as null: "null" is a documented edge value (no value, left out of the means, null in
metrics.json), and a non-finite number is refused in one line wherever a number is declared."""

from __future__ import annotations

import pytest
from conftest import REPO

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
