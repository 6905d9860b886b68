"""Per-stage progress for ``./test.sh``: a line when each stage of the suite is done (its tests, outcome
counts and time since the run began), and, while a stage is still running, a line at most every
``PROGRESS_INTERVAL`` seconds naming what is left. A long module fixture (the sagemaker-shim scenarios run
for minutes before their first test reports) no longer leaves the run silent when the other workers report.

Printed by the process that shows the results: the pytest-xdist controller (its workers print nothing), or
pytest itself when run without workers. Loaded from conftest.py (``pytest_plugins``).
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field

import pytest

PROGRESS_INTERVAL = 60.0  # seconds between "still running" lines

# (stage, node id prefixes): a test belongs to the first stage with a matching prefix, so the Docker-marked
# modules form one stage whatever their folder
DOCKER_MODULES = ("test/test_docker.py", "test/test_sagemaker_shim.py", "test/declarative/test_docker_image.py")
STAGES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Docker image and job runner", DOCKER_MODULES),
    ("metrics", ("test/metrics/",)),
    ("platform I/O", ("test/platform/",)),
    ("declarative engine and library", ("test/declarative/",)),
    ("the four challenges", ("test/challenges/",)),
    ("ranking", ("test/ranking/",)),
    ("command line, runner, hostile inputs, benchmarks", ("",)),  # and anything else: a hook never fails
)


def stage_of(nodeid: str) -> str:
    return next(name for name, prefixes in STAGES if nodeid.startswith(prefixes))


@dataclass
class Stage:
    total: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)

    @property
    def done(self) -> int:
        return sum(self.outcomes.values())


class Progress:
    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.start = time.monotonic()
        self.last_line = self.start
        self.stages: dict[str, Stage] = {}

    def _write(self, text: str) -> None:
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            if reporter._tw.width_of_current_line:  # after a row of dots (ensure_newline misses those)
                reporter._tw.line()
            reporter.write_line(f"[progress {time.monotonic() - self.start:5.0f} s] {text}")
        self.last_line = time.monotonic()

    def collected(self, nodeids: list[str]) -> None:
        if self.stages or not nodeids:  # every xdist worker reports the same collection
            return
        for nodeid in nodeids:
            self.stages.setdefault(stage_of(nodeid), Stage()).total += 1
        order = [name for name, _ in STAGES if name in self.stages]
        self.stages = {name: self.stages[name] for name in order}
        self._write(
            f"{len(nodeids)} tests in {len(self.stages)} stages: "
            + "; ".join(f"{name} {stage.total}" for name, stage in self.stages.items())
        )

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.collected([item.nodeid for item in session.items])

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: object, ids: list[str]) -> None:
        self.collected(list(ids))

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if not self.stages:
            return
        outcome = _outcome(report)
        if outcome is None:
            return
        name = stage_of(report.nodeid)
        stage = self.stages.get(name)
        if stage is None:
            return
        stage.outcomes[outcome] += 1
        if stage.done == stage.total:
            counts = ", ".join(f"{n} {o}" for o, n in sorted(stage.outcomes.items()))
            self._write(f"stage done: {name} ({stage.total} tests: {counts})")
        elif time.monotonic() - self.last_line >= PROGRESS_INTERVAL:
            left = [f"{n} {s.total - s.done}" for n, s in self.stages.items() if s.done < s.total]
            done = sum(s.done for s in self.stages.values())
            total = sum(s.total for s in self.stages.values())
            self._write(f"{done}/{total} tests done; left: " + ", ".join(left))


def _outcome(report: pytest.TestReport) -> str | None:
    """One outcome per test: its call's, or its setup's when that failed or skipped (a teardown
    report is not counted: the test already has its outcome, and pytest reports the error itself)."""
    if report.when == "call":
        return "xfailed" if hasattr(report, "wasxfail") and report.skipped else report.outcome
    if report.when == "setup" and not report.passed:
        return "skipped" if report.skipped else "errors"
    return None


def pytest_configure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput"):  # the xdist controller, or pytest without workers
        config.pluginmanager.register(Progress(config), "evaluation-progress")
