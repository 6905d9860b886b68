"""The metric records (``evaluation/declarative/metric_records.py``): each names a catalogue entry with
the parameters and edge cases it really has, and the document derived from them (the editors' JSON Schema)
is the committed one; the schema accepts every packaged and README
declaration and refuses bad ones the parser refuses too."""

from __future__ import annotations

import json
import re
import tomllib

import pytest
from conftest import REPO, documented_section

from evaluation.declarative import derived
from evaluation.declarative.metric_records import RECORDS, Interval
from evaluation.declarative.schema import parse
from evaluation.errors import ConfigurationError
from evaluation.metrics import catalogue


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


# ------------------------------------------------------------------------- the editors' JSON Schema

BAD = [
    ("metric", 'metric = "dice"', 'metric = "dcie"', "'dcie' is not one of"),
    ("edge word", "both_empty = 1.0", 'both_empty = "skip"', "must be a number or 'exclude', not 'skip'"),
    ("interval", "tolerance_mm = 2.0", "tolerance_mm = -1.0", "tolerance_mm: must be positive"),
    ("choice", 'volume = "voxels"', 'volume = "litres"', "'litres' is not one of voxels, mm3"),
    ("unknown key", "both_empty = 1.0", "both_empty = 1.0\nbogus = 1", "bogus: unknown key"),
    ("missing policy", 'missing = "error"', 'missing = "zero"', "'zero' is not one of"),
]


def _declaration() -> str:
    return """
name = "bad"
title = "Bad"
[[inputs]]
slug = "ct"
[[outputs]]
slug = "mask"
kind = "segmentation"
reference = "labels/{case}.mha"
labels = { tumour = 1 }
missing = "error"
[[metrics]]
metric = "dice"
output = "mask"
both_empty = 1.0
volume = "voxels"
[[metrics]]
metric = "nsd"
output = "mask"
tolerance_mm = 2.0
[leaderboard]
score = "aggregates.dice_tumour_mean"
"""


def _validator():
    jsonschema = pytest.importorskip("jsonschema")
    return jsonschema.Draft202012Validator(derived.json_schema())


def _readme_declarations() -> dict[str, str]:
    complete = documented_section("The complete example")
    sketches = documented_section("More catalogue metrics")
    blocks = {"complete example": complete.split("```toml\n", 1)[1].split("\n```", 1)[0]}
    for i, block in enumerate(sketches.split("```toml\n")[1:]):
        blocks[f"sketch {i}"] = block.split("\n```", 1)[0]
    return blocks


def test_the_committed_json_schema_is_generated():
    committed = (REPO / "evaluation" / "declarations" / "declaration.schema.json").read_text(encoding="utf-8")
    assert committed == derived.schema_text(), "run python -m evaluation.declarative.derived"
    _validator().check_schema(json.loads(committed))


def _nodes(node: object) -> list[dict]:
    """Every subschema of the JSON Schema that declares a default (a ``properties`` map is keys, no subschema)."""
    if isinstance(node, list):
        return [found for inner in node for found in _nodes(inner)]
    if not isinstance(node, dict):
        return []
    inner = [value for key, value in node.items() if key != "properties"] + list(node.get("properties", {}).values())
    return [node] * ("default" in node) + _nodes(inner)


def test_every_default_of_the_json_schema_is_a_valid_value_of_its_key():
    jsonschema = pytest.importorskip("jsonschema")
    defaults = _nodes(derived.json_schema())
    assert len(defaults) > 200
    for node in defaults:
        rest = {key: value for key, value in node.items() if key != "default"}
        assert jsonschema.Draft202012Validator(rest).is_valid(node["default"]), node


@pytest.mark.parametrize(
    "name",
    [*(p.name for p in sorted((REPO / "evaluation" / "declarations").glob("*.toml"))), *_readme_declarations()],
)
def test_every_packaged_and_readme_declaration_validates(name):
    path = REPO / "evaluation" / "declarations" / name
    text = path.read_text(encoding="utf-8") if path.is_file() else _readme_declarations()[name]
    declaration = parse(text, name, str(path.parent) if path.is_file() else "")  # valid for the parser (a python
    # metric's file is beside its declaration) ...
    errors = [error.message for error in _validator().iter_errors(tomllib.loads(text))]
    if declaration.bases:  # one that extends another: its entries state only what changes, and the whole ...
        errors = [e for e in errors if not e.endswith("is a required property")]
        errors += [error.message for error in _validator().iter_errors(dict(declaration.raw))]
    assert errors == [], errors  # ... and for the editors' schema


def test_the_bad_declarations_fixture_is_valid():
    parse(_declaration(), "bad.toml")
    assert list(_validator().iter_errors(tomllib.loads(_declaration()))) == []


@pytest.mark.parametrize(("what", "old", "new", "message"), BAD, ids=[b[0] for b in BAD])
def test_a_bad_declaration_is_refused_by_the_schema_and_the_parser(what, old, new, message):
    text = _declaration().replace(old, new, 1)
    with pytest.raises(ConfigurationError, match=re.escape(message)):
        parse(text, "bad.toml")
    assert list(_validator().iter_errors(tomllib.loads(text))), what
