"""Fixed cost of the ranking tool: ``python -m evaluation.ranking --bootstrap 0`` end to end (a fresh
process: imports, reading the CSV, ranking, writing ranking.json), as run by default, against the
floor of starting Python with numpy measured in the same run (best of ``--repeat``), and against the
same run with every robustness analysis (``--analyses all``: leave one case out, the five schemes,
the manipulation check, the significance map), which the default leaves out.

Both wall and CPU time (user + system of the child process) are printed: on a shared machine the
wall time includes waiting for a core. Sizes: ``smoke`` (default; 5 algorithms x 30 cases,
aggregate-then-rank: seconds, for CI) and ``--full`` (test-then-rank, 20 algorithms x 500 cases,
issue 20's figure). Goal: the default run under 1 s at full size. Reference: challengeR has no
equivalent start-up figure here (R is not run).

Usage: .venv/bin/python benchmarks/ranking_startup.py [--full] [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
GOAL_SECONDS = 1.0
SIZES = {"smoke": (5, 30, "aggregate-then-rank"), "full": (20, 500, "test-then-rank")}


def best_of(command: list[str], repeat: int) -> tuple[float, float]:
    """The best wall time and the best CPU time (user + system of the child) over ``repeat`` runs: on a
    shared machine the wall time includes the wait for a core, the CPU time is the work itself."""
    wall = cpu = float("inf")
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(command, cwd=REPO, check=True, capture_output=True)
        wall = min(wall, time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = min(cpu, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="test-then-rank at 20 x 500 (default: smoke size)")
    parser.add_argument("--repeat", type=int, help="runs to take the best of (default 1 at smoke size, 5 with --full)")
    args = parser.parse_args()
    size = "full" if args.full else "smoke"
    args.repeat = args.repeat or (5 if args.full else 1)
    n_algorithms, n_cases, scheme = SIZES[size]
    with tempfile.TemporaryDirectory() as folder:
        rng = np.random.default_rng(0)
        skill = rng.normal(0.7, 0.05, n_algorithms)
        rows = ["algorithm,case,value"] + [
            f"a{a},c{c},{np.clip(skill[a] + rng.normal(0, 0.1), 0, 1):.3f}"
            for a in range(n_algorithms)
            for c in range(n_cases)
        ]
        data = Path(folder) / "table.csv"
        data.write_text("\n".join(rows) + "\n")
        tool = [sys.executable, "-m", "evaluation.ranking", "--data", str(data), "--output", folder,
                "--scheme", scheme, "--bootstrap", "0"]  # fmt: skip
        floor = best_of([sys.executable, "-c", "import numpy"], args.repeat)
        default = best_of(tool, args.repeat)
        everything = best_of([*tool, "--analyses", "all"], max(1, args.repeat // 2))
    print(f"size {size}: {scheme}, {n_algorithms} algorithms x {n_cases} cases, best of {args.repeat}, "
          f"load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")  # fmt: skip
    print(f"reference, python + numpy: {floor[0]:.2f} s wall, {floor[1]:.2f} s CPU")
    print(f"ranking --bootstrap 0 (default): {default[0]:.2f} s wall, {default[1]:.2f} s CPU "
          f"({default[1] / floor[1]:.1f}x the reference's CPU)")  # fmt: skip
    print(f"ranking --bootstrap 0 --analyses all: {everything[0]:.2f} s wall, {everything[1]:.2f} s CPU "
          f"({everything[1] / default[1]:.1f}x the default)")  # fmt: skip
    print("challengeR reference: not run (no start-up comparison with R)")
    if size == "full":
        verdict = {True: "met", False: "NOT met"}
        print(
            f"goal: default under {GOAL_SECONDS:.0f} s: CPU {verdict[default[1] < GOAL_SECONDS]}, "
            f"wall {verdict[default[0] < GOAL_SECONDS]} (wall includes waiting for a core when the machine is busy)"
        )
    else:
        print(f"goal: default under {GOAL_SECONDS:.0f} s at full size (--full)")


if __name__ == "__main__":
    main()
