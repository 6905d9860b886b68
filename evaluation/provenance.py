"""A reproducibility record of one evaluation, beside its metrics.json (``--provenance``):
``OUTPUT/provenance.json`` holds what the result depends on, so that anyone can re-run it and check
that the same bytes come out (``python -m evaluation.compare --replay OUTPUT/provenance.json``).

The record: the evaluation's version and the image digest when the image knows it
(``$EVALUATION_IMAGE_DIGEST``), Python's and every scoring library's version, the command's
challenge, options, seed and case-results mode, and the SHA-256 of the predictions (the input
folder), of the ground truth (its folder), of the declaration (a declared challenge), of the
organizer's Python files its python metrics run and of the declarations it extends (``sha256.code``,
when there are any) and of metrics.json itself. metrics.json is not changed.

A folder is hashed with the evaluation's own rules for what may be opened (platform/files.py):
no link is followed (a link counts by the path it holds: its target, when inside the folder, is
hashed where it lies; outside, the evaluation never reads it), a FIFO, socket or device counts by
its kind and is never opened, and a file larger than any the evaluation reads (``largest_read``)
counts by its size: an unreferenced 100 GB sparse file costs a ``stat``, not a read. Nothing
outside the input folder, the ground truth and the declaration is opened.

``check_record`` is the replay's gate: a record of the wrong shape, or naming paths that are not
where such paths belong, is refused in one line before anything it names is opened.
"""

from __future__ import annotations

import json
import os
import platform
import re
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from evaluation import __version__
from evaluation.errors import ConfigurationError
from evaluation.platform.files import (
    FILE_KINDS,
    MAX_JSON_BYTES,
    MAX_PREDICTIONS_BYTES,
    memory_budget,
    open_binary,
)
from evaluation.platform.ground_truth import PACKAGE_DIR, bundled
from evaluation.platform.metrics_json import CASE_RESULTS, write_atomically

RECORD_FILE = "provenance.json"
LIBRARIES = ("numpy", "scipy", "scikit-learn", "pandas", "SimpleITK", "connected-components-3d", "lifelines",
             "surface-distance", "tifffile", "Pillow")  # fmt: skip
HASHED = ("predictions", "ground_truth", "declaration", "metrics.json")  # the record's sha256 keys
# Folders of the operating system: no input, ground truth or declaration of a record lies in them
# (the package's own bundled data may, when it is installed under /usr).
SYSTEM_FOLDERS = tuple(Path(p) for p in ("/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32",
                                         "/proc", "/run", "/sbin", "/sys", "/usr"))  # fmt: skip
SHA256 = re.compile(r"[0-9a-f]{64}")


def largest_read() -> int:
    """The largest file the evaluation may read: predictions.json's bound, or an image whose voxel
    data fits in the memory the process may use (files.memory_budget); a larger file was not read."""
    return max(MAX_PREDICTIONS_BYTES, memory_budget()[0])


def file_sha256(path: Path, what: str, max_bytes: int | None = None) -> str:
    """The SHA-256 of a checked regular file (files.open_binary: no FIFO, no final link, bounded)."""
    import hashlib  # (where a record is made: not at every start)

    digest = hashlib.sha256()
    try:
        with open_binary(path, what, max_bytes=max_bytes) as handle:
            for block in iter(lambda: handle.read(2**20), b""):
                digest.update(block)
    except OSError as error:
        raise ConfigurationError(f"{what} cannot be read for its hash ({error.strerror}).") from None
    return digest.hexdigest()


def _entries(root: Path, what: str, limit: int) -> list[str]:
    """One line per entry under ``root`` (its relative path and content, kind, link or size); no
    link followed, nothing but regular files opened."""
    lines = []
    pending = [root]
    while pending:
        folder = pending.pop()
        try:
            with os.scandir(folder) as found:
                entries = list(found)
        except OSError:
            lines.append(f"{folder.relative_to(root).as_posix()}\0unreadable folder\n")
            continue
        for entry in entries:
            path = Path(entry.path)
            relative = path.relative_to(root).as_posix()
            status = entry.stat(follow_symlinks=False)
            kind = stat.S_IFMT(status.st_mode)
            if kind == stat.S_IFDIR:
                pending.append(path)
            elif kind == stat.S_IFLNK:
                lines.append(f"{relative}\0link to {os.readlink(path)}\n")
            elif kind != stat.S_IFREG:
                lines.append(f"{relative}\0{FILE_KINDS.get(kind, 'not a regular file')}\n")
            elif status.st_size > limit:
                lines.append(f"{relative}\0{status.st_size} bytes, more than the evaluation reads\n")
            elif not os.access(path, os.R_OK):
                lines.append(f"{relative}\0unreadable\n")
            else:
                lines.append(f"{relative}\0{file_sha256(path, f'{what} {relative}', limit)}\n")
    return sorted(lines)


def tree_sha256(folder: Path, what: str) -> str:
    """One hash of a folder (its links at the top resolved first: the platform may stage ``/input``
    as one): every entry's relative path and content, in sorted order (see the module docstring for
    links, special and huge files; the order and names of the files count, their times do not)."""
    import hashlib  # (where a record is made: not at every start)

    digest = hashlib.sha256()
    try:
        lines = _entries(folder.resolve(), what, largest_read())
    except OSError as error:  # an entry that vanished or cannot be examined while it is walked
        raise ConfigurationError(f"{folder} cannot be hashed for the record ({error.strerror}).") from None
    for line in lines:
        digest.update(line.encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


def _versions() -> dict[str, str]:
    from importlib import metadata  # (only a record needs it: about 13 ms of every run's start-up otherwise)

    found = {}
    for name in LIBRARIES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return found


def environment() -> dict[str, Any]:
    """What this process runs on: the parts of a record a replay names when they differ."""
    digest = os.environ.get("EVALUATION_IMAGE_DIGEST") or None
    return {"evaluation": __version__, "image_digest": digest, "python": platform.python_version(),
            "libraries": _versions()}  # fmt: skip


def record(
    challenge: str,
    input_dir: Path,
    ground_truth: Path,
    overrides: Mapping[str, str],
    settings: Mapping[str, Any],
    case_results: str,
    declaration: Path | None,
    code: tuple[Path, ...] = (),
) -> dict[str, Any]:
    """The record of the run about to write metrics.json, before it is written (``write_record``
    adds metrics.json's hash): a failure here leaves no metrics.json. ``code``: the organizer's Python
    files a declaration's python metrics run and the declarations it extends (their SHA-256 under
    ``sha256.code``, by path beside it)."""
    return {
        **environment(),
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
            "predictions": tree_sha256(input_dir, "the input file"),
            "ground_truth": tree_sha256(ground_truth, "the ground-truth file"),
            "declaration": file_sha256(declaration.resolve(), f"the declaration {declaration}", MAX_JSON_BYTES)
            if declaration is not None
            else None,
            **(
                {
                    "code": {
                        _beside(path, declaration): file_sha256(path.resolve(), f"the code file {path}")
                        for path in code
                    }
                }
                if code
                else {}
            ),
        },
    }


def _beside(path: Path, declaration: Path | None) -> str:
    """A code file's name as its declaration names it (relative to its folder), else its full path."""
    folder = declaration.resolve().parent if declaration is not None else None
    return path.relative_to(folder).as_posix() if folder and path.is_relative_to(folder) else str(path)


def write_record(output_dir: Path, document: Mapping[str, Any], metrics: Path) -> Path:
    """``output_dir/provenance.json``: ``document`` with the hash of ``metrics`` (just written)."""
    done = {**document, "sha256": {**document["sha256"], "metrics.json": file_sha256(metrics, str(metrics))}}
    path = output_dir / RECORD_FILE
    try:
        write_atomically(path, json.dumps(done, indent=2) + "\n")
    except OSError as error:
        raise ConfigurationError(f"The reproducibility record {path} cannot be written ({error.strerror}).") from None
    return path


# ------------------------------------------------------------------------------------ the replay's gate


def _refused(where: Path, why: str) -> ConfigurationError:
    return ConfigurationError(f"{where} is not a provenance record of python -m evaluation --provenance: {why}.")


def _placed(where: Path, key: str, text: Any, kind: str) -> Path:
    """The absolute, normalised path the record holds at ``key``; refused when it is relative, holds
    ``..`` or ``.``, or lies (itself or after its links) in the root or an operating-system folder."""
    if not isinstance(text, str) or not text:
        raise _refused(where, f"command.{key} is not a path")
    if "\0" in text or not text.startswith("/") or os.path.normpath(text) != text or "/../" in f"{text}/":
        raise _refused(where, f"command.{key} ({text!r}) is not an absolute path without '..'")
    path = Path(text)
    own = (PACKAGE_DIR, bundled("ground-truth"), bundled("demo-input"))
    for candidate in (path, Path(os.path.realpath(path))):
        mine = any(candidate == root or root in candidate.parents for root in own)
        system = candidate == Path("/") or any(candidate == s or s in candidate.parents for s in SYSTEM_FOLDERS)
        if system and not mine:
            raise _refused(where, f"command.{key} ({text}) is a folder of the operating system, not {kind}")
    return path


def check_record(document: Any, where: Path) -> dict[str, Any]:
    """``document`` (the parsed ``where``) after every check of its shape and paths; a
    ``ConfigurationError`` of one line otherwise. Nothing it names is opened here."""
    if not isinstance(document, dict):
        raise _refused(where, "it is not a JSON object")
    command, hashes = document.get("command"), document.get("sha256")
    if not isinstance(command, dict):
        raise _refused(where, "command is not an object")
    if not isinstance(hashes, dict):
        raise _refused(where, "sha256 is not an object")
    for key in HASHED:
        value = hashes.get(key)
        if not (key == "declaration" and value is None) and not (isinstance(value, str) and SHA256.fullmatch(value)):
            raise _refused(where, f"sha256.{key} is not a SHA-256 hex digest")
    challenge = command.get("challenge")
    if not isinstance(challenge, str) or not challenge:
        raise _refused(where, "command.challenge is not a challenge name or declaration")
    options = command.get("set")
    if not isinstance(options, dict) or not all(
        isinstance(value, str) and re.fullmatch(r"[\w.-]+", key) for key, value in options.items()
    ):
        raise _refused(where, "command.set is not an object of option names and strings")
    if command.get("case_results") not in CASE_RESULTS:
        raise _refused(where, f"command.case_results is not one of {', '.join(CASE_RESULTS)}")
    for key in ("evaluation", "python"):
        if not isinstance(document.get(key), str):
            raise _refused(where, f"{key} is not a version")
    if document.get("image_digest") is not None and not isinstance(document["image_digest"], str):
        raise _refused(where, "image_digest is not a string")
    libraries = document.get("libraries")
    if not isinstance(libraries, dict) or not all(isinstance(v, str) for v in libraries.values()):
        raise _refused(where, "libraries is not an object of versions")
    paths = {key: _placed(where, key, command.get(key), kind) for key, kind in
             (("input", "a submission's folder"), ("ground_truth", "a ground-truth folder"))}  # fmt: skip
    declaration = command.get("declaration")
    if declaration is not None:
        paths["declaration"] = _placed(where, "declaration", declaration, "a declaration")
        if not declaration.endswith(".toml"):
            raise _refused(where, "command.declaration is not a .toml file")
    if (declaration is None) != (hashes["declaration"] is None):
        raise _refused(where, "command.declaration and sha256.declaration disagree")
    code = hashes.get("code", {})
    if not isinstance(code, dict) or (code and declaration is None):
        raise _refused(where, "sha256.code is not an object of the declaration's code files")
    for name, digest in code.items():
        if not (isinstance(digest, str) and SHA256.fullmatch(digest)):
            raise _refused(where, f"sha256.code.{name} is not a SHA-256 hex digest")
        if Path(name).is_absolute() or ".." in Path(name).parts or not name.endswith((".py", ".toml")):
            raise _refused(where, "sha256.code names a file that is not a .py or .toml file beside the declaration")
    if challenge.endswith(".toml"):
        if challenge != declaration:
            raise _refused(where, "command.challenge is a declaration other than command.declaration")
    elif "/" in challenge or challenge in (".", ".."):
        raise _refused(where, "command.challenge is neither a challenge name nor a .toml declaration")
    return {**document, "paths": paths}


def environment_changes(document: Mapping[str, Any]) -> list[str]:
    """How this process's environment differs from the record's (``check_record``ed): named in the
    replay's verdict, not a failure (the bytes decide)."""
    now = environment()
    changes = [f"{key} {now[key]} (recorded {document[key]})" for key in ("evaluation", "python")
               if now[key] != document[key]]  # fmt: skip
    if now["image_digest"] != document.get("image_digest"):
        then = document.get("image_digest") or "unknown"
        changes.append(f"image {now['image_digest'] or 'unknown'} (recorded {then})")
    libraries = document["libraries"]
    for name in sorted(set(now["libraries"]) | set(libraries)):
        if now["libraries"].get(name) != libraries.get(name):
            changes.append(f"{name} {now['libraries'].get(name, 'absent')} (recorded {libraries.get(name, 'absent')})")
    return changes


def changed_inputs(document: Mapping[str, Any], declaration: Path | None) -> list[str]:
    """What of the predictions, ground truth and ``declaration`` (the one the replay will read) no
    longer has its recorded hash; each hashed under the evaluation's rules (``tree_sha256``)."""
    hashes, paths = document["sha256"], document["paths"]
    changed = []
    for key, what in (("input", "predictions"), ("ground_truth", "ground truth")):
        path = paths[key]
        if not path.is_dir():
            changed.append(f"the {what} folder {path} is gone")
        elif tree_sha256(path, f"the {what} file") != hashes["predictions" if key == "input" else key]:
            changed.append(f"the {what} ({path}) changed")
    if declaration is None:
        if hashes["declaration"] is not None:
            changed.append("the challenge is no longer declared by a .toml")
    else:
        if file_sha256(declaration, f"the declaration {declaration}", MAX_JSON_BYTES) != hashes["declaration"]:
            changed.append(f"the declaration ({declaration}) changed")
        for name, digest in hashes.get("code", {}).items():  # its python metrics' files, beside it
            code = declaration.parent / name
            if not code.is_file() or file_sha256(code.resolve(), f"the code file {code}") != digest:
                changed.append(f"the code file {code} changed")
    return changed
