"""The ranking benchmarks run at their smoke size, so none can break unseen."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_ranking_startup_smoke() -> None:
    done = subprocess.run([sys.executable, "benchmarks/ranking_startup.py", "--repeat", "1"], cwd=REPO,
                          capture_output=True, text=True, timeout=600, check=True)  # fmt: skip
    assert "size smoke" in done.stdout and "ranking --bootstrap 0 (default):" in done.stdout
    assert "reference, python + numpy:" in done.stdout


def test_ranking_bootstrap_smoke() -> None:
    done = subprocess.run([sys.executable, "benchmarks/ranking_bootstrap.py"], cwd=REPO, capture_output=True,
                          text=True, timeout=600, check=True)  # fmt: skip
    assert "test-then-rank 20 x 500: 20 resamples" in done.stdout and "rank-then-mean 5 x 500" in done.stdout
    assert "challengeR not run in this process tree" in done.stdout  # and says why
