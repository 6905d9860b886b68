"""Where the reference lives, in the order of ../shared/spec/challenges.md (shared rules):
``--ground-truth DIR``; the phase's tarball unpacked at ``/opt/ml/input/data/ground_truth`` when it
exists and is not empty; the copy bundled in the image (``ground-truth/<challenge>``).
"""

from __future__ import annotations

from pathlib import Path

from evaluation.errors import ConfigurationError

PLATFORM_GROUND_TRUTH = Path("/opt/ml/input/data/ground_truth")
BUNDLED_GROUND_TRUTH = Path(__file__).resolve().parents[2] / "ground-truth"


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
