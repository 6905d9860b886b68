"""The platform's invoke API: ``python -m evaluation.platform.invoke`` (the image built with
``--target invoke``).

grand-challenge.org runs a container image in one of two API methods, named by the image label
``org.grand-challenge.api-method`` (``exec`` when absent; read for algorithm images and evaluation
methods alike: DIAGNijmegen/rse-grand-challenge, app/grandchallenge/components/tasks.py,
``_get_image_api_method``). In ``invoke`` mode sagemaker-shim (0.8.3, sagemaker_shim/models.py,
``UserProcess``) starts the image's entrypoint once, after the ground truth is unpacked, and polls
``GET http://127.0.0.1:4743/health`` until it answers 200; then, for each job, it stages /input and
calls ``POST /invoke`` (no body) with the phase's time limit. 201 is success (/output is uploaded);
any other status fails the job, and the participant is shown the last line of this process's stderr.

Each invocation runs ``python -m evaluation`` (the exec mode's entrypoint, with this server's extra
arguments) in a fresh process whose stdout and stderr are this server's own: the same files read and
written, the same metrics.json bytes, the same last stderr line, the same per-process memory limit
(the shim's RLIMIT_DATA is inherited). An evaluation loads no model, so a warm process could save only
its imports, and a fresh one cannot carry one job's memory or crash into the next. The server itself
writes nothing to stderr after it listens (its request log and any request's traceback go to stdout), so
a failed job's last stderr line is the evaluation's. Standard library only: nothing is added to the image.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import threading
import traceback
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

# sagemaker-shim's default GRAND_CHALLENGE_COMPONENT_USER_WEBSERVER_PORT: the platform sets no other (and the
# GRAND_CHALLENGE_* variables never reach this process). EVALUATION_INVOKE_PORT is for containers that share
# a network namespace (the local shim runs, scripts/sagemaker-shim/run.py), where each needs its own port.
PORT = 4743


class InvokeServer(ThreadingHTTPServer):
    """Answers /health at once (threads) and runs one evaluation at a time (``lock``)."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], command: list[str]) -> None:
        super().__init__(address, Handler)
        self.command = command
        self.lock = threading.Lock()

    def handle_error(self, request: object, client_address: object) -> None:
        """A failed request's traceback to stdout: stderr's last line is the evaluation's message."""
        print(f"invoke server: request from {client_address} failed", flush=True)
        traceback.print_exc(file=sys.stdout)


class Handler(BaseHTTPRequestHandler):
    server: InvokeServer

    def do_GET(self) -> None:
        self._reply(HTTPStatus.OK if self._route() == "/health" else HTTPStatus.NOT_FOUND)

    def do_POST(self) -> None:
        if self._route() != "/invoke":
            self._reply(HTTPStatus.NOT_FOUND)
            return
        length = self.headers.get("Content-Length", "")
        self.rfile.read(int(length) if length.isdigit() else 0)  # the shim sends no body; drained if sent
        with self.server.lock:
            sys.stdout.flush()
            exit_code = subprocess.run(self.server.command, check=False).returncode
        self._reply(HTTPStatus.CREATED if exit_code == 0 else HTTPStatus.INTERNAL_SERVER_ERROR)

    def _route(self) -> str:
        return urlsplit(self.path).path.rstrip("/") or "/"

    def _reply(self, status: HTTPStatus) -> None:
        body = f"{status.value} {status.phrase}\n".encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        print(f"invoke server: {self.address_string()} {format % args}", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m evaluation.platform.invoke",
        description="Serve grand-challenge.org's invoke API: GET /health answers 200; each POST /invoke runs "
        "python -m evaluation on /input and answers 201 when it succeeded, 500 when it failed (its last stderr "
        "line says why).",
    )
    parser.add_argument("--host", default="0.0.0.0", help="address to listen on (default: 0.0.0.0)")
    parser.add_argument(
        "--port",
        type=int,
        default=os.environ.get("EVALUATION_INVOKE_PORT") or str(PORT),  # a string default goes through type=int too
        help=f"port (default: $EVALUATION_INVOKE_PORT, else {PORT}, the platform's; 0: any free port)",
    )
    parser.add_argument(
        "arguments",
        nargs=argparse.REMAINDER,
        help="after --: arguments of python -m evaluation on every invocation (default: none, as in exec mode)",
    )
    options = parser.parse_args(argv)
    arguments = options.arguments[1:] if options.arguments[:1] == ["--"] else options.arguments
    try:
        server = InvokeServer((options.host, options.port), [sys.executable, "-m", "evaluation", *arguments])
    except OSError as error:
        print(f"The invoke server cannot listen on {options.host}:{options.port}: {error.strerror}.", file=sys.stderr)
        return 1
    host, port = server.server_address[:2]
    print(f"invoke server: listening on http://{host}:{port}", flush=True)
    with server, contextlib.suppress(KeyboardInterrupt):  # Ctrl-C when run by hand
        server.serve_forever()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
