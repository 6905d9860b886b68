"""``python -m evaluation.batch --challenge NAME --submissions DIR --output DIR [--scheduler ADDRESS]``

Re-evaluates many submissions (each ``DIR/<submission>/`` a platform-layout input folder) and writes
``OUTPUT/<submission>/metrics.json`` for each, or ``OUTPUT/<submission>/error.txt`` with the
participant-facing message when it fails, then ``OUTPUT/long.csv``: the per-case values of every
evaluated submission as the ranking tool reads them (``python -m evaluation.ranking --data``).
Resumable: a submission that already has a metrics.json is skipped, a failed one is tried again.
With ``--scheduler`` the cases of several submissions run at once on the Dask cluster; without it,
one submission at a time on the local process pool.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import traceback
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from evaluation.cli import (
    DEFAULT_CASE_TIMEOUT,
    _fail,
    case_timeout,
    default_workers,
    executor_for,
    parse_overrides,
    parse_workers,
    stop_on_signals,
    tool_parser,
)
from evaluation.declarative import bounds
from evaluation.errors import EvaluationError, Stopped
from evaluation.pipeline import METRICS_FILE, evaluate
from evaluation.platform.files import not_there
from evaluation.registry import get
from evaluation.runner import kill_pools

ERROR_FILE = "error.txt"
LONG_TABLE = "long.csv"


def submissions_in(folder: Path) -> list[Path]:
    """The submission folders (those holding a predictions.json or any file), sorted by name."""
    return sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))


def run_batch(
    challenge: str,
    submissions: Path,
    output: Path,
    ground_truth: Path | None = None,
    overrides: Mapping[str, str] | None = None,
    workers: int = 1,
    case_timeout: float = DEFAULT_CASE_TIMEOUT,
    scheduler: str | Any | None = None,
    log: Callable[[str], None] = print,
) -> dict[str, str]:
    """Evaluate every submission not yet done; returns ``{submission: "done" | "skipped" | message}``."""
    executor = executor_for(workers, case_timeout, scheduler)
    lock = threading.Lock()

    def one(folder: Path) -> tuple[str, str]:
        target = output / folder.name
        if (target / METRICS_FILE).exists():
            return folder.name, "skipped"

        def prefixed(line: str) -> None:
            with lock:
                log(f"[{folder.name}] {line}")

        target.mkdir(parents=True, exist_ok=True)
        (target / ERROR_FILE).unlink(missing_ok=True)
        try:
            evaluate(challenge, folder, target, ground_truth, overrides, executor, prefixed)
        except EvaluationError as error:
            message = str(error)
        except Exception as error:  # a defect: this submission fails, the batch goes on; the traceback on stdout
            with lock:
                traceback.print_exc(file=sys.stdout)
            message = (
                f"The evaluation failed with an internal error ({type(error).__name__}); the traceback is on stdout."
            )
        else:
            return folder.name, "done"
        (target / ERROR_FILE).write_text(f"{message}\n", encoding="utf-8")
        prefixed(f"FAILED: {message}")
        return folder.name, message

    folders = submissions_in(submissions)
    if scheduler is None:  # one submission at a time, in this thread (a stop signal unwinds it directly)
        outcome = dict(map(one, folders))
    else:
        pool = ThreadPoolExecutor(max_workers=executor.slots())
        try:
            outcome = dict(pool.map(one, folders))
        finally:  # on a stop signal, do not wait for the submissions in flight
            pool.shutdown(wait=False, cancel_futures=True)
    write_long_table(output, log)
    return outcome


def write_long_table(output: Path, log: Callable[[str], None] = print) -> None:
    """``OUTPUT/long.csv`` from the ``case`` sections of the metrics.json files, when there are any."""
    from evaluation.ranking.data import collect

    try:
        table = collect(output)
    except EvaluationError as error:
        log(f"No long table written: {error}")
        return
    table.to_csv(output / LONG_TABLE, index=False)
    log(f"Wrote {len(table)} per-case values to {output / LONG_TABLE}")


def parser() -> argparse.ArgumentParser:
    result = tool_parser("evaluation.batch", __doc__)
    result.add_argument("--submissions", type=Path, required=True, help="DIR/<submission>/ = an /input folder")
    result.add_argument("--output", type=Path, required=True, help="OUTPUT/<submission>/metrics.json or error.txt")
    result.add_argument(
        "--ground-truth", type=Path, default=None, help="ground-truth folder (default: the bundled one, as "
        "python -m evaluation's)"
    )  # fmt: skip
    result.add_argument(
        "--set", action="append", default=[], metavar="KEY=VALUE", help="a challenge option (repeatable)"
    )
    result.add_argument(
        "--workers", default=None, metavar="N", help="local pool size (default: $EVALUATION_WORKERS, else the "
        "usable CPUs)"
    )  # fmt: skip
    result.add_argument(
        "--case-timeout", default=None, metavar="SECONDS", help="seconds one pool-run case may take (default: "
        f"$EVALUATION_CASE_TIMEOUT, else {DEFAULT_CASE_TIMEOUT:g})"
    )  # fmt: skip
    result.add_argument(
        "--scheduler", default=os.environ.get("EVALUATION_SCHEDULER") or None, metavar="ADDRESS",
        help="run on this Dask scheduler, several submissions at once (default: $EVALUATION_SCHEDULER, else the "
        "local pool)"
    )  # fmt: skip
    return result


def main(argv: Sequence[str] | None = None) -> int:
    arguments = parser().parse_args(argv)
    with stop_on_signals():
        try:
            return _run(arguments)
        except Stopped as stop:
            kill_pools()  # the submissions in flight run in other threads: their pools die with the batch
            sys.stdout.flush()
            print(f"The batch was stopped ({stop.args[0]}); finished submissions are kept.", file=sys.stderr)
            return 128 + stop.signum


def _run(arguments: argparse.Namespace) -> int:
    try:
        if not arguments.challenge:
            raise EvaluationError("No challenge given: use --challenge or set EVALUATION_CHALLENGE.")
        if not arguments.submissions.is_dir():
            raise EvaluationError(
                f"The submissions folder {arguments.submissions} {not_there(arguments.submissions, folder=True)}."
            )
        # everything that could fail every submission alike, before a file is written: one line, not N error.txt
        overrides = parse_overrides(arguments.set)
        workers = parse_workers(arguments.workers) if arguments.workers is not None else default_workers()
        timeout = case_timeout(arguments.case_timeout)
        bounds.check_options(get(arguments.challenge).settings(overrides))
        try:  # here, not per submission: a file or an unwritable place there would fail every one with a traceback
            arguments.output.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise EvaluationError(
                f"The output folder {arguments.output} cannot be created ({error.strerror})."
            ) from None
        outcome = run_batch(
            arguments.challenge,
            arguments.submissions,
            arguments.output,
            arguments.ground_truth,
            overrides,
            workers,
            timeout,
            arguments.scheduler,
        )
    except EvaluationError as error:
        return _fail(str(error))
    except Exception as error:  # a defect: the traceback is for the admins, stdout only
        traceback.print_exc(file=sys.stdout)
        return _fail(f"The batch failed with an internal error ({type(error).__name__}); the traceback is on stdout.")
    failed = {name: message for name, message in outcome.items() if message not in ("done", "skipped")}
    counts = {state: list(outcome.values()).count(state) for state in ("done", "skipped")}
    print(f"{counts['done']} evaluated, {counts['skipped']} skipped (already done), {len(failed)} failed")
    if failed:
        print(f"{len(failed)} submission(s) failed: {', '.join(sorted(failed))}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # as evaluation/__main__.py; also leaves no thread of a stopped batch to wait for
