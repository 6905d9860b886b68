"""The demo command: a real evaluation of the bundled demo, diffed with the expected result."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from conftest import DEMO_INPUT, REPO

from evaluation import demo
from evaluation.demo import NOTES, main


def test_demo_evaluates_and_agrees_with_the_expected_metrics(tmp_path, capsys):
    assert main(["--challenge", "rare25", "--output", str(tmp_path / "out"), "--workers", "1"]) == 0
    expected = json.loads((REPO / "test/expected/rare25/metrics.json").read_text())
    assert json.loads((tmp_path / "out/metrics.json").read_text()) == expected
    lines = capsys.readouterr().out.splitlines()
    verdict = lines.index(
        f"Verdict: {tmp_path / 'out/metrics.json'} agrees with the expected metrics of the rare25 demo."
    )
    assert lines[verdict + 1 :] == [
        "The leaderboard's numbers:",
        f"  {expected['Score']:.4f}  PPV@90 recall (median over 1000 bootstrap samples at 1:100 prevalence) (Score; "
        "higher is better)",
        f"  {expected['AUROC']:.4f}  AUROC (AUROC; higher is better; shown, not ranked)",
        f"  {expected['AUPRC']:.4f}  AUPRC (AUPRC; higher is better; shown, not ranked)",
        f"  {expected['PPV@90RECALL Full Dataset']:.4f}  PPV@90RECALL Full Dataset (in metrics.json, not on the "
        "leaderboard)",
        f"Note: {NOTES['rare25']}",
    ]


def test_a_demo_result_that_differs_gets_that_verdict(tmp_path, capsys, monkeypatch):
    """The verdict follows the comparison: an expected file that differs in one number."""
    expected = tmp_path / "expected"
    shutil.copytree(REPO / "test/expected", expected)
    document = json.loads((expected / "rare25/metrics.json").read_text())
    document["AUROC"] += 0.5
    (expected / "rare25/metrics.json").write_text(json.dumps(document))
    real = demo.bundled
    monkeypatch.setattr(demo, "bundled", lambda kind: expected if kind == "demo-expected" else real(kind))
    assert main(["--challenge", "rare25", "--output", str(tmp_path / "out"), "--workers", "1"]) == 1
    out = capsys.readouterr().out
    assert f"Verdict: {tmp_path / 'out/metrics.json'} DIFFERS from the expected metrics of the rare25 demo." in out
    assert "AUROC: expected" in out


@pytest.mark.skipif(not (REPO / ".venv/bin/python").exists(), reason="./demo.sh runs in the checkout's .venv")
def test_demo_sh_ends_with_the_verdict_and_the_summary():
    run = subprocess.run(["./demo.sh", "rare25", "--workers", "1"], cwd=REPO, capture_output=True, text=True,
                         timeout=900)  # fmt: skip
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert "Verdict: demo-output/rare25/metrics.json agrees with the expected metrics of the rare25 demo." in lines
    assert lines[-1] == f"Note: {NOTES['rare25']}"


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
