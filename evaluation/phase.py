"""``python -m evaluation.phase --challenge NAME [--set K=V ...] [--check METRICS.json | --limits [--cases N]]``

Prints the phase settings a challenge declares (sockets, leaderboard score path, sort order,
decimals, extra result columns, scoring method; the platform's own field names) as JSON to paste
into the phase form. With ``--check`` verifies that every leaderboard path resolves in a
metrics.json the way the platform walks it (split on ``.``, dict keys only) to a finite number:
a path that does not would silently remove the submission from the leaderboard. With ``--limits``
(``--challenge all`` for every challenge) runs the bundled demo in a subprocess, measures its peak
memory per process and its time, and prints the memory and time limits to set for ``--cases`` cases.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Sequence
from pathlib import Path

from evaluation.cli import _fail, parse_overrides, tool_parser
from evaluation.declarative import bounds
from evaluation.errors import EvaluationError
from evaluation.platform.metrics_json import CASE_SECTION, ranked_value_problem
from evaluation.platform.predictions import read_json_file
from evaluation.registry import get, names

# A checkout's bundled demo of each challenge (not in the image: --limits is an organizer tool).
CHECKOUT = Path(__file__).resolve().parents[1]
DEMO_INPUT = CHECKOUT / "test" / "input"
DEMO_GROUND_TRUTH = CHECKOUT / "ground-truth"
# What the platform reserves on an instance besides the limit it sets per process
# (comic/grand-challenge.org, components/backends/amazon_sagemaker_base.py, _max_memory_mb: memory - 1 GB).
PLATFORM_RESERVE_GB = 1


def demo_cases(input_dir: Path) -> int:
    """Cases in an input folder: the jobs of predictions.json (algorithm phases), else the data rows of
    the prediction file (a CSV phase)."""
    predictions = input_dir / "predictions.json"
    if predictions.is_file():
        return len(json.loads(predictions.read_text(encoding="utf-8")))
    files = [path for path in input_dir.iterdir() if path.is_file()]
    if len(files) != 1:
        raise EvaluationError(f"{input_dir}: expected predictions.json or one prediction file.")
    return sum(1 for line in files[0].read_text(encoding="utf-8").splitlines()[1:] if line.strip())


def timed_run(command: list[str], cwd: Path) -> tuple[int, float, float, str]:
    """Run a command; its exit code, wall seconds, peak RSS in MB of its largest process and stderr.

    The peak is the rusage ``ru_maxrss`` of the child and its waited-for descendants (the worker
    processes), read with ``os.wait4`` on that child: the per-child equivalent of
    ``getrusage(RUSAGE_CHILDREN)``, which would also count any earlier child of this process.
    """
    with tempfile.TemporaryFile() as stderr:
        start = time.perf_counter()
        process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=stderr)
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        stderr.seek(0)
        return process.returncode, seconds, usage.ru_maxrss / 1024, stderr.read().decode(errors="replace")


def measure_limits(name: str, cases: int, workers: int, safety: float) -> dict:
    """Measure the demo of a challenge (one worker) and scale it to ``cases`` cases."""
    input_dir, ground_truth = DEMO_INPUT / name, DEMO_GROUND_TRUTH / name
    if not input_dir.is_dir() or not ground_truth.is_dir():
        raise EvaluationError(
            f"No bundled demo for {name} (expected {input_dir} and {ground_truth}): run from a checkout."
        )
    with tempfile.TemporaryDirectory() as output:
        command = [sys.executable, "-m", "evaluation", "--challenge", name, "--input", str(input_dir),
                   "--output", output, "--ground-truth", str(ground_truth), "--workers", "1"]  # fmt: skip
        code, total_s, peak_mb, stderr = timed_run(command, CHECKOUT)
    if code != 0:
        last = [line for line in stderr.splitlines() if line.strip()][-1:] or ["no message"]
        raise EvaluationError(f"The {name} demo evaluation failed (exit {code}): {last[0]}")
    measured = demo_cases(input_dir)
    per_case_s = total_s / measured
    memory_gb = math.ceil(safety * (workers + 1) * peak_mb / 1024 + PLATFORM_RESERVE_GB)
    return {
        "challenge": name,
        "measured": {
            "demo_cases": measured,
            "peak_rss_mb_per_process": round(peak_mb, 1),
            "seconds_total": round(total_s, 3),
            "seconds_per_case": round(per_case_s, 4),
        },
        "for_cases": cases,
        "workers": workers,
        "safety_factor": safety,
        "recommended_memory_gb": memory_gb,
        "recommended_time_limit_s": math.ceil(safety * per_case_s * cases),
        "assumptions": [
            "measured on the bundled demo with one worker on this machine; the platform's CPUs may be slower",
            "a case = one algorithm job (one entry of predictions.json) or one row of the prediction file",
            f"memory: {workers} worker processes and the main process each at the measured peak RSS, times the "
            f"safety factor, plus the {PLATFORM_RESERVE_GB} GB the platform keeps for the system; the platform "
            "applies its limit per process as RLIMIT_DATA, which counts allocated (not only resident) memory",
            "time: the demo's seconds per case (start-up included, spread over its cases: an overestimate "
            "for a large phase) times the cases, serially (no credit for parallel workers), times the safety "
            "factor; a challenge whose cases are larger than the demo's needs more of both",
        ],
    }


def print_limits(arguments: argparse.Namespace) -> int:
    # NaN, inf refused; the upper bounds keep the products finite (math.ceil of inf: a traceback)
    if not (1 <= arguments.cases <= 10**9 and 1 <= arguments.workers <= 10**4 and 1 <= arguments.safety <= 100):
        raise EvaluationError(
            "--cases and --workers must be at least 1 (at most 1000000000 and 10000) and --safety at least 1 "
            "(at most 100)."
        )
    selected = names() if arguments.challenge == "all" else [get(arguments.challenge).name]
    selected = [name for name in selected if (DEMO_INPUT / name).is_dir()] if arguments.challenge == "all" else selected
    results = [measure_limits(name, arguments.cases, arguments.workers, arguments.safety) for name in selected]
    print(json.dumps(results if arguments.challenge == "all" else results[0], indent=2))
    return 0


def parser() -> argparse.ArgumentParser:
    result = tool_parser("evaluation.phase", __doc__, "; 'all' with --limits")
    result.add_argument(
        "--set", action="append", default=[], metavar="KEY=VALUE", help="a challenge option (repeatable)"
    )
    result.add_argument("--check", type=Path, metavar="METRICS.json", help="verify the leaderboard paths")
    result.add_argument("--limits", action="store_true", help="measure the demo; print the memory and time limits")
    result.add_argument("--cases", type=int, default=100, help="cases in the phase, for --limits (default: 100)")
    result.add_argument("--workers", type=int, default=2, help="worker processes, for --limits (default: 2, the "
                        "CPUs of the platform's smallest instance)")  # fmt: skip
    result.add_argument("--safety", type=float, default=2.0, help="safety factor, for --limits (default: 2)")
    return result


def main(argv: Sequence[str] | None = None) -> int:
    arguments = parser().parse_args(argv)
    try:
        if not arguments.challenge:
            raise EvaluationError("No challenge given: use --challenge or set EVALUATION_CHALLENGE.")
        if arguments.limits:
            return print_limits(arguments)
        challenge = get(arguments.challenge)
        settings = challenge.settings(parse_overrides(arguments.set))
        bounds.check_options(settings)
        phase = challenge.phase_for(settings)
        if arguments.check is None:
            print(json.dumps({"challenge": challenge.name, **phase.settings_json()}, indent=2))
            return 0
        document = read_json_file(arguments.check)
        problems = [problem for path in phase.leaderboard_paths if (problem := ranked_value_problem(document, path))]
        if problems:
            raise EvaluationError(
                f"{arguments.check}: the leaderboard value {'; '.join(problems)}: the platform would drop "
                "the submission from the leaderboard."
            )
        print(f"{arguments.check}: every leaderboard path ({', '.join(phase.leaderboard_paths)}) is a finite number.")
        cases = document.get(CASE_SECTION) if isinstance(document, dict) else None
        if cases:
            print(
                f"Warning: {arguments.check} holds per-case values ({len(cases)} cases under '{CASE_SECTION}'): the "
                "platform shows them on the public result page unless the phase sets display_all_metrics to false; "
                "or evaluate with --case-results private (the documentation's guide 'Running an evaluation')."
            )
        return 0
    except EvaluationError as error:
        return _fail(str(error))
    except Exception as error:  # a defect: the traceback is for the admins, stdout only
        traceback.print_exc(file=sys.stdout)
        return _fail(f"The phase tool failed with an internal error ({type(error).__name__}); the traceback is on "
                     "stdout.")  # fmt: skip


if __name__ == "__main__":
    raise SystemExit(main())
