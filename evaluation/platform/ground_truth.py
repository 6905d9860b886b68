"""Where the reference lives, in the order of ../shared/spec/challenges.md (shared rules):
``--ground-truth DIR``; the phase's tarball unpacked at ``/opt/ml/input/data/ground_truth`` when it
exists and is not empty; the copy bundled in the image (``ground-truth/<challenge>``).

Bundled data live in the repository (a checkout, or ``/opt/app`` in the image); an installed wheel
carries the same folders under ``evaluation/_bundled/`` (pyproject.toml), so the demos run with no
repository on disk.
"""

from __future__ import annotations

from pathlib import Path

from evaluation.errors import ConfigurationError

PLATFORM_GROUND_TRUTH = Path("/opt/ml/input/data/ground_truth")
PACKAGE_DIR = Path(__file__).resolve().parents[1]
# bundled data: (folder in the repository, folder in an installed wheel)
BUNDLED = {
    "ground-truth": ("ground-truth", "ground-truth"),
    "demo-input": ("test/input", "demo-input"),
    "demo-expected": ("test/expected", "demo-expected"),
}


def bundled(kind: str) -> Path:
    """The folder of bundled ``kind`` (``ground-truth``, ``demo-input``, ``demo-expected``): the
    repository's when this package runs from a checkout or the image, else the wheel's copy."""
    in_repository, in_wheel = BUNDLED[kind]
    checkout = PACKAGE_DIR.parent / in_repository
    return checkout if checkout.is_dir() else PACKAGE_DIR / "_bundled" / in_wheel


BUNDLED_GROUND_TRUTH = bundled("ground-truth")


def resolve_ground_truth(
    challenge: str,
    explicit: Path | None = None,
    platform_dir: Path = PLATFORM_GROUND_TRUTH,
    bundled_root: Path = BUNDLED_GROUND_TRUTH,
) -> Path:
    """The ground-truth folder to use for ``challenge``."""
    if explicit is not None:
        if not explicit.is_dir():
            raise ConfigurationError(f"The ground-truth folder {explicit} does not exist.")
        return explicit
    if platform_dir.is_dir() and any(platform_dir.iterdir()):
        return platform_dir
    bundled = bundled_root / challenge
    if bundled.is_dir():
        return bundled
    raise ConfigurationError(f"No ground truth found for {challenge}: none given, none uploaded, none bundled.")
