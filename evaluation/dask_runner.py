"""Per-case work on a Dask cluster (``dask.distributed``) instead of the local process pool.

Used when ``--scheduler ADDRESS`` (or ``EVALUATION_SCHEDULER``) is given: the caller hands
``DaskCluster`` to ``pipeline.evaluate`` instead of ``runner.LocalPool``. Dask re-runs the tasks of a
worker that is lost (up to its ``distributed.scheduler.allowed-failures``), a case that raises still
fails the run naming the case, and aggregation stays local, so the metrics are the same bytes
whichever executor ran the cases. Workers must be able to import this package and read the input and
ground-truth paths (a shared file system; on a LocalCluster that is given).

What keeps it as fast as the local pool (``benchmarks/dask_scaling.py``): every worker imports the
challenge's scoring module once, when it joins (an idempotent worker plugin, ``ImportOnce``), never
inside a case's time; cheap cases (``Challenge.cases_in_process``) travel in chunks, a few per worker,
so Dask's few milliseconds per task are paid per chunk, not per case; progress is one line a second
(``runner.Progress``), not one per case.
"""

from __future__ import annotations

import importlib
import math
import queue
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from evaluation.contract import CaseTask
from evaluation.errors import ConfigurationError, EvaluationError
from evaluation.runner import Progress, ScoreCase

try:
    from distributed import WorkerPlugin
except ImportError:  # pragma: no cover - the image does not ship Dask; client_for says so
    WorkerPlugin = object  # type: ignore[assignment,misc]

CHUNKS_PER_THREAD = 4  # cheap cases: enough chunks to balance the workers, few enough to amortise a task


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


class ImportOnce(WorkerPlugin):  # type: ignore[misc,valid-type]
    """Imports a scoring module on every worker when it joins (and on a worker that replaces a lost
    one). Idempotent by name: registering it again for the next evaluation costs one message."""

    idempotent = True

    def __init__(self, module: str) -> None:
        self.module = module

    def setup(self, worker: Any) -> None:
        importlib.import_module(self.module)


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
        score_case: ScoreCase,
        tasks: Sequence[CaseTask],
        settings: Mapping[str, Any],
        log: Callable[[str], None] = print,
        in_process: bool = False,
    ) -> dict[str, Any]:
        """Every case on the cluster, the cheap ones (``in_process``) included, in chunks."""
        if not tasks:
            return {}
        client = self.client()
        size = math.ceil(len(tasks) / (CHUNKS_PER_THREAD * self.slots())) if in_process else 1
        return run_cases_on_dask(score_case, tasks, settings, client, self.case_timeout, log, size)

    def slots(self) -> int:
        return max(1, sum(self.client().nthreads().values()))


class CaseFailed(Exception):
    """A case's unexpected exception on a worker, with its case and traceback (so that the main
    process can name the case of a chunk and log the traceback for the admins)."""

    def __init__(self, case: str, kind: str, details: str) -> None:
        super().__init__(case, kind, details)
        self.case, self.kind, self.details = case, kind, details


def score_chunk(score_case: ScoreCase, chunk: Sequence[CaseTask], settings: Mapping[str, Any]) -> list[Any]:
    """On a worker: ``score_case`` of each task of ``chunk``, in order."""
    import traceback

    results = []
    for task in chunk:
        try:
            results.append(score_case(task, settings))
        except EvaluationError:
            raise
        except Exception as error:  # MemoryError included: named with its case in the main process
            raise CaseFailed(task.case, type(error).__name__, traceback.format_exc()) from None
    return results


def run_cases_on_dask(
    score_case: ScoreCase,
    tasks: Sequence[CaseTask],
    settings: Mapping[str, Any],
    client: Any,
    case_timeout: float,
    log: Callable[[str], None] = print,
    chunk_size: int = 1,
) -> dict[str, Any]:
    """``{case: score_case(task, settings)}`` computed on the cluster of ``client``, in task order,
    ``chunk_size`` cases per Dask task.

    The run stops when no chunk has finished for ``case_timeout`` seconds per case in it (per-case
    start times are not observable on a shared cluster). Finished futures are collected through their
    own done-callbacks (``Future.add_done_callback``), which need no default client: a client made for
    an address is not one (``set_as_default=False``), so ``distributed.wait`` cannot be used.
    """
    client.register_plugin(ImportOnce(score_case.__module__), name=f"evaluation-import-{score_case.__module__}")
    chunks = [list(tasks[start : start + chunk_size]) for start in range(0, len(tasks), chunk_size)]
    futures = [client.submit(score_chunk, score_case, chunk, dict(settings), pure=False) for chunk in chunks]
    chunk_of = {future.key: chunk for future, chunk in zip(futures, chunks, strict=True)}
    finished: queue.SimpleQueue[Any] = queue.SimpleQueue()
    for future in futures:
        future.add_done_callback(finished.put)
    pending, results = set(futures), {}
    progress = Progress(len(tasks), log, " on Dask")
    try:
        while pending:
            try:
                future = finished.get(timeout=case_timeout * chunk_size)
            except queue.Empty:
                first = min((chunk_of[f.key][0] for f in pending), key=tasks.index).case
                raise EvaluationError(
                    f"no case finished within {case_timeout:g} s; case {first} was stopped.", first
                ) from None
            pending.discard(future)
            chunk = chunk_of[future.key]
            for task, result in zip(chunk, _result(future, chunk, log), strict=True):
                results[task.case] = result
                progress.tick(task.case)
    finally:
        client.cancel(list(pending))
    return {task.case: results[task.case] for task in tasks}


def _result(future: Any, chunk: Sequence[CaseTask], log: Callable[[str], None]) -> list[Any]:
    if future.status == "finished":
        return future.result()
    error = future.exception()
    if isinstance(error, EvaluationError):
        raise error
    if isinstance(error, CaseFailed):
        if error.kind == "MemoryError":
            text = f"the evaluation of case {error.case} ran out of memory on a Dask worker."
            raise EvaluationError(text, error.case)
        log(f"Internal error while evaluating case {error.case}:\n{error.details}")
        raise EvaluationError(f"internal error ({error.kind}) while evaluating case {error.case}.", error.case)
    case = " or ".join(task.case for task in chunk)
    if type(error).__name__ == "KilledWorker":
        raise EvaluationError(f"Dask workers kept dying while evaluating case {case}.", chunk[0].case)
    log(f"Internal error while evaluating case {case}: {type(error).__name__}: {error}")
    raise EvaluationError(f"internal error ({type(error).__name__}) while evaluating case {case}.", chunk[0].case)
