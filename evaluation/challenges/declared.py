"""The declared challenges of ``evaluation/declarations/*.toml``, one registry entry per file (adding
such a challenge = one TOML file and its ground truth). A file that fails validation is left out and
its one-line reason returned by ``refused``, which the registry reports like a challenge module that
fails to import. A run registers its own declaration only (``refused(name)``: one file read)."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from evaluation.contract import DECLARATIONS
from evaluation.declarative.engine import DeclaredChallenge, challenge_class
from evaluation.declarative.schema import load
from evaluation.errors import ConfigurationError


@cache
def _entry(path: Path) -> type[DeclaredChallenge] | str:
    """The registry entry of the declaration in ``path`` (its class, made once), or why it is refused."""
    try:
        declaration = load(path)
        if declaration.name != path.stem:
            raise ConfigurationError(f"{path.name}: name: '{declaration.name}' must equal the file name's stem")
        return challenge_class(declaration)
    except ConfigurationError as error:
        return str(error)


def _register(only: str | None = None) -> tuple[list[type[DeclaredChallenge]], dict[str, str]]:
    """The classes of the valid declarations (``only``: of ``<only>.toml`` alone), and
    ``{"declarations/<file>": reason}`` for the others."""
    found, refused = [], {}
    for path in [DECLARATIONS / f"{only}.toml"] if only else sorted(DECLARATIONS.glob("*.toml")):
        entry = _entry(path)
        if isinstance(entry, str):
            refused[f"declarations/{path.name}"] = entry
        else:
            found.append(entry)
    return found, refused


def refused(only: str | None = None) -> dict[str, str]:
    """Registers the packaged declarations (``only``: that one) and returns those refused, with their reasons."""
    return _register(only)[1]
