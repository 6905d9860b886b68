"""Every benchmark's two sizes: the smoke size by default (seconds: test/test_benchmarks.py runs each
benchmark at it in CI, so none breaks unseen) and the full size with ``--full`` (the README's figures).
An option given on the command line wins over both."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any


def parse(parser: argparse.ArgumentParser, smoke: Mapping[str, Any], full: Mapping[str, Any]) -> argparse.Namespace:
    """The parsed arguments, each option left unset (``None``) taking its smoke or full size."""
    parser.add_argument("--full", action="store_true", help="the full size (default: the smoke size, seconds)")
    arguments = parser.parse_args()
    for name, value in (full if arguments.full else smoke).items():
        if getattr(arguments, name) is None:
            setattr(arguments, name, value)
    return arguments
