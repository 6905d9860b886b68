"""Errors whose message is shown to participants.

The platform shows participants only the last non-empty stderr line (cut at 1,024 characters), so
every problem with a submission is raised as an :class:`EvaluationError` whose text is one
participant-safe sentence naming the case; the CLI prints it last and exits non-zero.
"""

from __future__ import annotations

import signal

LONGEST = 1000  # characters of a message (the platform cuts the last stderr line at 1,024)


def printable(text: str) -> str:
    """``text`` with every non-printable character (ESC, NUL, a direction override) escaped as Python
    writes it (``\\x1b``): a value echoed into a message cannot colour a terminal, hide text or cut a line."""
    return text if text.isprintable() else "".join(c if c.isprintable() else ascii(c)[1:-1] for c in text)


class EvaluationError(Exception):
    """A problem with a submission (or its evaluation) that a participant may read.

    The message must be one line, name the case when there is one, and never contain a
    ground-truth value.
    """

    def __init__(self, message: str, case: str | None = None) -> None:
        message = printable(" ".join(str(message).split()))
        if len(message) > LONGEST:  # the platform shows 1,024 characters: keep the start and the advice at the end
            message = f"{message[: LONGEST - 205]} ... {message[-200:]}"
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
