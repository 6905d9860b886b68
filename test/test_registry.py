"""The challenge registry: discovered by module; a module that cannot be imported breaks only itself."""

from __future__ import annotations

import pytest

from evaluation import challenges
from evaluation.errors import ConfigurationError


def test_every_challenge_of_the_spec_is_registered():
    assert set(challenges.names()) >= {
        "rare25", "isic2019", "isic2018", "digestpath2019-task1", "digestpath2019-task2",
        "hecktor2025-task1", "hecktor2025-task2", "hecktor2025-task3", "hecktor2026",
    }  # fmt: skip


def test_a_module_that_fails_to_import_is_named_not_raised(monkeypatch):
    monkeypatch.setitem(challenges._BROKEN, "newchallenge", "ModuleNotFoundError: No module named 'shiny'")
    with pytest.raises(ConfigurationError, match=r"Module newchallenge could not be loaded \(ModuleNotFoundError"):
        challenges.get("newchallenge")
