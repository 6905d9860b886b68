"""Map algorithm jobs to reference cases and check completeness.

Nothing in predictions.json names the ground-truth case; the convention is the input's original
file name (``Job.input_name``). A case claimed by two jobs, or a case the reference does not know,
is an error; reference cases without a job are returned as missing so the challenge can apply its
missing policy.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass

from evaluation.errors import SubmissionError
from evaluation.platform.predictions import Job

IMAGE_NAME_SUFFIXES = (".tiff", ".tif", ".mha", ".nii.gz", ".nii", ".png", ".jpg", ".jpeg")


def stem(name: str, suffixes: Iterable[str] = IMAGE_NAME_SUFFIXES) -> str:
    """``name`` without its image suffix (case-insensitive)."""
    return next((name[: -len(s)] for s in suffixes if name.lower().endswith(s)), name)


def reference_name(name: str, reference: Collection[str]) -> str:
    """The reference case an input file name stands for: the same name, else the one reference name
    with the same stem (a reference keyed ``case_1`` or ``case_1.png`` for an input ``case_1.tif``);
    ``name`` itself when none or several match (then it is reported as unknown)."""
    if name in reference:
        return name
    matches = [key for key in reference if stem(key) == stem(name)]
    return matches[0] if len(matches) == 1 else name


@dataclass(frozen=True, eq=False)
class Matched:
    """Jobs by reference case (each case exactly once), and the reference cases without a job."""

    jobs: dict[str, Job]
    missing: list[str]


def match_jobs(jobs: Iterable[Job], case_of_job: Callable[[Job], str], reference_cases: Iterable[str]) -> Matched:
    """Assign each job to the reference case it names; reference order is kept."""
    reference = list(reference_cases)
    known = set(reference)
    by_case: dict[str, Job] = {}
    for job in jobs:
        case = case_of_job(job)
        if case not in known:
            raise SubmissionError(f"job {job.pk} is for '{case}', which is not in the reference.", case)
        if case in by_case:
            raise SubmissionError(f"two jobs ({by_case[case].pk} and {job.pk}) are for the same case.", case)
        by_case[case] = job
    ordered = {case: by_case[case] for case in reference if case in by_case}
    return Matched(jobs=ordered, missing=[case for case in reference if case not in by_case])
