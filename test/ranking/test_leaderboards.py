"""Named leaderboards from metrics.json files; expected ranks worked out by hand in each test."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from evaluation.errors import ConfigurationError
from evaluation.ranking.cli import main
from evaluation.ranking.leaderboards import leaderboard, phase_settings


def nest(flat: dict[str, float]) -> dict[str, Any]:
    document: dict[str, Any] = {}
    for path, value in flat.items():
        node = document
        *parents, leaf = path.split(".")
        for key in parents:
            node = node.setdefault(key, {})
        node[leaf] = value
    return document


def test_rare25_ranks_score_with_shared_ranks() -> None:
    board = leaderboard("rare25", {"a": {"Score": 0.5}, "b": {"Score": 0.7}, "c": {"Score": 0.5}})
    assert board["ranks"] == {"a": 2, "b": 1, "c": 2}


def test_isic_ties_broken_by_auc() -> None:
    documents = {
        "a": nest({"overall": 0.6, "aggregates.auc": 0.80}),
        "b": nest({"overall": 0.6, "aggregates.auc": 0.90}),
        "c": nest({"overall": 0.7, "aggregates.auc": 0.10}),
        "d": nest({"overall": 0.6, "aggregates.auc": 0.90}),
    }
    assert leaderboard("isic2019", documents)["ranks"] == {"a": 4, "b": 2, "c": 1, "d": 2}


def test_digestpath_task1_mean_of_metric_ranks_with_recall_fallback() -> None:
    documents = {
        "a": nest({"aggregates.recall_valid": 0.9, "aggregates.fp_score": 90, "aggregates.froc": 0.5}),
        "b": nest({"aggregates.instance_recall": 0.8, "aggregates.fp_score": 99, "aggregates.froc": 0.6}),
        "c": nest({"aggregates.recall_valid": 0.7, "aggregates.fp_score": 95, "aggregates.froc": 0.4}),
    }
    board = leaderboard("digestpath2019-task1", documents)
    # ranks: recall a1 b2 c3; fp b1 c2 a3; froc b1 a2 c3 -> means a 2, b 4/3, c 8/3
    assert board["scores"] == pytest.approx({"a": 2.0, "b": 4 / 3, "c": 8 / 3})
    assert board["ranks"] == {"a": 2, "b": 1, "c": 3}


def test_digestpath_task2() -> None:
    documents = {
        "a": nest({"aggregates.dice": 0.8, "aggregates.auc": 0.7}),
        "b": nest({"aggregates.dice": 0.7, "aggregates.auc": 0.8}),
    }
    assert leaderboard("digestpath2019-task2", documents)["ranks"] == {"a": 1, "b": 1}


def test_hecktor2025_task1_nested_borda() -> None:
    gtvp = phase_settings("hecktor2025-task1")["score_jsonpath"]
    documents = {
        "a": nest({gtvp: 0.80, "aggregates.segmentation.dice_gtvn": 0.60, "aggregates.detection.f1_gtvn": 0.50}),
        "b": nest({gtvp: 0.70, "aggregates.segmentation.dice_gtvn": 0.70, "aggregates.detection.f1_gtvn": 0.70}),
        "c": nest({gtvp: 0.75, "aggregates.segmentation.dice_gtvn": 0.65, "aggregates.detection.f1_gtvn": 0.40}),
    }
    board = leaderboard("hecktor2025-task1", documents)
    # GTVn: dice ranks b1 c2 a3, f1 ranks b1 a2 c3; points (3 - rank): a 0+1, b 2+2, c 1+0 -> GTVn b1 a2 c2
    # GTVp ranks a1 c2 b3; final points: a (3-1)+(3-2)=3, b 0+2=2, c 1+1=2 -> a1, b2, c2
    assert board["ranks"] == {"a": 1, "b": 2, "c": 2}
    assert board["scores"] == {"a": 3, "b": 2, "c": 2}


def hecktor2026(seg: float, stage: float, c_index: float) -> dict[str, Any]:
    return nest(
        {
            "aggregates.segmentation.score": seg,
            "aggregates.staging.score": stage,
            "aggregates.prognosis.c_index": c_index,
        }
    )


def test_hecktor2026_weighted_ranks() -> None:
    documents = {"a": hecktor2026(0.9, 0.5, 0.6), "b": hecktor2026(0.8, 0.6, 0.5), "c": hecktor2026(0.7, 0.4, 0.7)}
    board = leaderboard("hecktor2026", documents)
    # ranks seg a1 b2 c3; staging b1 a2 c3; prognosis c1 a2 b3
    # weighted: a .25+.70+.80=1.75, b .50+.35+1.20=2.05, c .75+1.05+.40=2.20 -> a1 b2 c3
    assert board["scores"] == pytest.approx({"a": 1.75, "b": 2.05, "c": 2.20})
    assert board["ranks"] == {"a": 1, "b": 2, "c": 3}


def test_hecktor2026_exact_tie_broken_by_consistency() -> None:
    documents = {
        "x": hecktor2026(0.9, 0.9, 0.5),
        "y": hecktor2026(0.7, 0.7, 0.9),
        "p": hecktor2026(0.8, 0.8, 0.6),
        "q": hecktor2026(0.6, 0.6, 0.7),
    }
    board = leaderboard("hecktor2026", documents)
    # ranks x (1, 1, 4): weighted .25+.35+1.60 = 2.2, mean 2, consistency +0.2
    #       y (3, 3, 1): weighted .75+1.05+.40 = 2.2, mean 7/3, consistency -0.1333 -> y before x
    #       p (2, 2, 3): 2.4; q (4, 4, 2): 3.2
    assert board["scores"] == pytest.approx({"x": 2.2, "y": 2.2, "p": 2.4, "q": 3.2})
    assert board["ranks"] == {"x": 2, "y": 1, "p": 3, "q": 4}
    assert board["ranks_per_value"]["consistency"]["y"] == pytest.approx(2.2 - 7 / 3)


def test_platform_mean_and_median_of_ranks_exclude_incomplete(tmp_path: Path) -> None:
    for name, document in {"a": {"m1": 1.0, "m2": 5.0}, "b": {"m1": 2.0, "m2": 1.0}, "c": {"m1": 3.0}}.items():
        (tmp_path / f"{name}.json").write_text(json.dumps(document))
    out = tmp_path / "out"
    args = [
        "--leaderboard",
        "gc-mean-of-ranks",
        "--metrics-dir",
        str(tmp_path),
        "--output",
        str(out),
        "--path",
        "m1",
        "--path",
        "m2:smaller",
    ]
    assert main(args) == 0
    board = json.loads((out / "leaderboard.json").read_text())
    # m1 larger-better: b1 a2; m2 smaller-better: b1 a2 -> b 1, a 2; c lacks m2
    assert board["ranks"] == {"a": 2, "b": 1}
    assert "c" in board["excluded"]


def test_unknown_or_empty_boards_are_clear() -> None:
    with pytest.raises(ConfigurationError, match="--path"):
        leaderboard("gc-absolute", {"a": {}})
    with pytest.raises(ConfigurationError, match="No submission"):
        leaderboard("rare25", {"a": {"Score": None}})


README_NAMES = (
    "rare25",
    "isic2019",
    "digestpath2019-task1",
    "digestpath2019-task2",
    "hecktor2025-task1",
    "hecktor2026",
)
PHASE_NAMES = (
    *README_NAMES,
    "isic2018",
    "hecktor2025-task2",
    "hecktor2025-task3",
    "evaluation/declarations/kits-example.toml",
)


@pytest.mark.parametrize("name", PHASE_NAMES)
def test_every_challenge_leaderboard_ranks_by_its_phase_paths(tmp_path: Path, name: str) -> None:
    """The paths ranked are the phase's: the score and the ranked columns (ISIC: every column as tie-break)."""
    phase = phase_settings(name)
    columns = phase["extra_results_columns"]
    expected = [phase["score_jsonpath"]]
    expected += [c["path"] for c in columns if name.startswith("isic") or not c.get("exclude_from_ranking")]
    if name.startswith("isic") and name != "isic2019":
        expected = expected[:1]  # no named scheme: the phase's own "abs"
    better = 1.0 if phase["score_default_sort"] == "desc" else 0.0
    for submission, value in (("good", better), ("bad", 1.0 - better)):
        flat = {phase["score_jsonpath"]: value, **{c["path"]: value if c["order"] == "desc" else 1 - value
                                                    for c in columns}}  # fmt: skip
        (tmp_path / f"{submission}.json").write_text(json.dumps(nest(flat)))
    out = tmp_path / "out"
    assert main(["--leaderboard", name, "--metrics-dir", str(tmp_path), "--output", str(out)]) == 0
    board = json.loads((out / "leaderboard.json").read_text())
    assert [key["path"] for key in board["keys"]] == expected
    assert board["ranks"] == {"good": 1, "bad": 2}


def test_paths_are_read_from_a_given_phase_file(tmp_path: Path) -> None:
    """A renamed path in the phase settings is what the ranking reads: no second table to update."""
    phase = phase_settings("hecktor2026")
    phase["score_jsonpath"] = "renamed.segmentation"
    (tmp_path / "phase.json").write_text(json.dumps(phase))
    submissions = tmp_path / "submissions"
    submissions.mkdir()
    for name, (seg, stage, c_index) in {"a": (0.9, 0.5, 0.6), "b": (0.8, 0.6, 0.5), "c": (0.7, 0.4, 0.7)}.items():
        flat = {"renamed.segmentation": seg, "aggregates.staging.score": stage, "aggregates.prognosis.c_index": c_index}
        (submissions / f"{name}.json").write_text(json.dumps(nest(flat)))
    out = tmp_path / "out"
    arguments = ["--leaderboard", "hecktor2026", "--phase", str(tmp_path / "phase.json")]
    assert main([*arguments, "--metrics-dir", str(submissions), "--output", str(out)]) == 0
    board = json.loads((out / "leaderboard.json").read_text())
    # as test_hecktor2026_weighted_ranks: weighted a 1.75, b 2.05, c 2.20
    assert board["scores"] == pytest.approx({"a": 1.75, "b": 2.05, "c": 2.20})
    assert [key["weight"] for key in board["keys"]] == [0.25, 0.35, 0.40]


def test_an_unknown_challenge_or_a_bad_phase_file_is_one_clear_line(tmp_path: Path, capsys) -> None:
    (tmp_path / "a.json").write_text("{}")
    assert main(["--leaderboard", "no-such-challenge", "--metrics-dir", str(tmp_path), "--output", str(tmp_path)]) == 2
    assert "No phase settings for leaderboard 'no-such-challenge'" in capsys.readouterr().err.strip().splitlines()[-1]
    (tmp_path / "phase.json").write_text("[1]")
    arguments = ["--leaderboard", "rare25", "--phase", str(tmp_path / "phase.json"), "--metrics-dir", str(tmp_path)]
    assert main([*arguments, "--output", str(tmp_path)]) == 2
    assert "does not hold a JSON object" in capsys.readouterr().err
    with pytest.raises(ConfigurationError, match="those of 'hecktor2026', not of 'rare25'"):
        leaderboard("rare25", {"a": {"Score": 1.0}}, phase={"challenge": "hecktor2026"})


def test_the_ranking_tool_imports_no_challenge() -> None:
    """architecture.md: ranking -> no challenge; the phase is asked of ``python -m evaluation.phase``."""
    code = (
        "import sys, evaluation.ranking.cli, evaluation.ranking.leaderboards\n"
        "found = sorted(m for m in sys.modules if m.startswith(('evaluation.challenges', 'evaluation.declarative')))\n"
        "assert not found, found"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


def test_phase_settings_that_time_out_are_a_one_line_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """A stalled ``python -m evaluation.phase`` ends in a clear error naming --phase, not a traceback."""

    def stalled(command: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        raise subprocess.TimeoutExpired(command, kwargs["timeout"])

    monkeypatch.setattr(subprocess, "run", stalled)
    with pytest.raises(ConfigurationError, match=r"took more than 120 s; save its output and give it with --phase"):
        phase_settings("rare25")
