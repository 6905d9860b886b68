"""A reproducibility record of one evaluation, beside its metrics.json (``--provenance``):
``OUTPUT/provenance.json`` holds what the result depends on, so that anyone can re-run it and check
that the same bytes come out (``python -m evaluation.compare --replay OUTPUT/provenance.json``).

The record: the evaluation's version and the image digest when the image knows it
(``$EVALUATION_IMAGE_DIGEST``), Python's and every scoring library's version, the command's
challenge, options, seed and case-results mode, and the SHA-256 of the predictions (every file of
the input folder), of the ground truth (every file of its folder), of the declaration (a declared
challenge), of the organizer's Python files its python metrics run (``sha256.code``, when there are
any) and of metrics.json itself. metrics.json is not changed.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

from evaluation import __version__

RECORD_FILE = "provenance.json"
LIBRARIES = ("numpy", "scipy", "scikit-learn", "pandas", "SimpleITK", "connected-components-3d", "lifelines",
             "surface-distance", "tifffile", "Pillow")  # fmt: skip


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(2**20), b""):
            digest.update(block)
    return digest.hexdigest()


def tree_sha256(folder: Path) -> str:
    """One hash of a folder: every regular file's relative path and content hash, in sorted order
    (links followed; the order and names of the files count, their times do not)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(f"{path.relative_to(folder).as_posix()}\0{file_sha256(path)}\n".encode())
    return digest.hexdigest()


def _versions() -> dict[str, str]:
    found = {}
    for name in LIBRARIES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return found


def record(
    challenge: str,
    input_dir: Path,
    output_dir: Path,
    ground_truth: Path,
    overrides: Mapping[str, str],
    settings: Mapping[str, Any],
    case_results: str,
    declaration: Path | None,
    code: tuple[Path, ...] = (),
) -> dict[str, Any]:
    """The record of the run that just wrote ``output_dir/metrics.json``; ``code``: the organizer's Python
    files a declaration's python metrics run (their SHA-256 under ``sha256.code``, by path beside it)."""
    return {
        "evaluation": __version__,
        "image_digest": os.environ.get("EVALUATION_IMAGE_DIGEST") or None,
        "python": platform.python_version(),
        "libraries": _versions(),
        "command": {
            "challenge": str(Path(challenge).resolve()) if challenge.endswith(".toml") else challenge,
            "declaration": str(declaration.resolve()) if declaration is not None else None,
            "input": str(input_dir.resolve()),
            "ground_truth": str(ground_truth.resolve()),
            "set": dict(overrides),
            "case_results": case_results,
        },
        "seed": settings.get("seed"),
        "settings": json.loads(json.dumps(dict(settings), default=str)),
        "sha256": {
            "predictions": tree_sha256(input_dir),
            "ground_truth": tree_sha256(ground_truth),
            "declaration": file_sha256(declaration) if declaration is not None else None,
            "metrics.json": file_sha256(output_dir / "metrics.json"),
            **({"code": {_beside(path, declaration): file_sha256(path) for path in code}} if code else {}),
        },
    }


def _beside(path: Path, declaration: Path | None) -> str:
    """A code file's name as its declaration names it (relative to its folder), else its full path."""
    folder = declaration.resolve().parent if declaration is not None else None
    return path.relative_to(folder).as_posix() if folder and path.is_relative_to(folder) else str(path)


def write_record(output_dir: Path, document: Mapping[str, Any]) -> Path:
    path = output_dir / RECORD_FILE
    path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    return path
