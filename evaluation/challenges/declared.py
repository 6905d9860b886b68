"""The declared challenges of ``evaluation/declarations/*.toml``, one registry entry per file (adding
such a challenge = one TOML file and its ground truth). A file that fails validation is left out and
its one-line reason remembered, like a challenge module that fails to import."""

from __future__ import annotations

from evaluation.challenges import DECLARATIONS
from evaluation.declarative.engine import DeclaredChallenge, challenge_class
from evaluation.declarative.schema import load
from evaluation.errors import ConfigurationError


def _register() -> list[type[DeclaredChallenge]]:
    from evaluation.challenges import _BROKEN  # the registry's record of what could not be loaded

    found = []
    for path in sorted(DECLARATIONS.glob("*.toml")):
        try:
            declaration = load(path)
            if declaration.name != path.stem:
                raise ConfigurationError(f"{path.name}: name: '{declaration.name}' must equal the file name's stem")
            found.append(challenge_class(declaration))
        except ConfigurationError as error:
            _BROKEN[f"declarations/{path.name}"] = str(error)
    return found


PACKAGED = _register()
