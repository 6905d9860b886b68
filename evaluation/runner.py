"""Per-case executor: a process pool that cannot hang.

At most ``workers`` cases are in flight, so every submitted case is running and its deadline
(``case_timeout`` seconds after submission) is real. A case past its deadline, a worker that dies
(out of memory, a crash in a native library) or an unexpected exception ends the run with one
participant-safe sentence naming the case; the pool's processes are killed, never waited for.
Progress (cases done / total, elapsed) goes to stdout.
"""

from __future__ import annotations

import multiprocessing
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from evaluation.challenges.base import CaseTask
from evaluation.errors import EvaluationError

ScoreCase = Callable[[CaseTask, Mapping[str, Any]], Any]


def _kill(executor: ProcessPoolExecutor) -> None:
    # ProcessPoolExecutor offers no public way to stop a running task; its worker table is the
    # documented-by-use way to terminate them (shutdown() would wait for a stalled case).
    for process in list(getattr(executor, "_processes", {}).values()):
        if process.is_alive():
            process.kill()
    executor.shutdown(wait=False, cancel_futures=True)


class Progress:
    """Prints 'k/n cases done, t s elapsed' at most about once a second, and at the end."""

    def __init__(self, total: int, log: Callable[[str], None]) -> None:
        self.total, self.log = total, log
        self.start = self.last = time.monotonic()
        self.done = 0

    def tick(self, case: str) -> None:
        self.done += 1
        now = time.monotonic()
        if self.done == self.total or now - self.last >= 1.0:
            self.last = now
            self.log(f"{self.done}/{self.total} cases done ({case} last), {now - self.start:.1f} s elapsed")


def run_cases(
    score_case: ScoreCase,
    tasks: Sequence[CaseTask],
    settings: Mapping[str, Any],
    workers: int,
    case_timeout: float,
    log: Callable[[str], None] = print,
    scheduler: str | Any | None = None,
) -> dict[str, Any]:
    """``{case: score_case(task, settings)}`` computed in worker processes, in task order: a local
    pool of ``workers`` processes, or the Dask cluster at ``scheduler`` (an address or a Client)."""
    if not tasks:
        return {}
    if scheduler is not None:
        from evaluation.dask_runner import run_cases_on_dask

        return run_cases_on_dask(score_case, tasks, settings, scheduler, case_timeout, log)
    workers = max(1, min(workers, len(tasks)))
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["evaluation.challenges", score_case.__module__])  # imported once, not per worker
    executor = ProcessPoolExecutor(max_workers=workers, mp_context=context)
    progress = Progress(len(tasks), log)
    queue = list(reversed(tasks))
    in_flight: dict[Future[Any], tuple[CaseTask, float]] = {}
    results: dict[str, Any] = {}
    clean = False
    try:
        while queue or in_flight:
            while queue and len(in_flight) < workers:
                task = queue.pop()
                in_flight[executor.submit(score_case, task, settings)] = (task, time.monotonic() + case_timeout)
            nearest = min(deadline for _, deadline in in_flight.values())
            done, _ = wait(in_flight, timeout=max(0.0, nearest - time.monotonic()), return_when=FIRST_COMPLETED)
            if not done:
                now = time.monotonic()
                late = next(task for task, deadline in in_flight.values() if deadline <= now)
                raise EvaluationError(
                    f"the evaluation of case {late.case} took longer than {case_timeout:g} s and was stopped.",
                    late.case,
                )
            for future in done:
                task, _ = in_flight.pop(future)
                results[task.case] = _result(future, task, in_flight, log)
                progress.tick(task.case)
        clean = True
    finally:
        if clean:
            executor.shutdown(wait=True)
        else:
            _kill(executor)
    return {task.case: results[task.case] for task in tasks}


def _result(
    future: Future[Any],
    task: CaseTask,
    in_flight: Mapping[Future[Any], tuple[CaseTask, float]],
    log: Callable[[str], None],
) -> Any:
    try:
        return future.result()
    except EvaluationError:
        raise
    except BrokenProcessPool:
        cases = sorted({task.case, *(other.case for other, _ in in_flight.values())})
        raise EvaluationError(
            f"a worker process died while evaluating case {' or '.join(cases)} "
            "(out of memory or a crash reading its files).",
            task.case,
        ) from None
    except Exception as error:  # a defect, not the participant's fault: details for the admins only
        log(f"Internal error while evaluating case {task.case}:\n{traceback.format_exc()}")
        raise EvaluationError(
            f"internal error ({type(error).__name__}) while evaluating case {task.case}.", task.case
        ) from None
