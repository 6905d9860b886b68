"""evaluation.batch on the local pool: one metrics.json per submission and the long table."""

from __future__ import annotations

import shutil

import pandas as pd
from conftest import DEMO_INPUT

from evaluation.batch import main


def test_batch_writes_metrics_and_the_long_table_for_the_ranking_tool(tmp_path, capsys):
    for name in ("team-a", "team-b"):
        shutil.copytree(DEMO_INPUT / "digestpath2019-task2", tmp_path / "in" / name)
    args = ["--challenge", "digestpath2019-task2", "--submissions", str(tmp_path / "in"), "--output",
            str(tmp_path / "out"), "--workers", "1"]  # fmt: skip
    assert main(args) == 0
    table = pd.read_csv(tmp_path / "out" / "long.csv")
    assert set(table.columns) == {"algorithm", "case", "task", "value"}
    assert set(table["algorithm"]) == {"team-a", "team-b"} and "dice" in set(table["task"])
    assert len(table) == 2 * 24  # two submissions x 24 images x one numeric per-case value (dice)


def test_an_output_folder_that_cannot_be_created_is_one_line(tmp_path, capsys):
    shutil.copytree(DEMO_INPUT / "rare25", tmp_path / "in" / "team-a")
    (tmp_path / "out").write_text("a file where the output folder should be")
    arguments = ["--challenge", "rare25", "--submissions", str(tmp_path / "in"), "--output", str(tmp_path / "out")]
    assert main([*arguments, "--workers", "1"]) == 1
    assert (
        capsys.readouterr().err.splitlines()[-1]
        == f"The output folder {tmp_path / 'out'} cannot be created (File exists)."
    )


def test_a_defect_in_one_submission_fails_that_one_and_the_batch_goes_on(tmp_path, capsys, monkeypatch):
    """An unexpected exception (a defect) is that submission's error.txt, not the end of the batch."""
    from evaluation import batch

    for name in ("team-a", "team-b"):
        shutil.copytree(DEMO_INPUT / "rare25", tmp_path / "in" / name)
    real = batch.evaluate

    def evaluate(challenge, folder, *args, **kwargs):
        if folder.name == "team-a":
            raise KeyError("a defect")
        return real(challenge, folder, *args, **kwargs)

    monkeypatch.setattr(batch, "evaluate", evaluate)
    args = ["--challenge", "rare25", "--submissions", str(tmp_path / "in"), "--output", str(tmp_path / "out")]
    assert main([*args, "--workers", "1"]) == 1
    captured = capsys.readouterr()
    assert "Traceback" in captured.out and captured.err.splitlines()[-1] == "1 submission(s) failed: team-a"
    assert (tmp_path / "out/team-a/error.txt").read_text() == (
        "The evaluation failed with an internal error (KeyError); the traceback is on stdout.\n"
    )
    assert (tmp_path / "out/team-b/metrics.json").is_file()
