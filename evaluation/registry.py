"""The registry of challenges: every ``Challenge`` subclass with a ``name`` defined in a module of
``evaluation/challenges/`` (the declared ones: ``challenges/declared.py``, one entry per packaged
``declarations/<name>.toml``). Adding a challenge means adding one module or one TOML file; nothing
here changes. Above both ``challenges/`` and ``declarative/``, which import only the contract
(``evaluation.contract``).

A run imports only its own challenge's module: ``get(name)`` takes a packaged declaration from
``declared.py``, which then parses that one file (``rare25`` -> ``declarations/rare25.toml``), else first
tries the modules whose name starts the challenge's name, and imports the
others only when none of those defines it. ``names()`` and ``registry()`` (``--list``,
``--help``, the organizer's tools) import every module.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache
from pathlib import Path

from evaluation import challenges
from evaluation.contract import DECLARATIONS, Challenge
from evaluation.errors import ConfigurationError


def _subclasses(cls: type[Challenge]) -> list[type[Challenge]]:
    found = []
    for sub in cls.__subclasses__():
        found.append(sub)
        found.extend(_subclasses(sub))
    return found


_BROKEN: dict[str, str] = {}


def _modules() -> list[str]:
    """The challenge modules, by name (a directory listing; nothing imported)."""
    return sorted(module.name for module in pkgutil.iter_modules(challenges.__path__))


def _load(module: str, only: str | None = None) -> None:
    """Import one challenge module. One that fails to import (a missing package, say) is left out and
    remembered, so it breaks only its own challenges, with a one-line reason, never the image's others;
    so is each entry a module itself refuses (its ``refused(only)``: ``{what: reason}``, e.g. a packaged
    declaration that fails validation; ``only``: the one entry a run needs)."""
    try:
        loaded = importlib.import_module(f"{challenges.__name__}.{module}")
    except ImportError as error:
        _BROKEN[module] = f"{type(error).__name__}: {error}"
        return
    refusing = getattr(loaded, "refused", None)
    if refusing is not None:
        _BROKEN.update(refusing(only))


def _defined() -> dict[str, type[Challenge]]:
    """``{name: class}`` of the challenges in the modules imported so far."""
    return {cls.name: cls for cls in _subclasses(Challenge) if "name" in cls.__dict__}


@cache
def registry() -> dict[str, type[Challenge]]:
    """``{name: challenge class}`` for every challenge module."""
    for module in _modules():
        _load(module)
    return _defined()


def names() -> list[str]:
    """The challenge names, sorted."""
    return sorted(registry())


def get(name: str) -> Challenge:
    """A new instance of challenge ``name`` (or of the challenge declared in ``name``, a ``.toml``
    path), importing as few challenge modules as possible: a packaged declaration needs only
    ``declared.py`` and its own file, a built-in challenge the modules whose name starts its name."""
    if name.endswith(".toml"):
        from evaluation.declarative.engine import from_file

        return from_file(Path(name))
    if (DECLARATIONS / f"{name}.toml").is_file():
        _load("declared", only=name)
    else:
        for module in _modules():
            if name.startswith(module):
                _load(module)
    found = _defined().get(name) or registry().get(name)
    if found is None:
        broken = "".join(f" Module {module} could not be loaded ({why})." for module, why in _BROKEN.items())
        raise ConfigurationError(f"Unknown challenge '{name}'; known: {', '.join(names())}.{broken}")
    return found()
