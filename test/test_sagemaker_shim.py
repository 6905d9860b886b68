"""The image through the platform's own job runner: ``./test-run.sh --shim`` runs the real sagemaker-shim
(PyPI, pinned, built into the one-file binary the platform puts at /sagemaker-shim) in ``invoke`` mode
against a moto S3 on loopback, with the inputs staged as grand-challenge.org stages an evaluation
(scripts/sagemaker-shim/run.py says how, from which sources). Only what the platform reads back is asserted:
inference_result.json's return code and last stderr line, the shim's structured log (what the participant is
shown), and the uploaded files.

One shimmed image serves every challenge: evaluation-kits-example has every challenge's code and every package
(a challenge with image outputs), so each run sets EVALUATION_CHALLENGE in the container's environment (the
platform passes a job's environment the same way; only GRAND_CHALLENGE_* variables are stripped); this saves a
build per challenge. The invoke API (grand-challenge.org's newer method, named by the image label
org.grand-challenge.api-method) runs the same way: evaluation-kits-example-invoke is made from the image with
Dockerfile.invoke, run.py reads the
label as the platform does, and the shim starts the image's server once and calls POST /invoke; the demo and
the broken submission must give what the exec mode gives.

The runs go three at a time. Needs the Docker engine (scripts/docker-engine.sh) and Python 3.12 for the
shim (scripts/sagemaker-shim/setup.sh); skips with the reason otherwise, unless EVALUATION_REQUIRE_DOCKER=1.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import DEMO_INPUT, REPO

from evaluation.registry import names

# every scenario runs in the module fixture: a container start each (about a second on overlay2, tens on vfs)
pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.timeout(2400)]
# kits-example has image outputs, so its image holds every package (requirements-images.txt too) and every
# challenge's demo runs in it (rare25's own image, without them, is tested by test_docker.py)
IMAGE = "evaluation-kits-example"
INVOKE_IMAGE = f"{IMAGE}-invoke"
DEMOS = [name for name in names() if (REPO / "test" / "expected" / name / "metrics.json").is_file()]
# What the platform's runner does is the same for every challenge but for the files it stages: one demo of
# each kind of submission goes through it (a run costs about 11 s of CPU, most of it the shim's and the
# image's start-up): JSON sockets (rare25), images with JSON (hecktor2026), a prediction CSV (isic2019),
# images only (picai2022's heat maps) and a declared challenge (kits-example). Every demo's numbers are
# checked in-process by test/test_expected.py, and test_every_kind_of_submission_goes_through_the_shim checks
# that each demo's kinds of files are those of a demo listed here.
THROUGH_THE_SHIM = ["rare25", "hecktor2026", "isic2019", "picai2022", "kits-example"]
LIKELIHOODS = "stacked-neoplastic-lesion-likelihoods.json"
# Small enough that the RARE25 demo runs out of memory, large enough that the shim itself (Python 3.12,
# aioboto3) and the evaluation's Python start.
OVER_MEMORY_MB = 250


@dataclass
class ShimRun:
    """One ./test-run.sh --shim run and what the platform would read back."""

    exit_code: int
    stdout: str
    stderr: str
    output: Path

    @property
    def summary(self) -> dict:
        return json.loads((self.output / "sagemaker-shim.json").read_text())

    @property
    def log(self) -> str:
        return (self.output / "sagemaker-shim.log").read_text()

    def explain(self) -> str:
        return f"exit {self.exit_code}\n{self.stdout[-2000:]}\n{self.stderr[-2000:]}"


def _run(*args: str, env: dict[str, str] | None = None, timeout: float = 1800) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args, cwd=REPO, capture_output=True, text=True, env={**os.environ, **(env or {})}, timeout=timeout
    )


def _why_not_ready() -> str | None:
    """None when the engine, the base image, the shim venv and binary can be had; else the reason."""
    if shutil.which("docker") is None and os.geteuid() != 0:
        return "no docker client on PATH (and not root, so scripts/docker-engine.sh cannot install one)"
    engine = _run("bash", "scripts/docker-engine.sh")
    if engine.returncode != 0:
        return f"scripts/docker-engine.sh could not provide an engine: {engine.stderr.strip()[-500:]}"
    setup = _run("bash", "scripts/sagemaker-shim/setup.sh")
    if setup.returncode != 0:
        return f"scripts/sagemaker-shim/setup.sh could not make the shim: {setup.stderr.strip()[-500:]}"
    return None


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, ShimRun]:
    """Every scenario, run once: each demo, a broken RARE25 submission, RARE25 over its memory limit."""
    reason = _why_not_ready()
    if reason:
        if os.environ.get("EVALUATION_REQUIRE_DOCKER") == "1":
            pytest.fail(f"EVALUATION_REQUIRE_DOCKER=1 but {reason}")
        pytest.skip(reason)
    build = _run("./build.sh", "kits-example")
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    empty_context = tmp_path_factory.mktemp("invoke-context")
    build = _run("docker", "build", "--platform=linux/amd64", "--build-arg", f"EVALUATION_IMAGE={IMAGE}",
                 "--tag", INVOKE_IMAGE, "--file", str(REPO / "Dockerfile.invoke"), str(empty_context))  # fmt: skip
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]

    broken = tmp_path_factory.mktemp("broken-input")
    shutil.copytree(DEMO_INPUT / "rare25", broken, dirs_exist_ok=True)
    job = json.loads((broken / "predictions.json").read_text())[0]
    (broken / job["pk"] / "output" / LIKELIHOODS).write_text("[0.5, NaN]")

    scenarios = {name: (name, [], {}) for name in THROUGH_THE_SHIM}
    scenarios["broken"] = ("rare25", [str(broken)], {})
    scenarios["over-memory"] = ("rare25", [], {"SHIM_MAX_MEMORY_MB": str(OVER_MEMORY_MB)})
    scenarios["invoke"] = ("rare25", [], {"EVALUATION_IMAGE": INVOKE_IMAGE})
    scenarios["invoke-broken"] = ("rare25", [str(broken)], {"EVALUATION_IMAGE": INVOKE_IMAGE})

    def one(item: tuple[str, tuple[str, list[str], dict[str, str]]]) -> tuple[str, ShimRun]:
        key, (challenge, arguments, env) = item
        output = tmp_path_factory.mktemp(key)
        run = _run(
            "./test-run.sh", "--shim", challenge, *arguments,
            env={"EVALUATION_IMAGE": IMAGE, "OUTPUT_DIR": str(output), **env},
        )  # fmt: skip
        return key, ShimRun(run.returncode, run.stdout, run.stderr, output)

    # the first run builds the shimmed image; the others then find it
    first = one(next(iter(scenarios.items())))
    with ThreadPoolExecutor(max_workers=3) as pool:
        return dict([first, *pool.map(one, list(scenarios.items())[1:])])


def test_every_kind_of_submission_goes_through_the_shim():
    assert set(THROUGH_THE_SHIM) <= set(DEMOS)
    kinds = {name: _kinds(REPO / "test" / "input" / name) for name in DEMOS}
    assert {frozenset(kinds[name]) for name in DEMOS} <= {frozenset(kinds[name]) for name in THROUGH_THE_SHIM}


def _kinds(folder: Path) -> set[str]:
    """The file kinds of a demo's input folder (predictions.json aside): ``json``, ``mha``, ``csv``."""
    return {path.suffix for path in folder.rglob("*") if path.is_file() and path.name != "predictions.json"}


@pytest.mark.parametrize("challenge", THROUGH_THE_SHIM)
def test_demo_gives_the_expected_metrics_through_the_shim(runs, challenge):
    run = runs[challenge]
    assert run.exit_code == 0, run.explain()
    assert "agrees with" in run.stdout  # test-run.sh ran python -m evaluation.compare on the downloaded file
    summary = run.summary
    assert summary["api_method"] == "exec"  # the image has no org.grand-challenge.api-method label
    assert summary["runtime_setup_return_code"] == 0 and summary["return_code"] == 0
    assert summary["pk_matches"] and summary["sagemaker_shim_version"] == "0.8.3"
    assert summary["uploaded"] == ["metrics.json"]  # what the platform parses as the evaluation's output
    metrics = json.loads((run.output / "metrics.json").read_text())
    assert metrics["settings"]["challenge"] == challenge


def test_the_shim_ran_the_evaluation_as_the_platform_does(runs):
    log = runs["rare25"].log
    assert "Setting memory limit to 7168 MB" in log  # GRAND_CHALLENGE_COMPONENT_MAX_MEMORY_MB as RLIMIT_DATA
    assert "Setting up linked input" in log  # /input a symlink into /opt/ml/input/data
    assert "Looking up user='user'" in log  # the image's USER, not root
    assert "Downloading ground truth" in log  # the phase's tarball to /opt/ml/input/data/ground_truth
    assert '"python", "-m", "evaluation"' in log or "'python', '-m', 'evaluation'" in log


def test_broken_submission_fails_with_its_message_and_uploads_nothing(runs):
    run = runs["broken"]
    summary = run.summary
    assert run.exit_code == 1 and summary["return_code"] == 1, run.explain()
    assert summary["uploaded"] == []
    assert not (run.output / "metrics.json").exists()
    stack = json.loads((DEMO_INPUT / "rare25" / "predictions.json").read_text())[0]["inputs"][0]["image"]["name"]
    last = summary["last_stderr_line"]
    assert last == summary["shown_to_participant"]  # inference_result.json and the logs agree
    assert stack in last and "Likelihood 1 of stack" in last and "not a finite number" in last
    assert "Traceback" not in run.stderr


def test_over_memory_fails_with_a_sentence_about_memory_and_uploads_nothing(runs):
    run = runs["over-memory"]
    summary = run.summary
    assert summary["return_code"] not in (0, None), run.explain()
    assert summary["uploaded"] == []
    last = summary["shown_to_participant"]
    assert last == summary["last_stderr_line"]
    assert "memory" in last.lower() and last.endswith(".") and " " in last, last  # a sentence, not "MemoryError"
    assert "Traceback" not in last
    assert f"Setting memory limit to {OVER_MEMORY_MB} MB" in run.log


def test_invoke_mode_starts_the_server_once_and_gives_the_expected_metrics(runs):
    run = runs["invoke"]
    assert run.exit_code == 0, run.explain()
    assert "agrees with" in run.stdout
    summary = run.summary
    assert summary["api_method"] == "invoke"  # the label, read as the platform reads it
    assert summary["runtime_setup_return_code"] == 0 and summary["return_code"] == 0 and summary["pk_matches"]
    assert summary["uploaded"] == ["metrics.json"]
    assert json.loads((run.output / "metrics.json").read_text())["settings"]["challenge"] == "rare25"
    log = run.log
    assert "Setting up user process for invoke mode" in log and "User process is healthy" in log
    assert "evaluation.platform.invoke" in log and "invoke server: listening on" in log  # the image's entrypoint
    assert "Calling invoke endpoint" in log
    assert "Setting memory limit to 7168 MB" in log and "Looking up user='user'" in log


def test_invoke_mode_fails_a_broken_submission_with_the_exec_modes_message(runs):
    run, exec_run = runs["invoke-broken"], runs["broken"]
    summary = run.summary
    assert run.exit_code == 1 and summary["return_code"] == 1, run.explain()
    assert summary["uploaded"] == [] and not (run.output / "metrics.json").exists()
    assert "Invoke endpoint returned status 500" in run.log
    assert summary["last_stderr_line"] == summary["shown_to_participant"]
    assert summary["last_stderr_line"] == exec_run.summary["last_stderr_line"]  # the evaluation's own line
    assert "Traceback" not in run.stderr
