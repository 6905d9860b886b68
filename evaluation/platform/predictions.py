"""Parse ``/input/predictions.json``: the submission's algorithm jobs and their sockets.

Tolerant of the platform's versions (see ../shared/spec/platform.md): only ``pk``, ``inputs``,
``outputs`` and, per socket value, ``interface`` (or ``socket``), ``value``, ``file`` and ``image``
are read; any other key is ignored and missing optional keys default to ``None``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evaluation.errors import ConfigurationError, SubmissionError
from evaluation.platform.files import MAX_PREDICTIONS_BYTES, contained, read_bytes, read_named

PREDICTIONS_FILE = "predictions.json"


@dataclass(frozen=True, eq=False)
class Socket:
    """A socket (formerly "interface") as the platform describes it."""

    slug: str
    relative_path: str
    kind: str | None = None
    super_kind: str | None = None


@dataclass(frozen=True, eq=False)
class SocketValue:
    """One input or output of a job: an inline value, a file URL or an image reference."""

    socket: Socket
    value: Any = None
    file: str | None = None
    image_pk: str | None = None
    image_name: str | None = None

    @property
    def case_name(self) -> str | None:
        """The name that identifies the ground-truth case: the image's original file name, else the
        last part of the file URL, else the value itself (the platform's convention)."""
        if self.image_name is not None:
            return self.image_name
        if self.file:
            return self.file.rstrip("/").rsplit("/", 1)[-1]
        if isinstance(self.value, str):
            return self.value
        return None


@dataclass(frozen=True, eq=False)
class Job:
    """One successful algorithm job of the submission."""

    pk: str
    inputs: dict[str, SocketValue] = field(default_factory=dict)
    outputs: dict[str, SocketValue] = field(default_factory=dict)

    @property
    def input_slugs(self) -> tuple[str, ...]:
        """The sorted input socket slugs: the key a phase with several socket sets dispatches on."""
        return tuple(sorted(self.inputs))

    def input_name(self, slug: str) -> str:
        """The case name carried by input ``slug``; an error naming the job when it is absent."""
        socket_value = self.inputs.get(slug)
        name = socket_value.case_name if socket_value else None
        if not name:
            raise SubmissionError(f"Job {self.pk} has no input '{slug}' naming its case.")
        return name


def _socket_value(raw: Any, job_pk: str) -> SocketValue:
    if not isinstance(raw, dict):
        raise SubmissionError(f"predictions.json: job {job_pk} has a socket value that is not an object.")
    interface = raw.get("interface") or raw.get("socket")
    if not isinstance(interface, dict) or not isinstance(interface.get("slug"), str):
        raise SubmissionError(f"predictions.json: job {job_pk} has a socket value without a socket slug.")
    relative_path = interface.get("relative_path")
    socket = Socket(
        slug=interface["slug"],
        relative_path=relative_path if isinstance(relative_path, str) else "",
        kind=interface.get("kind"),
        super_kind=interface.get("super_kind"),
    )
    image = raw.get("image")
    image_pk = image_name = None
    if isinstance(image, dict):
        image_pk = None if image.get("pk") is None else str(image.get("pk"))
        image_name = image.get("name") if isinstance(image.get("name"), str) else None
    file = raw.get("file")
    return SocketValue(
        socket=socket,
        value=raw.get("value"),
        file=file if isinstance(file, str) else None,
        image_pk=image_pk,
        image_name=image_name,
    )


def _socket_values(raw: Any, job_pk: str, what: str) -> dict[str, SocketValue]:
    if raw is None:
        return {}
    if not isinstance(raw, list):
        raise SubmissionError(f"predictions.json: the {what} of job {job_pk} are not a list.")
    values: dict[str, SocketValue] = {}
    for item in raw:
        socket_value = _socket_value(item, job_pk)
        slug = socket_value.socket.slug
        if slug in values:
            raise SubmissionError(f"predictions.json: job {job_pk} lists the {what[:-1]} '{slug}' twice.")
        values[slug] = socket_value
    return values


def parse_jobs(document: Any) -> list[Job]:
    """Jobs from the parsed predictions.json document."""
    if not isinstance(document, list):
        raise SubmissionError("predictions.json is not a list of algorithm jobs.")
    jobs: list[Job] = []
    seen: set[str] = set()
    for position, raw in enumerate(document):
        if not isinstance(raw, dict) or raw.get("pk") in (None, ""):
            raise SubmissionError(f"predictions.json: entry {position} is not a job with a 'pk'.")
        pk = str(raw["pk"])
        if pk in seen:
            raise SubmissionError(f"predictions.json lists job {pk} twice.")
        seen.add(pk)
        status = raw.get("status")
        if status not in (None, "Succeeded"):
            raise SubmissionError(f"predictions.json: job {pk} did not succeed (status {status}).")
        jobs.append(
            Job(
                pk=pk,
                inputs=_socket_values(raw.get("inputs"), pk, "inputs"),
                outputs=_socket_values(raw.get("outputs"), pk, "outputs"),
            )
        )
    return jobs


def json_problem(error: ValueError) -> str:
    """Where and why a JSON text is broken, for a message: ``line 3, column 7: Expecting ','
    delimiter``, or the byte that is not UTF-8."""
    if isinstance(error, json.JSONDecodeError):
        return f"line {error.lineno}, column {error.colno}: {error.msg}"
    if isinstance(error, UnicodeDecodeError):
        return f"byte {error.start} is not UTF-8"
    if "integer string conversion" in str(error):
        return "a number has too many digits"
    return error.__class__.__name__


def read_json_file(path: Path) -> Any:
    """A JSON file an organizer names (a metrics.json, a provenance record), parsed; else a
    ``ConfigurationError`` of one line saying why (unreadable, not a regular file, too big: see
    ``files.read_named``; where the JSON breaks, too deep). Every tool's reader of such a file."""
    data = read_named(path)
    try:
        return json.loads(data.decode("utf-8"))
    except RecursionError:
        raise ConfigurationError(f"{path} is not valid JSON (nested too deeply).") from None
    except ValueError as error:
        raise ConfigurationError(f"{path} is not valid JSON ({json_problem(error)}).") from None


def load_jobs(input_dir: Path) -> list[Job]:
    """Read and parse ``input_dir/predictions.json`` (a link leaving the input folder, a FIFO or a
    file above ``MAX_PREDICTIONS_BYTES`` is refused before it is read: files.py)."""
    if not os.path.lexists(input_dir / PREDICTIONS_FILE):
        raise SubmissionError("The input holds no predictions.json: no algorithm job to evaluate.")
    try:
        path = contained(input_dir, PREDICTIONS_FILE)
    except SubmissionError:
        message = "predictions.json is a link that points outside the input folder; it was not read."
        raise SubmissionError(message) from None
    data = read_bytes(path, "predictions.json", max_bytes=MAX_PREDICTIONS_BYTES)
    try:
        document = json.loads(data)
    except RecursionError:
        raise SubmissionError("predictions.json is not valid JSON (nested too deeply).") from None
    except (ValueError, UnicodeDecodeError) as error:
        raise SubmissionError(f"predictions.json is not valid JSON ({json_problem(error)}).") from None
    return parse_jobs(document)
