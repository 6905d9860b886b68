"""Ground truth is looked up in the order of challenges.md (shared rules)."""

from __future__ import annotations

import pytest

from evaluation.errors import ConfigurationError
from evaluation.platform.ground_truth import resolve_ground_truth


def test_order(tmp_path):
    explicit, platform, bundled = tmp_path / "explicit", tmp_path / "platform", tmp_path / "bundled"
    (bundled / "rare25").mkdir(parents=True)
    platform.mkdir()
    assert resolve_ground_truth("rare25", None, platform, bundled) == bundled / "rare25"  # empty tarball dir
    (platform / "val_metadata.json").write_text("{}")
    assert resolve_ground_truth("rare25", None, platform, bundled) == platform
    explicit.mkdir()
    assert resolve_ground_truth("rare25", explicit, platform, bundled) == explicit


def test_nothing_found(tmp_path):
    with pytest.raises(ConfigurationError, match="No ground truth found"):
        resolve_ground_truth("x", None, tmp_path / "none", tmp_path)
    with pytest.raises(ConfigurationError, match="does not exist"):
        resolve_ground_truth("x", tmp_path / "none", tmp_path / "none", tmp_path)
