"""``python -m evaluation.check --challenge NAME (--input DIR | --outputs DIR) [--images DIR]``

The participant's pre-flight check: every rule of the evaluation that does not need the ground
truth, run on a submission before it is submitted, with the evaluation's own messages (each
challenge's ``check_submission`` / ``check_job`` call the very functions its ``prepare`` and
``score_case`` call). ``--input`` is the platform's /input layout (predictions.json and the job
folders; for a prediction-file phase the folder of the participant's CSV, or the CSV itself),
``--outputs`` a folder of what the algorithm wrote to /output for each case, ``DIR/<case>/...``
(turned into that layout with make_input's mapping, in a temporary folder). ``--images`` holds the
input images under their file names: with it, list lengths and image geometry are checked against them.

Exit 0 when the evaluation would accept the outputs, as far as can be known without the ground
truth (stdout says what could not be checked); outputs the evaluation counts as missing under the
challenge's policy are warnings on stdout. Otherwise exit 1, the last stderr line being the
sentence the evaluation would give.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import traceback
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from evaluation.cli import _fail, parse_overrides, program
from evaluation.contract import Checked
from evaluation.errors import ConfigurationError, EvaluationError, SubmissionError
from evaluation.make_input import build_input
from evaluation.platform.files import not_there
from evaluation.registry import get

NEEDS_TRUTH = "which cases the test set holds (a case without a job, a job for an unknown case)"


def check(
    challenge_name: str,
    input_dir: Path | None = None,
    outputs_dir: Path | None = None,
    images: Path | None = None,
    overrides: Mapping[str, str] | None = None,
) -> Checked:
    """Check a submission given as a platform input (``input_dir``) or as plain per-case outputs
    (``outputs_dir``); raises the evaluation's ``EvaluationError`` at the first problem."""
    challenge = get(challenge_name)
    settings = challenge.settings(overrides)
    if images is not None and not images.is_dir():
        raise ConfigurationError(f"The images folder {images} {not_there(images, folder=True)}.")
    if outputs_dir is not None:
        with tempfile.TemporaryDirectory(prefix="gc-check-") as scratch:
            built = Path(scratch) / "input"
            build_input(challenge, outputs_dir, built)
            return check(challenge_name, built, None, images, overrides)
    csv_file = input_dir is not None and input_dir.is_file() and challenge.phase.prediction_file
    if input_dir is None or not (input_dir.is_dir() or csv_file):
        raise SubmissionError(f"The input folder {input_dir} does not exist.")
    checked = challenge.check_submission(input_dir, settings, images)
    if not challenge.phase.prediction_file:
        checked.unchecked.append(NEEDS_TRUTH)
    return checked


def parser() -> argparse.ArgumentParser:
    result = argparse.ArgumentParser(
        prog=program("evaluation.check"),
        description="Check your algorithm's outputs before you submit them: every rule of the evaluation that "
        "needs no ground truth, with the evaluation's own messages. Exit 0: the evaluation would accept them (as far "
        "as can be known without the ground truth; stdout says what was not checked). Exit 1: the last stderr line "
        "says why, as the evaluation would.",
    )
    result.add_argument(
        "--challenge",
        default=os.environ.get("EVALUATION_CHALLENGE"),
        help="challenge name (python -m evaluation --list; default: $EVALUATION_CHALLENGE)",
    )
    source = result.add_mutually_exclusive_group(required=True)
    source.add_argument("--input", type=Path, help="the platform's /input layout (or your CSV, or its folder)")
    source.add_argument("--outputs", type=Path, help="DIR/<case>/ = what your algorithm wrote to /output")
    result.add_argument("--images", type=Path, help="the input images (by file name): lengths and geometry checked")
    result.add_argument(
        "--set", action="append", default=[], metavar="KEY=VALUE", help="a challenge option (repeatable)"
    )
    return result


def main(argv: Sequence[str] | None = None, log: Callable[[str], None] = print) -> int:
    arguments = parser().parse_args(argv)
    try:
        if not arguments.challenge:
            raise ConfigurationError("No challenge given: use --challenge or set EVALUATION_CHALLENGE.")
        checked = check(
            arguments.challenge, arguments.input, arguments.outputs, arguments.images, parse_overrides(arguments.set)
        )
    except EvaluationError as error:
        return _fail(str(error))
    except Exception as error:  # a defect of the check, not of the outputs: the traceback on stdout
        traceback.print_exc(file=sys.stdout)
        return _fail(f"The check failed with an internal error ({type(error).__name__}).")
    for warning in checked.warnings:
        log(f"Warning: {warning}")
    what = "rows" if get(arguments.challenge).phase.prediction_file else "cases"
    log(f"{checked.cases} {what} checked, all outputs valid")
    for line in checked.unchecked:
        log(f"Not checked: {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
