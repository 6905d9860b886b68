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

Each list is read and checked whole, stack by stack (``stack_answer``): a list, then every value as its
output's kind checks it (a number list at once, as an array; a refused value named by its frame), then its
length. A submission whose every stack answers every output with numbers is scored as columns
(``scored_stacks``): no per-frame object is made.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from evaluation.declarative.answers import _predicted_time  # (the answers' own rule)
from evaluation.declarative.columns import ColumnResults
from evaluation.declarative.output_kinds import OutputSpec
from evaluation.declarative.python_metric import PYTHON
from evaluation.declarative.reference import DeclaredReference
from evaluation.declarative.schema import Declaration
from evaluation.errors import SubmissionError
from evaluation.platform.matching import Matched, stem
from evaluation.platform.predictions import Job
from evaluation.platform.sockets import output_json

_NUMBER = re.compile(r"(\d+)$")


@dataclass(frozen=True, eq=False)
class Stack:
    """A stack as a job answers it: ``key`` (a listed stack's name, or its number), ``case`` (the case its own
    errors name), its frames' cases in order (``()``: not known, the participant's check) and ``count``, the
    frames its lists must hold (``None``: not known); ``size``: a numbered stack's ``stack_size``."""

    key: int | str
    case: str
    frames: tuple[str, ...] = ()
    count: int | None = None
    size: int = 0


@dataclass(frozen=True, eq=False)
class Frames:
    """What a stacked submission answers: the frames (cases) of each stack, the job of each answered stack
    and each value output's checked list of each stack it answered (numbers: an array)."""

    stacks: dict[int | str, tuple[str, ...]]
    jobs: dict[int | str, Job]
    answers: dict[str, dict[int | str, Sequence[Any]]]

    def matched(self, cases: Sequence[str]) -> Matched:
        """The jobs by case (every frame of a stack maps to its job), in ``cases`` order, and the cases without one."""
        jobs = {case: job for key, job in self.jobs.items() for case in self.stacks[key]}
        missing = [case for case in cases if case not in jobs]
        return Matched({case: jobs[case] for case in cases if case in jobs}, missing)

    def by_case(self, slug: str) -> dict[str, Any]:
        """Output ``slug``'s answer of each frame it answered."""
        found: dict[str, Any] = {}
        for key, values in self.answers[slug].items():
            listed = values.tolist() if isinstance(values, np.ndarray) else values
            found.update(zip(self.stacks[key], listed, strict=True))
        return found


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


def _rows(stack: Stack) -> str:
    """Where a numbered stack's frames are in the reference CSV (" (reference rows 4-6)"); "" for a listed one."""
    if isinstance(stack.key, str) or stack.count is None:
        return ""
    first = stack.key * stack.size + 1
    return f" (reference rows {first}-{first + stack.count - 1})" if stack.count > 1 else f" (reference row {first})"


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
    """Each job placed at its stack and each of its value outputs read as the stack's checked list
    (``stack_answer``). A stack without a job is missing; an error when an output needs every answer
    (``missing = "error"``)."""
    size = declaration.cases.stack_size
    frames_of = stacks(reference, size)
    by_stack = _jobs_by_stack(jobs, name_of, list(frames_of), declaration.cases.strip_suffixes)
    needs_job = next((o.slug for o in declaration.outputs if o.missing == "error"), None)
    absent = next((k for k in frames_of if k not in by_stack), None)
    if absent is not None and needs_job:
        where = _rows(Stack(absent, "", count=len(frames_of[absent]), size=size))
        raise SubmissionError(f"No algorithm job for stack {absent}{where}; every frame needs the output "
                              f"'{needs_job}'.")  # fmt: skip
    answers: dict[str, dict[int | str, Sequence[Any]]] = {o.slug: {} for o in declaration.outputs}
    for key, frames in frames_of.items():
        job = by_stack.get(key)
        if job is None:
            continue
        named = key if isinstance(key, str) else frames[0]  # how a stack's own errors name it: "Case s1.tiff: ..."
        stack = Stack(key, named, frames, len(frames), size)
        for output in declaration.outputs:
            found = stack_answer(input_dir, job, output, stack, declaration)
            if found is not None:
                answers[output.slug][key] = found
    return Frames(frames_of, by_stack, answers)


def stack_answer(
    input_dir: Path, job: Job, output: OutputSpec, stack: Stack, declaration: Declaration
) -> Sequence[Any] | None:
    """The job's list of ``output`` for ``stack``: a JSON list, each value checked as the output's kind (a
    refused one named by its frame; numbers: an array), as many values as the stack has frames (when known).
    ``None``: the job has no such output (an error under the missing policy "error"). An output's
    ``list_noun`` names the list in messages ("The likelihoods of stack s1.tiff is not valid JSON ...")."""
    listed = output.list_noun
    what = f"The {listed} of stack {stack.key}" if listed else ""
    found, raw = output_json(input_dir, job, output.slug, stack.case, what, constants=True)  # NaN: named by frame
    if not found:
        if output.missing == "error":
            raise SubmissionError(f"Stack {stack.key} (job {job.pk}) has no output '{output.slug}' "
                                  f"({output.relative_path}).", stack.case)  # fmt: skip
        return None
    if not isinstance(raw, list):
        raise SubmissionError(
            f"{what} are not a JSON list of {output.type.list_of}."
            if listed
            else f"The output '{output.slug}' of "
            f"stack {stack.key} (job {job.pk}) is not a JSON list (one value per frame of the stacked input).",
            stack.case,
        )
    time = _predicted_time(declaration, output)
    values = output.type.answers(output, raw, time)
    if values is None:  # each value as its kind checks it, the first refused one named by its frame
        for frame, value in enumerate(raw):
            output.type.answer(output, value, *_frame_named(declaration, output, stack, frame), time)
        values = raw
    if stack.count is not None and len(raw) != stack.count:
        raise SubmissionError(
            f"Stack {stack.key} has {stack.count} frames but {len(raw)} {listed} were given." if listed else
            f"The output '{output.slug}' of stack {stack.key} (job {job.pk}) is a list of {len(raw)} values; the "
            f"stack has {stack.count} frames{_rows(stack)}, one value each.",
            stack.case,
        )  # fmt: skip
    return values


def _frame_named(declaration: Declaration, output: OutputSpec, stack: Stack, frame: int) -> tuple[str, str]:
    """The case a value's error names and how it names the value: with a ``noun``, a listed stack's value is
    "Likelihood 3 of stack s1.tiff"; else "The output '<slug>' of frame 3 of stack s1.tiff", a numbered
    stack's "The output '<slug>' of TRAIN000143 (stack 0, frame 3)" (without its frames' cases: "of stack 0,
    frame 3")."""
    if isinstance(stack.key, str) and output.noun:
        return stack.case, f"{output.noun[0].upper()}{output.noun[1:]} {frame} of stack {stack.key}"
    case, where = stack.case, f"frame {frame} of stack {stack.key}"
    if not isinstance(stack.key, str):
        case, where = stack.case, f"stack {stack.key}, frame {frame}"
        if stack.frames:
            case = stack.frames[frame]
            where = f"{declaration.cases.named(case)} ({where})"
    return case, f"The {output.noun or f'output {output.slug!r}'} of {where}"


def scored_stacks(frames: Frames, declaration: Declaration, reference: DeclaredReference) -> ColumnResults | None:
    """Every frame's answers whole, as ``score_case`` would give them (``columns.ColumnResults``), when every stack
    answers every output with numbers, every frame has a reference and no python metric runs per case; else
    ``None`` (the frames are then scored one by one)."""
    outputs = declaration.outputs
    if (
        any(m.metric == PYTHON and m.param("over") == "case" for m in declaration.metrics)
        or any(len(reference.values[o.slug]) != len(reference.cases) for o in outputs)  # (a blank reference skipped)
        or any(len(frames.answers[o.slug]) != len(frames.stacks) for o in outputs)
        or not all(isinstance(values, np.ndarray) for o in outputs for values in frames.answers[o.slug].values())
    ):
        return None
    cases = [case for key in frames.stacks for case in frames.stacks[key]]
    columns = {o.slug: np.concatenate([frames.answers[o.slug][key] for key in frames.stacks]).tolist() for o in outputs}
    return ColumnResults(cases, columns, {})  # (number outputs only: no class matrix)
