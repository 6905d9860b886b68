"""The whole path an organizer runs, the ``python -m evaluation`` process on the platform input, against its
floor process, same run (issue 30: the core benchmarks time the metrics; this one times what a user waits for):

- declared segmentation (kits-example: kidney, tumour and cyst at CT size, the platform input made by
  ``python -m evaluation.make_input``, one worker): the floor is a process that imports SimpleITK and reads
  each case's two label maps. Per case by the difference of two case counts (start-up cancels out), and the
  whole run of the larger count beside the floor's whole run.
- a prediction-file phase (the README's CSV sketch: one participant CSV, a probability and a thickness per
  image, AUROC and MAE, no bootstrap), and the same phase with an ISIC-like probabilities output (a column
  per class, a one-hot reference; AUROC per class, Brier, balanced accuracy): the floor is a process that
  imports pandas and reads the two CSVs. Per row by the difference of two row counts, and the whole run
  beside the floor's.

Each process is timed best of ``--repeats``, ours and the floor in turn, in wall seconds and in CPU seconds
(user + system of the whole process tree, which a load on the shared machine moves far less). Per case or row,
ours is the difference of its two whole processes; the floor's is the difference of its reads as the floor
process times them itself (its import excluded: pandas' took 0.25-0.39 s from run to run, and at 25,000 and
125,000 rows, best of 3, the difference of its two whole processes moved from 0.5 to 2.4 us a row while its reads
stayed at 1.3 us). Goals: per case <= 2x the floor and the 9-case run <= 2.5x; per row <= 2x pandas. ``--full``:
both prediction-file phases at 50,000 and 250,000 rows, every process best of 9 (docs/benchmarks.md has the
figures). ``--against DIR``: another checkout of the
project (e.g. the main branch before a change) runs each prediction-file phase on the same input, from its own
folder, and its metrics.json must be byte for byte ours (the run stops otherwise).

Usage: .venv/bin/python benchmarks/whole_path.py [--cases 3 9] [--shape 200 512 512] [--rows 50000 250000]
       [--probability-rows 50000 250000] [--full] [--csv-only] (the prediction-file phases alone)
       [--against /path/to/other/checkout]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import harness
import numpy as np
import SimpleITK as sitk

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "benchmarks")]

from segmentation_read_floor import KITS_SPACING, kits_case  # noqa: E402

READS = "reads"  # the floor's last line: "reads <wall seconds> <CPU seconds>" of its reads alone, in process
FLOOR_READ_IMAGES = f"""
import sys, time, SimpleITK as sitk
wall, cpu = time.perf_counter(), time.process_time()
for path in sys.argv[1:]:
    sitk.GetArrayViewFromImage(sitk.ReadImage(path))
print("{READS}", time.perf_counter() - wall, time.process_time() - cpu)
"""
FLOOR_READ_CSVS = f"""
import sys, time, pandas as pd
wall, cpu = time.perf_counter(), time.process_time()
for path in sys.argv[1:]:
    pd.read_csv(path, dtype=str)
print("{READS}", time.perf_counter() - wall, time.process_time() - cpu)
"""
CSV_DECLARATION = """
name = "csv-sketch"
title = "A prediction-file phase: a probability and a thickness per image"
[submission]
kind = "csv"
id_column = "image"
[cases]
id_column = "image"
[[outputs]]
slug = "probability"
kind = "number"
reference = "truth.csv:label"
range = [0, 1]
[[outputs]]
slug = "thickness"
kind = "number"
reference = "truth.csv:thickness"
[[metrics]]
metric = "auroc"
output = "probability"
[[metrics]]
metric = "mae"
output = "thickness"
[leaderboard]
score = "aggregates.auroc"
"""


def timed(command: list[str], root: Path = REPO) -> tuple[float, ...]:
    """The wall time and the CPU time (user + system of it and its children) of ``command`` run in ``root``
    (exit 0 required), and a floor's own times of its reads when it prints them (``READS``)."""
    before, start = os.times(), time.perf_counter()
    run = subprocess.run(command, cwd=root, capture_output=True, text=True)
    wall, after = time.perf_counter() - start, os.times()
    if run.returncode != 0:
        raise SystemExit(f"{command[:4]} failed: {run.stderr.strip().splitlines()[-1:]}")
    cpu = after.children_user + after.children_system - before.children_user - before.children_system
    last = (run.stdout.strip().splitlines() or [""])[-1].split()
    return (wall, cpu, *map(float, last[1:])) if last[:1] == [READS] else (wall, cpu)


def in_turn(*commands: list[str], repeats: int, roots: Sequence[Path] = ()) -> list[tuple[float, ...]]:
    """Each command best of ``repeats`` (wall, CPU; a floor's: also of its reads, ``timed``), the commands run in
    turn so that a load hits them all; command k in ``roots[k]`` (a checkout of the project; default this one)."""
    places = [*roots, *[REPO] * (len(commands) - len(roots))]
    times = [[timed(command, root) for command, root in zip(commands, places, strict=True)] for _ in range(repeats)]
    return [tuple(map(min, zip(*(t[k] for t in times), strict=True))) for k in range(len(commands))]


def same_bytes(command: list[str], folder: Path, other: Path) -> None:
    """Run ``command`` (ours, whose output is ``folder/out``) from the checkout ``other`` into ``folder/other``;
    stop unless the two metrics.json hold the same bytes."""
    theirs = [*command[: command.index("--output") + 1], str(folder / "other")]
    timed(theirs, other)
    if (folder / "out" / "metrics.json").read_bytes() != (folder / "other" / "metrics.json").read_bytes():
        raise SystemExit(f"metrics.json of {folder.name} differs from that of {other}")


def segmentation_inputs(folder: Path, cases: int, shape: tuple[int, int, int]) -> tuple[Path, Path, list[Path]]:
    """kits-example's ground truth and platform input for ``cases`` cases; the label files the floor reads."""
    truth, outputs = folder / "truth", folder / "outputs"
    (truth / "labels").mkdir(parents=True)
    rows, files = ["case,malignant"], []
    for index in range(cases):
        case = f"case_{index:05d}"
        reference, prediction = kits_case(shape, seed=index)
        predicted = outputs / case / "images" / "kidney-segmentation"
        predicted.mkdir(parents=True)
        for array, path in ((reference, truth / "labels" / f"{case}.mha"), (prediction, predicted / "seg.mha")):
            image = sitk.GetImageFromArray(array)
            image.SetSpacing(KITS_SPACING[::-1])
            sitk.WriteImage(image, str(path), useCompression=True)
            files.append(path)
        (outputs / case / "malignancy-likelihood.json").write_text(json.dumps(0.25 + 0.5 * (index % 2)))
        rows.append(f"{case},{index % 2}")
    (truth / "clinical.csv").write_text("\n".join(rows) + "\n")
    platform_input = folder / "input"
    make_input = [sys.executable, "-m", "evaluation.make_input", "--challenge", "kits-example"]
    subprocess.run(
        [*make_input, "--outputs", str(outputs), "--output", str(platform_input)],
        cwd=REPO,
        check=True,
        capture_output=True,
    )
    return truth, platform_input, files


def csv_inputs(folder: Path, rows: int) -> tuple[Path, Path, Path]:
    """The declaration, its ground truth and the participant's CSV for ``rows`` images."""
    rng = np.random.default_rng(rows)
    (folder / "truth").mkdir(parents=True)
    (folder / "input").mkdir()
    declaration = folder / "csv-sketch.toml"
    declaration.write_text(CSV_DECLARATION)
    names = [f"image_{index:07d}" for index in range(rows)]
    labels, thickness = rng.integers(0, 2, rows), rng.uniform(0.1, 5.0, rows)
    truth = folder / "truth" / "truth.csv"
    truth.write_text("image,label,thickness\n" + "".join(
        f"{n},{y},{t:.4f}\n" for n, y, t in zip(names, labels, thickness, strict=True)))  # fmt: skip
    order = rng.permutation(rows)
    probability, predicted = rng.uniform(0, 1, rows), thickness + rng.normal(0, 0.3, rows)
    answers = folder / "input" / "predictions.csv"
    answers.write_text("image,probability,thickness\n" + "".join(
        f"{names[i]},{probability[i]:.6f},{predicted[i]:.4f}\n" for i in order))  # fmt: skip
    return declaration, truth, answers


# the CSV phase with a probabilities output instead (ISIC-like: a column per class)
PROBABILITY_DECLARATION = (
    CSV_DECLARATION.split("[[outputs]]")[0]
    + """[[outputs]]
slug = "diagnosis"
kind = "probabilities"
classes = ["MEL", "NV", "BCC"]
reference = "{reference}"
[[metrics]]
name = "auc"
metric = "auroc"
output = "diagnosis"
[[metrics]]
metric = "brier"
output = "diagnosis"
[[metrics]]
metric = "balanced_accuracy"
output = "diagnosis"
[leaderboard]
score = "aggregates.balanced_accuracy"
"""
)


def probability_inputs(folder: Path, rows: int, one_hot: bool = True) -> tuple[Path, Path, Path]:
    """The declaration, ground truth and participant's CSV of an ISIC-like phase of ``rows`` images: a
    one-hot reference (or a class column), a probability column per class."""
    rng = np.random.default_rng(11)
    classes = ["MEL", "NV", "BCC"]
    labels = rng.integers(0, 3, rows)
    scores = np.round(rng.dirichlet(np.ones(3), rows) + 0.5 * np.eye(3)[labels], 4)
    scores = np.round(scores / scores.sum(axis=1, keepdims=True), 6)
    images = [f"ISIC_{k:07d}" for k in range(rows)]
    (folder / "truth").mkdir(parents=True)
    (folder / "input").mkdir()
    declaration = folder / "phase.toml"
    declaration.write_text(
        PROBABILITY_DECLARATION.replace("{reference}", "truth.csv" if one_hot else "truth.csv:label")
    )
    cells = [",".join(str(int(k == y)) for k in range(3)) if one_hot else classes[y] for y in labels]
    truth = [f"{image},{cell}" for image, cell in zip(images, cells, strict=True)]
    header = "image," + (",".join(classes) if one_hot else "label")
    (folder / "truth" / "truth.csv").write_text("\n".join([header, *truth]) + "\n")
    answers = folder / "input" / "predictions.csv"
    lines = [f"{images[k]},{','.join(map(str, scores[k]))}" for k in rng.permutation(rows)]
    answers.write_text("\n".join(["image,MEL,NV,BCC", *lines]) + "\n")
    return declaration, folder / "truth" / "truth.csv", answers


def report(what: str, unit: str, counts: tuple[int, int], ours: list, floor: list, goals) -> None:
    """Per ``unit`` (the difference of the two counts: ours of its whole processes, the floor's of its reads as
    it times them, which its import, e.g. pandas' 0.25-0.39 s, does not move) and the larger count's whole
    process, against the floor, in wall seconds then in CPU seconds (``ours``: a (wall, CPU) pair per count;
    ``floor``: its process's pair and its reads' pair)."""
    small, large = counts
    print(f"{what}: {small} and {large} {unit}s")
    for k, clock in enumerate(("wall", "CPU")):
        mine, theirs = [t[k] for t in ours], [t[k] for t in floor]
        per = (mine[1] - mine[0]) / (large - small)
        floor_per = (floor[1][2 + k] - floor[0][2 + k]) / (large - small)
        ratio = f"{per / floor_per:.2f}x" if floor_per > 0 else "no ratio (the floor's difference is within its noise)"
        print(f"  {clock}: ours {mine[0]:.2f} s / {mine[1]:.2f} s, floor {theirs[0]:.2f} s / {theirs[1]:.2f} s; "
              f"per {unit} ours {per * 1e3:.4f} ms, floor {floor_per * 1e3:.4f} ms (its reads): {ratio} "
              f"(goal {goals[0]}x); whole process at {large} {unit}s {mine[1] / max(theirs[1], 1e-9):.2f}x the floor's "
              f"(fixed cost about {mine[1] - per * large:.2f} s; goal {goals[1]})")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, nargs=2, default=None)
    parser.add_argument("--shape", type=int, nargs=3, default=None)
    parser.add_argument("--rows", type=int, nargs=2, default=None)
    parser.add_argument("--probability-rows", type=int, nargs=2, default=None)
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument("--csv-only", action="store_true", help="only the prediction-file phase")
    parser.add_argument("--against", type=Path, default=None, help="another checkout: the same metrics.json bytes")
    arguments = harness.parse(
        parser,
        {
            "cases": (2, 4),
            "shape": (40, 128, 128),
            "rows": (2000, 6000),
            "probability_rows": (1000, 3000),
            "repeats": 1,
        },
        {
            "cases": (3, 9),
            "shape": (200, 512, 512),
            "rows": (50000, 250000),
            "probability_rows": (50000, 250000),
            "repeats": 9,
        },
    )
    with tempfile.TemporaryDirectory() as scratch:
        ours, floor = [], []
        for cases in () if arguments.csv_only else arguments.cases:
            folder = Path(scratch) / f"seg-{cases}"
            truth, platform_input, files = segmentation_inputs(folder, cases, tuple(arguments.shape))
            command = [sys.executable, "-m", "evaluation", "--challenge", "kits-example", "--input",
                       str(platform_input), "--ground-truth", str(truth), "--output", str(folder / "out"),
                       "--workers", "1"]  # fmt: skip
            read = [sys.executable, "-c", FLOOR_READ_IMAGES, *map(str, files)]
            mine, theirs = in_turn(command, read, repeats=arguments.repeats)
            ours.append(mine)
            floor.append(theirs)
        if not arguments.csv_only:
            report(f"declared segmentation, kits-example at {'x'.join(map(str, arguments.shape))}", "case",
                   tuple(arguments.cases), ours, floor, (2, "2.5x"))  # fmt: skip
        for what, make, counts in (
            ("prediction-file phase, AUROC and MAE", csv_inputs, arguments.rows),
            ("prediction-file phase, probabilities (3 classes, one-hot reference)", probability_inputs,
             arguments.probability_rows),
        ):  # fmt: skip
            ours, floor = [], []
            for rows in counts:
                folder = Path(scratch) / f"{make.__name__}-{rows}"
                declaration, truth, answers = make(folder, rows)
                command = [sys.executable, "-m", "evaluation", "--challenge", str(declaration), "--input",
                           str(answers.parent), "--ground-truth", str(truth.parent),
                           "--output", str(folder / "out")]  # fmt: skip
                read = [sys.executable, "-c", FLOOR_READ_CSVS, str(truth), str(answers)]
                mine, theirs = in_turn(command, read, repeats=arguments.repeats)
                ours.append(mine)
                floor.append(theirs)
                if arguments.against:
                    same_bytes(command, folder, arguments.against.resolve())
            report(what, "row", tuple(counts), ours, floor, (2, "-"))
            if arguments.against:
                print(f"  metrics.json byte for byte that of {arguments.against} at both row counts")


if __name__ == "__main__":
    main()
