"""The declared example challenge in the real image: ./build.sh and ./test-run.sh take a declared
challenge (evaluation/declarations/kits-example.toml) exactly as a built-in one, the container gives
the expected bytes, and a broken submission fails with the case named on the last stderr line.

Skips without a Docker engine unless EVALUATION_REQUIRE_DOCKER=1 (CI), like test_docker.py.
"""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import DEMO_INPUT, REPO
from test_docker import _run, built_image

pytestmark = [pytest.mark.docker, pytest.mark.slow]
CHALLENGE = "kits-example"


@pytest.fixture(scope="module")
def image() -> str:
    return built_image(CHALLENGE)


def test_declared_demo_gives_the_expected_bytes(image, tmp_path):
    run = _run("./test-run.sh", CHALLENGE, env={"OUTPUT_DIR": str(tmp_path)})
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert (tmp_path / "metrics.json").read_bytes() == (
        REPO / "test" / "expected" / CHALLENGE / "metrics.json"
    ).read_bytes()


def test_declared_broken_submission_names_the_case(image, tmp_path):
    broken = tmp_path / "input"
    shutil.copytree(DEMO_INPUT / CHALLENGE, broken)
    job = next(j for j in json.loads((broken / "predictions.json").read_text()) if len(j["outputs"]) == 2)
    case = job["inputs"][0]["image"]["name"].removesuffix("_0000.mha")
    (broken / job["pk"] / "output" / "malignancy-likelihood.json").write_text("1.5")
    run = _run("./test-run.sh", CHALLENGE, str(broken), env={"OUTPUT_DIR": str(tmp_path / "output")})
    assert run.returncode != 0 and not (tmp_path / "output" / "metrics.json").exists()
    last = [line for line in run.stderr.splitlines() if line.strip()][-1]
    assert last == f"The output 'malignancy-likelihood' of {case} is 1.5, outside [0, 1]."
