"""The declared challenges of ``evaluation/declarations/*.toml``, one registry entry per file (adding
such a challenge = one TOML file and its ground truth). A file that fails validation is left out and
its one-line reason returned, which the registry reports when a run asks for it. A run registers its
own declaration only (``entries(name)``: one file read)."""

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


def entries(only: str | None = None) -> tuple[dict[str, type[DeclaredChallenge]], dict[str, str]]:
    """``{name: class}`` of the valid packaged declarations (``only``: of ``<only>.toml`` alone, when
    there is one), and ``{"declarations/<file>": reason}`` for the others."""
    found, refused = {}, {}
    for path in sorted(DECLARATIONS.glob("*.toml")):
        if only is not None and path.stem != only:
            continue
        entry = _entry(path)
        if isinstance(entry, str):
            refused[f"declarations/{path.name}"] = entry
        else:
            found[entry.name] = entry
    return found, refused
