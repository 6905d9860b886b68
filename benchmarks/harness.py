"""What every benchmark shares. Its two sizes: the smoke size by default (seconds: test/test_benchmarks.py
runs each benchmark at it in CI, so none breaks unseen) and the full size with ``--full`` (the README's
figures); an option given on the command line wins over both. And no process outliving a run: a
subprocess run in its own session is waited for until every process of that session has ended."""

from __future__ import annotations

import argparse
import os
import signal
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def parse(parser: argparse.ArgumentParser, smoke: Mapping[str, Any], full: Mapping[str, Any]) -> argparse.Namespace:
    """The parsed arguments, each option left unset (``None``) taking its smoke or full size."""
    parser.add_argument("--full", action="store_true", help="the full size (default: the smoke size, seconds)")
    arguments = parser.parse_args()
    for name, value in (full if arguments.full else smoke).items():
        if getattr(arguments, name) is None:
            setattr(arguments, name, value)
    return arguments


def session_alive(session: int) -> list[int]:
    """The processes of ``session`` still running (not zombies: those have ended and wait to be reaped)."""
    alive = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == session and fields[0] != "Z":  # fields: state, ppid, pgrp, session
            alive.append(int(stat.parent.name))
    return alive


def wait_for_session(session: int, grace: float = 5.0) -> list[int]:
    """Wait until no process of ``session`` runs (a pool's forkserver ends when the run that started it
    has exited and it reads end-of-file); after ``grace`` seconds kill those left and return them."""
    deadline = time.monotonic() + grace
    while (left := session_alive(session)) and time.monotonic() < deadline:
        time.sleep(0.02)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    return left
