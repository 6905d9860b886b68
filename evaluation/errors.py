"""Errors whose message is shown to participants.

The platform shows participants only the last non-empty stderr line (cut at 1,024 characters), so
every problem with a submission is raised as an :class:`EvaluationError` whose text is one
participant-safe sentence naming the case; the CLI prints it last and exits non-zero.
"""

from __future__ import annotations

import resource
import signal


class EvaluationError(Exception):
    """A problem with a submission (or its evaluation) that a participant may read.

    The message must be one line, name the case when there is one, and never contain a
    ground-truth value.
    """

    def __init__(self, message: str, case: str | None = None) -> None:
        message = " ".join(str(message).split())
        if case is not None and case not in message:
            message = f"Case {case}: {message}"
        super().__init__(message)
        self.case = case


class SubmissionError(EvaluationError):
    """The participant's outputs are malformed, missing or do not match the reference."""


class ConfigurationError(EvaluationError):
    """The organizer's settings or ground truth are wrong (not the participant's fault)."""


class Stopped(BaseException):
    """The process received SIGTERM (the platform's time limit) or SIGINT.

    A ``BaseException``, like ``KeyboardInterrupt``, so that no ``except Exception`` on the way
    swallows it: it unwinds the run (the runner's ``finally`` kills the worker processes) up to the
    command line, which prints :attr:`message` and exits ``128 + signum``.
    """

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum

    @property
    def message(self) -> str:
        return f"The evaluation was stopped ({self.args[0]}) before it finished; no metrics were written."


def memory_limit() -> str:
    """The memory limit in force, as the platform sets it: grand-challenge's job runner (sagemaker-shim)
    applies the phase's memory as ``RLIMIT_DATA`` on each process (../shared/spec/platform.md)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_DATA)
    return "no limit set" if soft == resource.RLIM_INFINITY else f"limit {soft // 2**20} MiB per process"


def out_of_memory(case: str | None, doing: str) -> EvaluationError:
    """The error for a ``MemoryError``: which case (when there is one), what was being done, the limit."""
    text = f"the evaluation ran out of memory ({memory_limit()}) {doing}."
    return EvaluationError(text if case else text[0].upper() + text[1:], case)
