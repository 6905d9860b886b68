"""``python -m evaluation.phase --challenge NAME [--set K=V ...] [--check METRICS.json]``

Prints the phase settings a challenge declares (sockets, leaderboard score path, sort order,
decimals, extra result columns, scoring method; the platform's own field names) as JSON to paste
into the phase form. With ``--check`` verifies that every leaderboard path resolves in a
metrics.json the way the platform walks it (split on ``.``, dict keys only) to a finite number:
a path that does not would silently remove the submission from the leaderboard.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from evaluation.challenges import get
from evaluation.cli import parse_overrides
from evaluation.errors import EvaluationError
from evaluation.platform.metrics_json import ranked_value_problem


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evaluation.phase", description=__doc__.splitlines()[2])
    parser.add_argument("--challenge", default=os.environ.get("EVALUATION_CHALLENGE"), required=False)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="a challenge option")
    parser.add_argument("--check", type=Path, metavar="METRICS.json", help="verify the leaderboard paths")
    arguments = parser.parse_args(argv)
    try:
        if not arguments.challenge:
            raise EvaluationError("No challenge given: use --challenge or set EVALUATION_CHALLENGE.")
        challenge = get(arguments.challenge)
        phase = challenge.phase_for(challenge.settings(parse_overrides(arguments.set)))
        if arguments.check is None:
            print(json.dumps({"challenge": challenge.name, **phase.settings_json()}, indent=2))
            return 0
        try:
            document = json.loads(arguments.check.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise EvaluationError(f"{arguments.check} is not a readable JSON file ({error}).") from None
        problems = [problem for path in phase.leaderboard_paths if (problem := ranked_value_problem(document, path))]
        if problems:
            raise EvaluationError(
                f"{arguments.check}: the leaderboard value {'; '.join(problems)}: the platform would drop "
                "the submission from the leaderboard."
            )
        print(f"{arguments.check}: every leaderboard path ({', '.join(phase.leaderboard_paths)}) is a finite number.")
        return 0
    except EvaluationError as error:
        print(str(error), file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
