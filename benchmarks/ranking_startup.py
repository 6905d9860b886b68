"""Fixed cost of the ranking tool: ``python -m evaluation.ranking --bootstrap 0`` on a small CSV (5
algorithms x 30 cases), as run by default (the cheap analyses, no SciPy) against the same run with
every analysis (``--analyses all``, which imports SciPy for the Wilcoxon tests) and
against the floor of starting Python with numpy, measured in the same run (best of ``--repeat``).
Acceptance (issue 12): the default under 1 s.

Usage: .venv/bin/python benchmarks/ranking_startup.py [--repeat 5] [--full]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import harness
import numpy as np

REPO = Path(__file__).resolve().parents[1]


def best_of(command: list[str], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(command, cwd=REPO, check=True, capture_output=True)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int)
    args = harness.parse(parser, dict(repeat=1), dict(repeat=5))
    with tempfile.TemporaryDirectory() as folder:
        rng = np.random.default_rng(0)
        rows = ["algorithm,case,value"] + [f"{a},c{c},{rng.random():.3f}" for a in "ABCDE" for c in range(30)]
        data = Path(folder) / "small.csv"
        data.write_text("\n".join(rows) + "\n")
        tool = [sys.executable, "-m", "evaluation.ranking", "--data", str(data), "--output", folder, "--bootstrap", "0"]
        floor = best_of([sys.executable, "-c", "import numpy"], args.repeat)
        default = best_of(tool, args.repeat)
        everything = best_of([*tool, "--analyses", "all"], args.repeat)
    print(f"python + numpy {floor:.2f} s | ranking --bootstrap 0 (default analyses) {default:.2f} s | "
          f"--analyses all {everything:.2f} s ({everything / default:.1f}x the default)")  # fmt: skip
    print(f"fixed cost under 1 s: {'met' if default < 1.0 else 'NOT met'}")


if __name__ == "__main__":
    main()
