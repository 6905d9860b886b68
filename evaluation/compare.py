"""``python -m evaluation.compare EXPECTED.json ACTUAL.json [--tol 1e-9] | --replay RECORD`` (``gc-compare``)

A regression diff of two metrics.json files. Every numeric leaf is compared within the tolerance
(absolute), every other leaf exactly; missing and extra keys are listed. Exit 0 when they agree,
else 1 with one line per differing dotted path (``path: expected X, actual Y``).

With ``--replay OUTPUT/provenance.json`` (the record ``python -m evaluation --provenance`` writes)
it checks the record (its shape and paths: ``provenance.check_record``), that the metrics.json
beside it, the predictions, ground truth and declaration still have the recorded hashes (else exit
1 with one line naming what changed), re-runs the recorded evaluation in a temporary folder and says
whether metrics.json came out with the same bytes (exit 0, naming any other image or library
version it ran with) or not (exit 1, with the differences from the metrics.json beside the record).
Every JSON file is read by ``predictions.read_json_file`` (bounded, no FIFO).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any


def is_number(value: Any) -> bool:
    """A JSON number (``True`` and ``False`` are not, though Python counts them as ints)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def close(left: float, right: float, tolerance: float) -> bool:
    """Equal within an absolute tolerance; NaN equals only NaN (a null on both sides agrees)."""
    if math.isnan(left) or math.isnan(right):
        return math.isnan(left) and math.isnan(right)
    return math.isclose(left, right, rel_tol=0.0, abs_tol=tolerance)


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
    elif is_number(expected) and is_number(actual):
        if not close(expected, actual, tolerance):
            yield f"{where}: expected {expected!r}, actual {actual!r} (|diff| {abs(expected - actual):.3g})"
    elif expected != actual or type(expected) is not type(actual):
        yield f"{where}: expected {json.dumps(expected)}, actual {json.dumps(actual)}"


def tolerance_argument(text: str) -> float:
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
    result.add_argument(
        "--tol", type=tolerance_argument, default=1e-9, help="absolute tolerance for numbers (default: 1e-9)"
    )
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
    """Check a record and re-run the evaluation it records; 0 when metrics.json has the recorded bytes.

    A check, not a demonstration: the record must pass ``provenance.check_record`` (shape, paths),
    the metrics.json beside it, the predictions, ground truth and declaration must still have their
    recorded hashes (hashed under the evaluation's own rules), and the re-run must write the same
    bytes; anything else fails in one line naming what. A different image or library version is
    named in the verdict, not a failure."""
    from evaluation.errors import EvaluationError

    try:
        return _replay(record_path, tolerance)
    except EvaluationError as error:
        print(str(error), file=sys.stderr)
    except Exception as error:  # a defect: the traceback goes to stdout, the last stderr line says so
        import traceback

        traceback.print_exc(file=sys.stdout)
        print(f"The replay of {record_path} failed with an internal error ({type(error).__name__}).", file=sys.stderr)
    return 1


def _replay(record_path: Path, tolerance: float) -> int:
    import contextlib
    import io
    import tempfile

    from evaluation import cli
    from evaluation.contract import DECLARATIONS
    from evaluation.errors import ConfigurationError
    from evaluation.platform.files import MAX_JSON_BYTES
    from evaluation.platform.predictions import read_json_file
    from evaluation.provenance import changed_inputs, check_record, environment_changes, file_sha256

    document = check_record(read_json_file(record_path), record_path)
    command, hashes = document["command"], document["sha256"]
    beside = record_path.parent / "metrics.json"
    if not os.path.lexists(beside):
        raise ConfigurationError(f"The replay of {record_path} has no metrics.json beside it to check.")
    recorded = read_json_file(beside)  # bounded, no FIFO; the same file is hashed next
    if file_sha256(Path(os.path.realpath(beside)), str(beside), MAX_JSON_BYTES) != hashes["metrics.json"]:
        raise ConfigurationError(
            f"The replay of {record_path} failed: {beside} does not have the sha256 the record holds (one of the two "
            "was changed since the run)."
        )
    challenge = command["challenge"]
    declaration = Path(challenge) if challenge.endswith(".toml") else DECLARATIONS / f"{challenge}.toml"
    changed = changed_inputs(document, declaration if os.path.lexists(declaration) else None)
    if changed:
        raise ConfigurationError(f"The replay of {record_path} failed: {'; '.join(changed)} since the record.")
    with tempfile.TemporaryDirectory(prefix="gc-replay-") as scratch:
        arguments = ["--challenge", challenge, "--input", command["input"], "--output", scratch]
        arguments += ["--ground-truth", command["ground_truth"], "--case-results", command["case_results"]]
        for key, value in command["set"].items():
            arguments += ["--set", f"{key}={value}"]
        said = io.StringIO()
        with contextlib.redirect_stderr(said):
            status = cli.main(arguments)
        if status != 0:
            lines = [line for line in said.getvalue().splitlines() if line.strip()]
            raise ConfigurationError(f"The replay of {record_path} failed: {lines[-1] if lines else 'no reason given'}")
        replayed = Path(scratch) / "metrics.json"
        digest = file_sha256(replayed, str(replayed))
        same = digest == hashes["metrics.json"]
        found = [] if same else list(differences(recorded, read_json_file(replayed), tolerance))
    environment = environment_changes(document)
    ran = f"; it ran with {', '.join(environment)}" if environment else ""
    if same:
        print(f"The replay of {record_path} wrote the same metrics.json bytes (sha256 {digest}){ran}.")
        return 0
    for line in found:
        print(line)
    print(f"The replay of {record_path} wrote different metrics.json bytes ({len(found)} difference(s) beyond "
          f"{tolerance:g}){ran}.", file=sys.stderr)  # fmt: skip
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
