"""Where the reference lives, in the order of ../shared/spec/challenges.md (shared rules):
``--ground-truth DIR``; the phase's tarball unpacked at ``/opt/ml/input/data/ground_truth`` when it
exists and is not empty; the copy bundled in the image (``ground-truth/<challenge>``).

Bundled data live in the repository (a checkout, or ``/opt/app`` in the image); an installed wheel
carries the same folders under ``evaluation/_bundled/`` (pyproject.toml), so the demos run with no
repository on disk.

Every ground-truth file the engine opens is checked here first (``inside``, ``read_file``, ``image_file``),
one rule for all: with every link followed it must stay inside the ground-truth folder (resolved once per
load, compared as text as ``files.contained_in`` does for ``/input``): a link within the folder is followed,
one that leaves it is the organizer's error, its target never opened; a FIFO, device or folder is refused from
``os.stat`` (never opened: no hang). A reference image's header is read for the other files its reader
would open (``files.image_data_files``), which must stay inside too.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from evaluation.errors import ConfigurationError, SubmissionError
from evaluation.platform.files import FILE_KINDS, below, image_data_files, read_bytes

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


def inside(root: Path, path: Path) -> Path:
    """``path`` (below ``root``, the ground-truth folder already resolved: ``os.path.realpath``) with every link
    followed, when that stays inside ``root``; else the organizer's error naming it. Nothing is opened."""
    resolved = os.path.realpath(path)
    if not below(str(root), resolved):
        raise ConfigurationError(f"The ground truth's {_shown(root, path)} links outside the ground-truth folder.")
    return Path(resolved)


def read_file(root: Path, path: Path) -> bytes:
    """The bytes of the ground-truth file ``path`` (``inside`` ``root``), read as a submitted file is
    (``files.read_bytes``: a FIFO, device or folder refused unopened), however large (the test set's)."""
    try:
        return read_bytes(inside(root, path), f"The ground truth's {_shown(root, path)}", max_bytes=None)
    except SubmissionError as error:
        raise ConfigurationError(str(error)) from None


def image_file(root: Path, path: Path) -> None:
    """A reference image an image reader will open: it and every file its header names stay ``inside`` ``root``."""
    shown = _shown(root, path)
    try:
        named = image_data_files(path, inside(root, path), f"The ground truth's {shown}")
        outside = any(not below(str(root), os.path.realpath(data)) for data in named)
    except ValueError:  # (a pattern that cannot be expanded, a NUL in a name)
        raise ConfigurationError(f"The ground truth's {shown} names its data files in a way this engine cannot "
                                 "check.") from None  # fmt: skip
    except SubmissionError as error:
        raise ConfigurationError(str(error)) from None
    if outside:
        raise ConfigurationError(f"The ground truth's {shown} names a data file outside the ground-truth folder.")
    for data in named:
        try:
            kind = stat.S_IFMT(os.stat(data).st_mode)
        except OSError:  # (absent: the reader fails, and says so in the reference's words)
            continue
        if kind != stat.S_IFREG:
            raise ConfigurationError(f"The ground truth's {shown} names a data file that is "
                                     f"{FILE_KINDS.get(kind, 'not a regular file')}; it was not read.")  # fmt: skip


def _shown(root: Path, path: Path) -> str:
    """``path`` as the ground truth names it (relative to ``root``)."""
    return path.relative_to(root).as_posix()
