"""RARE25 end to end at validation-set scale against a plain script of the official loop, same run.

Data: ~13,500 frames of 750 patients (110 neoplastic with 2-9 frames, 640 NDBE with 8-32 frames)
in stacks of 192 frames (~71 stacks), written in the platform layout. Both sides run as
subprocesses from the same files:

- ours: ``python -m evaluation --challenge rare25`` (reading, checks, bootstrap, metrics.json);
- reference: a script that reads the same files (test/oracles/rare25_official.py, written
  independently of the project) and runs the official per-iteration loop (``np.random.seed``,
  ``np.random.choice``, three scikit-learn calls per iteration), writing the same 13 numbers.

Prints both wall times and the ratio, the bootstrap-only times (our aggregation in this process,
the reference's loop as timed inside its script) and checks the 13 numbers agree to 1e-12.
Acceptance (issue 12): end to end >= 20x (goal 30x).

Usage: .venv/bin/python benchmarks/rare25_end_to_end.py [--repeat 3] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "test")]

from oracles.rare25_official import platform_arrays  # noqa: E402
from rare25_cases import write_case  # noqa: E402

from evaluation.challenges.rare25 import Rare25, Stack  # noqa: E402

STACK_FRAMES = 192
REFERENCE_SCRIPT = """
import json, sys, time
sys.path.insert(0, {test!r})
from oracles.rare25_official import official_bootstrap, platform_arrays, summary
metadata, input_dir, output = sys.argv[1:4]
arrays = platform_arrays(metadata, input_dir)
start = time.perf_counter()
numbers = summary(*official_bootstrap(*arrays))
loop = time.perf_counter() - start
open(output, "w").write(json.dumps({{"metrics": numbers, "loop_seconds": loop}}))
"""


def make_data(root: Path, seed: int = 0) -> tuple[Path, Path, int]:
    """Ground truth and a submission; frames of a patient are consecutive, stacks cut every 192 frames."""
    rng = np.random.default_rng(seed)
    patients = [("neo", f"N{i:03d}", int(rng.integers(2, 10))) for i in range(110)]
    patients += [("ndbe", f"D{i:03d}", int(rng.integers(8, 33))) for i in range(640)]
    order = rng.permutation(len(patients))
    frames = []
    for index in order:
        kind, patient, count = patients[index]
        for _ in range(count):
            likelihood = rng.beta(5, 2) if kind == "neo" else rng.beta(1.2, 6)
            frames.append((patient, kind, round(float(likelihood), 4)))  # 4 decimals: tied scores
    stacks = {
        f"val_batch_{i // STACK_FRAMES}_{STACK_FRAMES}.tiff": frames[i : i + STACK_FRAMES]
        for i in range(0, len(frames), STACK_FRAMES)
    }
    ground_truth = root / "ground-truth"
    write_case(ground_truth, root / "input", stacks)
    return ground_truth, root / "input", len(frames)


def timed(command: list[str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{command[:3]} failed: {done.stderr.strip().splitlines()[-1:]}")
    return seconds


def bootstrap_seconds(ground_truth: Path, input_dir: Path, repeat: int) -> float:
    """Our aggregation (full data + 1000 iterations) in this process, on arrays read independently."""
    labels, scores, patients = platform_arrays(ground_truth / "val_metadata.json", input_dir)
    challenge = Rare25()
    settings = challenge.settings()
    reference = {"all": Stack(labels=labels.astype(np.int8), patients=tuple(patients))}
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        challenge.aggregate({"all": scores}, [], reference, settings)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs of ours (the best is kept)")
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="rare25-e2e-", dir=args.workdir))
    try:
        ground_truth, input_dir, n_frames = make_data(root)
        n_stacks = len(json.loads((ground_truth / "val_metadata.json").read_text()))
        script = root / "official_loop.py"
        script.write_text(REFERENCE_SCRIPT.format(test=str(REPO / "test")))
        reference_json = root / "reference.json"
        reference_seconds = timed(
            [sys.executable, str(script), str(ground_truth / "val_metadata.json"), str(input_dir), str(reference_json)]
        )
        reference = json.loads(reference_json.read_text())
        command = [sys.executable, "-m", "evaluation", "--challenge", "rare25", "--input", str(input_dir),
                   "--output", str(root / "output"), "--ground-truth", str(ground_truth)]  # fmt: skip
        ours_seconds = min(timed(command) for _ in range(args.repeat))
        ours = json.loads((root / "output" / "metrics.json").read_text())
        worst = max(abs(ours[key] - value) for key, value in reference["metrics"].items())
        boot = bootstrap_seconds(ground_truth, input_dir, args.repeat)
        print(f"RARE25, {n_frames} frames, 750 patients, {n_stacks} stacks")
        ratio = reference_seconds / ours_seconds
        print(f"end to end: official loop script {reference_seconds:.2f} s | python -m evaluation {ours_seconds:.2f} s"
              f" | {ratio:.1f}x (acceptance >= 20x, goal 30x)")  # fmt: skip
        loop = reference["loop_seconds"]
        print(f"bootstrap only: official loop {loop:.2f} s | ours {boot:.3f} s | {loop / boot:.0f}x")
        print(f"13 numbers: {'identical' if worst <= 1e-12 else 'DIFFERENT'} (max |diff| {worst:.1e})")
        if worst > 1e-12:
            raise SystemExit(1)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
