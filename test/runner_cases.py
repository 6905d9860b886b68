"""Per-case functions for runner tests; a real module so that worker processes can import them."""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from typing import Any

from evaluation.errors import SubmissionError
from evaluation.runner import CaseTask


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
