"""The declared challenges of ``evaluation/declarations/*.toml``, one registry entry per file (adding
such a challenge = one TOML file and its ground truth). A file that fails validation is left out and
its one-line reason kept in ``REFUSED``, which the registry reports like a challenge module that
fails to import."""

from __future__ import annotations

from evaluation.contract import DECLARATIONS
from evaluation.declarative.engine import DeclaredChallenge, challenge_class
from evaluation.declarative.schema import load
from evaluation.errors import ConfigurationError


def _register() -> tuple[list[type[DeclaredChallenge]], dict[str, str]]:
    """The classes of the valid declarations, and ``{"declarations/<file>": reason}`` for the others."""
    found, refused = [], {}
    for path in sorted(DECLARATIONS.glob("*.toml")):
        try:
            declaration = load(path)
            if declaration.name != path.stem:
                raise ConfigurationError(f"{path.name}: name: '{declaration.name}' must equal the file name's stem")
            found.append(challenge_class(declaration))
        except ConfigurationError as error:
            refused[f"declarations/{path.name}"] = str(error)
    return found, refused


PACKAGED, REFUSED = _register()
