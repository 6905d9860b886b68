"""Start-up of an evaluation (issue 30, item 4): the whole ``python -m evaluation`` process on each declared
challenge's demo (its bundled ground truth and test/input: a few small cases, so the run is nearly all fixed
cost: imports, the pool, reading and writing), in wall and CPU seconds (user + system of the process tree),
beside the floor process ``python -c "import numpy"`` timed in turn in the same run, each best of ``--repeats``.
Goal: at most 1 s for every declared challenge on the quiet machine; a declaration loads only what it uses
(test/test_worker_imports.py). ``--against DIR``: another checkout of the project (e.g. the main branch before a
change) runs each demo too, from its own folder, in turn with ours and the floor, and the ratio ours / its is
printed (wall and CPU).

Usage: .venv/bin/python benchmarks/startup.py [--challenges kits-example midog2021 ...] [--repeats 3] [--full]
       [--against /path/to/other/checkout]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import harness
from whole_path import in_turn

REPO = Path(__file__).resolve().parents[1]


def demos() -> list[str]:
    """Every declared challenge with a demo: its input (test/input) and bundled ground truth."""
    names = sorted(path.stem for path in (REPO / "evaluation" / "declarations").glob("*.toml"))
    return [name for name in names if all((REPO / where / name).is_dir() for where in ("test/input", "ground-truth"))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--challenges", nargs="+", default=None)
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument("--against", type=Path, default=None, help="another checkout, timed in turn with ours")
    arguments = harness.parse(
        parser, {"challenges": ["midog2021", "kits-example"], "repeats": 1}, {"challenges": demos(), "repeats": 3}
    )
    floor = [sys.executable, "-c", "import numpy"]
    other = f" {'other wall':>10} {'other CPU':>9} {'ratio wall':>10} {'ratio CPU':>9}" if arguments.against else ""
    print(f"{'challenge':24} {'wall s':>7} {'CPU s':>6}{other} {'floor wall':>10} {'floor CPU':>9}  (goal: 1 s)")
    with tempfile.TemporaryDirectory() as scratch:
        for name in arguments.challenges:
            roots = [REPO] + ([arguments.against.resolve()] if arguments.against else [])
            commands = [[sys.executable, "-m", "evaluation", "--challenge", name, "--input",
                         str(root / "test" / "input" / name), "--output", str(Path(scratch) / f"{name}-{k}"),
                         "--workers", "1"] for k, root in enumerate(roots)]  # fmt: skip
            *runs, (floor_wall, floor_cpu) = in_turn(*commands, floor, repeats=arguments.repeats, roots=roots)
            (wall, cpu), *against = runs
            compared = "".join(f" {w:10.2f} {c:9.2f} {wall / w:10.2f} {cpu / c:9.2f}" for w, c in against)
            print(f"{name:24} {wall:7.2f} {cpu:6.2f}{compared} {floor_wall:10.2f} {floor_cpu:9.2f}")


if __name__ == "__main__":
    main()
