"""``python -m evaluation.demo [--challenge NAME] [--output DIR] [--copy-input DIR]`` (``gc-demo``)

Runs a real evaluation of a challenge's bundled demo submission (the platform's /input layout and
the bundled ground truth) through the same command line as the image, then compares the result with
the expected metrics shipped beside it (python -m evaluation.compare), says whether they agree, and
sums up the leaderboard's numbers with what each one means. It works from a checkout and from an
installed wheel (the demo data travel inside it). Any other option (--workers, --set, ...) goes to
python -m evaluation. With --copy-input DIR it writes the demo input out instead: a starting point
for an organizer's own test inputs.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from evaluation import cli, compare
from evaluation.platform.ground_truth import bundled
from evaluation.registry import get

# Numbers of a demo's metrics.json, not on the leaderboard, that a newcomer compares with it ...
BESIDE = {"rare25": ("PPV@90RECALL Full Dataset",)}
# ... and what they may misread, beside the leaderboard's own titles.
NOTES = {
    "rare25": (
        "Score is the PPV at 90% recall at a 1:100 prevalence of neoplasia (the median over the official "
        "bootstrap's samples, 100 NDBE draws per neoplastic draw); 'PPV@90RECALL Full Dataset' is the PPV at 90% "
        "recall on the whole test set at its own, far higher prevalence, hence the much larger value."
    ),
}


def parser() -> argparse.ArgumentParser:
    result = cli.tool_parser("evaluation.demo", __doc__, None)
    result.add_argument(
        "--challenge",
        default=os.environ.get("EVALUATION_CHALLENGE") or "rare25",
        help="the challenge whose demo runs (python -m evaluation --list; default: $EVALUATION_CHALLENGE, else rare25)",
    )
    result.add_argument("--output", type=Path, help="where metrics.json goes (default: demo-output/<challenge>)")
    result.add_argument("--copy-input", type=Path, metavar="DIR", help="write the demo input to DIR and stop")
    return result


def summary(challenge_name: str, metrics: Mapping[str, Any]) -> list[str]:
    """The leaderboard's numbers of ``metrics`` (the phase's titles, order and decimals), one line
    each, and what a newcomer may misread."""
    phase = get(challenge_name).phase
    columns = [{"title": phase.score_title, "path": phase.score_jsonpath, "order": phase.score_default_sort},
               *phase.extra_results_columns]  # fmt: skip
    lines = ["The leaderboard's numbers:"]

    def shown(path: str) -> str:
        value: Any = metrics
        for part in path.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        return f"{value:.{phase.score_decimal_places}f}" if isinstance(value, (int, float)) else json.dumps(value)

    for column in columns:
        better = "higher is better" if column["order"] == "desc" else "lower is better"
        ranked = "; shown, not ranked" if column.get("exclude_from_ranking") else ""
        lines.append(f"  {shown(column['path'])}  {column['title']} ({column['path']}; {better}{ranked})")
    lines += [
        f"  {shown(path)}  {path} (in metrics.json, not on the leaderboard)" for path in BESIDE.get(challenge_name, ())
    ]
    if challenge_name in NOTES:
        lines.append(f"Note: {NOTES[challenge_name]}")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    arguments, evaluate_options = parser().parse_known_args(argv)
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
    code = compare.main([str(expected), str(output / "metrics.json")])
    sys.stderr.flush()
    verdict = "agrees with" if code == 0 else "DIFFERS from"
    print(f"Verdict: {output / 'metrics.json'} {verdict} the expected metrics of the {arguments.challenge} demo.")
    print("\n".join(summary(arguments.challenge, json.loads((output / "metrics.json").read_text(encoding="utf-8")))))
    return code


if __name__ == "__main__":
    raise SystemExit(main())
