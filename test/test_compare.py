"""``python -m evaluation.compare``: equal files, numbers off, missing keys, lists of other lengths."""

from __future__ import annotations

import json
import re

import pytest

from evaluation.compare import main

EXPECTED = {"Score": 0.5, "aggregates": {"dice": 0.75, "ranks": [1, 2]}, "settings": {"seed": 0}}


def _files(tmp_path, actual):
    (tmp_path / "e.json").write_text(json.dumps(EXPECTED))
    (tmp_path / "a.json").write_text(json.dumps(actual))
    return [str(tmp_path / "e.json"), str(tmp_path / "a.json")]


def test_equal_files(tmp_path, capsys):
    assert main(_files(tmp_path, EXPECTED)) == 0
    assert "agrees" in capsys.readouterr().out


def test_number_within_and_beyond_tolerance(tmp_path, capsys):
    within = {**EXPECTED, "Score": 0.5 + 1e-12}
    assert main(_files(tmp_path, within)) == 0
    capsys.readouterr()
    beyond = {**EXPECTED, "aggregates": {"dice": 0.7501, "ranks": [1, 2]}}
    assert main(_files(tmp_path, beyond)) == 1
    assert capsys.readouterr().out.splitlines() == ["aggregates.dice: expected 0.75, actual 0.7501 (|diff| 0.0001)"]
    assert main([*_files(tmp_path, beyond), "--tol", "1e-3"]) == 0


def test_missing_and_extra_keys(tmp_path, capsys):
    actual = {"Score": 0.5, "aggregates": {"dice": 0.75, "ranks": [1, 2]}, "new": 1}
    assert main(_files(tmp_path, actual)) == 1
    assert capsys.readouterr().out.splitlines() == ['settings: missing (expected {"seed": 0})', "new: extra (actual 1)"]


def test_list_of_different_length_and_type_changes(tmp_path, capsys):
    actual = {"Score": None, "aggregates": {"dice": 0.75, "ranks": [1, 2, 3]}, "settings": {"seed": "0"}}
    assert main(_files(tmp_path, actual)) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines == [
        "Score: expected 0.5, actual null",
        "aggregates.ranks: list of 2 expected, 3 actual",
        'settings.seed: expected 0, actual "0"',
    ]


@pytest.mark.parametrize("tolerance", ["-1", "nan", "inf"])
def test_a_tolerance_that_is_not_a_finite_number_at_least_0_is_one_line(tmp_path, capsys, tolerance):
    """A negative --tol made math.isclose raise (a traceback); NaN or infinity would accept anything."""
    with pytest.raises(SystemExit) as stopped:
        main([*_files(tmp_path, EXPECTED), "--tol", tolerance])
    assert stopped.value.code == 2
    last = capsys.readouterr().err.splitlines()[-1]
    assert last.endswith(f"argument --tol: must be a finite number at least 0, got '{tolerance}'")


def test_a_tolerance_that_is_not_a_number_keeps_argparse_words(tmp_path, capsys):
    with pytest.raises(SystemExit) as stopped:
        main([*_files(tmp_path, EXPECTED), "--tol", "x"])
    assert stopped.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1].endswith("argument --tol: invalid float value: 'x'")


def test_a_provenance_record_replays_to_the_same_bytes(tmp_path, capsys):
    """Issue 21 item 4: ``--provenance`` writes the record beside an unchanged metrics.json;
    ``--replay`` re-runs it and says whether the bytes match. Issue 27: a check, not a
    demonstration (every refusal of a record: test_hostile.py, the provenance table)."""
    from conftest import DEMO_INPUT, REPO

    from evaluation import cli
    from evaluation.provenance import file_sha256, tree_sha256

    output = tmp_path / "out"
    assert cli.main(["--challenge", "rare25", "--input", str(DEMO_INPUT / "rare25"), "--output", str(output),
                     "--provenance", "--set", "iterations=1000"]) == 0  # fmt: skip
    assert (output / "metrics.json").read_bytes() == (REPO / "test/expected/rare25/metrics.json").read_bytes()
    record = json.loads((output / "provenance.json").read_text())
    assert record["sha256"] == {
        "predictions": tree_sha256(DEMO_INPUT / "rare25", "input"),
        "ground_truth": tree_sha256(REPO / "ground-truth/rare25", "ground truth"),
        "declaration": file_sha256(REPO / "evaluation/declarations/rare25.toml", "rare25.toml"),
        "metrics.json": file_sha256(output / "metrics.json", "metrics.json"),
        "code": {"rare25_rules.py": file_sha256(REPO / "evaluation/declarations/rare25_rules.py", "rare25_rules.py")},
    }  # (a declared challenge: its file and its own rule's code are hashed)
    assert record["seed"] == 0 and record["command"]["set"] == {"iterations": "1000"}
    assert {"numpy", "scipy", "scikit-learn"} <= set(record["libraries"])
    capsys.readouterr()
    assert main(["--replay", str(output / "provenance.json")]) == 0
    assert "wrote the same metrics.json bytes" in capsys.readouterr().out

    record["libraries"]["numpy"] = "0.1"  # another environment: named in the verdict, not a failure
    (output / "provenance.json").write_text(json.dumps(record))
    assert main(["--replay", str(output / "provenance.json")]) == 0
    assert capsys.readouterr().out.splitlines()[-1].endswith("; it ran with numpy " + __import__("numpy").__version__
                                                             + " (recorded 0.1).")  # fmt: skip

    record["command"]["set"] = {"iterations": "500"}  # the same inputs, another run: other bytes
    (output / "provenance.json").write_text(json.dumps(record))
    assert main(["--replay", str(output / "provenance.json")]) == 1
    captured = capsys.readouterr()
    assert "settings.iterations: expected 1000, actual 500" in captured.out, captured
    assert re.search(r"wrote different metrics.json bytes \([1-9]\d* difference\(s\) beyond 1e-09\)", captured.err)

    record["sha256"]["predictions"] = "1" * 64  # a recorded hash that is no longer the input's: refused
    (output / "provenance.json").write_text(json.dumps(record))
    assert main(["--replay", str(output / "provenance.json")]) == 1
    last = capsys.readouterr().err.splitlines()[-1]
    assert last.endswith(f"failed: the predictions ({DEMO_INPUT / 'rare25'}) changed since the record.")
