"""``python -m evaluation.ranking.examples [--output FILE.csv]``: rebuild the example ranking table.

``kits-example-teams.csv`` holds five "teams" on the kits-example demo's 12 cases and three tasks
(``dice_kidney``, ``dice_tumour``, ``hd95_tumour``, smaller better): team ``demo`` is the demo
submission's real per-case result (the bundled expected metrics.json); the four others are that
result shifted and blurred by seeded noise (illustrative teams, not real submissions), so that the
README's ranking commands have data to rank. Deterministic: the same bytes every run (tested).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from evaluation.platform.ground_truth import bundled

HERE = Path(__file__).resolve().parent
EXAMPLE = HERE / "kits-example-teams.csv"
TASKS = ("dice_kidney", "dice_tumour", "hd95_tumour")
# (team, shift of the Dice values, factor on HD95, noise scale): one stronger team, three weaker
TEAMS = (("demo", 0.0, 1.0, 0.0), ("alpha", 0.04, 0.8, 0.06), ("beta", -0.03, 1.1, 0.08),
         ("gamma", -0.08, 1.4, 0.05), ("delta", 0.01, 1.0, 0.15))  # fmt: skip


def example_rows(demo: dict) -> list[str]:
    """The long table's lines: task, algorithm, case, value (6 decimals)."""
    cases = sorted(demo["case"])
    rng = np.random.default_rng(2026)
    lines = ["task,algorithm,case,value"]
    for task in TASKS:
        base = np.array([float(demo["case"][case][task]) for case in cases])
        for team, shift, factor, noise in TEAMS:
            blur = rng.normal(0.0, noise, base.size)
            if task.startswith("dice"):
                values = np.clip(base + shift + blur, 0.0, 1.0)
            else:
                values = np.maximum(base * factor + 10.0 * blur, 0.0)
            lines += [f"{task},{team},{case},{value:.6f}" for case, value in zip(cases, values, strict=True)]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evaluation.ranking.examples", description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=EXAMPLE, help=f"where the CSV goes (default {EXAMPLE.name})")
    args = parser.parse_args(argv)
    demo = json.loads((bundled("demo-expected") / "kits-example" / "metrics.json").read_text(encoding="utf-8"))
    args.output.write_text("\n".join(example_rows(demo)) + "\n", encoding="utf-8")
    print(f"Wrote {args.output}.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
