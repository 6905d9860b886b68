"""Bounding boxes of label maps and masks, and crops to them: what lets the surface, lesion and volume
metrics work in proportion to the objects rather than to a 512x512x300 grid (outside the box every map is
zero, so no count, component or distance changes)."""

from __future__ import annotations

import numpy as np


def bounding_box(*volumes: np.ndarray) -> tuple[slice, ...] | None:
    """The smallest box holding every nonzero voxel of all ``volumes`` (same shape), or ``None``.

    One pass per volume over its slices, then a pass over the nonzero slab only.
    """
    lows, highs = [], []
    for volume in volumes:
        slabs = np.flatnonzero(_nonzero_along(volume.reshape(volume.shape[0], -1), 1))
        if slabs.size == 0:
            continue
        first, last = int(slabs[0]), int(slabs[-1]) + 1
        plane = _nonzero_along(volume[first:last], 0)
        low, high = [first], [last]
        for axis in range(plane.ndim):
            other = tuple(a for a in range(plane.ndim) if a != axis)
            hits = np.flatnonzero(plane.any(axis=other) if other else plane)
            low.append(int(hits[0]))
            high.append(int(hits[-1]) + 1)
        lows.append(low)
        highs.append(high)
    if not lows:
        return None
    low, high = np.min(lows, axis=0), np.max(highs, axis=0)
    return tuple(slice(int(a), int(b)) for a, b in zip(low, high, strict=True))


def _nonzero_along(volume: np.ndarray, axis: int) -> np.ndarray:
    """Whether any element along ``axis`` is nonzero: the maximum for unsigned and boolean volumes
    (a vectorised reduction, about twice as fast as ``any`` on a 512x512x200 uint8 label map)."""
    if volume.dtype == bool or np.issubdtype(volume.dtype, np.unsignedinteger):
        return volume.max(axis=axis) > 0
    return volume.any(axis=axis)


def crop_padded(volume: np.ndarray, box: tuple[slice, ...], pad: int = 1) -> np.ndarray:
    """``volume[box]`` inside a zero frame of ``pad`` voxels on every side."""
    cropped = volume[box]
    out = np.zeros(tuple(s + 2 * pad for s in cropped.shape), dtype=volume.dtype)
    out[tuple(slice(pad, pad + s) for s in cropped.shape)] = cropped
    return out
