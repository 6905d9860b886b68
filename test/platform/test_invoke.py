"""The invoke API server (evaluation/platform/invoke.py) over real HTTP, without Docker: started once, called
as sagemaker-shim calls it (GET /health until 200, then POST /invoke per job with /input staged anew and
/output emptied), it must give what the exec mode gives: the demo's expected metrics.json bytes, and for a
broken submission a failure whose last stderr line is the evaluation's own. The same server inside the image,
driven by the real shim, is test/test_sagemaker_shim.py's invoke scenarios.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
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


# Hostile and broken clients (issue 27), against a server in this process whose "evaluation" only appends a
# line to a file: every request gets a status, and only a whole POST /invoke starts one. Real sockets on
# 127.0.0.1; every wait is bounded (the server's request time 0.5 s here, each client's 10 s).


@pytest.fixture
def local(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    from evaluation.platform.invoke import InvokeServer

    runs = tmp_path / "runs"
    command = [sys.executable, "-c", f"open({str(runs)!r}, 'a').write('run\\n')"]
    server = InvokeServer(("127.0.0.1", 0), command, request_seconds=0.5)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], runs
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def _exchange(port: int, pieces: list[bytes], pause: float = 0.0, close: bool = False) -> int | None:
    """Sends ``pieces`` (``pause`` s apart), half-closes when ``close``; the status answered (None: none)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        for piece in pieces:
            try:
                connection.sendall(piece)
            except (BrokenPipeError, ConnectionResetError):
                break  # the server gave up on it: read its answer
            time.sleep(pause)
        if close:
            connection.shutdown(socket.SHUT_WR)
        answer = b""
        with contextlib.suppress(ConnectionResetError):
            while chunk := connection.recv(65536):
                answer += chunk
    match = re.match(rb"HTTP/1\.[01] (\d{3}) ", answer)
    return int(match.group(1)) if match else None


INVOKE = b"POST /invoke HTTP/1.1\r\nHost: localhost\r\n"
HOSTILE_REQUESTS = [
    # (name, pieces, half-close, expected status)
    ("huge Content-Length", [INVOKE + b"Content-Length: " + b"9" * 30 + b"\r\n\r\n"], False, 413),
    ("Content-Length over the bound", [INVOKE + b"Content-Length: 1000000\r\n\r\n"], False, 413),
    ("overflowing Content-Length", [INVOKE + b"Content-Length: 99999999999999999999999\r\n\r\n"], False, 413),
    ("negative Content-Length", [INVOKE + b"Content-Length: -1\r\n\r\n"], False, 400),
    ("Arabic-Indic Content-Length", [INVOKE + "Content-Length: \u0661\r\n\r\n".encode()], False, 400),
    ("two Content-Lengths", [INVOKE + b"Content-Length: 0\r\nContent-Length: 1\r\n\r\nx"], False, 400),
    ("chunked body", [INVOKE + b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n"], False, 400),
    ("body cut short", [INVOKE + b"Content-Length: 10\r\n\r\nabc"], True, 400),
    ("body never finished", [INVOKE + b"Content-Length: 10\r\n\r\nabc"], False, 408),
    ("headers cut short", [INVOKE], True, 400),
    ("headers never finished", [INVOKE], False, 408),
    ("request line cut short", [b"POST /inv"], True, 400),
    ("nothing sent", [], False, 408),
    ("garbage request line", [b"\x00\x1b[31m hello\r\n\r\n"], False, 400),
    ("unsupported version", [b"POST /invoke HTTP/2.0\r\n\r\n"], False, 505),
    ("another method", [b"PUT /invoke HTTP/1.0\r\n\r\n"], False, 405),
    ("another path and method", [b"DELETE /admin HTTP/1.0\r\n\r\n"], False, 404),
    ("a slow client", [b"P", b"O", b"S", b"T", b" ", b"/", b"i", b"n", b"v", b"o", b"k", b"e"], False, 408),
]


@pytest.mark.parametrize(("pieces", "close", "status"), [r[1:] for r in HOSTILE_REQUESTS],
                         ids=[r[0] for r in HOSTILE_REQUESTS])  # fmt: skip
def test_a_hostile_request_gets_a_status_and_starts_nothing(local, pieces, close, status):
    port, runs = local
    pause = 0.1 if len(pieces) > 1 else 0.0
    assert _exchange(port, pieces, pause, close) == status
    assert _exchange(port, [b"GET /health HTTP/1.0\r\n\r\n"]) == 200  # still serving
    assert not runs.exists()  # no evaluation started


def test_a_whole_invoke_runs_once_and_a_small_body_is_drained(local):
    port, runs = local
    assert _exchange(port, [INVOKE + b"Content-Length: 5\r\n\r\nhello"]) == 201
    assert _exchange(port, [INVOKE + b"\r\n"]) == 201
    assert runs.read_text() == "run\nrun\n"


def test_health_answers_while_idle_clients_hold_connections(local):
    port, runs = local
    idle = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(50)]
    try:
        for connection in idle[:25]:
            connection.sendall(b"POST /invoke HTTP/1.1\r\n")
        assert _exchange(port, [b"GET /health HTTP/1.0\r\n\r\n"]) == 200
    finally:
        for connection in idle:
            connection.close()
    assert not runs.exists()


@pytest.mark.parametrize(("arguments", "environment", "shown"), [
    (["--port", "70000"], None, "(--port) must be a whole number from 0 to 65535, not '70000'."),
    (["--port", "-1"], None, "(--port) must be a whole number from 0 to 65535, not '-1'."),
    (["--port", "\u0664\u0667"], None, "(--port) must be a whole number from 0 to 65535, not '\u0664\u0667'."),
    ([], "http", "(EVALUATION_INVOKE_PORT) must be a whole number from 0 to 65535, not 'http'."),
])  # fmt: skip
def test_a_bad_port_is_one_line_and_exit_2(arguments, environment, shown):
    environ = {k: v for k, v in os.environ.items() if k != "EVALUATION_INVOKE_PORT"}
    if environment is not None:
        environ["EVALUATION_INVOKE_PORT"] = environment
    serve = [sys.executable, "-m", "evaluation.platform.invoke", "--host", "127.0.0.1", *arguments]
    run = subprocess.run(serve, cwd=REPO, capture_output=True, text=True, timeout=60, env=environ)
    assert run.returncode == 2
    assert run.stderr.strip().splitlines() == [f"The invoke server's port {shown}"]
