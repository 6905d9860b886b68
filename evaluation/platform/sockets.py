"""Read a job's output sockets from ``/input/<job pk>/output/<relative_path>``.

Every path is resolved (symlinks followed) and must stay inside the input folder: a relative path
with ``..`` or a link that escapes is an error, never a read. A missing output is ``None``; what
that means (an error, or "missing" under a challenge's policy) is the challenge's decision.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from evaluation.errors import SubmissionError
from evaluation.platform.predictions import Job

IMAGE_SUFFIXES = (".mha", ".tif", ".tiff", ".nii.gz", ".nii", ".png")


def inside(root: Path, relative: str | Path, case: str | None = None) -> Path:
    """``root / relative``, resolved, refusing anything that ends up outside ``root``."""
    root_resolved = root.resolve()
    candidate = (root_resolved / relative).resolve()
    if candidate != root_resolved and root_resolved not in candidate.parents:
        raise SubmissionError(f"the output path '{relative}' points outside the input folder.", case)
    return candidate


def output_path(input_dir: Path, job: Job, slug: str, case: str | None = None) -> Path | None:
    """Where output socket ``slug`` of ``job`` lives, or ``None`` when the job has no such output."""
    socket_value = job.outputs.get(slug)
    if socket_value is None:
        return None
    relative = Path(job.pk) / "output" / socket_value.socket.relative_path
    if Path(job.pk).name != job.pk or job.pk in (".", ".."):
        raise SubmissionError(f"job pk '{job.pk}' is not a plain folder name.", case)
    return inside(input_dir, relative, case)


class _NonFiniteLiteral(ValueError):
    pass


def _reject_constants(token: str) -> float:
    raise _NonFiniteLiteral(token)


def parse_json_bytes(data: bytes, what: str, case: str | None = None) -> Any:
    """Strict JSON: NaN and Infinity literals are refused (they are not JSON numbers)."""
    try:
        return json.loads(data, parse_constant=_reject_constants)
    except _NonFiniteLiteral as literal:
        raise SubmissionError(f"{what} contains {literal}, which is not a finite number.", case) from None
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise SubmissionError(f"{what} is not valid JSON.", case) from None


def read_json_output(input_dir: Path, job: Job, slug: str, case: str | None = None) -> Any | None:
    """The parsed JSON of a value or file output; ``None`` when the job has no such output.

    The file written by the algorithm is read; when it is absent the value inline in
    predictions.json is used (Value sockets carry both), else the output is missing.
    """
    path = output_path(input_dir, job, slug, case)
    if path is None:
        return None
    if path.is_file():
        return parse_json_bytes(path.read_bytes(), f"the output '{slug}'", case)
    if path.exists():
        raise SubmissionError(f"the output '{slug}' is not a file.", case)
    inline = job.outputs[slug]
    if inline.socket.super_kind == "Value" and inline.value is not None:
        return inline.value
    return None


def image_output_file(input_dir: Path, job: Job, slug: str, case: str | None = None) -> Path | None:
    """The one image file of an image output folder; ``None`` when the output is missing."""
    path = output_path(input_dir, job, slug, case)
    if path is None or not path.exists():
        return None
    if path.is_file():
        return path
    files = sorted(p for p in path.iterdir() if p.name.lower().endswith(IMAGE_SUFFIXES))
    if len(files) != 1:
        raise SubmissionError(
            f"the image output '{slug}' holds {len(files)} image files; exactly one is expected.", case
        )
    return inside(input_dir, files[0].relative_to(input_dir.resolve()), case)


def finite_number(value: Any, what: str, case: str | None = None) -> float:
    """``value`` as a finite float; booleans, strings, NaN and infinities are errors."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise SubmissionError(f"{what} is not a number.", case)
    number = float(value)
    if not math.isfinite(number):
        raise SubmissionError(f"{what} is not a finite number.", case)
    return number
