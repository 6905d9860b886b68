"""./test.sh's per-stage progress (test/suite_progress.py): run as ./test.sh runs pytest (xdist workers, one
file per worker), on two small files of two stages, the run prints the stage plan and one "stage done" line
per stage with its outcome counts."""

from __future__ import annotations

import re
import subprocess
import sys

from conftest import REPO

FILES = ("test/metrics/test_overlap.py", "test/platform/test_layout.py")


def test_each_stage_reports_when_it_is_done() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "2", "--dist", "loadfile", "-q", *FILES],
        cwd=REPO, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:]
    plan = re.search(r"\[progress +\d+ s\] (\d+) tests in 2 stages: metrics (\d+); platform I/O (\d+)", done.stdout)
    assert plan, done.stdout[-3000:]
    total, metrics, platform = map(int, plan.groups())
    assert total == metrics + platform and f"{total} passed" in done.stdout
    for stage, count in (("metrics", metrics), ("platform I/O", platform)):
        assert f"stage done: {stage} ({count} tests: {count} passed)" in done.stdout, done.stdout[-3000:]
