"""Bounds on a declaration, checked before and right after its TOML is parsed, and on the run options
that set the same values (``--set seed=...``).

The schema checks what each key means; this module keeps a hostile or mistyped file from costing
minutes or ending in a raw exception before (or long after) that: the file's size (a 25-million-element
array takes minutes to parse), its nesting (5,000 levels end in ``RecursionError``), array lengths,
integers beyond TOML's 64 bits, non-finite numbers, and the keys whose size would fail only after
every case was scored (``bootstrap.resamples = 10**18``) or silently (a seed of 2**80). Every problem
is one line in the schema's form, ``file: key: problem``.
"""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NoReturn

from evaluation.errors import ConfigurationError

MAX_BYTES = 256 * 1024  # the largest packaged declaration is under 6 KB; 256 KiB parse in well under a second
MAX_DEPTH = 16  # tables and arrays inside each other; the format's deepest is 3 (report.notes, metrics[i].keys)
MAX_EXTENDS = 4  # declarations extending each other in a chain (``extends``); the packaged ones use 1
MAX_ITEMS = 10_000  # entries of one array or table (outputs, metrics, labels, classes, ...)
MAX_INTEGER = 2**63 - 1  # TOML 1.0: integers are 64-bit signed; larger ones "must" be an error
MAX_RESAMPLES = 100_000  # an (n_resamples x n_cases) index array: 100,000 x 1,000 cases = 800 MB
MAX_SEED = 2**32 - 1  # numpy's legacy seeding (RandomState, RARE25's official protocol) takes 0 .. 2**32 - 1
MAX_DECIMAL_PLACES = 15  # a float64 holds 15 significant decimal digits exactly
MAX_MB = 100_000.0  # 100 GB: far beyond any prediction file, and finite (1e308 MB overflows the byte count)


# dotted key of the declaration -> (lowest, highest, what the bound protects); checked after parsing.
# No lowest: the schema's own check (``resamples``: at least 1) says it.
KEYS: dict[str, tuple[float | None, float, str]] = {
    "bootstrap.resamples": (None, MAX_RESAMPLES, "the resample indices are held in memory at once"),
    "bootstrap.seed": (0, MAX_SEED, "numpy's seeds"),
    "leaderboard.decimal_places": (0, MAX_DECIMAL_PLACES, "a float64 holds 15 decimal digits"),
    "submission.max_mb": (0, MAX_MB, "100 GB"),
}
# a run option (``--set NAME=VALUE``) -> the declaration key whose bound it shares
OPTIONS = {
    "seed": "bootstrap.seed",
    "bootstrap_resamples": "bootstrap.resamples",
    "iterations": "bootstrap.resamples",  # RARE25's bootstrap iterations
    "max_file_mb": "submission.max_mb",  # ISIC's largest prediction file
}


def _fail(file: str, key: str, problem: str) -> NoReturn:
    raise ConfigurationError(f"{file}: {key or '(top level)'}: {problem}")


def check_size(path: Path) -> None:
    """A declaration file larger than ``MAX_BYTES`` is refused unread."""
    try:
        size = path.stat().st_size
    except OSError:
        return  # the read that follows names the problem
    if size > MAX_BYTES:
        _fail(path.name, "", f"the file is {size} bytes, more than the {MAX_BYTES} a declaration may have")


def loads(text: str, file: str) -> dict[str, Any]:
    """``tomllib.loads(text)`` within the bounds above (``tomllib.TOMLDecodeError`` passes through)."""
    if len(text) > MAX_BYTES:
        _fail(file, "", f"the text is {len(text)} characters, more than the {MAX_BYTES} a declaration may have")
    try:
        data = tomllib.loads(text)
    except RecursionError:
        line, key = _too_deep(text)
        _fail(file, key, f"nested more than {MAX_DEPTH} levels deep (line {line})")
    check_data(data, file)
    return data


def check_data(data: Mapping[str, Any], file: str) -> None:
    """Depth, lengths, integers and numbers of parsed TOML, then the bounds of ``KEYS``; iterative
    (a recursive walk would itself hit the recursion limit it guards against)."""
    stack: list[tuple[Any, str, str, int]] = [(data, "", "", 0)]  # value, path, its innermost key's path, depth
    while stack:
        value, path, keyed, depth = stack.pop()
        if isinstance(value, (dict, list)):
            if depth > MAX_DEPTH:
                _fail(file, _shortened(keyed), f"nested more than {MAX_DEPTH} levels deep")
            if len(value) > MAX_ITEMS:
                _fail(file, path, f"holds {len(value)} entries, more than the {MAX_ITEMS} allowed")
            if isinstance(value, dict):
                for key, item in value.items():
                    child = f"{path}.{key}" if path else str(key)
                    stack.append((item, child, child, depth + 1))
            else:
                stack.extend((item, f"{path}[{i}]", keyed, depth + 1) for i, item in enumerate(value))
        elif isinstance(value, int) and not isinstance(value, bool) and not -MAX_INTEGER - 1 <= value <= MAX_INTEGER:
            _fail(file, path, f"{_short(value)} is beyond TOML's 64-bit integers")
        elif isinstance(value, float) and not math.isfinite(value):
            _fail(file, path, f"must be a finite number, not {value}")
    for key, bound in KEYS.items():
        section, _, name = key.partition(".")
        table = data.get(section)
        if isinstance(table, dict) and name in table:
            problem = _outside(table[name], bound)
            if problem:
                _fail(file, key, problem)


def check_options(settings: Mapping[str, Any]) -> None:
    """The run options that share a declaration key's bound (``OPTIONS``), as given with ``--set``."""
    for name, key in OPTIONS.items():
        if name in settings:
            problem = _outside(settings[name], KEYS[key])
            if problem:
                raise ConfigurationError(f"Option {name} {problem}.")


def _outside(value: Any, bound: tuple[float | None, float, str]) -> str:
    """Why ``value`` is outside ``bound`` ("" when inside; a value of the wrong type is the schema's)."""
    low, high, why = bound
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return ""
    if (low is None or low <= value) and value <= high:
        return ""
    allowed = f"at most {_short(high)}" if low is None else f"between {_short(low)} and {_short(high)}"
    return f"must be {allowed} ({why}), not {_short(value)}"


def _short(value: int | float) -> str:
    """A number as a message shows it: a huge integer by its size, not its 300 digits."""
    text = repr(int(value)) if isinstance(value, int) or (value.is_integer() and abs(value) < 1e16) else repr(value)
    return text if len(text) <= 24 else f"an integer of {len(text.lstrip('-'))} digits"


def _shortened(path: str, parts: int = 4) -> str:
    pieces = path.split(".")
    return ".".join(pieces[:parts]) + (".…" if len(pieces) > parts else "")


_TOKEN = re.compile(
    r'"""(?:[^\\]|\\.)*?"""|\'\'\'.*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'|#[^\n]*|[\[\]{}]|\n', re.DOTALL
)
_HEADER = re.compile(r"[ \t]*\[\[?[ \t]*([A-Za-z0-9_.\-\"' ]+?)[ \t]*\]\]?")
_KEY = re.compile(r"[ \t]*([A-Za-z0-9_.\-\"' ]+?)[ \t]*=")


def _too_deep(text: str) -> tuple[int, str]:
    """(line, dotted key) where arrays and inline tables first nest deeper than ``MAX_DEPTH``, found
    by a scan that skips strings and comments (the parser gave up with ``RecursionError``)."""
    depth, line, table, key, position, line_start = 0, 1, "", "", 0, True
    while True:
        if depth == 0 and line_start:  # a table header, or the key of a new value
            if header := _HEADER.match(text, position):
                table, position = header.group(1), header.end()
            elif named := _KEY.match(text, position):
                key, position = f"{table}.{named.group(1)}" if table else named.group(1), named.end()
        token = _TOKEN.search(text, position)
        if token is None:
            return line, key
        mark, position = token.group(), token.end()
        line += mark.count("\n")
        line_start = mark == "\n"
        if mark in ("[", "{"):
            depth += 1
            if depth > MAX_DEPTH:
                return line, _shortened(key)
        elif mark in ("]", "}"):
            depth = max(0, depth - 1)
