"""HECKTOR per-patient segmentation work on one CT-sized case: our Dice + HD95 + NSD (1, 2 mm) +
GTVn lesion matching (union-box crop, one shared surface computation per label) against

- DeepMind ``surface-distance`` (the definition's reference; it crops per label, after full-volume
  label masks), with Dice and lesion matching on the full volume, and
- a MetricsReloaded-style full-volume computation: the same surfels, distances from
  ``scipy.ndimage.distance_transform_edt`` over the whole grid (no crop).

Checks that the three give the same numbers and prints time ratios and peak extra memory
(tracemalloc: numpy allocations, i.e. every array of the computation). Goals (issue 7): at least
2x faster than DeepMind, extra memory at most 0.5 GiB.

Usage: .venv/bin/python benchmarks/hecktor_segmentation.py [--shape 200 512 512] [--spacing 3 0.98 0.98] [--full]
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
from scipy import ndimage

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from evaluation.metrics.lesions import match_lesions  # noqa: E402
from evaluation.metrics.overlap import dice  # noqa: E402
from evaluation.metrics.segmentation import LabelRequest, summarise_label_maps  # noqa: E402
from evaluation.metrics.surface import SurfaceDistances, surfels  # noqa: E402

GIB = 1024**3
LABELS = {1: "gtvp", 2: "gtvn"}  # the scene's labels, numbered as HECKTOR's label maps
GTVN = 2  # the label detected lesion-wise
NSD_TOLERANCES_MM = (1.0, 2.0)  # HECKTOR's NSD tolerances (hecktor2025-task1.toml)


def ellipsoid(shape, centre, radii_mm, spacing) -> tuple[tuple[slice, ...], np.ndarray]:
    """The box around an ellipsoid and its mask inside the box (no full-volume temporaries)."""
    box = tuple(
        slice(max(0, int(c - r / s) - 1), min(n, int(c + r / s) + 2))
        for c, r, s, n in zip(centre, radii_mm, spacing, shape, strict=True)
    )
    grid = np.ogrid[box]
    inside = sum(((g - c) * s / r) ** 2 for g, c, r, s in zip(grid, centre, radii_mm, spacing, strict=True)) <= 1
    return box, inside


def synthetic_case(shape, spacing, seed: int = 7) -> tuple[np.ndarray, np.ndarray]:
    """A GTVp of about 5 cm and four GTVn nodes; the prediction is shifted, one node missed, one added.
    The nodes' in-plane offsets are given for a 512 x 512 plane and scaled to smaller ones (smoke size)."""
    rng = np.random.default_rng(seed)
    plane = np.array([1.0, shape[1] / 512, shape[2] / 512])
    reference = np.zeros(shape, dtype=np.uint8)
    prediction = np.zeros(shape, dtype=np.uint8)
    centre = np.array(shape) // 2
    for labels, offset, scale in ((reference, (0, 0, 0), 1.0), (prediction, (1, 3, -2), 0.93)):
        box, inside = ellipsoid(shape, centre + offset, np.array([30.0, 25.0, 22.0]) * scale, spacing)
        labels[box][inside] = 1
    offsets = [(int(rng.integers(-15, 15)), int(rng.integers(-80, 80)), 90 + 25 * k) for k in range(4)]
    nodes = [centre + (np.array(offset) * plane).astype(int) for offset in offsets]
    for k, node in enumerate(nodes):
        radii = rng.uniform(6, 12, 3)
        box, inside = ellipsoid(shape, node, radii, spacing)
        reference[box][inside & (reference[box] == 0)] = 2
        if k != 3:
            box, inside = ellipsoid(shape, node + np.array((0, 2, 1)), radii * 1.1, spacing)
            prediction[box][inside & (prediction[box] == 0)] = 2
    box, inside = ellipsoid(shape, centre + (np.array((10, -120, -120)) * plane).astype(int), (8.0, 8.0, 8.0), spacing)
    prediction[box][inside] = 2
    return reference, prediction


def ours(reference, prediction, spacing) -> list[float]:
    requests = {label: LabelRequest(label, hd95=True, nsd=NSD_TOLERANCES_MM, lesions=(0.3,) if label == GTVN else ())
                for label in LABELS}  # fmt: skip
    result = summarise_label_maps(reference, prediction, spacing, requests)
    values = []
    for label in LABELS:
        r = result.labels[label]
        values += [2 * r.intersection / (r.reference + r.prediction), r.hd95, *(value for _, value in r.nsd)]
    lesions = dict(result.labels[GTVN].lesions)[0.3]
    return [*values, lesions.tp, lesions.fp, lesions.fn]


def with_deepmind(reference, prediction, spacing) -> list[float]:
    values = []
    for label in LABELS:
        r, p = reference == label, prediction == label
        found = deepmind.compute_surface_distances(r, p, spacing)
        values += [dice(r, p), deepmind.compute_robust_hausdorff(found, 95),
                   deepmind.compute_surface_dice_at_tolerance(found, 1.0),
                   deepmind.compute_surface_dice_at_tolerance(found, 2.0)]  # fmt: skip
        if label == 2:
            lesions = match_lesions(r, p)
    return [*values, lesions.tp, lesions.fp, lesions.fn]


def full_volume(reference, prediction, spacing) -> list[float]:
    values = []
    diagonal = float(np.linalg.norm(np.array(reference.shape) * np.array(spacing)))
    for label in LABELS:
        r, p = reference == label, prediction == label
        (r_border, r_areas), (p_border, p_areas) = surfels(r, spacing), surfels(p, spacing)
        r_to_p = ndimage.distance_transform_edt(~p_border, sampling=spacing)[r_border]
        p_to_r = ndimage.distance_transform_edt(~r_border, sampling=spacing)[p_border]
        r_order, p_order = np.argsort(r_to_p), np.argsort(p_to_r)
        found = SurfaceDistances(r_to_p[r_order], r_areas[r_order], p_to_r[p_order], p_areas[p_order], diagonal)
        values += [dice(r, p), found.hd(95), found.nsd(1.0), found.nsd(2.0)]
        if label == 2:
            lesions = match_lesions(r, p)
    return [*values, lesions.tp, lesions.fp, lesions.fn]


def measure(function: Callable, *args, repeats: int = 1) -> tuple[float, float, list[float]]:
    """(best seconds, peak extra GiB, result)."""
    best, peak, result = float("inf"), 0.0, []
    for _ in range(repeats):
        tracemalloc.start()
        start = time.perf_counter()
        result = function(*args)
        best = min(best, time.perf_counter() - start)
        peak = max(peak, tracemalloc.get_traced_memory()[1] / GIB)
        tracemalloc.stop()
    return best, peak, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", type=int, nargs=3)
    parser.add_argument("--spacing", type=float, nargs=3, default=(3.0, 0.98, 0.98))
    parser.add_argument("--repeats", type=int)
    parser.add_argument("--skip-full-volume", action="store_true")
    args = harness.parse(parser, dict(shape=(40, 128, 128), repeats=1), dict(shape=(200, 512, 512), repeats=3))
    spacing = tuple(args.spacing)
    reference, prediction = synthetic_case(tuple(args.shape), spacing)
    print(f"case {tuple(args.shape)} spacing {spacing}; GTVp {np.count_nonzero(reference == 1)} voxels, "
          f"GTVn {np.count_nonzero(reference == 2)} voxels")  # fmt: skip
    our_time, our_memory, our_values = measure(ours, reference, prediction, spacing, repeats=args.repeats)
    dm_time, dm_memory, dm_values = measure(with_deepmind, reference, prediction, spacing, repeats=args.repeats)
    rows = [("ours (union-box crop)", our_time, our_memory), ("DeepMind surface-distance", dm_time, dm_memory)]
    assert np.allclose(our_values, dm_values, rtol=0, atol=1e-9), (our_values, dm_values)
    if not args.skip_full_volume:
        fv_time, fv_memory, fv_values = measure(full_volume, reference, prediction, spacing)
        assert np.allclose(our_values, fv_values, rtol=0, atol=1e-9), (our_values, fv_values)
        rows.append(("full volume (MetricsReloaded-style)", fv_time, fv_memory))
    names = ["dice", "hd95", "nsd1", "nsd2"]
    print("values (same for all):", {f"{k}_{n}": round(v, 6) for n in LABELS.values() for k, v in
                                     zip(names, our_values[:4] if n == "gtvp" else our_values[4:8], strict=True)},
          "lesions tp/fp/fn", our_values[8:])  # fmt: skip
    for name, seconds, memory in rows:
        print(f"{name:38s} {seconds:8.3f} s  peak extra {memory:6.3f} GiB  ratio {seconds / our_time:6.1f}x")
    print(
        f"goal >= 2x faster than DeepMind: {'met' if dm_time / our_time >= 2 else 'NOT met'}; "
        f"extra memory <= 0.5 GiB: {'met' if our_memory <= 0.5 else 'NOT met'}"
    )


if __name__ == "__main__":
    main()
