"""``python -m evaluation``: the command-line contract of ../shared/spec/cli.md.

Logs and progress go to stdout; on failure the LAST stderr line is one participant-safe sentence
(the platform shows participants only that line) and the exit code is 1. Unexpected exceptions
print their traceback to stdout for the admins and a generic sentence to stderr.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path

from evaluation.challenges import get, names
from evaluation.errors import ConfigurationError, EvaluationError
from evaluation.pipeline import evaluate

DEFAULT_CASE_TIMEOUT = 1800.0


def default_workers() -> int:
    """``EVALUATION_WORKERS``, else the CPUs this process may use."""
    configured = os.environ.get("EVALUATION_WORKERS")
    if configured:
        return int(configured)
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def options_help() -> str:
    """Every option of every challenge with its default, for ``--help``."""
    lines = ["challenge options (--set NAME=VALUE):"]
    for name in names():
        challenge = get(name)
        lines.append(f"  {name}: {challenge.title}")
        if not challenge.options:
            lines.append("      (no options)")
        for option in challenge.options:
            choices = f" (one of: {', '.join(map(str, option.choices))})" if option.choices else ""
            lines.append(f"      {option.name} = {option.default!r}{choices}")
            lines.append(f"          {option.help}")
    return "\n".join(lines)


def parser() -> argparse.ArgumentParser:
    result = argparse.ArgumentParser(
        prog="python -m evaluation",
        description="Evaluate a grand-challenge.org submission and write metrics.json.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=options_help(),
    )
    result.add_argument(
        "--challenge",
        default=os.environ.get("EVALUATION_CHALLENGE"),
        help="challenge name (default: $EVALUATION_CHALLENGE, baked into each image: %(default)s)",
    )
    result.add_argument("--input", type=Path, default=Path("/input"), help="input folder (default: %(default)s)")
    result.add_argument("--output", type=Path, default=Path("/output"), help="output folder (default: %(default)s)")
    result.add_argument(
        "--ground-truth",
        type=Path,
        default=None,
        help="ground-truth folder (default: /opt/ml/input/data/ground_truth when not empty, "
        "else the bundled ground-truth/<challenge>)",
    )
    result.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a challenge option (repeatable; see below)",
    )
    result.add_argument(
        "--workers",
        type=int,
        default=None,
        help="worker processes (default: $EVALUATION_WORKERS, else the usable CPUs)",
    )
    result.add_argument(
        "--case-timeout",
        type=float,
        default=float(os.environ.get("EVALUATION_CASE_TIMEOUT", DEFAULT_CASE_TIMEOUT)),
        help="seconds one case may take before the run stops (default: $EVALUATION_CASE_TIMEOUT or %(default)s)",
    )
    result.add_argument(
        "--scheduler",
        default=os.environ.get("EVALUATION_SCHEDULER") or None,
        metavar="ADDRESS",
        help="run the cases on this Dask scheduler (e.g. tcp://host:8786) instead of the local pool "
        "(default: $EVALUATION_SCHEDULER, else local)",
    )
    result.add_argument("--list", action="store_true", help="print the challenge names and exit")
    return result


def parse_overrides(pairs: Sequence[str]) -> dict[str, str]:
    overrides: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ConfigurationError(f"--set expects KEY=VALUE, got '{pair}'.")
        overrides[key.strip()] = value.strip()
    return overrides


def main(argv: Sequence[str] | None = None) -> int:
    arguments = parser().parse_args(argv)
    if arguments.list:
        print("\n".join(names()))
        return 0
    try:
        if not arguments.challenge:
            raise ConfigurationError("No challenge given: use --challenge or set EVALUATION_CHALLENGE.")
        workers = arguments.workers if arguments.workers is not None else default_workers()
        if workers < 1:
            raise ConfigurationError("--workers must be at least 1.")
        evaluate(
            arguments.challenge,
            arguments.input,
            arguments.output,
            ground_truth=arguments.ground_truth,
            overrides=parse_overrides(arguments.set),
            workers=workers,
            case_timeout=arguments.case_timeout,
            scheduler=arguments.scheduler,
        )
    except EvaluationError as error:
        sys.stdout.flush()
        print(str(error), file=sys.stderr)
        return 1
    except Exception as error:  # a defect: the traceback is for the admins, stdout only
        traceback.print_exc(file=sys.stdout)
        sys.stdout.flush()
        print(
            f"The evaluation failed with an internal error ({type(error).__name__}); "
            "the challenge organizers can see the details in the logs.",
            file=sys.stderr,
        )
        return 1
    return 0
