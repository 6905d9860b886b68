"""The real image, built once and run as grand-challenge.org runs it (./test-run.sh: no network,
/input read-only, --memory=8g, no capabilities, a scratch /tmp, the ground truth mounted at
/opt/ml/input/data/ground_truth).

Needs a Docker engine: scripts/docker-engine.sh installs and starts one and builds the local
python:3.11-slim stand-in (../shared/spec/docker-here.md). Where that cannot be done these tests skip
with the reason, unless EVALUATION_REQUIRE_DOCKER=1 (CI), where it is a failure. A container start
costs about a second on overlay2 but tens of seconds on the vfs fallback, so the tests share runs where they can.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest
from conftest import DEMO_INPUT, REPO

pytestmark = [pytest.mark.docker, pytest.mark.slow]
CHALLENGE = "rare25"
TAG = f"evaluation-{CHALLENGE}"
LIKELIHOODS = "stacked-neoplastic-lesion-likelihoods.json"


def _run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args, cwd=REPO, capture_output=True, text=True, env={**os.environ, **(env or {})}, timeout=1200
    )


def _why_no_engine() -> str | None:
    """None when a Docker engine answers and the base image exists, else the reason."""
    if shutil.which("docker") is None and os.geteuid() != 0:
        return "no docker client on PATH (and not root, so scripts/docker-engine.sh cannot install one)"
    engine = _run("bash", "scripts/docker-engine.sh")
    if engine.returncode == 0:
        return None
    return f"scripts/docker-engine.sh could not provide an engine: {engine.stderr.strip()[-500:]}"


def built_image(challenge: str) -> str:
    """``challenge``'s image built by ./build.sh; without an engine the test skips, or fails when
    EVALUATION_REQUIRE_DOCKER=1 (CI)."""
    reason = _why_no_engine()
    if reason:
        if os.environ.get("EVALUATION_REQUIRE_DOCKER") == "1":
            pytest.fail(f"EVALUATION_REQUIRE_DOCKER=1 but {reason}")
        pytest.skip(reason)
    build = _run("./build.sh", challenge)
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    return f"evaluation-{challenge}"


@pytest.fixture(scope="module")
def image() -> str:
    """The challenge's image, built once per test module."""
    return built_image(CHALLENGE)


@pytest.fixture(scope="module")
def demo_runs(image: str, tmp_path_factory: pytest.TempPathFactory) -> list[tuple[Path, subprocess.CompletedProcess]]:
    """Two test-runs of the demo submission (with the default expected metrics compared by test-run.sh)."""
    runs = []
    for name in ("first", "second"):
        output = tmp_path_factory.mktemp(name)
        runs.append((output, _run("./test-run.sh", CHALLENGE, env={"OUTPUT_DIR": str(output)})))
    return runs


def test_demo_submission_gives_the_expected_metrics(demo_runs):
    output, run = demo_runs[0]
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "agrees with" in run.stdout
    assert json.loads((output / "metrics.json").read_text())["settings"]["challenge"] == CHALLENGE


def test_two_runs_write_identical_bytes(demo_runs):
    (first, run_1), (second, run_2) = demo_runs
    assert run_1.returncode == 0 and run_2.returncode == 0, run_2.stderr[-3000:]
    assert (first / "metrics.json").read_bytes() == (second / "metrics.json").read_bytes()


def test_image_runs_as_the_non_root_user_with_the_challenge_baked_in(image, demo_runs):
    config = json.loads(_run("docker", "image", "inspect", image, "--format", "{{json .Config}}").stdout)
    assert config["User"] == "user"
    assert f"EVALUATION_CHALLENGE={CHALLENGE}" in config["Env"] and "PYTHONUNBUFFERED=1" in config["Env"]
    # the file the container wrote is owned by the uid it ran as
    output, _ = demo_runs[0]
    assert (output / "metrics.json").stat().st_uid != 0


def _pins(name: str) -> dict[str, str]:
    """``{distribution: version}`` of the pinned lines of one requirements file (not the files it includes)."""
    lines = (REPO / name).read_text().splitlines()
    pins = (line.split("#")[0].strip() for line in lines if line and not line.startswith(("#", "-r")))
    return {pin.split("==")[0].lower().replace("_", "-"): pin.split("==")[1] for pin in pins}


def _installed(image: str) -> dict[str, str]:
    script = "import json, importlib.metadata as m; print(json.dumps({d.name: d.version for d in m.distributions()}))"
    run = _run("docker", "run", "--rm", "--network", "none", "--entrypoint", "python", image, "-c", script)
    assert run.returncode == 0, run.stderr
    return {name.lower().replace("_", "-"): version for name, version in json.loads(run.stdout).items()}


def test_image_holds_only_the_runtime_requirements(image):
    """The image installs requirements.txt and nothing else: no test oracle (lifelines, the official
    packages), no ranking-report matplotlib, no organizer tool, not even pip (the build checks the set is
    consistent with the base image's pip); and RARE25 reads no image, so not the medical-image packages of
    requirements-images.txt either (SimpleITK alone is 264 MB)."""
    assert _installed(image) == _pins("requirements.txt")


def test_a_challenge_with_image_outputs_gets_the_medical_image_packages(tmp_path):
    """kits-example scores label images: its image holds requirements-images.txt as well, and its demo's
    metrics.json there equals the expected file (./test-run.sh compares them)."""
    image = built_image("kits-example")
    assert _installed(image) == _pins("requirements.txt") | _pins("requirements-images.txt")
    run = _run("./test-run.sh", "kits-example", env={"OUTPUT_DIR": str(tmp_path)})
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert json.loads((tmp_path / "metrics.json").read_text())["settings"]["challenge"] == "kits-example"


def test_broken_submission_fails_naming_the_stack(image, tmp_path):
    broken = tmp_path / "input"
    shutil.copytree(DEMO_INPUT / CHALLENGE, broken)
    job = json.loads((broken / "predictions.json").read_text())[0]
    stack = job["inputs"][0]["image"]["name"]
    (broken / job["pk"] / "output" / LIKELIHOODS).write_text("[0.5, NaN]")
    output = tmp_path / "output"
    run = _run("./test-run.sh", CHALLENGE, str(broken), env={"OUTPUT_DIR": str(output)})
    assert run.returncode != 0
    assert not (output / "metrics.json").exists()
    last = [line for line in run.stderr.splitlines() if line.strip()][-1]
    assert stack in last and "Likelihood 1 of stack" in last and "not a finite number" in last
    assert "Traceback" not in run.stderr


def test_export_writes_the_two_upload_files(image):
    refused = _run("./export.sh", CHALLENGE, env={"EXPORT_GZIP_LEVEL": "11"})
    assert refused.returncode == 2 and "EXPORT_GZIP_LEVEL must be a whole number from 1 to 9" in refused.stderr
    export = _run("./export.sh", CHALLENGE)  # gzip -1 (or pigz), the default
    assert export.returncode == 0, export.stderr[-3000:]
    image_file, ground_truth = (REPO / line for line in export.stdout.split())
    try:
        assert image_file.name.startswith(f"{TAG}_") and image_file.name.endswith(".tar.gz")
        with gzip.open(image_file) as stream:
            assert stream.read(512)  # a gzip stream (docker save output)
        with tarfile.open(ground_truth) as archive:
            names = sorted(archive.getnames())
        folder = REPO / "ground-truth" / CHALLENGE
        bundled = sorted(f"./{path.relative_to(folder)}" for path in folder.rglob("*"))
        assert names == [".", *bundled]  # unpacks at the top level of /opt/ml/input/data/ground_truth
    finally:
        image_file.unlink(missing_ok=True)
