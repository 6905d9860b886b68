"""Named leaderboards from metrics.json files; expected ranks worked out by hand in each test."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evaluation.errors import ConfigurationError
from evaluation.ranking.cli import main
from evaluation.ranking.leaderboards import BOARDS, leaderboard


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
    paths = [k.path for k in BOARDS["hecktor2025-task1"].keys if hasattr(k, "path")]
    gtvp = paths[0]
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
