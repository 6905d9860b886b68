"""Write ``metrics.json`` the way the platform reads it.

Numbers become plain JSON numbers (numpy scalars converted, NaN/inf written as ``null`` outside
ranked keys); a ranked path (the leaderboard's ``score_jsonpath`` and result columns) must resolve,
walking dict keys split on ``.``, to a finite number, or the run fails loudly: the platform would
otherwise drop the submission from the leaderboard silently. The file is written atomically.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from evaluation.errors import ConfigurationError


def json_safe(value: Any) -> Any:
    """A copy of ``value`` made of plain JSON types; non-finite floats become ``None``."""
    if isinstance(value, Mapping):
        return {str(key): json_safe(item) for key, item in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [json_safe(item) for item in value]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        number = float(value)
        return number if math.isfinite(number) else None
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"{type(value).__name__} is not JSON-serialisable")


MISSING = object()


def lookup(document: Any, path: str) -> Any:
    """Walk ``path`` as the platform does: split on ``.``, dict keys only; ``MISSING`` if absent."""
    node = document
    for key in path.split("."):
        if not isinstance(node, Mapping) or key not in node:
            return MISSING
        node = node[key]
    return node


def ranked_value_problem(document: Any, path: str) -> str | None:
    """Why ``path`` would not give the leaderboard a number, or ``None`` when it would."""
    value = lookup(document, path)
    if value is MISSING:
        return f"'{path}' is missing"
    if value is None:
        return f"'{path}' is null (not a finite number)"
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        return f"'{path}' is a {type(value).__name__}, not a number"
    if not math.isfinite(float(value)):
        return f"'{path}' is not finite"
    return None


def dumps(metrics: Mapping[str, Any]) -> str:
    """The canonical text of a metrics document (deterministic: same input, same bytes)."""
    return json.dumps(json_safe(metrics), indent=2, allow_nan=False) + "\n"


CASE_RESULTS_FILE = "case-results.json"
CASE_SECTION = "case"
CASE_RESULTS = ("public", "private")


def split_case_results(metrics: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """``(public document, organizer document)``: the per-case section (``case``, the shape the
    platform recommends) moved out of the public metrics.json, with the settings copied beside it;
    ``None`` for a document without per-case values (RARE25's flat keys, ISIC's categories)."""
    public = dict(metrics)
    cases = public.pop(CASE_SECTION, None)
    if not cases:
        return dict(metrics), None
    settings = dict(public.get("settings", {}))
    public["settings"] = {**settings, "case_results": f"private: per-case values in {CASE_RESULTS_FILE}"}
    return public, {CASE_SECTION: cases, "settings": settings}


def write_atomically(path: Path, text: str) -> None:
    """``text`` to ``path`` through a temporary file beside it and a rename: never a partial file."""
    handle, temporary = tempfile.mkstemp(prefix=f".{path.stem}-", suffix=path.suffix, dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def write_metrics(
    path: Path, metrics: Mapping[str, Any], leaderboard_paths: Iterable[str] = (), case_results: str = "public"
) -> None:
    """Check the leaderboard paths, then write ``metrics`` to ``path`` atomically.

    ``case_results="private"`` keeps per-case values out of ``path`` (the public metrics.json) and
    writes them to ``case-results.json`` beside it for the organizer, before metrics.json, so a run
    that fails leaves neither file.
    """
    if case_results not in CASE_RESULTS:
        raise ConfigurationError(f"case results must be one of {', '.join(CASE_RESULTS)}; got '{case_results}'.")
    public, private = split_case_results(metrics) if case_results == "private" else (metrics, None)
    for ranked in leaderboard_paths:
        problem = ranked_value_problem(public, ranked)
        if problem:
            raise ConfigurationError(
                f"The leaderboard value {problem}; metrics.json was not written so that the "
                "submission does not vanish from the leaderboard."
            )
    text = dumps(public)
    path.parent.mkdir(parents=True, exist_ok=True)
    if private is None:
        write_atomically(path, text)
        return
    organizer = path.with_name(CASE_RESULTS_FILE)
    write_atomically(organizer, dumps(private))
    try:
        write_atomically(path, text)
    except BaseException:
        organizer.unlink(missing_ok=True)
        raise
