"""``python -m evaluation.make_input --challenge NAME --outputs DIR --output DIR [--seed S]``

Builds a submission in the platform's exact ``/input`` layout from plain algorithm outputs, so an
organizer can test the container locally with what the platform will give it. ``DIR/<case>/``
holds exactly what an algorithm wrote to ``/output`` for that case (``<case>`` is the challenge's
case name: the stack name for RARE25, the patient id for HECKTOR, the image name for DigestPath):
value and file outputs at their relative path (``rfs.json``), image outputs as a folder holding one
image (``images/<socket>/<any name>.mha``). A socket whose file is absent gives a job without that
output (the challenge's missing policy applies); a file no output socket knows, a value that is not
JSON, or an image folder holding several images is an error naming the case; a FIFO, socket or
device where an output is expected gets the evaluation's line (nothing is opened that could block).
The same call with the same seed writes the same bytes.

Prediction-file phases: a declared one (``[submission] kind = "csv"``) gets its CSV written from the
same folders (``DIR/<case>/<output slug>.json``: one row per case, one column per output, a blank cell
for an absent file); ISIC needs no builder: put the participant's CSV at /input/predictions.csv.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evaluation.cli import _fail, tool_parser
from evaluation.contract import Challenge
from evaluation.errors import ConfigurationError, EvaluationError, SubmissionError
from evaluation.platform.files import not_there, read_bytes, regular_size
from evaluation.platform.layout import JobSpec, write_input
from evaluation.platform.predictions import Socket
from evaluation.platform.sockets import IMAGE_SUFFIXES, parse_json_bytes
from evaluation.registry import get

# the platform's value kinds that hold one JSON type (its socket validates the value against it: a string in a
# Float socket never reaches an evaluation); others (String, Anything, JSON kinds) are written as given
VALUE_TYPES: dict[str, tuple[type, ...]] = {"Float": (int, float), "Integer": (int,), "Bool": (bool,)}
JSON_TYPES = {bool: "true or false", int: "a number", float: "a number", str: "a string", list: "a list",
              dict: "an object", type(None): "null"}  # fmt: skip


def _typed(socket: Socket, value: Any, case: str) -> Any:
    """A value output as its socket's kind holds it, or one line saying what the file holds instead."""
    wanted = VALUE_TYPES.get(socket.kind or "")
    if wanted is None or value is None or (isinstance(value, wanted) and (bool in wanted) == isinstance(value, bool)):
        return value  # null: no answer, which the challenge's missing policy handles
    raise SubmissionError(
        f"{socket.relative_path} holds {JSON_TYPES.get(type(value), type(value).__name__)}, but the output "
        f"'{socket.slug}' is a {socket.kind} socket: write {JSON_TYPES[wanted[-1]]} (JSON, without quotes).",
        case,
    )


def _case_outputs(challenge: Challenge, case_dir: Path) -> dict[Socket, Any]:
    case = case_dir.name
    outputs: dict[Socket, Any] = {}
    claimed: set[Path] = set()
    for socket in challenge.phase.outputs:
        path = case_dir / socket.relative_path
        if socket.super_kind == "Image":
            if not path.is_dir():
                continue
            files = sorted(p for p in path.iterdir() if not p.is_dir())  # a FIFO too: refused below
            images = [p for p in files if p.name.lower().endswith(IMAGE_SUFFIXES)]
            if len(images) != 1 or len(files) != 1:
                raise SubmissionError(
                    f"{path.relative_to(case_dir.parent)} must hold exactly one image; it holds {len(files)} files.",
                    case,
                )
            regular_size(images[0].resolve(), f"the image output '{socket.slug}'", case)  # the evaluation's first check
            outputs[socket] = images[0]
            claimed.add(images[0])
        elif os.path.lexists(path) and not path.is_dir():  # a FIFO or device: the evaluation's line, never a read
            data = read_bytes(path.resolve(), f"the output '{socket.slug}'", case)
            outputs[socket] = _typed(socket, parse_json_bytes(data, f"{socket.relative_path}", case), case)
            claimed.add(path)
    unknown = sorted(p for p in case_dir.rglob("*") if not p.is_dir() and p not in claimed)
    if unknown:
        names = ", ".join(str(p.relative_to(case_dir)) for p in unknown)
        raise SubmissionError(f"{names} is not an output of {challenge.name}.", case)
    return outputs


def build_input(challenge: Challenge, outputs_dir: Path, output_dir: Path, seed: int = 0) -> list[str]:
    """Write the platform layout for every case folder of ``outputs_dir``; returns the job pks (a
    prediction-file phase: the cases of its CSV's rows)."""
    if challenge.phase.prediction_file:
        return challenge.write_prediction_file(outputs_dir, output_dir)
    if not outputs_dir.is_dir():
        raise ConfigurationError(f"The outputs folder {outputs_dir} {not_there(outputs_dir, folder=True)}.")
    case_dirs = sorted(p for p in outputs_dir.iterdir() if p.is_dir())
    if not case_dirs:
        raise ConfigurationError(f"The outputs folder {outputs_dir} holds no case folder.")
    jobs = [JobSpec(challenge.job_inputs(d.name), _case_outputs(challenge, d)) for d in case_dirs]
    if output_dir.exists() and not output_dir.is_dir():  # rmtree would raise NotADirectoryError
        raise ConfigurationError(f"The output folder {output_dir} is a file, not a folder.")
    if output_dir.exists():
        shutil.rmtree(output_dir)
    return write_input(output_dir, jobs, seed)


def parser() -> argparse.ArgumentParser:
    result = tool_parser("evaluation.make_input", __doc__)
    result.add_argument("--outputs", type=Path, required=True, help="DIR/<case>/ = what the algorithm wrote")
    result.add_argument("--output", type=Path, required=True, help="where to write the /input layout (replaced)")
    result.add_argument("--seed", type=int, default=0, help="seed of the job and image UUIDs (default: 0)")
    return result


def main(argv: Sequence[str] | None = None) -> int:
    arguments = parser().parse_args(argv)
    try:
        if not arguments.challenge:
            raise ConfigurationError("No challenge given: use --challenge or set EVALUATION_CHALLENGE.")
        challenge = get(arguments.challenge)
        pks = build_input(challenge, arguments.outputs, arguments.output, arguments.seed)
    except EvaluationError as error:
        return _fail(str(error))
    except Exception as error:  # a defect: the traceback is for the admins, stdout only
        traceback.print_exc(file=sys.stdout)
        return _fail(f"make_input failed with an internal error ({type(error).__name__}); the traceback is on stdout.")
    what = "rows of a prediction file" if challenge.phase.prediction_file else "jobs"
    print(f"Wrote {len(pks)} {what} to {arguments.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
