"""The metric records (``evaluation/declarative/metric_records.py``): each names a catalogue entry with
the parameters and edge cases it really has, and the documents derived from them (the README's table of
metrics) are the committed ones."""

from __future__ import annotations

import pytest
from conftest import REPO

from evaluation.declarative import derived
from evaluation.declarative.metric_records import RECORDS, Interval
from evaluation.metrics import catalogue


def test_the_readme_table_of_metrics_is_generated_from_the_records():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert derived.BEGIN in readme and derived.END in readme
    assert derived.readme_with_table(readme) == readme, "run python -m evaluation.declarative.derived"


@pytest.mark.parametrize("record", RECORDS, ids=lambda r: r.name)
def test_a_record_names_what_its_catalogue_entry_has(record):
    entry = catalogue.get(record.catalogue)
    for edge in record.edges:
        if edge.parameter is not None:
            assert edge.parameter in entry.edge_cases, (record.name, edge.key)
    for param in record.params:
        if param.parameter:
            assert param.parameter in entry.parameters, (record.name, param.key)
    if record.resampling == "weights":
        assert "weights" in entry.parameters, record.name
    if record.probability_catalogue:
        catalogue.get(record.probability_catalogue)
    assert record.forms[:1] in ((), ("mean",)), record.name
    assert len({p.key for p in record.params if p.when is None}) == len([p for p in record.params if p.when is None])


@pytest.mark.parametrize(
    ("interval", "inside", "outside", "problem"),
    [
        (Interval(0, 1), (0, 1), (-0.1, 1.1), "must be in [0, 1]"),
        (Interval(0, 1, "left", why="a match needs IoU strictly above it"), (0,), (1,),
         "must be in [0, 1) (a match needs IoU strictly above it)"),
        (Interval(0, None, "neither", "must be positive"), (1e-9,), (0,), "must be positive"),
        (Interval(None, 2, "right"), (-5, 2), (2.5,), "must be in (-inf, 2]"),
    ],
)  # fmt: skip
def test_an_interval_holds_and_says_its_bounds(interval, inside, outside, problem):
    assert all(interval.holds(value) for value in inside)
    assert not any(interval.holds(value) for value in outside)
    assert interval.problem == problem
