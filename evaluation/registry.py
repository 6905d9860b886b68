"""The registry of challenges: one entry per packaged declaration (``declarations/<name>.toml``, made
by ``challenges/declared.py``), or a declaration file given by its path. Adding a challenge means adding
one TOML file; nothing here changes. Above ``challenges/`` and ``declarative/``, which import only the
contract (``evaluation.contract``).

A run parses only its own declaration: ``get("rare25")`` reads ``declarations/rare25.toml``;
``names()`` (``--list``, ``--help``, the organizer's tools) reads every one. A declaration that fails
validation is left out, and named with its one-line reason when a run asks for a challenge that is
not there.
"""

from __future__ import annotations

from pathlib import Path

from evaluation.contract import Challenge
from evaluation.errors import ConfigurationError


def names() -> list[str]:
    """The names of the valid packaged declarations, sorted."""
    from evaluation.challenges.declared import entries

    return sorted(entries()[0])


def get(name: str) -> Challenge:
    """A new instance of challenge ``name`` (or of the challenge declared in ``name``, a ``.toml``
    path), reading only that declaration."""
    if name.endswith(".toml"):
        from evaluation.declarative.engine import from_file

        return from_file(Path(name))
    from evaluation.challenges.declared import entries

    found = entries(name)[0].get(name)
    if found is None:
        broken = "".join(f" Module {what} could not be loaded ({why})." for what, why in entries()[1].items())
        raise ConfigurationError(f"Unknown challenge '{name}'; known: {', '.join(names())}.{broken}")
    return found()
