"""Dask by scheduler address against the local process pool, measured in one run (issue 20, item 3).

One HECKTOR 2026 evaluation of P synthetic patients (benchmarks/hecktor_full_run.py's generator;
``rfs_output=risk``, as its RFS draws may be negative days) runs as organizers run it, the command
line in a fresh process each time: ``python -m evaluation --workers N`` against ``--scheduler ADDRESS``
on a ``distributed.LocalCluster`` of N single-threaded worker processes that this script starts and
reaches by its address. The two alternate (local, Dask, local, Dask, ...) so that both see the same
machine load; the figure is the ratio of the median wall times at equal N, with the metrics.json
bytes compared. The cluster is started before the clock, as an organizer's cluster runs before a
batch; its first evaluation pays the workers' imports, the later ones do not (the local pool pays
its pool start in every run). On exit the cluster and every process this script started are gone
(checked and printed).

Usage: .venv/bin/python benchmarks/dask_scaling.py            # smoke: 4 patients at 60x192x192, seconds
       .venv/bin/python benchmarks/dask_scaling.py --full     # 20 patients at 300x512x512, N = 1 and 2
       [--patients P] [--shape Z Y X] [--workers 1 2] [--repeats R]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from multiprocessing import resource_tracker
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "benchmarks")]

from distributed import LocalCluster  # noqa: E402

SMOKE = {"patients": 4, "shape": (60, 192, 192), "workers": (1,), "repeats": 1}
FULL = {"patients": 20, "shape": (300, 512, 512), "workers": (1, 2), "repeats": 3}


def evaluate(input_dir: Path, ground_truth: Path, output: Path, executor: list[str]) -> float:
    """Wall time of one ``python -m evaluation`` run (a fresh process, as on the command line)."""
    command = [sys.executable, "-m", "evaluation", "--challenge", "hecktor2026", "--input", str(input_dir), "--output",
               str(output), "--ground-truth", str(ground_truth), "--set", "rfs_output=risk", *executor]  # fmt: skip
    start = time.perf_counter()
    run = subprocess.run(command, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if run.returncode != 0:
        raise SystemExit(f"{' '.join(executor)} failed: {run.stderr.strip().splitlines()[-1]}")
    return seconds


def compare(workers: int, input_dir: Path, ground_truth: Path, scratch: Path, repeats: int) -> tuple[float, float]:
    """Median wall times (local pool, Dask) at ``workers`` processes each; prints them, their ratio and
    the bytes check."""
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        times: dict[str, list[float]] = {"local": [], "dask": []}
        executors = {"local": ["--workers", str(workers)], "dask": ["--scheduler", cluster.scheduler_address]}
        for _ in range(repeats):
            for name, executor in executors.items():
                times[name].append(evaluate(input_dir, ground_truth, scratch / f"{name}-{workers}", executor))
    local, dask = (statistics.median(times[name]) for name in ("local", "dask"))
    same = (scratch / f"local-{workers}/metrics.json").read_bytes() == (
        scratch / f"dask-{workers}/metrics.json"
    ).read_bytes()
    shown = {name: ", ".join(f"{t:.1f}" for t in values) for name, values in times.items()}
    print(f"{workers} worker(s): local pool {local:.1f} s (runs: {shown['local']}), Dask by address {dask:.1f} s "
          f"(runs: {shown['dask']}); Dask/local {dask / local:.2f}x; identical metrics.json: {same}")  # fmt: skip
    return local, dask


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help=f"the issue's size: {FULL}")
    parser.add_argument("--patients", type=int)
    parser.add_argument("--shape", type=int, nargs=3)
    parser.add_argument("--workers", type=int, nargs="+")
    parser.add_argument("--repeats", type=int)
    arguments = parser.parse_args()
    # here, not at the top: the cluster's spawned workers import this file, and must start cold
    from hecktor_full_run import _descendants, make_data

    size = {**(FULL if arguments.full else SMOKE)}
    size.update({key: value for key, value in vars(arguments).items() if key in size and value is not None})
    with tempfile.TemporaryDirectory() as folder:
        scratch = Path(folder)
        ground_truth, input_dir = make_data(scratch / "data", size["patients"], tuple(size["shape"]))
        shape = "x".join(map(str, size["shape"]))
        print(f"HECKTOR 2026, {size['patients']} patients at {shape}, median of {size['repeats']} alternating run(s):")
        times = {
            workers: compare(workers, input_dir, ground_truth, scratch, size["repeats"]) for workers in size["workers"]
        }
        if len(times) > 1:
            fewest, most = min(times), max(times)
            local, dask = (times[fewest][i] / times[most][i] for i in (0, 1))
            print(f"speed-up from {fewest} to {most} workers: local pool {local:.2f}x, Dask {dask:.2f}x")
    # The cluster's spawned workers started multiprocessing's resource tracker, which would otherwise
    # wait for this process's exit; its (private) stop is the only way to end it before.
    getattr(resource_tracker._resource_tracker, "_stop", lambda: None)()
    left = _descendants(os.getpid())
    print(f"processes left behind: {len(left)}")
    if left:
        raise SystemExit(f"processes outlived the benchmark: {left}")


if __name__ == "__main__":
    main()
