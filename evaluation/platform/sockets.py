"""Read a job's output sockets from ``/input/<job pk>/output/<relative_path>``.

Every path is resolved (symlinks followed) and must stay inside the input folder, and inside ITS
OWN job's output folder: a relative path with ``..``, a link that escapes, or one that lands in
another job's folder is an error, never a read (files.py: what may be opened and how big it may
be). A missing output (no such socket, no file) is ``None``; what that means (an error, or
"missing" under a challenge's policy) is the challenge's decision. A file that holds JSON ``null``
is not missing but malformed (../shared/spec/challenges.md: missing means no job or no output file).
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

from evaluation.errors import SubmissionError
from evaluation.platform.files import (
    MAX_JSON_BYTES,
    below,
    check_image_file,
    contained,
    contained_in,
    read_bytes,
    regular_size,
)
from evaluation.platform.predictions import Job, json_problem

IMAGE_SUFFIXES = (".mha", ".tif", ".tiff", ".nii.gz", ".nii", ".png")
inside = contained  # the name the challenges use for a file of the input folder itself


def _in_own_output(input_dir: Path, job: Job, slug: str, relative: Path, case: str | None) -> Path:
    """``<job pk>/output/relative`` resolved, refused unless it stays inside the input folder and
    inside this job's own output folder (never another job's)."""
    if Path(job.pk).name != job.pk or job.pk in (".", ".."):
        raise SubmissionError(f"job pk '{job.pk}' is not a plain folder name.", case)
    root = os.path.realpath(input_dir)
    path = contained_in(root, Path(job.pk) / "output" / relative, case)
    own = os.path.join(root, job.pk, "output")
    if os.path.realpath(own) != own or not below(own, path):
        raise SubmissionError(
            f"the output '{slug}' ({relative}) points outside the output folder of its own job {job.pk}; "
            "it was not read.",
            case,
        )
    return Path(path)


def output_path(input_dir: Path, job: Job, slug: str, case: str | None = None) -> Path | None:
    """Where output socket ``slug`` of ``job`` lives (resolved, inside ``<job pk>/output``), or
    ``None`` when the job has no such output."""
    socket_value = job.outputs.get(slug)
    if socket_value is None:
        return None
    return _in_own_output(input_dir, job, slug, Path(socket_value.socket.relative_path), case)


def output_file(input_dir: Path, job: Job, slug: str, case: str | None = None) -> Path | None:
    """The checked regular file of output ``slug``; ``None`` when the job has no such output or
    no file there (a FIFO, folder or device there is an error, found without opening it)."""
    path = output_path(input_dir, job, slug, case)
    if path is None or not os.path.lexists(path):
        return None
    regular_size(path, f"the output '{slug}'", case)
    return path


class _NonFiniteLiteral(ValueError):
    pass


def _reject_constants(token: str) -> float:
    raise _NonFiniteLiteral(token)


def parse_json_bytes(data: bytes, what: str, case: str | None = None, constants: bool = False) -> Any:
    """Strict JSON: NaN and Infinity literals are refused (they are not JSON numbers); with
    ``constants`` they are read as floats, for a caller that names the very value (a list's frame)."""
    try:
        return json.loads(data, parse_constant=None if constants else _reject_constants)
    except _NonFiniteLiteral as literal:
        raise SubmissionError(f"{what} contains {literal}, which is not a finite number.", case) from None
    except RecursionError:
        raise SubmissionError(f"{what} is not valid JSON (nested too deeply).", case) from None
    except (ValueError, UnicodeDecodeError) as error:
        raise SubmissionError(f"{what} is not valid JSON ({json_problem(error)}).", case) from None
    except MemoryError as error:  # read in the main process: the pipeline's message names this case
        error.case = case  # type: ignore[attr-defined]
        raise


def output_json(
    input_dir: Path, job: Job, slug: str, case: str | None = None, what: str = "", constants: bool = False
) -> tuple[bool, Any]:
    """Whether the job answers output ``slug``, and its parsed JSON (a file's ``null``: ``None``).

    The file written by the algorithm is read; when it is absent the value inline in predictions.json is
    used (Value sockets carry both), else the output is missing. ``what`` names the file in messages
    ("the output '<slug>'" unless given); ``constants``: as ``parse_json_bytes``'s.
    """
    if slug not in job.outputs:
        return False, None
    path = output_file(input_dir, job, slug, case)
    if path is not None:
        what = what or f"the output '{slug}'"
        return True, parse_json_bytes(read_bytes(path, what, case, MAX_JSON_BYTES), what, case, constants)
    inline = job.outputs[slug]
    if inline.socket.super_kind == "Value" and inline.value is not None:
        return True, inline.value
    return False, None


def read_json_output(input_dir: Path, job: Job, slug: str, case: str | None = None) -> Any | None:
    """The parsed JSON of a value or file output (``output_json``); ``None`` when the job has no such output."""
    found, value = output_json(input_dir, job, slug, case)
    if found and value is None:
        raise SubmissionError(f"the output '{slug}' holds null instead of a value.", case)
    return value


def image_output_file(input_dir: Path, job: Job, slug: str, case: str | None = None) -> Path | None:
    """The one image file of an image output folder, its header checked (files.check_image_file)
    before any reader sees it; ``None`` when the output is missing."""
    path = output_path(input_dir, job, slug, case)
    if path is None or not os.path.lexists(path):
        return None
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.name.lower().endswith(IMAGE_SUFFIXES))
        if len(files) != 1:
            raise SubmissionError(
                f"the image output '{slug}' holds {len(files)} image files; exactly one is expected.", case
            )
        relative = Path(job.outputs[slug].socket.relative_path) / files[0].name
        path = _in_own_output(input_dir, job, slug, relative, case)
    check_image_file(path, f"the image output '{slug}'", case)
    return path


def finite_number(value: Any, what: str, case: str | None = None) -> float:
    """``value`` as a finite float; booleans, strings, NaN and infinities are errors."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise SubmissionError(f"{what} is not a number.", case)
    try:
        number = float(value)
    except OverflowError:
        raise SubmissionError(f"{what} is too large for a floating-point number.", case) from None
    if not math.isfinite(number):
        raise SubmissionError(f"{what} is not a finite number.", case)
    return number
