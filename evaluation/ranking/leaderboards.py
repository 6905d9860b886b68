"""Challenge leaderboards by name, from one metrics.json per submission.

The paths a leaderboard reads come from the challenge's phase settings (``python -m
evaluation.phase --challenge NAME``: ``score_jsonpath``, ``score_default_sort`` and the
``extra_results_columns`` not ``exclude_from_ranking``), the one declaration the platform itself
ranks by; this module holds only the rules that are not paths. By the phase's
``scoring_method_choice`` (grand-challenge's scoring methods):

- ``abs`` -> ``absolute``: grand-challenge's default, rank by the score (github comic/grand-challenge.org,
  ``app/grandchallenge/evaluation/utils.py``: equal values share the lowest rank, "min");
- ``avg`` / ``med`` -> ``mean-of-ranks`` / ``median-of-ranks``: grand-challenge's rank per ranked value,
  then the mean / median of those ranks, ranked ascending (DigestPath 2019: "the average rank of the
  evaluation metrics", seed 002).

Named schemes replace that rule for the challenges whose ranking the platform cannot express
(``SCHEMES``):

- ``isic2019``: absolute, ties broken by the phase's extra columns in order (the macro AUC; balanced
  accuracy first when another metric is the score: seed 003 and spec challenges.md);
- ``hecktor2025-task1`` -> ``borda`` (hecktor25.grand-challenge.org, Tasks & Evaluation): a ranking's
  Borda points are N - rank; the score (GTVp mean DSC) is combined with GTVn, itself the Borda count
  of the ranked columns (aggregated DSC, aggregated F1); more points rank first;
- ``hecktor2026`` -> ``weighted`` (seed 001): the ranks of the score and the two ranked columns
  weighted 0.25 / 0.35 / 0.40; ties broken by the consistency metric (weighted minus unweighted mean
  rank), the smaller consistency first;
- ``digestpath2019-task1``: a metrics.json written before ``recall_valid`` existed is read at
  ``instance_recall``.

As on grand-challenge, a submission lacking a value (or holding a non-number) is left out of the
ranking and listed under ``excluded``.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
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


@dataclass(frozen=True)
class PhaseKeys:
    """What a phase declares for ranking: the score, the ranked extra columns, every extra column."""

    score: Key
    ranked: tuple[Key, ...]
    columns: tuple[Key, ...]
    method: str


RULES = {"abs": "absolute", "avg": "mean-of-ranks", "med": "median-of-ranks"}
HECKTOR2026_WEIGHTS = (0.25, 0.35, 0.40)  # segmentation, staging, prognosis (seed 001)
PHASE_TIMEOUT = 120  # seconds for ``python -m evaluation.phase`` to print a phase's settings


def _count(phase: PhaseKeys, name: str, ranked: int) -> None:
    if len(phase.ranked) != ranked:
        raise ConfigurationError(
            f"Leaderboard {name} expects a score and {ranked} ranked column(s) in its phase settings; "
            f"found {len(phase.ranked)}."
        )


def _isic(phase: PhaseKeys) -> Board:
    source = "seed 003 (balanced multi-class accuracy) and spec challenges.md (AUC tie-break)"
    return Board("absolute", (phase.score,), tiebreak=phase.columns, source=source)


def _hecktor2025_task1(phase: PhaseKeys) -> Board:
    _count(phase, "hecktor2025-task1", 2)
    source = "hecktor25.grand-challenge.org Tasks & Evaluation: Borda count of GTVp and GTVn rankings"
    return Board("borda", (phase.score, Board("borda", phase.ranked)), source=source)


def _hecktor2026(phase: PhaseKeys) -> Board:
    _count(phase, "hecktor2026", 2)
    keys = (phase.score, *phase.ranked)
    weighted = tuple(replace(key, weight=w) for key, w in zip(keys, HECKTOR2026_WEIGHTS, strict=True))
    return Board("weighted", weighted, source="seed 001: weighted ranks 0.25/0.35/0.40, consistency tie-break")


def _digestpath_task1(phase: PhaseKeys) -> Board:
    older = {"aggregates.recall_valid": ("aggregates.instance_recall",)}  # metrics.json before recall_valid
    keys = tuple(replace(k, alternatives=older.get(k.path, ())) for k in (phase.score, *phase.ranked))
    source = "seed 002, task 1: average rank of recall, normal-region false positives, FROC"
    return Board(RULES[phase.method], keys, source=source)


SCHEMES: dict[str, Callable[[PhaseKeys], Board]] = {
    "isic2019": _isic,
    "hecktor2025-task1": _hecktor2025_task1,
    "hecktor2026": _hecktor2026,
    "digestpath2019-task1": _digestpath_task1,
}
PLATFORM_BOARDS = {
    "gc-absolute": "absolute",
    "gc-mean-of-ranks": "mean-of-ranks",
    "gc-median-of-ranks": "median-of-ranks",
}


def phase_settings(challenge: str) -> dict[str, Any]:
    """The phase settings of a challenge (built-in name or declaration file), as ``python -m
    evaluation.phase --challenge`` prints them: asked of that command in a child process, so the
    ranking tool imports no challenge (architecture.md's dependency rule)."""
    command = [sys.executable, "-m", "evaluation.phase", "--challenge", challenge]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=PHASE_TIMEOUT, check=False)
    except subprocess.TimeoutExpired:
        raise ConfigurationError(
            f"No phase settings for leaderboard {challenge!r}: python -m evaluation.phase took more than "
            f"{PHASE_TIMEOUT} s; save its output and give it with --phase."
        ) from None
    if done.returncode != 0:
        reason = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise ConfigurationError(f"No phase settings for leaderboard {challenge!r}: {reason}")
    return json.loads(done.stdout)


def _key(path: Any, order: Any, where: str) -> Key:
    if not isinstance(path, str) or not path or order not in ("asc", "desc"):
        raise ConfigurationError(f"The phase settings' {where} needs a path and an order 'asc' or 'desc'.")
    return Key(path, larger_better=order == "desc")


def phase_keys(phase: Mapping[str, Any]) -> PhaseKeys:
    """The ranking paths of phase settings (the platform's field names), validated."""
    score = _key(phase.get("score_jsonpath"), phase.get("score_default_sort"), "score")
    columns = phase.get("extra_results_columns", [])
    every, ranked = [], []
    for position, column in enumerate(columns if isinstance(columns, list) else [None]):
        if not isinstance(column, Mapping):
            raise ConfigurationError(f"The phase settings' extra_results_columns[{position}] is not an object.")
        key = _key(column.get("path"), column.get("order"), f"extra_results_columns[{position}]")
        every.append(key)
        if not column.get("exclude_from_ranking", False):
            ranked.append(key)
    method = phase.get("scoring_method_choice", "abs")
    if method not in RULES:
        raise ConfigurationError(f"Unknown scoring_method_choice {method!r} in the phase settings.")
    return PhaseKeys(score, tuple(ranked), tuple(every), method)


def phase_board(name: str, phase: Mapping[str, Any]) -> Board:
    """The board of challenge ``name``: its named scheme, else the phase's own scoring method."""
    keys = phase_keys(phase)
    if name in SCHEMES:
        return SCHEMES[name](keys)
    ranked = (keys.score,) if keys.method == "abs" else (keys.score, *keys.ranked)
    return Board(RULES[keys.method], ranked, source=f"phase settings of {name}: scoring method {keys.method}")


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


def leaderboard(
    name: str, documents: Mapping[str, Any], paths: Sequence[str] = (), phase: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Rank the submissions (``{submission: metrics document}``) by the named leaderboard's rule:
    ``gc-*`` over ``paths``; a challenge over the paths of ``phase`` (its phase settings; asked of
    :func:`phase_settings` when not given)."""
    if name in PLATFORM_BOARDS:
        board = platform_board(name, paths)
    elif phase is None:
        board = phase_board(name, phase_settings(name))
    elif phase.get("challenge", name) != name:
        raise ConfigurationError(f"The phase settings given are those of {phase['challenge']!r}, not of {name!r}.")
    else:
        board = phase_board(name, phase)
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
