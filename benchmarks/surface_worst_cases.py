"""Surface distances on the shapes that are hard for a nearest-surfel search, against DeepMind
``surface-distance`` (the definition's reference: two distance transforms over the box) in the same run:
a large ellipsoid against itself shifted by a few voxels (every surfel near the other surface), against
a copy with 2% of its voxels removed (holes all through it: most surfels far from the reference's
surface), and against a box far from it (every surfel far). Checks that HD95, HD, NSD at 2 mm and MASD
are the package's to the last bit; prints the times, their ratio and the peak extra memory (tracemalloc).

Usage: .venv/bin/python benchmarks/surface_worst_cases.py [--shape 200 400 400] [--full]
"""

from __future__ import annotations

import argparse
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import harness
import numpy as np
import surface_distance as deepmind

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from evaluation.metrics.surface import surface_distances  # noqa: E402

SPACING = (1.0, 0.8, 0.8)
MIB = 2**20


def cases(shape: tuple[int, int, int]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    z, y, x = np.ogrid[: shape[0], : shape[1], : shape[2]]
    radius = 0.45 * shape[0] * SPACING[0]
    reference = ((z - shape[0] / 2) * SPACING[0]) ** 2 + ((y - shape[1] / 2) * SPACING[1]) ** 2 + (
        (x - shape[2] / 2) * SPACING[2]
    ) ** 2 < radius**2
    far = np.zeros_like(reference)
    far[: shape[0] // 8, : shape[1] // 8, : shape[2] // 8] = True
    return {
        "shifted by (2, 3, -4) voxels": (reference, np.roll(reference, (2, 3, -4), axis=(0, 1, 2))),
        "holes all through (2% of voxels)": (reference, reference & (np.random.default_rng(0).random(shape) > 0.02)),
        "a box far away": (reference, far),
    }


def ours(reference: np.ndarray, prediction: np.ndarray) -> list[float]:
    found = surface_distances(reference, prediction, SPACING)
    return [found.hd(95), found.hd(100), found.nsd(2.0), found.masd()]


def theirs(reference: np.ndarray, prediction: np.ndarray) -> list[float]:
    found = deepmind.compute_surface_distances(reference, prediction, SPACING)
    directed = deepmind.compute_average_surface_distance(found)
    return [
        deepmind.compute_robust_hausdorff(found, 95),
        deepmind.compute_robust_hausdorff(found, 100),
        deepmind.compute_surface_dice_at_tolerance(found, 2.0),
        float((directed[0] + directed[1]) / 2.0),
    ]


def measure(function: Callable, *args) -> tuple[float, float, list[float]]:
    """(seconds, peak extra MiB, result)."""
    tracemalloc.start()
    start = time.perf_counter()
    result = function(*args)
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1] / MIB
    tracemalloc.stop()
    return seconds, peak, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", type=int, nargs=3)
    args = harness.parse(parser, dict(shape=(40, 80, 80)), dict(shape=(200, 400, 400)))
    shape = tuple(args.shape)
    for pair in cases((16, 32, 32)).values():  # first-use imports (scipy.spatial, scipy.ndimage) on every path
        ours(*pair), theirs(*pair)
    print(f"ellipsoid in a {shape} grid, spacing {SPACING} mm")
    for name, (reference, prediction) in cases(shape).items():
        our_seconds, our_peak, our_values = measure(ours, reference, prediction)
        their_seconds, their_peak, their_values = measure(theirs, reference, prediction)
        same = "identical" if our_values == their_values else f"DIFFERENT: {our_values} vs {their_values}"
        print(f"{name}: ours {our_seconds:.2f} s ({our_peak:.0f} MiB) | DeepMind {their_seconds:.2f} s "
              f"({their_peak:.0f} MiB) | {their_seconds / our_seconds:.1f}x | HD95, HD, NSD, MASD {same}")  # fmt: skip
        if our_values != their_values:
            raise SystemExit(1)


if __name__ == "__main__":
    main()
