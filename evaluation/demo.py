"""``python -m evaluation.demo [--challenge NAME] [--output DIR] [--copy-input DIR]`` (``gc-demo``)

Runs a real evaluation of a challenge's bundled demo submission (the platform's ``/input`` layout
and the bundled ground truth) through the same command line as the image, then diffs the result
with the expected metrics shipped beside it (``python -m evaluation.compare``). It works from a
checkout and from an installed wheel (the demo data travel inside it). ``--copy-input DIR`` writes
the demo input out instead: a starting point for an organizer's own test inputs.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

from evaluation import cli, compare
from evaluation.platform.ground_truth import bundled


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evaluation.demo", description=__doc__.splitlines()[2])
    parser.add_argument("--challenge", default=os.environ.get("EVALUATION_CHALLENGE") or "rare25")
    parser.add_argument("--output", type=Path, help="where metrics.json goes (default: demo-output/<challenge>)")
    parser.add_argument("--copy-input", type=Path, metavar="DIR", help="write the demo input to DIR and stop")
    arguments, evaluate_options = parser.parse_known_args(argv)
    demo_input = bundled("demo-input") / arguments.challenge
    if not demo_input.is_dir():
        known = sorted(p.name for p in bundled("demo-input").iterdir()) if bundled("demo-input").is_dir() else []
        print(f"No demo input for {arguments.challenge}; demos exist for: {', '.join(known)}.", file=sys.stderr)
        return 2
    if arguments.copy_input is not None:
        try:
            shutil.copytree(demo_input, arguments.copy_input)
        except OSError as error:  # e.g. the folder exists: copytree would merge into, or fail inside, it
            print(f"Cannot write the demo input to {arguments.copy_input} ({error.strerror}).", file=sys.stderr)
            return 2
        print(f"Wrote the {arguments.challenge} demo input to {arguments.copy_input}")
        return 0
    output = arguments.output or Path("demo-output") / arguments.challenge
    code = cli.main(["--challenge", arguments.challenge, "--input", str(demo_input), "--output", str(output),
                     *evaluate_options])  # fmt: skip
    expected = bundled("demo-expected") / arguments.challenge / "metrics.json"
    if code != 0 or not expected.is_file():
        return code
    print(f"Comparing {output / 'metrics.json'} with the expected demo result {expected}")
    return compare.main([str(expected), str(output / "metrics.json")])


if __name__ == "__main__":
    raise SystemExit(main())
