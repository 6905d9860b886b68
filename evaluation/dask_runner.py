"""Per-case work on a Dask cluster (``dask.distributed``) instead of the local process pool.

Used when ``--scheduler ADDRESS`` (or ``EVALUATION_SCHEDULER``) is given: the cases are mapped with
``Client.map``; Dask re-runs the tasks of a worker that is lost (up to its
``distributed.scheduler.allowed-failures``), a case that raises still fails the run naming the case,
and aggregation stays local, so the metrics are the same bytes whichever executor ran the cases.
Workers must be able to import this package and read the input and ground-truth paths (a shared
file system; on a LocalCluster that is given).
"""

from __future__ import annotations

import queue
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from evaluation.contract import CaseTask
from evaluation.errors import ConfigurationError, EvaluationError


@cache
def client_for(address: str) -> Any:
    """One ``distributed.Client`` per scheduler address for this process."""
    try:
        from distributed import Client
    except ImportError:  # pragma: no cover - the image does not ship Dask
        raise ConfigurationError("--scheduler needs dask.distributed: pip install 'dask[distributed]'.") from None
    try:
        return Client(address, timeout="20s", set_as_default=False)
    except OSError as error:
        raise ConfigurationError(f"Cannot reach the Dask scheduler at {address} ({error}).") from None


@dataclass(frozen=True)
class DaskCluster:
    """The cases on the Dask cluster at ``scheduler`` (an address or a ``distributed.Client``): the
    executor ``pipeline.evaluate`` is handed instead of ``runner.LocalPool``."""

    scheduler: str | Any
    case_timeout: float = 1800.0

    def client(self) -> Any:
        return client_for(self.scheduler) if isinstance(self.scheduler, str) else self.scheduler

    def map(
        self,
        score_case: Callable[[CaseTask, Mapping[str, Any]], Any],
        tasks: Sequence[CaseTask],
        settings: Mapping[str, Any],
        log: Callable[[str], None] = print,
        in_process: bool = False,
    ) -> dict[str, Any]:
        """Every case on the cluster, the cheap ones (``in_process``) included."""
        return run_cases_on_dask(score_case, tasks, settings, self.client(), self.case_timeout, log)

    def slots(self) -> int:
        return max(1, sum(self.client().nthreads().values()))


def run_cases_on_dask(
    score_case: Callable[[CaseTask, Mapping[str, Any]], Any],
    tasks: Sequence[CaseTask],
    settings: Mapping[str, Any],
    scheduler: str | Any,
    case_timeout: float,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """``{case: score_case(task, settings)}`` computed on the cluster, in task order.

    ``scheduler`` is an address or a ``distributed.Client``. The run stops when no case has finished
    for ``case_timeout`` seconds (per-case start times are not observable on a shared cluster).
    Finished futures are collected through their own done-callbacks (``Future.add_done_callback``),
    which need no default client: a client made for an address is not one (``set_as_default=False``),
    so ``distributed.wait`` cannot be used.
    """
    if not tasks:
        return {}
    client = client_for(scheduler) if isinstance(scheduler, str) else scheduler
    futures = client.map(score_case, list(tasks), settings=dict(settings), pure=False)
    case_of = {future.key: task.case for future, task in zip(futures, tasks, strict=True)}
    finished: queue.SimpleQueue[Any] = queue.SimpleQueue()
    for future in futures:
        future.add_done_callback(finished.put)
    pending, results = set(futures), {}
    start = time.monotonic()
    try:
        while pending:
            try:
                future = finished.get(timeout=case_timeout)
            except queue.Empty:
                case = min((case_of[f.key] for f in pending), key=[t.case for t in tasks].index)
                raise EvaluationError(
                    f"no case finished within {case_timeout:g} s; case {case} was stopped.", case
                ) from None
            pending.discard(future)
            case = case_of[future.key]
            results[case] = _result(future, case, log)
            log(f"{len(results)}/{len(tasks)} cases done on Dask, {time.monotonic() - start:.1f} s elapsed")
    finally:
        client.cancel(list(pending))
    return {task.case: results[task.case] for task in tasks}


def _result(future: Any, case: str, log: Callable[[str], None]) -> Any:
    if future.status == "finished":
        return future.result()
    error = future.exception()
    if isinstance(error, EvaluationError):
        raise error
    if isinstance(error, MemoryError):
        raise EvaluationError(f"the evaluation of case {case} ran out of memory on a Dask worker.", case)
    if type(error).__name__ == "KilledWorker":
        raise EvaluationError(f"Dask workers kept dying while evaluating case {case}.", case)
    log(f"Internal error while evaluating case {case}:\n{''.join(traceback.format_exception(error))}")
    raise EvaluationError(f"internal error ({type(error).__name__}) while evaluating case {case}.", case)
