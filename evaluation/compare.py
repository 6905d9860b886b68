"""``python -m evaluation.compare EXPECTED.json ACTUAL.json [--tol 1e-9] | --replay RECORD`` (``gc-compare``)

A regression diff of two metrics.json files. Every numeric leaf is compared within the tolerance
(absolute), every other leaf exactly; missing and extra keys are listed. Exit 0 when they agree,
else 1 with one line per differing dotted path (``path: expected X, actual Y``).

With ``--replay OUTPUT/provenance.json`` (the record ``python -m evaluation --provenance`` writes)
it checks that the predictions, ground truth and declaration still have the recorded hashes,
re-runs the recorded evaluation in a temporary folder and says whether metrics.json came out with
the same bytes (exit 0) or not (exit 1, with the differences from the metrics.json beside the record).
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
    from evaluation.errors import EvaluationError
    from evaluation.platform.predictions import read_json_file

    try:
        return read_json_file(path)
    except EvaluationError as error:
        raise SystemExit(str(error)) from None


def parser() -> argparse.ArgumentParser:
    from evaluation.cli import tool_parser

    result = tool_parser("evaluation.compare", __doc__, None)
    result.add_argument("expected", type=Path, nargs="?", help="the metrics.json the result should equal")
    result.add_argument("actual", type=Path, nargs="?", help="the metrics.json to check")
    result.add_argument(
        "--replay", type=Path, metavar="RECORD", help="re-run the evaluation a provenance.json records; same bytes?"
    )
    result.add_argument("--tol", type=_tolerance, default=1e-9, help="absolute tolerance for numbers (default: 1e-9)")
    return result


def main(argv: Sequence[str] | None = None) -> int:
    made = parser()
    arguments = made.parse_args(argv)
    if arguments.replay is not None:
        return replay(arguments.replay, arguments.tol)
    if arguments.expected is None or arguments.actual is None:
        made.error("give EXPECTED.json and ACTUAL.json, or --replay RECORD")
    found = list(differences(_load(arguments.expected), _load(arguments.actual), arguments.tol))
    for line in found:
        print(line)
    if found:
        print(f"{len(found)} difference(s) between {arguments.expected} and {arguments.actual}", file=sys.stderr)
        return 1
    print(f"{arguments.actual} agrees with {arguments.expected} (tolerance {arguments.tol:g})")
    return 0


def replay(record_path: Path, tolerance: float = 1e-9) -> int:
    """Re-run the evaluation ``record_path`` records; 0 when metrics.json has the recorded bytes."""
    import tempfile

    from evaluation import cli
    from evaluation.provenance import file_sha256, tree_sha256

    document = _load(record_path)
    command, hashes = (document.get("command"), document.get("sha256")) if isinstance(document, dict) else ({}, {})
    needed = {"challenge", "input", "ground_truth", "set", "case_results"}
    if (
        not isinstance(command, dict)
        or not isinstance(hashes, dict)
        or not needed <= set(command)
        or (not {"predictions", "ground_truth", "metrics.json"} <= set(hashes))
    ):
        raise SystemExit(f"{record_path} is not a provenance record of python -m evaluation --provenance.")
    changed = [f"the {what} ({path}) changed since the record" for what, path, digest in (
        ("predictions", Path(command["input"]), hashes["predictions"]),
        ("ground truth", Path(command["ground_truth"]), hashes["ground_truth"]))
        if not path.is_dir() or tree_sha256(path) != digest]  # fmt: skip
    declaration = command.get("declaration")
    if declaration and (not Path(declaration).is_file() or file_sha256(Path(declaration)) != hashes["declaration"]):
        changed.append(f"the declaration {declaration} changed since the record")
    for name, digest in (hashes.get("code") or {}).items() if declaration else ():  # its python metrics' files
        code = Path(declaration).parent / name
        if not code.is_file() or file_sha256(code) != digest:
            changed.append(f"the code file {code} changed since the record")
    for line in changed:
        print(f"Warning: {line}")
    with tempfile.TemporaryDirectory(prefix="gc-replay-") as scratch:
        arguments = ["--challenge", command["challenge"], "--input", command["input"], "--output", scratch]
        arguments += ["--ground-truth", command["ground_truth"], "--case-results", command["case_results"]]
        for key, value in command["set"].items():
            arguments += ["--set", f"{key}={value}"]
        if cli.main(arguments) != 0:
            print(f"The replay of {record_path} failed (the line above says why).", file=sys.stderr)
            return 1
        replayed = Path(scratch) / "metrics.json"
        if file_sha256(replayed) == hashes["metrics.json"]:
            print(f"The replay of {record_path} wrote the same metrics.json bytes (sha256 {hashes['metrics.json']}).")
            return 0
        original = record_path.parent / "metrics.json"
        found = list(differences(_load(original), _load(replayed), tolerance)) if original.is_file() else []
        for line in found:
            print(line)
    print(f"The replay of {record_path} wrote different metrics.json bytes ({len(found)} difference(s) beyond "
          f"{tolerance:g}).", file=sys.stderr)  # fmt: skip
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
