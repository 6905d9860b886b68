"""Make the bundled DigestPath 2019 demos: synthetic ground truth and submissions in the platform's
layout for task 1 (signet ring cell boxes on 30 images, 10 of them negative) and task 2 (24 small
tissue masks, half malignant). Deterministic. Usage: python scripts/make_demo_digestpath.py
"""

from __future__ import annotations

import csv
import json
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np
import SimpleITK as sitk
from PIL import Image

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from evaluation.platform.detections import platform_boxes  # noqa: E402
from evaluation.platform.layout import JobSpec, write_input  # noqa: E402
from evaluation.registry import get  # noqa: E402

TASK1 = get("digestpath2019-task1").phase  # the declared challenge's sockets
(DETECTION_INPUT,), (DETECTIONS,) = TASK1.inputs, TASK1.outputs

TASK2 = get("digestpath2019-task2").phase  # the declared challenge's sockets
(TISSUE_INPUT,), (TISSUE_MASK, MALIGNANCY) = TASK2.inputs, TASK2.outputs

SEED = 2019


def cell_boxes(rng: np.random.Generator, count: int, size: int = 2000) -> np.ndarray:
    corners = rng.uniform(0, size - 60, size=(count, 2))
    extent = rng.uniform(18, 40, size=(count, 2))
    return np.round(np.hstack([corners, corners + extent]), 1)


def detections(rng: np.random.Generator, reference: np.ndarray, n_false: int) -> list[list[float]]:
    """Found cells (jittered, high scores), missed cells, and false positives (lower scores)."""
    rows = []
    for box in reference:
        if rng.random() < 0.8:
            jitter = rng.normal(0, 3, 4)
            corners = np.maximum(box + jitter, 0.0)  # a box never starts left of or above the image
            rows.append([*np.round(corners, 1), round(float(rng.uniform(0.45, 0.99)), 3)])
    for box in cell_boxes(rng, n_false):
        rows.append([*box, round(float(rng.uniform(0.05, 0.7)), 3)])
    return [[float(v) for v in row] for row in rows]


def task1(rng: np.random.Generator) -> None:
    truth, jobs = {}, []
    for index in range(30):
        name = f"DP19-{index:03d}.jpg"
        reference = cell_boxes(rng, int(rng.integers(1, 9))) if index % 3 else np.empty((0, 4))
        truth[name] = reference.tolist()
        rows = detections(rng, reference, int(rng.integers(0, 4)))
        output = platform_boxes(rows) if index % 2 else rows  # both accepted formats
        jobs.append(JobSpec({DETECTION_INPUT: name}, {DETECTIONS: output}))
    ground_truth = REPO / "ground-truth" / "digestpath2019-task1"
    ground_truth.mkdir(parents=True, exist_ok=True)
    (ground_truth / "boxes.json").write_text(json.dumps(truth, indent=1) + "\n")
    demo = REPO / "test" / "input" / "digestpath2019-task1"
    shutil.rmtree(demo, ignore_errors=True)
    write_input(demo, [jobs[i] for i in rng.permutation(len(jobs))], seed=SEED)


def lesion(rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    yy, xx = np.mgrid[: shape[0], : shape[1]]
    cy, cx = rng.uniform(16, shape[0] - 16), rng.uniform(16, shape[1] - 16)
    ry, rx = rng.uniform(6, 14, 2)
    return ((yy - cy) / ry) ** 2 + ((xx - cx) / rx) ** 2 <= 1


def task2(rng: np.random.Generator) -> None:
    ground_truth = REPO / "ground-truth" / "digestpath2019-task2"
    shutil.rmtree(ground_truth, ignore_errors=True)
    (ground_truth / "masks").mkdir(parents=True)
    demo = REPO / "test" / "input" / "digestpath2019-task2"
    shutil.rmtree(demo, ignore_errors=True)
    labels, jobs = [], []
    with tempfile.TemporaryDirectory() as scratch:
        for index in range(24):
            name = f"DP19-tissue-{index:03d}.png"
            malignant = index % 2 == 0
            shape = (64, 80) if index % 3 else (72, 64)
            reference = lesion(rng, shape) if malignant else np.zeros(shape, dtype=bool)
            Image.fromarray((reference * 255).astype(np.uint8)).save(ground_truth / "masks" / name)
            labels.append((name, int(malignant)))
            predicted = reference.copy()
            if malignant or rng.random() < 0.3:
                predicted = np.roll(lesion(rng, shape) if not malignant else reference, int(rng.integers(-4, 5)), 1)
            mask_file = Path(scratch) / f"{index:03d}.mha"
            sitk.WriteImage(sitk.GetImageFromArray(predicted.astype(np.uint8)), str(mask_file))
            likelihood = round(float(np.clip(rng.normal(0.7 if malignant else 0.35, 0.2), 0, 1)), 3)
            jobs.append(JobSpec({TISSUE_INPUT: name}, {TISSUE_MASK: mask_file, MALIGNANCY: likelihood}))
        write_input(demo, [jobs[i] for i in rng.permutation(len(jobs))], seed=SEED)
    with (ground_truth / "labels.csv").open("w", newline="") as file:
        csv.writer(file).writerows([("image", "label"), *labels])


def main() -> None:
    rng = np.random.default_rng(SEED)
    task1(rng)
    task2(rng)
    print("wrote ground-truth/digestpath2019-task{1,2} and test/input/digestpath2019-task{1,2}")


if __name__ == "__main__":
    main()
