"""Every benchmark runs at its smoke size (benchmarks/harness.py), so none can break unseen: each in
its own subprocess and session, with a time limit; it must exit 0, print its comparison, and leave
no process of its session alive (pools and forkservers shut down, not left to die later)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

import harness  # noqa: E402

BENCHMARKS = sorted(p for p in (REPO / "benchmarks").glob("*.py") if "__main__" in p.read_text())
TIME_LIMIT = 120  # seconds per benchmark; each takes a few on a quiet 2-core machine


@pytest.mark.parametrize("benchmark", BENCHMARKS, ids=[p.stem for p in BENCHMARKS])
def test_benchmark_runs_at_smoke_size(benchmark: Path) -> None:
    process = subprocess.Popen(
        [sys.executable, str(benchmark)], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
    )  # fmt: skip
    try:
        out, err = process.communicate(timeout=TIME_LIMIT)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        pytest.fail(f"{benchmark.name} ran over {TIME_LIMIT} s at its smoke size")
    left = harness.wait_for_session(process.pid, grace=1.0)  # a forkserver reading end-of-file: a moment
    assert process.returncode == 0, f"{benchmark.name} failed:\n{out[-2000:]}\n{err[-3000:]}"
    assert out.strip(), f"{benchmark.name} printed nothing"
    assert not left, f"{benchmark.name} left processes running after it exited"
