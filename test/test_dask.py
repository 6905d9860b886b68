"""The Dask execution seam: same bytes as the local pool, lost workers retried, batch resumable."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import runner_cases
from conftest import DEMO_INPUT, REPO

from evaluation.batch import main as batch_main
from evaluation.contract import CaseTask
from evaluation.dask_runner import DaskCluster
from evaluation.errors import EvaluationError
from evaluation.pipeline import evaluate
from evaluation.runner import LocalPool

distributed = pytest.importorskip("distributed")

# a demo scored case by case (RARE25's frames are scored as columns: no case task goes to Dask)
PER_CASE = "hecktor2025-task3"


@pytest.fixture(scope="module")
def cluster():
    with (
        # ":0": the scheduler's HTTP routes on any free port (None still means 8787, which another cluster on a
        # shared machine may hold: then a warning and an unclosed probe socket)
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
        ) as local_cluster,
        distributed.Client(local_cluster) as client,
    ):
        yield local_cluster, client


def test_rare25_same_bytes_on_dask_and_local_pool(tmp_path, cluster):
    _, client = cluster
    evaluate("rare25", DEMO_INPUT / "rare25", tmp_path / "local", executor=LocalPool(2))
    evaluate("rare25", DEMO_INPUT / "rare25", tmp_path / "dask", executor=DaskCluster(client))
    assert (tmp_path / "local/metrics.json").read_bytes() == (tmp_path / "dask/metrics.json").read_bytes()


def test_hecktor_same_bytes_on_dask_and_local_pool(tmp_path, cluster):
    _, client = cluster
    evaluate("hecktor2026", DEMO_INPUT / "hecktor2026", tmp_path / "local", executor=LocalPool(2))
    evaluate("hecktor2026", DEMO_INPUT / "hecktor2026", tmp_path / "dask", executor=DaskCluster(client))
    assert (tmp_path / "local/metrics.json").read_bytes() == (tmp_path / "dask/metrics.json").read_bytes()


def test_scheduler_address_from_the_command_line(tmp_path, cluster, evaluate_cli):
    local_cluster, _ = cluster
    run = evaluate_cli(PER_CASE, DEMO_INPUT / PER_CASE, "--scheduler", local_cluster.scheduler_address)
    assert run.exit_code == 0, run.stderr
    assert "cases done on Dask" in run.stdout


def test_failing_case_still_fails_the_run_naming_it(cluster):
    _, client = cluster
    tasks = [CaseTask("case-1", 1), CaseTask("case-0", 0)]
    with pytest.raises(EvaluationError, match=r"^Case case-0: the likelihoods are not a list\.$"):
        DaskCluster(client, 60).map(runner_cases.reject_payload_zero, tasks, {}, print)


def test_cheap_cases_travel_in_chunks_in_task_order_with_one_progress_line_a_second(cluster):
    _, client = cluster
    tasks = [CaseTask(f"case-{i}", i) for i in range(40)]
    lines: list[str] = []
    results = DaskCluster(client, 60).map(runner_cases.square, tasks, {}, lines.append, in_process=True)
    assert list(results.items()) == [(f"case-{i}", i * i) for i in range(40)]
    assert len(lines) < 5 and lines[-1].startswith("40/40 cases done on Dask")


def test_a_case_that_crashes_in_a_chunk_is_named_with_its_traceback_logged(cluster):
    _, client = cluster
    tasks = [CaseTask(f"case-{i}", i) for i in (3, 1, 0, 2)]
    logged: list[str] = []
    with pytest.raises(EvaluationError, match=r"^internal error \(ZeroDivisionError\) while evaluating case case-0\.$"):
        DaskCluster(client, 60).map(runner_cases.crash_on_payload_zero, tasks, {}, logged.append, in_process=True)
    assert any("Traceback" in line and "ZeroDivisionError" in line for line in logged)


def test_every_worker_imports_the_scoring_module_once_when_it_joins(cluster):
    _, client = cluster
    DaskCluster(client, 60).map(runner_cases.square, [CaseTask("case-1", 1)], {}, print)
    assert "evaluation-import-runner_cases" in client.run_on_scheduler(
        lambda dask_scheduler: dask_scheduler.worker_plugins
    )
    assert set(client.run(lambda: "runner_cases" in sys.modules).values()) == {True}


def test_killed_worker_does_not_change_the_result(cluster):
    _, client = cluster
    tasks = [CaseTask(f"case-{i}", i) for i in range(12)]
    pids = list(client.run(os.getpid).values())

    def kill_one_worker():
        time.sleep(0.5)
        os.kill(pids[0], signal.SIGKILL)

    killer = threading.Thread(target=kill_one_worker)
    killer.start()
    results = DaskCluster(client, 120).map(runner_cases.slow_square, tasks, {"sleep": 0.3}, print)
    killer.join()
    assert results == {f"case-{i}": i * i for i in range(12)}
    client.wait_for_workers(2, timeout=60)


def test_batch_is_resumable_and_records_failures(tmp_path, cluster, capsys):
    local_cluster, _ = cluster
    submissions = tmp_path / "submissions"
    for name in ("team-a", "team-b", "team-c"):
        shutil.copytree(DEMO_INPUT / "rare25", submissions / name)
    broken = json.loads((submissions / "team-c" / "predictions.json").read_text())
    (submissions / "team-c" / broken[0]["pk"] / "output" / "stacked-neoplastic-lesion-likelihoods.json").write_text(
        "[0.5]"
    )
    args = ["--challenge", "rare25", "--submissions", str(submissions), "--output", str(tmp_path / "out"),
            "--set", "iterations=50"]  # fmt: skip
    assert batch_main([*args, "--scheduler", local_cluster.scheduler_address]) == 1
    assert "1 failed" in capsys.readouterr().out
    assert "has 181 frames but 1 likelihoods" in (tmp_path / "out/team-c/error.txt").read_text()
    assert not (tmp_path / "out/team-c/metrics.json").exists()
    a = (tmp_path / "out/team-a/metrics.json").read_bytes()
    assert a == (tmp_path / "out/team-b/metrics.json").read_bytes()
    shutil.copytree(DEMO_INPUT / "rare25", submissions / "team-c", dirs_exist_ok=True)
    assert batch_main([*args, "--workers", "1"]) == 0
    assert "1 evaluated, 2 skipped" in capsys.readouterr().out
    assert (tmp_path / "out/team-c/metrics.json").read_bytes() == a
    assert not (tmp_path / "out/team-c/error.txt").exists()


@pytest.mark.parametrize("scheme", ["test-then-rank", "rank-then-aggregate", "aggregate-then-rank"])
def test_ranking_bootstrap_on_dask_equals_local(tmp_path, cluster, scheme):
    import numpy as np

    from evaluation.ranking.cli import main as ranking_main

    rng = np.random.default_rng(4)
    rows = ["algorithm,case,value"] + [
        f"A{a},c{c},{rng.normal(0.6 + 0.02 * a, 0.1):.4f}" for a in range(6) for c in range(40)
    ]
    (tmp_path / "data.csv").write_text("\n".join(rows) + "\n")
    local_cluster, _ = cluster
    args = ["--data", str(tmp_path / "data.csv"), "--scheme", scheme, "--bootstrap", "250", "--seed", "3"]
    assert ranking_main([*args, "--output", str(tmp_path / "local")]) == 0
    spread_args = ["--output", str(tmp_path / "dask"), "--scheduler", local_cluster.scheduler_address]
    assert ranking_main([*args, *spread_args]) == 0
    local = json.loads((tmp_path / "local/ranking.json").read_text())
    spread = json.loads((tmp_path / "dask/ranking.json").read_text())
    assert spread["tasks"] == local["tasks"]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def scheduler_address(tmp_path_factory):
    """A real ``dask scheduler`` and two ``dask worker`` processes, as the README tells organizers to
    start them; workers import ``evaluation`` from this checkout (PYTHONPATH)."""
    dask = Path(sys.executable).parent / "dask"
    address = f"tcp://127.0.0.1:{_free_port()}"
    scratch = tmp_path_factory.mktemp("dask-workers")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    commands = [[str(dask), "scheduler", "--host", "127.0.0.1", "--port", address.rsplit(":", 1)[1], "--no-dashboard"]]
    commands += [
        [str(dask), "worker", address, "--nthreads", "1", "--no-dashboard", "--local-directory", str(scratch)]
    ] * 2
    processes = []
    try:
        for command in commands:
            processes.append(subprocess.Popen(command, cwd=REPO, env=env, start_new_session=True,
                                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))  # fmt: skip
            time.sleep(0.5)  # the scheduler first
        with distributed.Client(address, timeout="60s", set_as_default=False) as client:
            client.wait_for_workers(2, timeout=120)
        yield address
    finally:
        for process in reversed(processes):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
        for process in reversed(processes):
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


def _python(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)},
                          capture_output=True, text=True, timeout=600)  # fmt: skip


@pytest.mark.parametrize("challenge", [PER_CASE, "hecktor2026"])
def test_the_command_line_by_address_gives_the_local_pools_bytes(tmp_path, scheduler_address, challenge):
    common = ["-m", "evaluation", "--challenge", challenge, "--input", str(DEMO_INPUT / challenge)]
    local = _python(*common, "--output", str(tmp_path / "local"), "--workers", "2")
    assert local.returncode == 0, local.stderr
    remote = _python(*common, "--output", str(tmp_path / "dask"), "--scheduler", scheduler_address)
    assert remote.returncode == 0, remote.stderr
    assert "cases done on Dask" in remote.stdout
    assert (tmp_path / "dask/metrics.json").read_bytes() == (tmp_path / "local/metrics.json").read_bytes()


def test_the_batch_by_address_gives_the_local_pools_bytes(tmp_path, scheduler_address):
    for name in ("team-a", "team-b"):
        shutil.copytree(DEMO_INPUT / PER_CASE, tmp_path / "submissions" / name)
    local = _python("-m", "evaluation", "--challenge", PER_CASE, "--input", str(DEMO_INPUT / PER_CASE),
                    "--output", str(tmp_path / "local"))  # fmt: skip
    assert local.returncode == 0, local.stderr
    batch = _python("-m", "evaluation.batch", "--challenge", PER_CASE, "--submissions", str(tmp_path / "submissions"),
                    "--output", str(tmp_path / "out"), "--scheduler", scheduler_address)  # fmt: skip
    assert batch.returncode == 0, batch.stderr
    assert "2 evaluated, 0 skipped" in batch.stdout and "cases done on Dask" in batch.stdout
    for name in ("team-a", "team-b"):
        assert (tmp_path / "out" / name / "metrics.json").read_bytes() == (tmp_path / "local/metrics.json").read_bytes()
