"""Per-case segmentation scoring against its floor, reading the two label images, same run: a
kits-example case (kidney, tumour, cyst; Dice, NSD at 2 mm and HD95 of every label, tumour lesion
F1 at IoU 0.3, as evaluation/declarations/kits-example.toml asks) and a HECKTOR case (GTVp, GTVn;
Dice, HD95, NSD at 1 and 2 mm, GTVn lesions at IoU 0.3), each at 200x512x512, written as compressed
.mha files. Timed (best of ``--repeats``, the two run in turn): the floor, SimpleITK reading both files to arrays; ours,
the same reads plus ``metrics.segmentation.summarise_label_maps`` (what a worker does per case).
Prints ours / floor for each. Goals (issue 20): kits-example <= 3x, HECKTOR <= 1.3x.

Usage: .venv/bin/python benchmarks/segmentation_read_floor.py [--shape 200 512 512] [--repeats 3] [--full]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import harness
import numpy as np
import SimpleITK as sitk

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "benchmarks")]

from hecktor_segmentation import ellipsoid, synthetic_case  # noqa: E402

from evaluation.metrics.segmentation import LabelRequest, summarise_label_maps  # noqa: E402

KITS_SPACING = (2.5, 0.8, 0.8)
HECKTOR_SPACING = (3.0, 0.98, 0.98)
KITS = {name: LabelRequest(value, hd95=True, nsd=(2.0,), lesions=(0.3,) if name == "tumour" else ())
        for name, value in (("kidney", 1), ("tumour", 2), ("cyst", 3))}  # fmt: skip
HECKTOR = {name: LabelRequest(value, hd95=True, nsd=(1.0, 2.0), lesions=(0.3,) if name == "gtvn" else ())
           for name, value in (("gtvp", 1), ("gtvn", 2))}  # fmt: skip


def kits_case(shape: tuple[int, int, int], seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Two kidneys (about 11 x 6 x 5 cm), a tumour on one and a cyst in the other; the prediction
    shifted and a little smaller, the tumour's rim missed, an extra small tumour."""
    rng = np.random.default_rng(seed)
    reference, prediction = np.zeros(shape, np.uint8), np.zeros(shape, np.uint8)
    plane = np.array([1.0, shape[1] / 512, shape[2] / 512])
    for labels, shift, scale in ((reference, (0, 0, 0), 1.0), (prediction, (1, 2, -2), 0.95)):
        for side in (-1, 1):
            centre = np.array(shape) // 2 + (np.array((0, 20, side * 110)) * plane).astype(int) + shift
            box, inside = ellipsoid(shape, centre, np.array([55.0, 32.0, 28.0]) * scale, KITS_SPACING)
            labels[box][inside] = 1
        tumour = np.array(shape) // 2 + (np.array((5, 0, -140)) * plane).astype(int) + shift
        box, inside = ellipsoid(shape, tumour, np.array([18.0, 16.0, 15.0]) * scale, KITS_SPACING)
        labels[box][inside] = 2
        cyst = np.array(shape) // 2 + (np.array((-6, 30, 110)) * plane).astype(int) + shift
        box, inside = ellipsoid(shape, cyst, np.array([9.0, 8.0, 8.0]) * scale, KITS_SPACING)
        labels[box][inside & (labels[box] == 1)] = 3
    extra = np.array(shape) // 2 + (np.array((-10, -20, 120)) * plane).astype(int)
    box, inside = ellipsoid(shape, extra, (6.0, 6.0, 6.0), KITS_SPACING)
    prediction[box][inside] = 2
    rng.random()
    return reference, prediction


def write(array: np.ndarray, spacing: tuple[float, ...], path: Path) -> Path:
    image = sitk.GetImageFromArray(array)
    image.SetSpacing(tuple(reversed(spacing)))
    sitk.WriteImage(image, str(path), useCompression=True)
    return path


def read(path: Path) -> tuple[np.ndarray, tuple[float, ...]]:
    image = sitk.ReadImage(str(path))
    return sitk.GetArrayFromImage(image), tuple(reversed(image.GetSpacing()))


def interleaved(first: Callable[[], object], second: Callable[[], object], repeats: int) -> tuple[float, float]:
    """Best seconds of each, the two run in turn (a shared machine's slow spells hit both alike)."""
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(repeats):
        for function, spent in zip((first, second), times, strict=True):
            start = time.perf_counter()
            function()
            spent.append(time.perf_counter() - start)
    return min(times[0]), min(times[1])


def compare(name: str, pair: tuple[np.ndarray, np.ndarray], spacing, requests, goal: float, repeats: int) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        reference = write(pair[0], spacing, Path(scratch) / "reference.mha")
        prediction = write(pair[1], spacing, Path(scratch) / "prediction.mha")

        def floor() -> None:
            read(reference), read(prediction)

        def ours() -> None:
            (r, step), (p, _) = read(reference), read(prediction)
            summarise_label_maps(r, p, step, requests)

        ours()  # warm-up (first-use imports and tables)
        floor_seconds, our_seconds = interleaved(floor, ours, repeats)
    ratio = our_seconds / floor_seconds
    verdict = "met" if ratio <= goal else "NOT met"
    print(f"{name} {pair[0].shape}: reading both images {floor_seconds:.3f} s | reading + every metric "
          f"{our_seconds:.3f} s | {ratio:.2f}x the read floor (goal <= {goal}x: {verdict})")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", type=int, nargs=3)
    parser.add_argument("--repeats", type=int)
    args = harness.parse(parser, dict(shape=(40, 128, 128), repeats=1), dict(shape=(200, 512, 512), repeats=7))
    shape = tuple(args.shape)
    compare("kits-example", kits_case(shape), KITS_SPACING, KITS, 3.0, args.repeats)
    compare("HECKTOR", synthetic_case(shape, HECKTOR_SPACING), HECKTOR_SPACING, HECKTOR, 1.3, args.repeats)


if __name__ == "__main__":
    main()
