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
a failed job's last stderr line is the evaluation's. Standard library only (and the project's errors.py):
nothing is added to the image.

Every request gets a status, and only a whole request starts an evaluation: the request line, headers and
body must arrive within ``REQUEST_SECONDS`` (else 408), a request cut short or malformed is 400, another path
404, another method 405, a body over ``MAX_BODY`` bytes (or a ``Content-Length`` that is no plain ASCII number
of that size) 413 or 400 before anything is read. One request per connection (HTTP/1.0), each in its own
thread: a slow or hostile client holds only its thread, never the evaluation lock or ``/health``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import re
import socket
import subprocess
import sys
import threading
import time
import traceback
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

from evaluation.errors import printable

# sagemaker-shim's default GRAND_CHALLENGE_COMPONENT_USER_WEBSERVER_PORT: the platform sets no other (and the
# GRAND_CHALLENGE_* variables never reach this process). EVALUATION_INVOKE_PORT is for containers that share
# a network namespace (the local shim runs, scripts/sagemaker-shim/run.py), where each needs its own port.
PORT = 4743
REQUEST_SECONDS = 10.0  # the whole request must arrive within this; the shim sends its few bytes at once
MAX_BODY = 64 * 1024  # the shim sends no body; a small one is drained, a larger one refused unread
ROUTES = {"/health": "GET", "/invoke": "POST"}
DIGITS = re.compile(r"[0-9]+", re.ASCII)  # a Content-Length or port: ASCII digits only (int() takes others too)


class InvokeServer(ThreadingHTTPServer):
    """Answers /health at once (threads) and runs one evaluation at a time (``lock``)."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], command: list[str], request_seconds: float = REQUEST_SECONDS) -> None:
        super().__init__(address, Handler)
        self.command = command
        self.request_seconds = request_seconds
        self.lock = threading.Lock()

    def handle_error(self, request: object, client_address: object) -> None:
        """A failed request's traceback to stdout: stderr's last line is the evaluation's message."""
        print(f"invoke server: request from {client_address} failed", flush=True)
        traceback.print_exc(file=sys.stdout)


class _Deadline(io.RawIOBase):
    """A connection's incoming bytes, every read bounded by what is left of the request's time; ``ended``
    records that the client closed its side (a request cut short)."""

    def __init__(self, connection: socket.socket, seconds: float) -> None:
        super().__init__()
        self.connection, self.deadline, self.ended = connection, time.monotonic() + seconds, False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the request did not arrive in time")
        self.connection.settimeout(left)
        count = self.connection.recv_into(buffer)
        self.ended = self.ended or count == 0
        return count


class Handler(BaseHTTPRequestHandler):
    server: InvokeServer
    default_request_version = "HTTP/1.0"  # a status line even for a request line it cannot parse (0.9: none)

    def setup(self) -> None:
        super().setup()
        self.reader = _Deadline(self.connection, self.server.request_seconds)
        self.rfile = io.BufferedReader(self.reader)

    def handle_one_request(self) -> None:
        """One whole request, or a status saying why not (the standard library's, without its silent closes
        and its evaluation of a request whose headers never came)."""
        self.close_connection = True
        self.command, self.request_version, self.requestline = "", "HTTP/1.0", ""
        try:
            self.raw_requestline = self.rfile.readline(65537)
            if not self.raw_requestline:
                return  # connected and closed without a byte: no request to answer
            if len(self.raw_requestline) > 65536:
                self.send_error(HTTPStatus.REQUEST_URI_TOO_LONG)
                return
            if not self.raw_requestline.endswith(b"\n"):
                self.send_error(HTTPStatus.BAD_REQUEST, "Incomplete request line")
                return
            if not self.parse_request():
                return  # the standard library answered (400, 431, 505)
            if self.reader.ended:
                self.send_error(HTTPStatus.BAD_REQUEST, "Incomplete headers")
                return
            self._route_request()
        except TimeoutError:
            with contextlib.suppress(OSError):
                self.send_error(
                    HTTPStatus.REQUEST_TIMEOUT, f"No whole request within {self.server.request_seconds:g} s"
                )
        except (ConnectionError, BrokenPipeError):
            self.log_message("connection lost")

    def _route_request(self) -> None:
        route = urlsplit(self.path).path.rstrip("/") or "/"
        if route not in ROUTES:
            self.send_error(HTTPStatus.NOT_FOUND)
        elif self.command != ROUTES[route]:
            self.send_error(HTTPStatus.METHOD_NOT_ALLOWED, f"{route} accepts {ROUTES[route]} only")
        elif not self._body_read():
            return  # refused with a status: nothing started
        elif route == "/health":
            self._reply(HTTPStatus.OK)
        else:
            self._invoke()

    def _body_read(self) -> bool:
        """The body drained (the shim sends none), or False when a status refused it."""
        if self.headers.get("Transfer-Encoding") is not None:
            self.send_error(HTTPStatus.BAD_REQUEST, "Only a Content-Length body is accepted")
            return False
        lengths = self.headers.get_all("Content-Length") or ["0"]
        if len(lengths) > 1 or not DIGITS.fullmatch(lengths[0].strip()):
            self.send_error(HTTPStatus.BAD_REQUEST, "Content-Length must be one number of ASCII digits")
            return False
        text = lengths[0].strip()
        length = int(text) if len(text) <= len(str(MAX_BODY)) else MAX_BODY + 1  # never int() of 60,000 digits
        if length > MAX_BODY:
            self.send_error(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"A body of at most {MAX_BODY} bytes is accepted")
            return False
        if len(self.rfile.read(length)) < length:
            self.send_error(HTTPStatus.BAD_REQUEST, "Incomplete body")
            return False
        return True

    def _invoke(self) -> None:
        with self.server.lock:
            sys.stdout.flush()
            exit_code = subprocess.run(self.server.command, check=False).returncode
        self._reply(HTTPStatus.CREATED if exit_code == 0 else HTTPStatus.INTERNAL_SERVER_ERROR)

    def _reply(self, status: HTTPStatus) -> None:
        self.connection.settimeout(self.server.request_seconds)  # the reader left the last read's remainder
        body = f"{status.value} {status.phrase}\n".encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        self.connection.settimeout(self.server.request_seconds)
        super().send_error(code, message, explain)

    def log_message(self, format: str, *args: object) -> None:
        print(f"invoke server: {self.address_string()} {printable(format % args)}", flush=True)


def _port(text: str, source: str) -> int | str:
    """The port, or the one line that refuses it."""
    if DIGITS.fullmatch(text.strip()) and len(text.strip()) <= 5 and int(text) <= 65535:
        return int(text)
    shown = repr(text) if len(text) <= 40 else f"{text[:40]!r}..."
    return f"The invoke server's port ({source}) must be a whole number from 0 to 65535, not {shown}."


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
        help=f"port (default: $EVALUATION_INVOKE_PORT, else {PORT}, the platform's; 0: any free port)",
    )
    parser.add_argument(
        "arguments",
        nargs=argparse.REMAINDER,
        help="after --: arguments of python -m evaluation on every invocation (default: none, as in exec mode)",
    )
    options = parser.parse_args(argv)
    arguments = options.arguments[1:] if options.arguments[:1] == ["--"] else options.arguments
    source = "--port" if options.port is not None else "EVALUATION_INVOKE_PORT"
    port = _port(
        options.port if options.port is not None else os.environ.get("EVALUATION_INVOKE_PORT") or str(PORT), source
    )
    if isinstance(port, str):
        print(port, file=sys.stderr)
        return 2
    try:
        server = InvokeServer((options.host, port), [sys.executable, "-m", "evaluation", *arguments])
    except OSError as error:
        print(f"The invoke server cannot listen on {options.host}:{port}: {error.strerror}.", file=sys.stderr)
        return 1
    host, port = server.server_address[:2]
    print(f"invoke server: listening on http://{host}:{port}", flush=True)
    with server, contextlib.suppress(KeyboardInterrupt):  # Ctrl-C when run by hand
        server.serve_forever()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
