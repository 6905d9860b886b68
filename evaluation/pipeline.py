"""One evaluation, end to end: reference, input, per-case scoring, aggregation, metrics.json.

See ../shared/spec/architecture.md for the data flow; every step's errors are ``EvaluationError``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from evaluation import __version__
from evaluation.challenges import get
from evaluation.errors import SubmissionError
from evaluation.platform.ground_truth import resolve_ground_truth
from evaluation.platform.metrics_json import write_metrics
from evaluation.runner import run_cases

METRICS_FILE = "metrics.json"


def evaluate(
    challenge_name: str,
    input_dir: Path,
    output_dir: Path,
    ground_truth: Path | None = None,
    overrides: Mapping[str, str] | None = None,
    workers: int = 1,
    case_timeout: float = 1800.0,
    log: Callable[[str], None] = print,
    scheduler: str | Any | None = None,
) -> dict[str, Any]:
    """Evaluate the submission in ``input_dir`` and write ``output_dir/metrics.json``; the cases run
    on a local pool of ``workers`` processes, or on the Dask cluster at ``scheduler``."""
    start = time.monotonic()
    challenge = get(challenge_name)
    settings = challenge.settings(overrides)
    (output_dir / METRICS_FILE).unlink(missing_ok=True)  # a stale file must never pass for this run's
    if not input_dir.is_dir():
        raise SubmissionError(f"The input folder {input_dir} does not exist.")
    gt_dir = resolve_ground_truth(challenge.name, ground_truth)
    log(f"Challenge {challenge.name} (evaluation {__version__}); ground truth {gt_dir}; settings {dict(settings)}")
    reference = challenge.load_reference(gt_dir, settings)
    prepared = challenge.prepare(input_dir, reference, settings)
    if prepared.missing:
        log(f"{len(prepared.missing)} reference case(s) without a prediction: {', '.join(prepared.missing)}")
    results = run_cases(challenge.score_case, prepared.tasks, settings, workers, case_timeout, log, scheduler)
    metrics = challenge.aggregate(results, prepared.missing, reference, settings)
    write_metrics(output_dir / METRICS_FILE, metrics, challenge.phase_for(settings).leaderboard_paths)
    log(f"Wrote {output_dir / METRICS_FILE} in {time.monotonic() - start:.1f} s")
    return metrics
