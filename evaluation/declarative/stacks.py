"""Stacked inputs (``[cases] stack_size``): a job's input is a stack of frames, one case per frame, and
each of its value outputs is a JSON list with one value per frame, in frame order.

As AIROGS (qurAI-amsterdam/airogs-evaluation ``evaluation.py``: ``AIROGSPredictionsLoader.flatten``
sorts the jobs by the number of their input's name, ``int(name.split('.')[0])``, and concatenates their
lists; ``get_screening_cases`` pairs the k-th value with the k-th row of ``reference.csv``): the rows of
the reference CSV in file order are the frames, ``stack_size`` to a stack (the last may be shorter), and
the job whose input name (without its suffix and ``strip`` marker) ends in the number k answers stack k,
rows k * stack_size + 1 ... Unlike a concatenation, each job is placed by its own number, so a missing
job leaves its own frames missing (the outputs' missing policies) and a list of the wrong length is
refused in one line instead of shifting every later frame.

Listed stacks (``[cases] stacks = "file.json"``, as RARE25: TUE-VCA/Grand-Challenge-RARE25 evaluate.py reads
``val_metadata.json``, ``{stack: [{index, class, patient_id, ...}, ...]}``, and pairs the k-th likelihood of a
job with the frame of index k of the stack its input image names): each stack has its own frames, the job
whose input name (suffix removed) equals the stack's name (suffix removed) answers it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaluation.declarative.output_kinds import OutputSpec
from evaluation.declarative.reference import DeclaredReference
from evaluation.declarative.schema import Declaration
from evaluation.errors import SubmissionError
from evaluation.platform.matching import Matched, stem
from evaluation.platform.predictions import Job
from evaluation.platform.sockets import read_json_output

_NUMBER = re.compile(r"(\d+)$")


@dataclass(frozen=True)
class Frames:
    """What a stacked submission answers: the jobs by case (every frame of a stack maps to its job),
    the cases without a job, each value output's answer per case (a list's element, as JSON) and how
    messages name each case ("TRAIN000143 (stack 0, frame 3)")."""

    matched: Matched
    answers: dict[str, dict[str, Any]]
    names: dict[str, str]


def stacks(reference: DeclaredReference, size: int) -> dict[int | str, tuple[str, ...]]:
    """The cases of each stack, in frame order: the reference CSV's rows, ``size`` to a stack, by number; or
    (``size`` 0) the stacks listed in the ground truth, by name."""
    if not size:
        return dict(reference.stacks)
    order = reference.order
    return {k: order[start : start + size] for k, start in enumerate(range(0, len(order), size))}


def stack_number(name: str, job: Job) -> int:
    """The stack a job answers: the number its input's name (suffix and marker removed) ends in."""
    found = _NUMBER.search(name)
    if found is None:
        raise SubmissionError(f"Job {job.pk}'s input {name!r} ends in no number: a stacked input names its stack "
                              "by a number (0.tiff, 1.tiff, ...).")  # fmt: skip
    return int(found.group(1))


def _rows(stack: int | str, frames: Sequence[str], size: int) -> str:
    """Where a numbered stack's frames are in the reference CSV (" (reference rows 4-6)"); "" for a listed one."""
    if isinstance(stack, str):
        return ""
    first = stack * size + 1
    return f" (reference rows {first}-{first + len(frames) - 1})" if len(frames) > 1 else f" (reference row {first})"


def _jobs_by_stack(
    jobs: Iterable[Job], name_of: Callable[[Job], str], listed: Sequence[int | str], suffixes: Sequence[str]
) -> dict[int | str, Job]:
    by_stack: dict[int | str, Job] = {}
    names = {stem(str(name), suffixes): name for name in listed}  # a listed stack: its name without the suffix
    for job in jobs:
        name = name_of(job)
        if names and not isinstance(listed[0], int):
            if name not in names:
                raise SubmissionError(f"Job {job.pk}'s input {name!r} is not a stack of the reference.")
            stack: int | str = names[name]
        elif (stack := stack_number(name, job)) >= len(listed):
            raise SubmissionError(
                f"Job {job.pk} is for stack {stack}; the reference has stacks 0 to {len(listed) - 1}."
            )
        if stack in by_stack:
            raise SubmissionError(f"Two jobs ({by_stack[stack].pk} and {job.pk}) are for stack {stack}.")
        by_stack[stack] = job
    return by_stack


def frame_answers(
    input_dir: Path,
    jobs: Iterable[Job],
    name_of: Callable[[Job], str],
    declaration: Declaration,
    reference: DeclaredReference,
) -> Frames:
    """Each job placed at its stack and each of its value outputs split into frames: a JSON list of as many
    values as the stack has frames (each value checked later as the output's kind, naming its frame).
    A stack without a job is missing; an error when an output needs every answer (``missing = "error"``)."""
    size = declaration.cases.stack_size
    frames_of = stacks(reference, size)
    by_stack = _jobs_by_stack(jobs, name_of, list(frames_of), declaration.cases.strip_suffixes)
    needs_job = next((o.slug for o in declaration.outputs if o.missing == "error"), None)
    absent = next((k for k in frames_of if k not in by_stack), None)
    if absent is not None and needs_job:
        raise SubmissionError(f"No algorithm job for stack {absent}{_rows(absent, frames_of[absent], size)}; every "
                              f"frame needs the output '{needs_job}'.")  # fmt: skip
    answers: dict[str, dict[str, Any]] = {o.slug: {} for o in declaration.outputs}
    names: dict[str, str] = {}
    jobs_by_case: dict[str, Job] = {}
    for stack, frames in frames_of.items():
        for frame, case in enumerate(frames):
            names[case] = (f"frame {frame} of stack {stack}" if isinstance(stack, str)
                           else f"{declaration.cases.named(case)} (stack {stack}, frame {frame})")  # fmt: skip
        job = by_stack.get(stack)
        if job is None:
            continue
        jobs_by_case.update(dict.fromkeys(frames, job))
        named = stack if isinstance(stack, str) else frames[0]  # how a stack's own errors name it: "Case s1.tiff: ..."
        for output in declaration.outputs:
            raw = read_json_output(input_dir, job, output.slug, named)
            if raw is None and output.missing == "error":
                raise SubmissionError(f"Stack {stack} (job {job.pk}) has no output '{output.slug}' "
                                      f"({output.relative_path}).", named)  # fmt: skip
            if raw is not None:
                values = frame_list(output, raw, f"stack {stack} (job {job.pk})", named)
                if len(values) != len(frames):
                    raise SubmissionError(
                        f"The output '{output.slug}' of stack {stack} (job {job.pk}) is a list of {len(values)} "
                        f"values; the stack has {len(frames)} frames{_rows(stack, frames, size)}, one value each.",
                        named,
                    )
                answers[output.slug].update(zip(frames, values, strict=True))
    missing = [case for case in reference.cases if case not in jobs_by_case]
    ordered = {case: jobs_by_case[case] for case in reference.cases if case in jobs_by_case}
    return Frames(Matched(ordered, missing), answers, names)


def frame_list(output: OutputSpec, raw: Any, named: str, case: str | None = None) -> list[Any]:
    """A stacked job's answer: a JSON list, one value per frame (``named``: the stack, in messages)."""
    if not isinstance(raw, list):
        raise SubmissionError(f"The output '{output.slug}' of {named} is not a JSON list (one value per frame of "
                              "the stacked input).", case)  # fmt: skip
    return raw
