"""The invoke API server (evaluation/platform/invoke.py) over real HTTP, without Docker: started once, called
as sagemaker-shim calls it (GET /health until 200, then POST /invoke per job with /input staged anew and
/output emptied), it must give what the exec mode gives: the demo's expected metrics.json bytes, and for a
broken submission a failure whose last stderr line is the evaluation's own. The same server inside the image,
driven by the real shim, is test/test_sagemaker_shim.py's invoke scenarios; hostile and broken clients are
test/test_hostile.py's (issue 27).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import DEMO_INPUT, REPO

CHALLENGE = "rare25"
LIKELIHOODS = "stacked-neoplastic-lesion-likelihoods.json"


@dataclass
class Server:
    url: str
    input: Path
    output: Path
    stderr: Path

    def call(self, method: str, path: str) -> int:
        request = urllib.request.Request(self.url + path, method=method, data=b"" if method == "POST" else None)
        try:
            with urllib.request.urlopen(request, timeout=600) as response:
                return response.status
        except urllib.error.HTTPError as error:
            return error.code

    def stage(self, submission: Path) -> None:
        """What the shim does before each call: a fresh /input, an empty /output."""
        for folder in (self.input, self.output):
            shutil.rmtree(folder, ignore_errors=True)
        shutil.copytree(submission, self.input)
        self.output.mkdir()


def _last_line(text: str) -> str:
    return [line for line in text.splitlines() if line.strip()][-1]


def _broken(tmp_path: Path) -> Path:
    broken = tmp_path / "broken"
    shutil.copytree(DEMO_INPUT / CHALLENGE, broken)
    job = json.loads((broken / "predictions.json").read_text())[0]
    (broken / job["pk"] / "output" / LIKELIHOODS).write_text("[0.5, NaN]")
    return broken


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    paths = Server("", tmp_path / "input", tmp_path / "output", tmp_path / "server.err")
    stdout = tmp_path / "server.out"
    arguments = ["--challenge", CHALLENGE, "--input", str(paths.input), "--output", str(paths.output), "--workers", "2"]
    with stdout.open("w") as out, paths.stderr.open("w") as err:
        serve = [sys.executable, "-m", "evaluation.platform.invoke", "--host", "127.0.0.1", "--port", "0"]
        process = subprocess.Popen(
            [*serve, "--", *arguments], cwd=REPO, stdout=out, stderr=err, env={**os.environ, "PYTHONUNBUFFERED": "1"}
        )
    try:
        deadline = time.monotonic() + 60
        while "listening on" not in stdout.read_text() and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        first = stdout.read_text().splitlines()[:1]
        assert first and first[0].startswith("invoke server: listening on http://127.0.0.1:"), stdout.read_text()
        paths.url = first[0].rsplit(" ", 1)[1]
        yield paths
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_health_answers_200_unknown_routes_404_other_methods_405(server):
    assert server.call("GET", "/health") == 200
    assert server.call("GET", "/invoke") == 405
    assert server.call("POST", "/health") == 405
    assert server.call("GET", "/") == 404


def test_each_invocation_evaluates_the_staged_input_as_the_exec_mode_does(server, tmp_path):
    # job 1: the demo -> 201 and the exact bytes the exec mode writes
    server.stage(DEMO_INPUT / CHALLENGE)
    assert server.call("POST", "/invoke") == 201, server.stderr.read_text()
    expected = (REPO / "test" / "expected" / CHALLENGE / "metrics.json").read_bytes()
    assert (server.output / "metrics.json").read_bytes() == expected

    # job 2, same server: a broken submission -> a failure, no metrics.json, and the evaluation's own last line
    broken = _broken(tmp_path)
    server.stage(broken)
    assert server.call("POST", "/invoke") == 500
    assert not (server.output / "metrics.json").exists()
    direct = subprocess.run(
        [sys.executable, "-m", "evaluation", "--challenge", CHALLENGE, "--input", str(server.input),
         "--output", str(tmp_path / "direct"), "--workers", "2"],
        cwd=REPO, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert direct.returncode == 1
    assert _last_line(server.stderr.read_text()) == _last_line(direct.stderr)
    assert "not a finite number" in _last_line(direct.stderr) and "Traceback" not in server.stderr.read_text()

    # job 3: the server still serves
    server.stage(DEMO_INPUT / CHALLENGE)
    assert server.call("POST", "/invoke") == 201
    assert (server.output / "metrics.json").read_bytes() == expected


def test_a_port_in_use_is_one_line_and_exit_1(server):
    port = server.url.rsplit(":", 1)[1]
    serve = [sys.executable, "-m", "evaluation.platform.invoke", "--host", "127.0.0.1", "--port", port]
    run = subprocess.run(serve, cwd=REPO, capture_output=True, text=True, timeout=60)
    assert run.returncode == 1
    expected = f"The invoke server cannot listen on 127.0.0.1:{port}: Address already in use."
    assert run.stderr.strip().splitlines() == [expected]
