"""Per-case executor: the main process for cheap cases, else a process pool that cannot hang.

A challenge whose cases are cheap (``Challenge.cases_in_process``: a few numbers read from a JSON
file) has them scored in the main process, one after the other: no pool to start, nothing to
pickle; each case's deadline is a SIGALRM timer (on the main thread when nothing else uses that
signal). Otherwise a pool of at most ``min(workers, cases)`` processes is started when the first case
is submitted. At most ``workers`` cases are in flight, so every submitted case is running and its
deadline (``case_timeout`` seconds after submission) is real. A case past its deadline, a worker
that dies (out of memory, a crash in a native library) or an unexpected exception ends the run with
one participant-safe sentence naming the case; the pool's processes are killed, never waited for.
Progress (cases done / total, elapsed) goes to stdout.

``LocalPool`` is this executor as an object; ``dask_runner.DaskCluster`` is the other one. The caller
(the command line, the batch) chooses and hands it to ``pipeline.evaluate``: this module imports
neither Dask nor any challenge.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

from evaluation.contract import CaseTask
from evaluation.errors import EvaluationError, Stopped
from evaluation.platform import files

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor

ScoreCase = Callable[[CaseTask, Mapping[str, Any]], Any]


class Executor(Protocol):
    """Where the cases of one evaluation run: ``LocalPool`` or ``dask_runner.DaskCluster``."""

    def map(
        self,
        score_case: ScoreCase,
        tasks: Sequence[CaseTask],
        settings: Mapping[str, Any],
        log: Callable[[str], None],
        in_process: bool,
    ) -> dict[str, Any]:
        """``{case: score_case(task, settings)}`` in task order; ``in_process``: the challenge's cases are
        cheap (``Challenge.cases_in_process``)."""
        ...

    def slots(self) -> int:
        """How many cases can run at once."""
        ...


@dataclass(frozen=True, eq=False)
class LocalPool:
    """This machine: ``run_cases`` with at most ``workers`` processes, ``case_timeout`` seconds a case."""

    workers: int = 1
    case_timeout: float = 1800.0

    def map(
        self,
        score_case: ScoreCase,
        tasks: Sequence[CaseTask],
        settings: Mapping[str, Any],
        log: Callable[[str], None] = print,
        in_process: bool = False,
    ) -> dict[str, Any]:
        return run_cases(score_case, tasks, settings, self.workers, self.case_timeout, log, in_process)

    def slots(self) -> int:
        return self.workers


_LIVE_POOLS: set[ProcessPoolExecutor] = set()  # so that a stop signal can kill every pool (kill_pools)


def out_of_memory(case: str | None, doing: str) -> EvaluationError:
    """The error for a ``MemoryError``: which case (when there is one), what was being done, and the
    limit in force as the platform sets it (the phase's memory as RLIMIT_DATA on each process), or an
    address-space limit (RLIMIT_AS, ``ulimit -v``) when that is the lower one."""
    import resource  # (here: this module's imports are being moved; a MemoryError is rare)

    data = files.data_limit()
    space, _ = resource.getrlimit(resource.RLIMIT_AS)
    if space != resource.RLIM_INFINITY and (data is None or space < data):
        described = f"limit {space // 2**20} MiB of address space per process (RLIMIT_AS, ulimit -v)"
    else:
        described = "no limit set" if data is None else f"limit {data // 2**20} MiB per process"
    text = f"the evaluation ran out of memory ({described}) {doing}."
    return EvaluationError(text if case else text[0].upper() + text[1:], case)


def kill_pools() -> None:
    """Kill the worker processes of every pool this process runs (on SIGTERM / SIGINT)."""
    for executor in list(_LIVE_POOLS):
        _kill(executor)


def _kill(executor: ProcessPoolExecutor) -> None:
    # ProcessPoolExecutor offers no public way to stop a running task; its worker table is the
    # documented-by-use way to terminate them (shutdown() would wait for a stalled case). Once they
    # are dead, its manager thread ends promptly; waiting for it (bounded) releases the pool's
    # queues, whose semaphores the resource tracker would otherwise report as leaked on stderr.
    processes = list((getattr(executor, "_processes", None) or {}).values())
    manager = getattr(executor, "_executor_manager_thread", None)
    try:
        _end(executor, processes, manager)
    except Stopped:  # a stop signal in the middle (the CLI's handler ignores any further one): finish
        _end(executor, processes, manager)
        raise


def _end(executor: ProcessPoolExecutor, processes: list[Any], manager: Any) -> None:
    for process in processes:
        if process.is_alive():
            process.kill()
    for process in processes:
        process.join(timeout=5)
    executor.shutdown(wait=False, cancel_futures=True)
    if manager is not None:
        manager.join(timeout=5)
    _LIVE_POOLS.discard(executor)


def _worker_signals() -> None:
    """Pool initializer: SIGINT (a Ctrl-C reaches the whole process group) is the main process's to
    handle, which then kills the workers; a worker must not print a KeyboardInterrupt traceback. A
    forked worker also drops the stop handler it inherited (``cli.stop_on_signals``): SIGTERM ends it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _pool_context(score_case: ScoreCase) -> Any:
    """How the pool starts its workers. A fork of this process when no other thread runs in it (the command
    line): the worker starts with the scoring module this process imported, nothing to import again (a
    forkserver costs a fresh interpreter and that import, about 0.5 s of CPU before the first case; issue 30).
    Else (threads, e.g. a batch of submissions in flight) a forkserver, which is safe with threads and
    imports the scoring module once, not per worker."""
    import multiprocessing

    if threading.active_count() == 1 and "fork" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("fork")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([score_case.__module__])  # imported once, not per worker
    return context


class Progress:
    """Prints 'k/n cases done[ where], t s elapsed' at most about once a second, and at the end."""

    def __init__(self, total: int, log: Callable[[str], None], where: str = "") -> None:
        self.total, self.log, self.where = total, log, where
        self.start = self.last = time.monotonic()
        self.done = 0

    def tick(self, case: str) -> None:
        self.done += 1
        now = time.monotonic()
        if self.done == self.total or now - self.last >= 1.0:
            self.last = now
            self.log(f"{self.done}/{self.total} cases done{self.where} ({case} last), {now - self.start:.1f} s elapsed")


def run_cases(
    score_case: ScoreCase,
    tasks: Sequence[CaseTask],
    settings: Mapping[str, Any],
    workers: int,
    case_timeout: float,
    log: Callable[[str], None] = print,
    in_process: bool = False,
) -> dict[str, Any]:
    """``{case: score_case(task, settings)}`` in task order: computed in this process when
    ``in_process`` (cheap cases only; timed by SIGALRM where ``_sigalrm_free``), else on a local pool of at most
    ``workers`` processes."""
    if not tasks:
        return {}
    if in_process:
        return _run_in_main_process(score_case, tasks, settings, case_timeout, log)
    return _run_in_pool(score_case, tasks, settings, workers, case_timeout, log)


def _late(task: CaseTask, case_timeout: float) -> EvaluationError:
    return EvaluationError(
        f"the evaluation of case {task.case} took longer than {case_timeout:g} s and was stopped.", task.case
    )


def _sigalrm_free() -> bool:
    """Whether this process may time its cases with SIGALRM: the main thread (signals reach only it),
    no other handler and no timer armed (e.g. a test runner's own timeout keeps its signal)."""
    return (
        threading.current_thread() is threading.main_thread()
        and signal.getsignal(signal.SIGALRM) == signal.SIG_DFL
        and signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    )


def _run_in_main_process(
    score_case: ScoreCase,
    tasks: Sequence[CaseTask],
    settings: Mapping[str, Any],
    case_timeout: float,
    log: Callable[[str], None],
) -> dict[str, Any]:
    """The cases one after the other in this process, each stopped at its deadline by a SIGALRM
    timer (two system calls per case) when ``_sigalrm_free``; a case that overruns ends the run as in
    the pool."""
    progress = Progress(len(tasks), log)
    results = {}
    running: list[CaseTask] = []

    def expire(signum: int, frame: Any) -> None:
        raise _late(running[-1], case_timeout)

    timed = _sigalrm_free()
    previous = signal.signal(signal.SIGALRM, expire) if timed else None
    try:
        for task in tasks:
            running.append(task)
            if timed:
                signal.setitimer(signal.ITIMER_REAL, case_timeout)
            try:
                results[task.case] = _outcome(partial(score_case, task, settings), task, "the main process", log)
            finally:
                if timed:
                    signal.setitimer(signal.ITIMER_REAL, 0)
            progress.tick(task.case)
    finally:
        if timed:
            signal.signal(signal.SIGALRM, previous)
    return results


def _run_in_pool(
    score_case: ScoreCase,
    tasks: Sequence[CaseTask],
    settings: Mapping[str, Any],
    workers: int,
    case_timeout: float,
    log: Callable[[str], None],
) -> dict[str, Any]:
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    workers = max(1, min(workers, len(tasks)))
    executor = ProcessPoolExecutor(
        max_workers=workers, mp_context=_pool_context(score_case), initializer=_worker_signals
    )
    _LIVE_POOLS.add(executor)
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
            if not done and time.monotonic() >= nearest:  # the earliest case is late (wait may return a hair early)
                raise _late(min(in_flight.values(), key=lambda pair: pair[1])[0], case_timeout)
            for future in done:
                task, _ = in_flight.pop(future)
                results[task.case] = _outcome(future.result, task, "a worker process", log, in_flight)
                progress.tick(task.case)
        clean = True
    finally:
        if clean:
            executor.shutdown(wait=True)
            _LIVE_POOLS.discard(executor)
        else:
            _kill(executor)
    return {task.case: results[task.case] for task in tasks}


def _outcome(
    result: Callable[[], Any],
    task: CaseTask,
    where: str,
    log: Callable[[str], None],
    in_flight: Mapping[Future[Any], tuple[CaseTask, float]] | None = None,
) -> Any:
    """``result()``, or the participant-safe error naming ``task``'s case."""
    try:
        return result()
    except EvaluationError:
        raise
    except MemoryError:
        raise out_of_memory(task.case, f"while scoring this case in {where}") from None
    except Exception as error:
        import traceback  # (concurrent.futures and traceback: imported on an error, not at every start)
        from concurrent.futures import BrokenExecutor

        if isinstance(error, BrokenExecutor):  # the pool's BrokenProcessPool: a worker process died
            cases = sorted({task.case, *(other.case for other, _ in (in_flight or {}).values())})
            raise EvaluationError(
                f"a worker process died while evaluating case {' or '.join(cases)} "
                "(out of memory or a crash reading its files).",
                task.case,
            ) from None
        # a defect, not the participant's fault: details for the admins only
        log(f"Internal error while evaluating case {task.case}:\n{traceback.format_exc()}")
        raise EvaluationError(
            f"internal error ({type(error).__name__}) while evaluating case {task.case}.", task.case
        ) from None
