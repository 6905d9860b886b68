"""Per-case functions for runner tests; a real module so that worker processes can import them."""

from __future__ import annotations

import os
import resource
import time
from collections.abc import Mapping
from typing import Any

from evaluation.contract import CaseTask
from evaluation.errors import SubmissionError


def square(task: CaseTask, settings: Mapping[str, Any]) -> int:
    return task.payload * task.payload


def stall_on_payload_zero(task: CaseTask, settings: Mapping[str, Any]) -> int:
    if task.payload == 0:
        time.sleep(3600)
    return task.payload


def die_on_payload_zero(task: CaseTask, settings: Mapping[str, Any]) -> int:
    if task.payload == 0:
        os._exit(9)
    return task.payload


def reject_payload_zero(task: CaseTask, settings: Mapping[str, Any]) -> int:
    if task.payload == 0:
        raise SubmissionError("the likelihoods are not a list.", task.case)
    return task.payload


def crash_on_payload_zero(task: CaseTask, settings: Mapping[str, Any]) -> int:
    return 1 // task.payload


def slow_square(task: CaseTask, settings: Mapping[str, Any]) -> int:
    time.sleep(settings.get("sleep", 0.2))
    return task.payload * task.payload


def pid(task: CaseTask, settings: Mapping[str, Any]) -> int:
    return os.getpid()


def sleep_long(task: CaseTask, settings: Mapping[str, Any]) -> None:
    """A case that would take an hour; announces itself with a file in $RUNNER_CASES_MARKERS."""
    markers = os.environ.get("RUNNER_CASES_MARKERS")
    if markers:
        with open(os.path.join(markers, f"{os.getpid()}-{task.case}"), "w"):
            pass
    time.sleep(3600)


def allocate_too_much(task: CaseTask, settings: Mapping[str, Any]) -> bytearray:
    """8 GiB at once: a MemoryError under the RLIMIT_DATA the tests set (refused without one, as
    the zero-filled bytes would really be written)."""
    if resource.getrlimit(resource.RLIMIT_DATA)[0] == resource.RLIM_INFINITY:
        raise RuntimeError("allocate_too_much runs only under an RLIMIT_DATA limit")
    return bytearray(8 * 2**30)


def allocate_too_much_in_aggregate(self: Any, results: Any, missing: Any, reference: Any, settings: Any) -> None:
    allocate_too_much(CaseTask("aggregate"), settings)
