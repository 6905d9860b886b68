"""The demo command: a real evaluation of the bundled demo, diffed with the expected result."""

from __future__ import annotations

import json

from conftest import DEMO_INPUT, REPO

from evaluation.demo import main


def test_demo_evaluates_and_agrees_with_the_expected_metrics(tmp_path, capsys):
    assert main(["--challenge", "rare25", "--output", str(tmp_path / "out"), "--workers", "1"]) == 0
    expected = json.loads((REPO / "test/expected/rare25/metrics.json").read_text())
    assert json.loads((tmp_path / "out/metrics.json").read_text()) == expected
    assert "agrees with" in capsys.readouterr().out


def test_demo_copies_its_input_for_the_organizer(tmp_path):
    assert main(["--challenge", "hecktor2025-task2", "--copy-input", str(tmp_path / "input")]) == 0
    copied = sorted(p.relative_to(tmp_path / "input") for p in (tmp_path / "input").rglob("*"))
    assert copied == sorted(p.relative_to(DEMO_INPUT / "hecktor2025-task2") for p in
                            (DEMO_INPUT / "hecktor2025-task2").rglob("*"))  # fmt: skip


def test_unknown_demo_is_one_clear_line(capsys):
    assert main(["--challenge", "nope"]) == 2
    assert capsys.readouterr().err.strip().startswith("No demo input for nope; demos exist for: ")


def test_copying_the_input_over_an_existing_folder_is_one_line(tmp_path, capsys):
    (tmp_path / "input").mkdir()
    assert main(["--challenge", "rare25", "--copy-input", str(tmp_path / "input")]) == 2
    last = capsys.readouterr().err.splitlines()[-1]
    assert last == f"Cannot write the demo input to {tmp_path / 'input'} (File exists)."
