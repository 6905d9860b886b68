"""Challenge leaderboards by name, from one metrics.json per submission.

Every metrics.json path a leaderboard reads is declared in ``BOARDS`` below (one table, so a renamed
key is corrected in one place). Rules:

- ``absolute``: grand-challenge's default, rank by one value (github comic/grand-challenge.org,
  ``app/grandchallenge/evaluation/utils.py``: equal values share the lowest rank, "min"); optional
  tie-break values compared in order (ISIC 2019: balanced accuracy, then macro AUC; spec challenges.md).
- ``mean-of-ranks`` / ``median-of-ranks``: grand-challenge's rank per value, then the mean / median of
  those ranks, ranked ascending (DigestPath 2019: "the average rank of the evaluation metrics", seed 002).
- ``borda``: HECKTOR 2025 task 1 (hecktor25.grand-challenge.org, Tasks & Evaluation): a ranking's
  Borda points are N - rank; GTVp (mean DSC) is combined with GTVn, itself the Borda count of the
  aggregated DSC and the aggregated F1 ranking; more points rank first.
- ``weighted``: HECKTOR 2026 (seed 001): per-subtask ranks weighted 0.25 / 0.35 / 0.40; ties broken by
  the consistency metric (weighted minus unweighted mean rank), the smaller consistency first.

As on grand-challenge, a submission lacking a value (or holding a non-number) is left out of the
ranking and listed under ``excluded``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from evaluation.errors import ConfigurationError
from evaluation.platform.metrics_json import MISSING, lookup
from evaluation.ranking.primitives import rank_na


@dataclass(frozen=True)
class Key:
    """A metrics.json value: dotted path, direction, and alternative paths tried in order when absent."""

    path: str
    larger_better: bool = True
    alternatives: tuple[str, ...] = ()
    weight: float = 1.0


@dataclass(frozen=True)
class Board:
    rule: str
    keys: tuple[Key | Board, ...] = ()
    tiebreak: tuple[Key, ...] = field(default=())
    source: str = ""


BOARDS: dict[str, Board] = {
    "rare25": Board("absolute", (Key("Score"),), source="spec challenges.md, RARE25: Score, larger is better"),
    "isic2019": Board(
        "absolute",
        (Key("overall"),),
        tiebreak=(Key("aggregates.auc"),),
        source="seed 003 (balanced multi-class accuracy) and spec challenges.md (AUC tie-break)",
    ),
    "digestpath2019-task1": Board(
        "mean-of-ranks",
        (
            Key("aggregates.recall_valid", alternatives=("aggregates.instance_recall",)),
            Key("aggregates.fp_score"),
            Key("aggregates.froc"),
        ),
        source="seed 002, task 1: average rank of recall, normal-region false positives, FROC",
    ),
    "digestpath2019-task2": Board(
        "mean-of-ranks",
        (Key("aggregates.dice"), Key("aggregates.auc")),
        source="seed 002, task 2: average rank of Dice and AUC",
    ),
    "hecktor2025-task1": Board(
        "borda",
        (
            Key("aggregates.segmentation.dice_gtvp_mean"),
            Board("borda", (Key("aggregates.segmentation.dice_gtvn"), Key("aggregates.detection.f1_gtvn"))),
        ),
        source="hecktor25.grand-challenge.org Tasks & Evaluation: Borda count of GTVp and GTVn rankings",
    ),
    "hecktor2026": Board(
        "weighted",
        (
            Key("aggregates.segmentation.score", weight=0.25),
            Key("aggregates.staging.score", weight=0.35),
            Key("aggregates.prognosis.c_index", weight=0.40),
        ),
        source="seed 001: weighted ranks 0.25/0.35/0.40, consistency tie-break",
    ),
}
PLATFORM_BOARDS = {
    "gc-absolute": "absolute",
    "gc-mean-of-ranks": "mean-of-ranks",
    "gc-median-of-ranks": "median-of-ranks",
}
NAMES = (*BOARDS, *PLATFORM_BOARDS)


def platform_board(name: str, paths: Sequence[str]) -> Board:
    """A grand-challenge scoring method over user-given paths (``PATH`` or ``PATH:smaller``)."""
    if not paths:
        raise ConfigurationError(f"Leaderboard {name} needs the value paths to rank: --path aggregates.dice ...")
    keys = []
    for text in paths:
        path, _, direction = text.partition(":")
        if direction not in ("", "larger", "smaller"):
            raise ConfigurationError(f"Path {text!r}: the direction after ':' must be 'larger' or 'smaller'.")
        keys.append(Key(path, larger_better=direction != "smaller"))
    return Board(PLATFORM_BOARDS[name], tuple(keys), source="grand-challenge.org scoring methods")


def _leaves(board: Board) -> list[Key]:
    leaves: list[Key] = []
    for item in (*board.keys, *board.tiebreak):
        leaves.extend(_leaves(item) if isinstance(item, Board) else [item])
    return leaves


def _value(document: Any, key: Key) -> float | None:
    for path in (key.path, *key.alternatives):
        value = lookup(document, path)
        if value is MISSING:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            return None
        return float(value)
    return None


def _ranks(values: np.ndarray, larger_better: bool) -> np.ndarray:
    return rank_na(values, "min", smaller_better=not larger_better)


def _lexicographic(columns: Sequence[np.ndarray]) -> np.ndarray:
    """Min-ranks of rows ordered by the columns in turn (smaller first); rows equal in all share a rank."""
    stacked = np.column_stack(columns)
    order = np.lexsort(stacked.T[::-1])
    ranks = np.empty(len(stacked))
    current = 1.0
    for position, row in enumerate(order):
        if position and not np.array_equal(stacked[row], stacked[order[position - 1]]):
            current = position + 1.0
        ranks[row] = current
    return ranks


def _board_ranks(
    board: Board, values: Mapping[str, np.ndarray], details: dict[str, Any]
) -> tuple[np.ndarray, np.ndarray]:
    """(ranks, score ranked) of a (possibly nested) board over the submissions kept."""
    parts = []
    for item in board.keys:
        if isinstance(item, Board):
            nested, _ = _board_ranks(item, values, details)
            parts.append((nested, 1.0))
        else:
            ranks = _ranks(values[item.path], item.larger_better)
            details[item.path] = ranks
            parts.append((ranks, item.weight))
    n = len(parts[0][0])
    if board.rule == "absolute":
        key = board.keys[0]
        primary = values[key.path] if key.larger_better else -values[key.path]
        columns = [-primary] + [-(values[t.path] if t.larger_better else -values[t.path]) for t in board.tiebreak]
        return _lexicographic(columns), values[key.path]
    if board.rule in ("mean-of-ranks", "median-of-ranks"):
        stacked = np.vstack([p for p, _ in parts])
        score = stacked.mean(axis=0) if board.rule == "mean-of-ranks" else np.median(stacked, axis=0)
        return _ranks(score, larger_better=False), score
    if board.rule == "borda":
        points = sum(n - p for p, _ in parts)
        return _ranks(points, larger_better=True), points
    if board.rule == "weighted":
        stacked = np.vstack([p for p, _ in parts])
        weights = np.array([w for _, w in parts])
        weighted = weights @ stacked / weights.sum()
        consistency = weighted - stacked.mean(axis=0)
        details["consistency"] = consistency
        # rounded so that equal weighted ranks summed in another order still tie (0.25 + 0.35 + 1.6 vs 2.2)
        return _lexicographic([np.round(weighted, 12), np.round(consistency, 12)]), weighted
    raise ConfigurationError(f"Unknown leaderboard rule {board.rule!r}.")


def leaderboard(name: str, documents: Mapping[str, Any], paths: Sequence[str] = ()) -> dict[str, Any]:
    """Rank the submissions (``{submission: metrics document}``) by the named leaderboard's rule."""
    if name in BOARDS:
        board = BOARDS[name]
    elif name in PLATFORM_BOARDS:
        board = platform_board(name, paths)
    else:
        raise ConfigurationError(f"Unknown leaderboard {name!r}; use one of {', '.join(NAMES)}.")
    leaves = _leaves(board)
    inputs: dict[str, dict[str, float | None]] = {}
    excluded: dict[str, str] = {}
    for submission, document in documents.items():
        inputs[submission] = {key.path: _value(document, key) for key in leaves}
        absent = [path for path, value in inputs[submission].items() if value is None]
        if absent:
            excluded[submission] = f"no finite number at {', '.join(absent)}"
    kept = [s for s in documents if s not in excluded]
    if not kept:
        raise ConfigurationError(
            f"No submission has every value leaderboard {name} needs ({', '.join(k.path for k in leaves)})."
        )
    values = {key.path: np.array([inputs[s][key.path] for s in kept], dtype=float) for key in leaves}
    details: dict[str, Any] = {}
    ranks, score = _board_ranks(board, values, details)
    return {
        "leaderboard": name,
        "rule": board.rule,
        "source": board.source,
        "keys": [
            {"path": k.path, "alternatives": list(k.alternatives), "larger_better": k.larger_better, "weight": k.weight}
            for k in leaves
        ],
        "ranks": dict(zip(kept, map(float, ranks), strict=True)),
        "scores": dict(zip(kept, map(float, score), strict=True)),
        "ranks_per_value": {path: dict(zip(kept, map(float, r), strict=True)) for path, r in details.items()},
        "inputs": inputs,
        "excluded": excluded,
    }
