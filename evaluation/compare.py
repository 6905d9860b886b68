"""``python -m evaluation.compare EXPECTED.json ACTUAL.json [--tol 1e-9]`` (``gc-compare``)

A regression diff of two metrics.json files. Every numeric leaf is compared within the tolerance
(absolute), every other leaf exactly; missing and extra keys are listed. Exit 0 when they agree,
else 1 with one line per differing dotted path (``path: expected X, actual Y``).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def differences(expected: Any, actual: Any, tolerance: float = 1e-9, path: str = "") -> Iterator[str]:
    """One line for each way ``actual`` differs from ``expected``."""
    where = path or "(top level)"
    if isinstance(expected, dict) and isinstance(actual, dict):
        for key in expected:
            child = f"{path}.{key}" if path else str(key)
            if key not in actual:
                yield f"{child}: missing (expected {json.dumps(expected[key])})"
            else:
                yield from differences(expected[key], actual[key], tolerance, child)
        for key in actual:
            if key not in expected:
                child = f"{path}.{key}" if path else str(key)
                yield f"{child}: extra (actual {json.dumps(actual[key])})"
    elif isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            yield f"{where}: list of {len(expected)} expected, {len(actual)} actual"
        for index, (left, right) in enumerate(zip(expected, actual, strict=False)):
            yield from differences(left, right, tolerance, f"{path}[{index}]")
    elif _is_number(expected) and _is_number(actual):
        if not math.isclose(expected, actual, rel_tol=0.0, abs_tol=tolerance):
            yield f"{where}: expected {expected!r}, actual {actual!r} (|diff| {abs(expected - actual):.3g})"
    elif expected != actual or type(expected) is not type(actual):
        yield f"{where}: expected {json.dumps(expected)}, actual {json.dumps(actual)}"


def _tolerance(text: str) -> float:
    """``--tol``: a finite number at least 0 (``math.isclose`` raises on a negative one)."""
    try:
        tolerance = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid float value: '{text}'") from None  # argparse's own words
    if not math.isfinite(tolerance) or tolerance < 0:
        raise argparse.ArgumentTypeError(f"must be a finite number at least 0, got '{text}'")
    return tolerance


def _load(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise SystemExit(f"Cannot read {path}: {error}") from None


def parser() -> argparse.ArgumentParser:
    from evaluation.cli import plain, program

    result = argparse.ArgumentParser(
        prog=program("evaluation.compare"), description=plain(__doc__),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )  # fmt: skip
    result.add_argument("expected", type=Path, help="the metrics.json the result should equal")
    result.add_argument("actual", type=Path, help="the metrics.json to check")
    result.add_argument("--tol", type=_tolerance, default=1e-9, help="absolute tolerance for numbers (default: 1e-9)")
    return result


def main(argv: Sequence[str] | None = None) -> int:
    arguments = parser().parse_args(argv)
    found = list(differences(_load(arguments.expected), _load(arguments.actual), arguments.tol))
    for line in found:
        print(line)
    if found:
        print(f"{len(found)} difference(s) between {arguments.expected} and {arguments.actual}", file=sys.stderr)
        return 1
    print(f"{arguments.actual} agrees with {arguments.expected} (tolerance {arguments.tol:g})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
