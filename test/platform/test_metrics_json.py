"""metrics.json: plain numbers, the ranked-value guard, atomic writes."""

from __future__ import annotations

import json

import numpy as np
import pytest

from evaluation.errors import ConfigurationError
from evaluation.platform.metrics_json import MISSING, dumps, json_safe, lookup, ranked_value_problem, write_metrics


def test_numpy_scalars_become_plain_json():
    document = {"a": np.float32(0.5), "b": np.int64(3), "c": np.bool_(True), "d": np.array([1.0, np.nan])}
    assert json_safe(document) == {"a": 0.5, "b": 3, "c": True, "d": [1.0, None]}
    assert json.loads(dumps(document))["d"] == [1.0, None]


def test_lookup_walks_dict_keys_split_on_dots():
    document = {"aggregates": {"dice": 0.5}, "a.b": 1, "list": [1]}
    assert lookup(document, "aggregates.dice") == 0.5
    assert lookup(document, "a.b") is MISSING
    assert lookup(document, "list.0") is MISSING


@pytest.mark.parametrize(
    ("document", "problem"),
    [
        ({}, "missing"),
        ({"score": None}, "null"),
        ({"score": "0.5"}, "str"),
        ({"score": float("nan")}, "not finite"),
        ({"score": True}, "bool"),
    ],
)
def test_ranked_value_problems(document, problem):
    assert problem in ranked_value_problem(document, "score")


def test_write_refuses_bad_ranked_value_and_writes_nothing(tmp_path):
    with pytest.raises(ConfigurationError, match="'score' is not finite"):
        write_metrics(tmp_path / "metrics.json", {"score": float("nan")}, ["score"])
    assert list(tmp_path.iterdir()) == []


def test_write_is_complete_and_leaves_no_temporary(tmp_path):
    write_metrics(tmp_path / "metrics.json", {"score": np.float64(0.25), "other": float("inf")}, ["score"])
    assert json.loads((tmp_path / "metrics.json").read_text()) == {"score": 0.25, "other": None}
    assert [p.name for p in tmp_path.iterdir()] == ["metrics.json"]


def standard(document):
    return json.dumps(json_safe(document), indent=2, allow_nan=False) + "\n"


@pytest.mark.parametrize(
    ("entry", "fast"),
    [
        (lambda k: {"p": k / 7, "n": k, "ok": k % 2 == 0, "note": f'a%s"\\é{k}'}, True),
        (lambda k: {'odd "key" %s': k / 3}, True),
        (lambda k: {"p": float("nan") if k == 5 else k / 3}, False),  # null: the standard encoder
        (lambda k: {"p": None if k == 5 else k / 3}, False),
        (lambda k: {"p": k} if k else {"q": 1}, False),  # keys that differ
        (lambda k: {"p": np.float64(k)}, False),
        (lambda k: {}, False),
        (lambda k: {"note": "x" * 300 if k == 7 else "y"}, False),  # a text longer than LONGEST_TEXT
    ],
)
def test_a_large_per_case_section_written_by_columns_is_the_standard_encoders_bytes(entry, fast):
    """``dumps`` writes a large per-case section of plain values column by column: the same bytes."""
    from evaluation.platform import metrics_json

    document = {"aggregates": {"a": 0.5}, "case": {f"c{k}": entry(k) for k in range(1200)}, "settings": {"x": [1]}}
    assert (metrics_json._case_section(document["case"]) is not None) == fast
    assert dumps(document) == standard(document)
    assert dumps({"case": document["case"]}) == standard({"case": document["case"]})


@pytest.mark.parametrize(
    "cases",
    [
        ["c0", "c1", "c2"],  # plain ids: quoted around the texts
        [f"case {k}" for k in range(40)],
        ["c0", "c" * 300, "c2"],  # an id longer than LONGEST_TEXT: json.dumps
        ['a "quoted" id', "back\\slash", "é", "tab\there", "del\x7f", "%s"],  # ids the encoder escapes
    ],
)
@pytest.mark.parametrize("laid", [2**20, 1, 300])  # bytes of entries laid out at a time: all, one, a few
def test_a_per_case_section_held_by_columns_is_the_standard_encoders_bytes(cases, laid, monkeypatch):
    """``CaseColumns`` (a submission scored as columns): the bytes of the same section as dicts, at any size, laid
    out in pieces of any size."""
    from evaluation.platform import metrics_json
    from evaluation.platform.metrics_json import CaseColumns

    monkeypatch.setattr(metrics_json, "SECTION_BYTES", laid)
    assert dumps({"case": CaseColumns([], {"p": np.array([])})}) == standard({"case": {}})
    values = np.resize([0.1, -0.0, 1e-05, 1e16, 2.5, 1 / 3, 123456.789e-300], len(cases))
    rows = np.stack([values, values[::-1]], axis=1)
    for columns, inner in (
        ({"p": values, 'odd "key" %s': values[::-1].copy()}, {}),
        ({"probs": rows, "p": values}, {"probs": ("MEL", 'n"v')}),  # an object per case (probabilities)
        ({"p": values, "probs": rows}, {"probs": ("MEL", 'n"v')}),
    ):
        section = CaseColumns(cases, columns, inner)
        as_dicts = {case: dict(section[case]) for case in section}
        assert list(as_dicts) == cases and as_dicts[cases[1]]["p"] == -0.0
        for document in ({"aggregates": {"a": 0.5}, "case": section, "settings": {"x": [1]}}, {"case": section}):
            assert dumps(document) == standard({**document, "case": as_dicts})
