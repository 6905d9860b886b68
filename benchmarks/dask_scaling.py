"""Scale-out figures for issue 6, measured in one run on this machine.

1. Per-task overhead: N trivial cases on the local process pool vs a Dask LocalCluster (same number
   of worker processes), seconds per case beyond the work itself.
2. Batch speed-up: ``evaluation.batch`` over S submissions with 1 vs 2 Dask workers. By default each
   is a HECKTOR 2026 submission of P synthetic patients at the CT grid size 300x512x512 with ``--full``
   (spacing 3.0 x 0.98 x 0.98 mm; benchmarks/hecktor_full_run.py's generator); ``--challenge rare25`` copies
   the RARE25 demo instead.

Usage: .venv/bin/python benchmarks/dask_scaling.py [--challenge hecktor2026] [--submissions 20]
       [--patients 4] [--tasks 200] [--full]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import shutil
import sys
import tempfile
import time
from pathlib import Path

import harness

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "test"), str(REPO / "benchmarks")]

import runner_cases  # noqa: E402
from distributed import Client, LocalCluster  # noqa: E402
from hecktor_full_run import make_data  # noqa: E402

from evaluation.batch import run_batch  # noqa: E402
from evaluation.runner import CaseTask, run_cases  # noqa: E402


def quiet(*_: object) -> None:
    """Progress lines are not part of the measurement."""


def per_task_overhead(n_tasks: int) -> None:
    tasks = [CaseTask(f"case-{i}", i) for i in range(n_tasks)]
    start = time.perf_counter()
    run_cases(runner_cases.square, tasks, {}, 2, 600, quiet)
    local = time.perf_counter() - start
    with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster, Client(cluster) as client:
        start = time.perf_counter()
        run_cases(runner_cases.square, tasks, {}, 2, 600, quiet, client)
        dask = time.perf_counter() - start
    print(
        f"per-task overhead, {n_tasks} trivial cases on 2 processes: local pool {1000 * local / n_tasks:.2f} ms/case "
        f"(incl. pool start), Dask {1000 * dask / n_tasks:.2f} ms/case; ratio Dask/local {dask / local:.2f}"
    )


def batch_speedup(challenge: str, n_submissions: int, patients: int, shape: tuple[int, int, int]) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        submissions = Path(scratch) / "submissions"
        if challenge == "hecktor2026":
            ground_truth, source = make_data(Path(scratch) / "data", patients, shape)
        else:
            ground_truth, source = None, REPO / "test" / "input" / challenge
        for index in range(n_submissions):
            shutil.copytree(source, submissions / f"team-{index:02d}")
        timings = {}
        for workers in (1, 2):
            output = Path(scratch) / f"out-{workers}"
            with (
                LocalCluster(n_workers=workers, threads_per_worker=1, dashboard_address=None) as cluster,
                Client(cluster) as client,
                contextlib.redirect_stdout(io.StringIO()),
            ):
                start = time.perf_counter()
                outcome = run_batch(challenge, submissions, output, ground_truth, scheduler=client, log=quiet)
                timings[workers] = time.perf_counter() - start
            assert set(outcome.values()) == {"done"}, outcome
        same = all(
            (Path(scratch) / "out-1" / s.name / "metrics.json").read_bytes()
            == (Path(scratch) / "out-2" / s.name / "metrics.json").read_bytes()
            for s in submissions.iterdir()
        )
        print(
            f"batch of {n_submissions} {challenge} submissions ({patients} patients each if HECKTOR): "
            f"1 Dask worker {timings[1]:.1f} s, "
            f"2 workers {timings[2]:.1f} s, speed-up {timings[1] / timings[2]:.2f}x; identical metrics: {same}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--challenge", default="hecktor2026", choices=("hecktor2026", "rare25"))
    parser.add_argument("--submissions", type=int)
    parser.add_argument("--patients", type=int, help="patients per HECKTOR submission")
    parser.add_argument("--tasks", type=int)
    parser.add_argument("--shape", type=int, nargs=3, help="the HECKTOR CT grid")
    arguments = harness.parse(
        parser,
        dict(submissions=2, patients=4, tasks=20, shape=(40, 128, 128)),
        dict(submissions=20, patients=4, tasks=200, shape=(300, 512, 512)),
    )
    per_task_overhead(arguments.tasks)
    batch_speedup(arguments.challenge, arguments.submissions, arguments.patients, tuple(arguments.shape))


if __name__ == "__main__":
    main()
