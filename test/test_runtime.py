"""``python -m evaluation`` as the platform runs it, in a real process: stopped by SIGTERM / SIGINT,
under an RLIMIT_DATA memory limit (sagemaker-shim's), and what a run imports at start-up.

The slow and memory-hungry cases are test-only functions of runner_cases.py, put in place of a
challenge's ``score_case`` by test/patched_evaluation.py (which then runs ``python -m evaluation``).
"""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import DEMO_INPUT, REPO

PYTHON = sys.executable
RARE25 = ["--challenge", "rare25", "--input", str(DEMO_INPUT / "rare25")]
# a demo scored case by case, in cases a patched score_case can make slow or hungry (RARE25's frames are
# scored as columns, without a case task)
PER_CASE = "hecktor2025-task3"
CASES = ["--challenge", PER_CASE, "--input", str(DEMO_INPUT / PER_CASE)]


def _environment(**extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO), **extra}


def _patched(*patch: str, evaluation: list[str]) -> list[str]:
    return [PYTHON, str(REPO / "test" / "patched_evaluation.py"), *patch, "--", *evaluation]


def _running_in_session(session: int) -> list[str]:
    """The processes of ``session`` that still run (zombies, already dead, are not counted)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        fields = text[text.rindex(")") + 2 :].split()
        if int(fields[3]) == session and fields[0] != "Z":
            found.append(text[: text.rindex(")") + 1])
    return found


def _last_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


@pytest.mark.parametrize(
    ("signum", "to_group", "where"),
    [
        (signal.SIGTERM, True, "--pool"),  # the platform's time limit: SIGTERM to the process group
        (signal.SIGINT, True, "--pool"),  # Ctrl-C in a terminal
        (signal.SIGTERM, False, "--pool"),  # the main process alone: it must kill its workers
        (signal.SIGINT, False, "--in-process"),
    ],
)
def test_a_stop_signal_ends_the_run_at_once_with_one_line_and_no_file(tmp_path, signum, to_group, where):
    markers, output = tmp_path / "markers", tmp_path / "output"
    markers.mkdir()
    command = _patched("--score", "sleep_long", where, evaluation=[*CASES, "--output", str(output), "--workers", "2"])
    process = subprocess.Popen(
        command, cwd=REPO, env=_environment(RUNNER_CASES_MARKERS=str(markers)), start_new_session=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        cases_started = 2 if where == "--pool" else 1
        while len(list(markers.iterdir())) < cases_started and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(list(markers.iterdir())) == cases_started, "the slow cases never started"
        if to_group:
            os.killpg(process.pid, signum)
        else:
            os.kill(process.pid, signum)
        _, stderr = process.communicate(timeout=5)  # the platform's grace period before SIGKILL
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    name = signal.Signals(signum).name
    assert process.returncode == 128 + signum, stderr
    assert _last_line(stderr) == f"The evaluation was stopped ({name}) before it finished; no metrics were written."
    assert list(output.iterdir()) == []  # neither metrics.json nor a temporary file
    for _ in range(50):
        if not _running_in_session(process.pid):
            break
        time.sleep(0.1)
    assert _running_in_session(process.pid) == []


def test_a_stopped_batch_kills_its_workers_and_says_so_in_one_line(tmp_path):
    markers, submissions = tmp_path / "markers", tmp_path / "submissions"
    markers.mkdir()
    for name in ("team-a", "team-b"):
        shutil.copytree(DEMO_INPUT / PER_CASE, submissions / name)
    batch = ["--challenge", PER_CASE, "--submissions", str(submissions), "--output", str(tmp_path / "out"),
             "--workers", "2"]  # fmt: skip
    process = subprocess.Popen(
        _patched("--module", "evaluation.batch", "--score", "sleep_long", "--pool", evaluation=batch),
        cwd=REPO, env=_environment(RUNNER_CASES_MARKERS=str(markers)), start_new_session=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while len(list(markers.iterdir())) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        os.kill(process.pid, signal.SIGTERM)
        _, stderr = process.communicate(timeout=5)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == 128 + signal.SIGTERM, stderr
    assert _last_line(stderr) == "The batch was stopped (SIGTERM); finished submissions are kept."
    assert not list((tmp_path / "out").rglob("metrics.json"))
    for _ in range(50):
        if not _running_in_session(process.pid):
            break
        time.sleep(0.1)
    assert _running_in_session(process.pid) == []


def _limit_data(mebibytes: int):
    def apply() -> None:
        limit = mebibytes * 2**20
        resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))

    return apply


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        (["--score", "allocate_too_much", "--in-process"],
         r"Case [A-Z]+-\d{3}: the evaluation ran out of memory \(limit 1024 MiB per process\) "
         r"while scoring this case in the main process\."),
        (["--score", "allocate_too_much", "--pool"],
         r"Case [A-Z]+-\d{3}: the evaluation ran out of memory \(limit 1024 MiB per process\) "
         r"while scoring this case in a worker process\."),
        (["--aggregate", "allocate_too_much_in_aggregate"],
         r"The evaluation ran out of memory \(limit 1024 MiB per process\) in the main process while "
         r"aggregating the results of all 8 cases\."),
    ],
)  # fmt: skip
def test_out_of_memory_under_the_platforms_rlimit_names_the_case_and_the_limit(tmp_path, patch, message):
    output = tmp_path / "output"
    run = subprocess.run(
        _patched(*patch, evaluation=[*CASES, "--output", str(output), "--workers", "2"]),
        cwd=REPO, env=_environment(), preexec_fn=_limit_data(1024), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert run.returncode == 1, run.stderr
    assert re.fullmatch(message, _last_line(run.stderr)), run.stderr
    assert not (output / "metrics.json").exists()


def test_a_limit_too_small_to_load_the_libraries_is_refused_at_once_not_spun_on(tmp_path):
    """At 30 MiB OpenBLAS's start-up buffer does not fit and it would retry forever (seen here)."""
    output = tmp_path / "output"
    run = subprocess.run(
        [sys.executable, "-m", "evaluation", "--challenge", "hecktor2026", "--input", str(DEMO_INPUT / "hecktor2026"),
         "--output", str(output)],
        cwd=REPO, env=_environment(), preexec_fn=_limit_data(30), capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert run.returncode == 1
    assert _last_line(run.stderr) == (
        "The memory limit per process (30 MiB) is below the 128 MiB the evaluation needs to load its libraries: "
        "raise the phase's memory limit (see python -m evaluation.phase --limits)."
    )
    assert not (output / "metrics.json").exists()


def test_the_memory_message_says_when_no_limit_is_set():
    from evaluation.runner import out_of_memory

    soft, _ = resource.getrlimit(resource.RLIMIT_DATA)
    if soft != resource.RLIM_INFINITY:
        pytest.skip("this test process runs under a data limit")
    assert str(out_of_memory("c1", "while scoring this case in a worker process")) == (
        "Case c1: the evaluation ran out of memory (no limit set) while scoring this case in a worker process."
    )


HEAVY = ("SimpleITK", "sklearn", "scipy", "pandas", "surface_distance", "lifelines", "cc3d")


def _modules_after(code: str) -> list[str]:
    script = f"import sys\n{code}\nprint(sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
    run = subprocess.run([PYTHON, "-c", script], cwd=REPO, env=_environment(), capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout.strip().splitlines()[-1].replace("'", '"'))


def test_a_rare25_run_imports_only_what_its_declaration_needs_and_starts_no_pool(tmp_path):
    arguments = [*RARE25, "--output", str(tmp_path), "--set", "iterations=20"]
    run = _modules_after(
        f"from evaluation.cli import main\nassert main({arguments!r}) == 0\n"
        "import os, pathlib\n"  # a pool's forkserver would outlive it, as this process's child
        "children = [p for p in pathlib.Path('/proc').glob('[0-9]*/stat') if p.read_text().rsplit(')', 1)[1].split()[1]"
        " == str(os.getpid())]\n"
        "assert not children, 'a process pool was started'"
    )
    assert set(run) <= set(_modules_after("from evaluation.registry import get\nget('rare25')"))
    assert not set(run) & {"SimpleITK", "surface_distance", "lifelines", "cc3d"}
    assert json.loads((tmp_path / "metrics.json").read_text())["settings"]["iterations"] == 20


def test_help_still_lists_every_challenges_options_from_the_real_entry_point():
    run = subprocess.run([PYTHON, "-m", "evaluation", "--help"], cwd=REPO, env=_environment(), capture_output=True,
                         text=True)  # fmt: skip
    assert run.returncode == 0
    assert "hecktor2026:" in run.stdout and "ppv_at_recall = 'interp'" in run.stdout


def test_a_bad_worker_count_is_one_sentence_from_the_real_entry_point(tmp_path):
    run = subprocess.run(
        [PYTHON, "-m", "evaluation", *RARE25, "--output", str(tmp_path), "--workers", "two"],
        cwd=REPO, env=_environment(), capture_output=True, text=True,
    )  # fmt: skip
    assert run.returncode == 1
    assert run.stderr.strip().splitlines() == ["--workers must be a whole number of worker processes, got 'two'."]
