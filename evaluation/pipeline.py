"""One evaluation, end to end: reference, input, per-case scoring, aggregation, metrics.json.

See ../shared/spec/architecture.md for the data flow; every step's errors are ``EvaluationError``.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from evaluation import __version__
from evaluation.contract import DECLARATIONS
from evaluation.declarative import bounds
from evaluation.errors import ConfigurationError, SubmissionError
from evaluation.platform.ground_truth import resolve_ground_truth
from evaluation.platform.metrics_json import CASE_RESULTS_FILE, write_metrics
from evaluation.provenance import RECORD_FILE, record, write_record
from evaluation.registry import get
from evaluation.runner import Executor, LocalPool, out_of_memory

METRICS_FILE = "metrics.json"


def clear_stale(output_dir: Path) -> None:
    """Remove the metrics.json (case-results.json, provenance.json) an earlier run left in ``output_dir``, before
    anything else can fail: a run that stops on its options or its declaration must not leave an old
    result beside its error. Only those files; a folder that cannot hold them is reported by
    :func:`check_output_folder`."""
    for stale in (METRICS_FILE, CASE_RESULTS_FILE, RECORD_FILE):
        with suppress(OSError):  # absent, a folder of that name, no permission: check_output_folder's part
            (output_dir / stale).unlink(missing_ok=True)


def check_output_folder(output_dir: Path) -> None:
    """The output folder exists (or is created) and takes a file; any stale metrics.json (and
    case-results.json) is removed, so that it can never pass for this run's. Problems are the
    organizer's: ``ConfigurationError``."""
    if output_dir.exists() and not output_dir.is_dir():
        raise ConfigurationError(f"The output folder {output_dir} is a file, not a folder.")
    try:
        output_dir.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ConfigurationError(
            f"The output folder {output_dir} does not exist and cannot be created ({error.strerror})."
        ) from None
    try:
        handle, probe = tempfile.mkstemp(prefix=".write-check-", dir=output_dir)
        os.close(handle)
        os.unlink(probe)
        for stale in (METRICS_FILE, CASE_RESULTS_FILE):
            (output_dir / stale).unlink(missing_ok=True)
    except OSError as error:
        left = [name for name in (METRICS_FILE, CASE_RESULTS_FILE, RECORD_FILE) if os.path.lexists(output_dir / name)]
        verb = "is" if len(left) == 1 else "are"
        still = f"; the {' and '.join(left)} of an earlier run {verb} still there" if left else ""
        raise ConfigurationError(
            f"The output folder {output_dir} is not writable ({error.strerror}); metrics.json cannot be written{still}."
        ) from None


@contextmanager
def _memory_named(doing: str) -> Iterator[None]:
    """A ``MemoryError`` in the main process becomes a sentence saying what ran out and the limit."""
    try:
        yield
    except MemoryError as error:  # the case, when the reading of one case's file failed (platform/sockets.py)
        raise out_of_memory(getattr(error, "case", None), f"in the main process {doing}") from None


def evaluate(
    challenge_name: str,
    input_dir: Path,
    output_dir: Path,
    ground_truth: Path | None = None,
    overrides: Mapping[str, str] | None = None,
    executor: Executor | None = None,
    log: Callable[[str], None] = print,
    case_results: str = "public",
    provenance: bool = False,
) -> dict[str, Any]:
    """Evaluate the submission in ``input_dir`` and write ``output_dir/metrics.json``; the cases run
    on ``executor``, the caller's choice (default: a local pool of one process, ``runner.LocalPool``). With
    ``case_results="private"`` the per-case values go to ``case-results.json`` for the organizer
    instead of the public metrics.json (``evaluation.platform.metrics_json.write_metrics``). With
    ``provenance`` a reproducibility record goes beside it (``evaluation.provenance``)."""
    start = time.monotonic()
    clear_stale(output_dir)
    challenge = get(challenge_name)
    settings = challenge.settings(overrides)
    bounds.check_options(settings)
    check_output_folder(output_dir)  # before any work: an unwritable folder would waste the whole run
    if not input_dir.is_dir():
        raise SubmissionError(f"The input folder {input_dir} does not exist.")
    gt_dir = resolve_ground_truth(challenge.name, ground_truth)
    log(f"Challenge {challenge.name} (evaluation {__version__}); ground truth {gt_dir}; settings {dict(settings)}")
    with _memory_named("while reading the ground truth"):
        reference = challenge.load_reference(gt_dir, settings)
    with _memory_named("while reading the submission"):
        prepared = challenge.prepare(input_dir, reference, settings)
    if prepared.missing:
        log(f"{len(prepared.missing)} reference case(s) without a prediction: {', '.join(prepared.missing)}")
    executor = executor or LocalPool()
    if prepared.scored is not None:  # values scored as columns by prepare: no per-case task
        results = prepared.scored
        log(f"{len(results)}/{len(results)} cases done (as columns)")
    else:
        results = executor.map(challenge.score_case, prepared.tasks, settings, log, challenge.cases_in_process)
    with _memory_named(f"while aggregating the results of all {len(results)} cases"):
        metrics = challenge.aggregate(results, prepared.missing, reference, settings)
    document = None
    if provenance:  # hashed before metrics.json is written: a failure here leaves none
        declaration = (
            Path(challenge_name) if challenge_name.endswith(".toml") else DECLARATIONS / f"{challenge.name}.toml"
        )
        document = record(challenge_name, input_dir, gt_dir, overrides or {}, settings, case_results,
                          declaration if declaration.is_file() else None, challenge.code_files())  # fmt: skip
    write_metrics(output_dir / METRICS_FILE, metrics, challenge.phase_for(settings).leaderboard_paths, case_results)
    log(f"Wrote {output_dir / METRICS_FILE} in {time.monotonic() - start:.1f} s")
    if document is not None:
        try:
            log(f"Wrote the reproducibility record {write_record(output_dir, document, output_dir / METRICS_FILE)}")
        except BaseException:
            clear_stale(output_dir)  # no metrics.json without the record asked for
            raise
    return metrics
