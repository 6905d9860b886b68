"""The registry of challenges: every ``Challenge`` subclass with a ``name`` defined in a module of
this package. Adding a challenge means adding one module; nothing here changes."""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache
from pathlib import Path

from evaluation.challenges.base import Challenge
from evaluation.errors import ConfigurationError


def _subclasses(cls: type[Challenge]) -> list[type[Challenge]]:
    found = []
    for sub in cls.__subclasses__():
        found.append(sub)
        found.extend(_subclasses(sub))
    return found


_BROKEN: dict[str, str] = {}


@cache
def registry() -> dict[str, type[Challenge]]:
    """``{name: challenge class}`` for every challenge module of this package. A module that fails
    to import (a missing package, say) is left out and remembered, so it breaks only its own
    challenges, with a one-line reason, never the image's others."""
    for module in pkgutil.iter_modules(__path__):
        if module.name != "base":
            try:
                importlib.import_module(f"{__name__}.{module.name}")
            except ImportError as error:
                _BROKEN[module.name] = f"{type(error).__name__}: {error}"
    return {cls.name: cls for cls in _subclasses(Challenge) if "name" in cls.__dict__}


def names() -> list[str]:
    """The challenge names, sorted."""
    return sorted(registry())


def get(name: str) -> Challenge:
    """A new instance of challenge ``name``, or of the challenge declared in ``name`` (a ``.toml`` path)."""
    if name.endswith(".toml"):
        from evaluation.declarative.engine import from_file

        return from_file(Path(name))
    try:
        return registry()[name]()
    except KeyError:
        broken = "".join(f" Module {module} could not be loaded ({why})." for module, why in _BROKEN.items())
        raise ConfigurationError(f"Unknown challenge '{name}'; known: {', '.join(names())}.{broken}") from None
