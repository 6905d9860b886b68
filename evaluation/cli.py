"""``python -m evaluation``: the command-line contract of ../shared/spec/cli.md.

Logs and progress go to stdout; on failure the LAST stderr line is one participant-safe sentence
(the platform shows participants only that line) and the exit code is 1. Unexpected exceptions
print their traceback to stdout for the admins and a generic sentence to stderr. SIGTERM (the
platform's time limit) and SIGINT stop the run: the worker processes are killed, no metrics.json is
left, one line says so, and the exit code is 128 + the signal number.
"""

from __future__ import annotations

import argparse
import math
import os
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from evaluation.errors import ConfigurationError, EvaluationError, Stopped
from evaluation.pipeline import METRICS_FILE, clear_stale, evaluate
from evaluation.platform.metrics_json import CASE_RESULTS
from evaluation.runner import Executor, LocalPool, out_of_memory

DEFAULT_CASE_TIMEOUT = 1800.0
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


def default_workers() -> int:
    """``EVALUATION_WORKERS``, else the CPUs this process may use."""
    configured = os.environ.get("EVALUATION_WORKERS")
    if configured:
        return parse_workers(configured, "EVALUATION_WORKERS")
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def parse_workers(text: str, source: str = "--workers") -> int:
    """A worker count from the command line or the environment: a whole number, at least 1."""
    try:
        workers = int(text.strip())
    except ValueError:
        raise ConfigurationError(f"{source} must be a whole number of worker processes, got '{text}'.") from None
    if workers < 1:
        raise ConfigurationError(f"{source} must be at least 1, got {workers}.")
    return workers


def case_timeout(text: str | None) -> float:
    """``--case-timeout``, else ``EVALUATION_CASE_TIMEOUT``, else the default: finite seconds above 0."""
    source = "--case-timeout"
    if text is None:
        text = os.environ.get("EVALUATION_CASE_TIMEOUT") or None
        source = "EVALUATION_CASE_TIMEOUT"
    if text is None:
        return DEFAULT_CASE_TIMEOUT
    try:
        seconds = float(text)
    except ValueError:
        raise ConfigurationError(f"{source} must be a number of seconds, got '{text}'.") from None
    if not math.isfinite(seconds) or seconds <= 0:
        raise ConfigurationError(f"{source} must be a finite number of seconds above 0, got '{text}'.")
    return seconds


def executor_for(workers: int, timeout: float, scheduler: str | Any | None = None) -> Executor:
    """Where the cases run: the Dask cluster at ``scheduler`` (an address or a ``distributed.Client``)
    when one is given, else the local pool of ``workers`` processes."""
    if scheduler is None:
        return LocalPool(workers, timeout)
    from evaluation.dask_runner import DaskCluster

    return DaskCluster(scheduler, timeout)


@contextmanager
def stop_on_signals() -> Iterator[None]:
    """SIGTERM and SIGINT raise :class:`Stopped` in the main thread while this is active (a second
    signal is ignored so that it cannot interrupt the clean-up); elsewhere a no-op."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: Any) -> None:
        for number in STOP_SIGNALS:
            signal.signal(number, signal.SIG_IGN)
        raise Stopped(signum)

    previous = {number: signal.signal(number, stop) for number in STOP_SIGNALS}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def program(module: str) -> str:
    """The name a command's usage shows: the console script it was started as (``gc-demo``), else
    ``python -m <module>``."""
    name = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else ""
    return name if name.startswith("gc-") else f"python -m {module}"


def plain(docstring: str) -> str:
    """A module docstring as a command's --help description: without its first paragraph (the
    usage line), reST literals as plain text."""
    return docstring.split("\n\n", 1)[-1].replace("``", "").strip()


def tool_parser(module: str, docstring: str, challenge: str | None = "") -> argparse.ArgumentParser:
    """An organizer tool's parser: the usage named as the command was started, the module docstring
    as the description and, unless ``challenge`` is None, the ``--challenge`` option (its help
    followed by ``challenge``)."""
    result = argparse.ArgumentParser(
        prog=program(module), description=plain(docstring), formatter_class=argparse.RawDescriptionHelpFormatter
    )
    if challenge is not None:
        result.add_argument(
            "--challenge",
            default=os.environ.get("EVALUATION_CHALLENGE"),
            help=f"challenge name or path/to/declaration.toml{challenge} (default: $EVALUATION_CHALLENGE)",
        )
    return result


def options_help() -> str:
    """Every option of every challenge with its default, for ``--help`` (reads every declaration)."""
    from evaluation.registry import get, names

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


class HelpWithOptions(argparse.Action):
    """``--help``: the usage plus every challenge option, built only when asked (it reads every
    declaration, which a run must not pay for)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, help: str | None = None) -> None:
        super().__init__(option_strings, dest, default=argparse.SUPPRESS, nargs=0, help=help)

    def __call__(self, parser: argparse.ArgumentParser, *args: Any) -> None:
        parser.epilog = options_help()
        parser.print_help()
        parser.exit()


def parser() -> argparse.ArgumentParser:
    result = argparse.ArgumentParser(
        prog=program("evaluation"),
        description="Evaluate a grand-challenge.org submission and write metrics.json.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        add_help=False,
    )
    result.add_argument("-h", "--help", action=HelpWithOptions, help="show this help (with every challenge option)")
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
        default=None,
        metavar="N",
        help="worker processes for the cases that run in a pool (default: $EVALUATION_WORKERS, else the usable CPUs)",
    )
    result.add_argument(
        "--case-timeout",
        default=None,
        metavar="SECONDS",
        help="seconds one pool-run case may take before the run stops "
        f"(default: $EVALUATION_CASE_TIMEOUT, else {DEFAULT_CASE_TIMEOUT:g})",
    )
    result.add_argument(
        "--scheduler",
        default=os.environ.get("EVALUATION_SCHEDULER") or None,
        metavar="ADDRESS",
        help="run the cases on this Dask scheduler (e.g. tcp://host:8786) instead of the local pool "
        "(default: $EVALUATION_SCHEDULER, else local)",
    )
    result.add_argument(
        "--case-results",
        default=os.environ.get("EVALUATION_CASE_RESULTS") or "public",
        help="public: per-case values in metrics.json (shown on the platform's result page unless the phase "
        "sets display_all_metrics off); private: aggregates only in metrics.json, per-case values in "
        "case-results.json for the organizer (default: $EVALUATION_CASE_RESULTS, else public)",
    )
    result.add_argument(
        "--provenance",
        action="store_true",
        help="also write OUTPUT/provenance.json: the hashes of the predictions, ground truth and declaration, the "
        "versions and the seed, for python -m evaluation.compare --replay (metrics.json is unchanged)",
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
    output: Path | None = None
    with stop_on_signals():
        try:
            arguments = parser().parse_args(argv)
            output = arguments.output
            return _run(arguments)
        except Stopped as stop:
            # The runner's clean-up has killed its workers; the write of metrics.json is atomic and
            # leaves no temporary file, and a file this run completed must not outlive a failed exit.
            if output is not None:
                with suppress(OSError):
                    (output / METRICS_FILE).unlink(missing_ok=True)
            sys.stdout.flush()
            print(stop.message, file=sys.stderr)
            return 128 + stop.signum


def _run(arguments: argparse.Namespace) -> int:
    if arguments.list:
        from evaluation.registry import names

        print("\n".join(names()))
        return 0
    clear_stale(arguments.output)  # first: a run that fails below must not leave an old result
    try:
        if not arguments.challenge:
            raise ConfigurationError("No challenge given: use --challenge or set EVALUATION_CHALLENGE.")
        workers = parse_workers(arguments.workers) if arguments.workers is not None else default_workers()
        if arguments.case_results not in CASE_RESULTS:
            raise ConfigurationError(
                "--case-results (or EVALUATION_CASE_RESULTS) must be public or private; "
                f"got '{arguments.case_results}'."
            )
        evaluate(
            arguments.challenge,
            arguments.input,
            arguments.output,
            ground_truth=arguments.ground_truth,
            overrides=parse_overrides(arguments.set),
            executor=executor_for(workers, case_timeout(arguments.case_timeout), arguments.scheduler),
            case_results=arguments.case_results,
            provenance=arguments.provenance,
        )
    except EvaluationError as error:
        return _fail(str(error))
    except MemoryError:
        return _fail(str(out_of_memory(None, "in the main process")))
    except Exception as error:  # a defect: the traceback is for the admins, stdout only
        import traceback  # (imported on a defect, not at every start)

        traceback.print_exc(file=sys.stdout)
        return _fail(
            f"The evaluation failed with an internal error ({type(error).__name__}); "
            "the challenge organizers can see the details in the logs."
        )
    return 0


def _fail(message: str) -> int:
    """The participant-safe ``message`` as the last stderr line (after every log line); exit code 1."""
    sys.stdout.flush()
    print(message, file=sys.stderr)
    return 1
