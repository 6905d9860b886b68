"""The validation primitive of a declaration: a TOML table whose keys are read one by one, each
problem one line ``file: key: problem`` (``ConfigurationError``), a misspelt required key named
("is 'titel' a misspelling of it?"), every key left unread an unknown key."""

from __future__ import annotations

import re
from typing import Any, NoReturn

from evaluation.errors import ConfigurationError

NAME = re.compile(r"[a-z0-9][a-z0-9._-]*")
SLUG = re.compile(r"[a-z0-9][a-z0-9-]*")
KEY = re.compile(r"[A-Za-z0-9_-]+")  # a metrics.json key: no dot (the platform splits paths on dots)
LONGEST = 500  # characters of a problem: the platform shows 1,024 of the line, its file and key come first
LONG_QUOTE = re.compile(r"'([^'\s]{57})[^'\s]{4,}'")  # a quoted value of more than 60 characters, no space


class Table:
    """A TOML table being validated: every key read is remembered; leftovers are unknown keys."""

    def __init__(self, file: str, where: str, data: Any) -> None:
        self.file, self.where = file, where
        if not isinstance(data, dict):
            self.fail("", f"must be a table, not {type_of(data)}")
        self.data, self.read = data, set()

    def fail(self, key: str, problem: str) -> NoReturn:
        location = ".".join(part for part in (self.where, key) if part) or "(top level)"
        problem = LONG_QUOTE.sub(r"'\1...'", problem)  # a long value is echoed by its start: one readable line
        if len(problem) > LONGEST:  # a long list echoed whole (a region of 10,000 voxel values): its start
            problem = problem[: LONGEST - 4] + " ..."
        raise ConfigurationError(f"{self.file}: {location}: {problem}")

    def get(self, key: str, kind: type | tuple[type, ...], default: Any = ..., choices: tuple[Any, ...] = ()) -> Any:
        self.read.add(key)
        if key not in self.data:
            if default is ...:
                # a misspelt required key would otherwise go unnamed: the table fails before done() sees it
                import difflib  # (only for this message: not imported by every start)

                typo = difflib.get_close_matches(key, [k for k in self.data if k not in self.read], n=1)
                self.fail(key, f"is required (is {typo[0]!r} a misspelling of it?)" if typo else "is required")
            return default
        value = self.data[key]
        kinds = kind if isinstance(kind, tuple) else (kind,)
        if float in kinds and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
            self.fail(key, f"must be {' or '.join(kind_name(k) for k in kinds)}, not {type_of(value)} {value!r}")
        if choices and value not in choices:
            self.fail(key, f"{value!r} is not one of {', '.join(map(str, choices))}")
        return value

    def strings(self, key: str, default: Any = ...) -> tuple[str, ...]:
        value = self.get(key, list, default)
        if not all(isinstance(item, str) for item in value):
            self.fail(key, "must be a list of strings")
        return tuple(value)

    def sub(self, key: str) -> Table:
        """An optional sub-table (empty when absent)."""
        where = f"{self.where}.{key}" if self.where else key
        return Table(self.file, where, self.get(key, dict, {}))

    def items(self, key: str) -> list[Table]:
        raw = self.get(key, list)
        if not raw:
            self.fail(key, "needs at least one entry")
        prefix = f"{self.where}.{key}" if self.where else key
        return [Table(self.file, f"{prefix}[{i}]", item) for i, item in enumerate(raw)]

    def done(self) -> None:
        unknown = sorted(set(self.data) - self.read)
        if unknown:
            known = ", ".join(sorted(self.read))
            self.fail(unknown[0], f"unknown key (known here: {known})")


def kind_name(kind: type) -> str:
    return {str: "a string", int: "an integer", float: "a number", bool: "true or false", list: "a list",
            dict: "a table"}[kind]  # fmt: skip


def type_of(value: Any) -> str:
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string", list: "a list",
            dict: "a table"}.get(type(value), type(value).__name__)  # fmt: skip
