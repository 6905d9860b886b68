"""Surface distances between two 3D masks, shared by HD95 and the normalised surface Dice (NSD).

Definition: the surface-element ("surfel") one of DeepMind's ``surface-distance`` package
(github google-deepmind/surface-distance, ``surface_distance/metrics.py``; Nikolov et al., "Clinically
applicable segmentation of head and neck anatomy for radiotherapy", JMIR 2021):

- a surfel sits at every voxel corner whose 2x2x2 neighbourhood is neither all inside nor all
  outside the mask; its area is the marching-cubes area of that neighbourhood under the spacing
  (the area table is taken from the package, ``lookup_tables.create_table_neighbour_code_to_surface_area``);
- the distance of a surfel of one mask is the Euclidean distance (mm) to the nearest surfel of the
  other (the package reads it from ``scipy.ndimage.distance_transform_edt`` over the box; we scan the
  lattice offsets around each surfel in order of length, and find the surfels far from the other
  surface with ``scipy.spatial`` (or the package's own transform when they are many): the same
  float64 distances, computed from the offset as scipy computes them, with work proportional to the
  surfel count rather than to the box volume);
- HD95 is the larger of the two directed area-weighted 95th percentiles (the smallest distance whose
  cumulative area fraction reaches 0.95); NSD at tolerance t is the surfel area within t of the other
  surface, over the total surfel area of both.

Both masks are cropped to their union bounding box (the surfel grid extends one cube beyond it),
which leaves every surfel and distance unchanged (outside the box the masks are empty) and keeps the
work proportional to the objects, not to the 512x512x300 grid; a caller scoring several labels of
one label map crops to the union of all first, and each label is cropped again to its own box.

Empty masks (the package returns inf / NaN there; these are our documented values):
both empty: HD95 0 mm and NSD 1 (perfect agreement, as Dice 1 for two empty masks);
exactly one empty: HD95 = ``empty_distance`` (the caller passes the image diagonal in mm, the
largest distance the grid can hold) and NSD 0.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise
from pathlib import Path
from types import ModuleType

import numpy as np

from evaluation.metrics import checks
from evaluation.metrics.boxes import CroppedPair, bounding_box, crop_padded, cropped_pair, in_whole


@lru_cache(maxsize=32)
def _area_table(spacing: tuple[float, float, float]) -> np.ndarray:
    return _lookup_tables().create_table_neighbour_code_to_surface_area(spacing)


@lru_cache(maxsize=1)
def _lookup_tables() -> ModuleType:
    """The package's ``surface_distance/lookup_tables.py`` (numpy only), loaded as a module of its own: the
    package's ``__init__`` imports its metrics and with them scipy.ndimage, 0.25 s of CPU in every
    segmentation worker that needs no distance transform (issue 30). The package is found, not imported."""
    found = importlib.util.find_spec("surface_distance")
    if found is None or not found.submodule_search_locations:
        raise ImportError("the package surface-distance is not installed")
    path = Path(next(iter(found.submodule_search_locations))) / "lookup_tables.py"
    spec = importlib.util.spec_from_file_location("surface_distance.lookup_tables", path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def surfels(mask: np.ndarray, spacing: tuple[float, float, float]) -> tuple[np.ndarray, np.ndarray]:
    """Boolean map of the surfel cubes (grid one larger than ``mask`` on each axis) and their areas."""
    code = _codes(mask)
    border = _is_surfel(code)
    return border, _area_table(spacing)[code[border]]


def _is_surfel(code: np.ndarray) -> np.ndarray:
    """Cubes neither all inside nor all outside the mask."""
    return (code != 0) & (code != 255)


def _surfel_cubes(
    mask: np.ndarray, parts: Sequence[tuple[slice, ...]], spacing: tuple[float, float, float]
) -> tuple[np.ndarray, np.ndarray]:
    """Flat indices (into the cube grid, one larger than ``mask`` on each axis) and areas of the surfels
    of ``mask``, found part by part: every voxel around a part is empty (``boxes.separated_boxes``), so
    a part's cubes and codes are the whole mask's there, and no cube is in two parts."""
    grid = tuple(n + 1 for n in mask.shape)
    cubes, areas = [], []
    for part in parts:
        code = _codes(mask[part])
        local = np.flatnonzero(_is_surfel(code))
        cubes.append(in_whole(local, code.shape, [axis.start for axis in part], grid))
        areas.append(_area_table(spacing)[code.ravel()[local]])
    return np.concatenate(cubes), np.concatenate(areas)


def _codes(mask: np.ndarray) -> np.ndarray:
    """Neighbourhood code of every cube of 2x2x2 voxels, the grid extended by one on each axis.

    Cube ``i`` spans voxels ``i - 1`` and ``i`` on each axis (out-of-grid voxels are background).
    The corner at offset (dz, dy, dx) has the bit ``2 ** (7 - 4 dz - 2 dy - dx)`` (the bit order of
    the package's area table: (0, 0, 0) is 128, (1, 1, 1) is 1), built from pairs of corners along x,
    then y, then z: three passes over the grid instead of one per corner.
    """
    grid = np.zeros(tuple(s + 2 for s in mask.shape), dtype=np.uint8)
    grid[tuple(slice(1, s + 1) for s in mask.shape)] = mask
    pairs = (grid[:, :, :-1] << 1) | grid[:, :, 1:]  # dx: 0..3
    quads = (pairs[:, :-1] << 2) | pairs[:, 1:]  # dy, dx: 0..15
    return (quads[:-1] << 4) | quads[1:]  # dz, dy, dx: 0..255


@dataclass(frozen=True)
class SurfaceDistances:
    """Surfel distances (mm) of each surface to the other with their areas (mm²), sorted by distance,
    then area (the package's arrays, so every sum over them is the package's to the last bit)."""

    reference_to_prediction: np.ndarray
    reference_areas: np.ndarray
    prediction_to_reference: np.ndarray
    prediction_areas: np.ndarray
    empty_distance: float

    def hd(self, percent: float = 95.0) -> float:
        """Robust Hausdorff distance: max of the two directed area-weighted percentiles."""
        ref_n, pred_n = self.reference_areas.size, self.prediction_areas.size
        if ref_n == 0 and pred_n == 0:
            return 0.0
        if ref_n == 0 or pred_n == 0:
            return float(self.empty_distance)
        return max(
            _weighted_percentile(self.reference_to_prediction, self.reference_areas, percent),
            _weighted_percentile(self.prediction_to_reference, self.prediction_areas, percent),
        )

    def nsd(self, tolerance: float) -> float:
        """Normalised surface Dice at ``tolerance`` mm."""
        total = float(self.reference_areas.sum() + self.prediction_areas.sum())
        if total == 0.0:
            return 1.0
        near = (
            self.reference_areas[self.reference_to_prediction <= tolerance].sum()
            + self.prediction_areas[self.prediction_to_reference <= tolerance].sum()
        )
        return float(near / total)

    def masd(self) -> float:
        """Mean average surface distance: the mean of the two directed area-weighted mean distances.

        DeepMind's ``compute_average_surface_distance`` returns the two directed means; MASD is their
        average (Maier-Hein et al., "Metrics reloaded", Nature Methods 2024; MetricsReloaded
        ``pairwise_measures.py``, ``measured_masd``, there over border voxels instead of surfels).
        Both empty: 0.0; exactly one empty: ``empty_distance``.
        """
        if self.reference_areas.size == 0 and self.prediction_areas.size == 0:
            return 0.0
        if self.reference_areas.size == 0 or self.prediction_areas.size == 0:
            return float(self.empty_distance)
        directed = [
            np.sum(self.reference_to_prediction * self.reference_areas) / np.sum(self.reference_areas),
            np.sum(self.prediction_to_reference * self.prediction_areas) / np.sum(self.prediction_areas),
        ]
        return float((directed[0] + directed[1]) / 2.0)


def _weighted_percentile(distances: np.ndarray, areas: np.ndarray, percent: float) -> float:
    cumulative = np.cumsum(areas) / np.sum(areas)
    index = int(np.searchsorted(cumulative, percent / 100.0))
    return float(distances[min(index, distances.size - 1)])


def surface_distances(
    reference: np.ndarray,
    prediction: np.ndarray,
    spacing: tuple[float, float, float],
    empty_distance: float = float("inf"),
) -> SurfaceDistances:
    """Surfel distances between two boolean 3D masks of one shape (:func:`pair_surface_distances` of
    their :func:`boxes.cropped_pair`)."""
    return pair_surface_distances(cropped_pair(reference, prediction), spacing, empty_distance)


def pair_surface_distances(
    pair: CroppedPair | None, spacing: tuple[float, float, float], empty_distance: float = float("inf")
) -> SurfaceDistances:
    """Surfel distances between the two masks of a 3D :class:`boxes.CroppedPair` (``None``: both empty).

    Work in proportion to the two surfaces, not to the grid: the masks are cropped to their union box
    (a distance depends only on the lattice offset between two surfels, so the crop changes no bit),
    their surfels are found in the boxes of the parts that empty planes separate (a few lesions far
    apart fill little of their box), and each surfel's nearest surfel of the other surface is found
    by :func:`_nearest`.
    """
    spacing = tuple(float(s) for s in spacing)
    if pair is None:
        return SurfaceDistances(*(np.empty(0),) * 4, empty_distance)
    ref_cubes, ref_areas = _surfel_cubes(pair.reference, pair.parts, spacing)
    pred_cubes, pred_areas = _surfel_cubes(pair.prediction, pair.parts, spacing)
    if ref_areas.size and pred_areas.size:
        grid = tuple(n + 1 for n in pair.reference.shape)
        ref_to_pred = _nearest(ref_cubes, pred_cubes, grid, spacing)
        pred_to_ref = _nearest(pred_cubes, ref_cubes, grid, spacing)
    else:
        ref_to_pred = np.full(ref_areas.size, np.inf)
        pred_to_ref = np.full(pred_areas.size, np.inf)
    # sorted by distance, then area: the order of the package's ``sorted(zip(distances, areas))``, which
    # also makes the arrays independent of the order the parts were visited in
    ref_order, pred_order = np.lexsort((ref_areas, ref_to_pred)), np.lexsort((pred_areas, pred_to_ref))
    return SurfaceDistances(
        ref_to_pred[ref_order], ref_areas[ref_order], pred_to_ref[pred_order], pred_areas[pred_order], empty_distance
    )


def _lengths(offsets: np.ndarray, spacing: tuple[float, float, float]) -> np.ndarray:
    """Length (mm) of each (n, 3) lattice offset, computed as ``scipy.ndimage.distance_transform_edt``
    computes a distance from its feature offsets (scaled, squared, summed along z, y, x, square root),
    so a distance is the reference's to the last bit."""
    scaled = offsets * np.asarray(spacing)
    return np.sqrt(np.add.reduce(scaled * scaled, axis=1))


@dataclass(frozen=True)
class _Scan:
    """Every lattice offset in a ball, sorted by length (ties in C order), with the lengths, the
    ball's reach in voxels along each axis, and the chunks of offsets scanned in turn."""

    offsets: np.ndarray
    lengths: np.ndarray
    reach: tuple[int, int, int]
    chunks: tuple[tuple[int, int], ...]


SCAN_OFFSETS = 1000  # about this many offsets in the scanned ball (a radius of ~6 voxels when isotropic)
SCAN_REACH = 32  # voxels along an axis at most (under a spacing of 1e-6 x 1 x 1 mm the ball would be a needle)
SCAN_BLOCK = 1 << 21  # look-ups at a time (2 M: 19 MB of indices and hits)
BRUTE_FORCE_SURFELS = 64  # far surfels searched for without a KD-tree (see _nearest_by_search)
FAR_SURFELS_PER_VOXEL = 32  # more far surfels than 1 per 32 voxels: a distance transform instead of a search
DISTANCE_TRANSFORM_VOXELS = 1 << 24  # its largest grid: scipy's transform takes ~50 bytes a voxel (800 MB)


@lru_cache(maxsize=32)
def _scan(spacing: tuple[float, float, float]) -> _Scan:
    """The offsets :func:`_nearest` scans under ``spacing``: a ball of about ``SCAN_OFFSETS``."""
    radius = (SCAN_OFFSETS * 3 / (4 * np.pi) * float(np.prod(spacing))) ** (1 / 3)
    reach = tuple(min(SCAN_REACH, int(np.ceil(radius / s))) for s in spacing)
    radius = min(radius, *(k * s for k, s in zip(reach, spacing, strict=True)))  # the box holds the whole ball
    offsets = np.stack(np.meshgrid(*(np.arange(-k, k + 1) for k in reach), indexing="ij"), axis=-1).reshape(-1, 3)
    lengths = _lengths(offsets, spacing)
    order = np.argsort(lengths, kind="stable")
    inside = lengths[order] <= radius  # past the ball, a shorter offset could lie outside the box
    offsets, lengths = offsets[order][inside], lengths[order][inside]
    bounds = [0, *(b for b in (1, 27, 125, 343) if b < lengths.size), lengths.size]
    return _Scan(offsets, lengths, reach, tuple(pairwise(bounds)))


def _nearest(
    cubes: np.ndarray, targets: np.ndarray, shape: tuple[int, ...], spacing: tuple[float, float, float]
) -> np.ndarray:
    """Distance (mm) from each surfel cube (a flat index into a grid of ``shape``) to the nearest of ``targets``.

    Exact, by two methods. First a scan of the lattice offsets in order of length (:func:`_scan`):
    the first offset that lands on a target is the nearest, so a surfel both surfaces share costs one
    look-up, and one near the other surface a few. A chunk of offsets after which more than half of the
    surfels it looked for are still unmatched ends the scan: those left are far from the other surface
    (a missed or an extra lesion) and are searched for by :func:`_nearest_by_search`, or, when there
    are many (more than one per ``FAR_SURFELS_PER_VOXEL`` voxels of a grid of at most
    ``DISTANCE_TRANSFORM_VOXELS``), read from a distance transform (:func:`_nearest_by_distance_transform`).
    """
    scan = _scan(spacing)
    padded = tuple(n + 2 * k for n, k in zip(shape, scan.reach, strict=True))
    strides = np.array([padded[1] * padded[2], padded[2], 1])
    target_map = np.zeros(int(np.prod(padded)), dtype=bool)
    target_map[in_whole(targets, shape, scan.reach, padded)] = True
    starts = in_whole(cubes, shape, scan.reach, padded)
    deltas = scan.offsets @ strides
    distances = np.empty(cubes.size)
    todo = np.arange(cubes.size)
    for start, stop in scan.chunks:
        found = np.zeros(todo.size, dtype=bool)
        rows = max(1, SCAN_BLOCK // (stop - start))
        for block in range(0, todo.size, rows):  # (rows, offsets) look-ups at a time: bounded memory
            part = todo[block : block + rows]
            hits = target_map.take(starts[part, None] + deltas[start:stop])
            first = hits.argmax(axis=1)
            hit = found[block : block + rows] = hits.any(axis=1)
            distances[part[hit]] = scan.lengths[start + first[hit]]
        looked, todo = todo.size, todo[~found]
        if todo.size == 0:
            return distances
        if start > 0 and 2 * todo.size > looked:
            break
    if todo.size * FAR_SURFELS_PER_VOXEL > int(np.prod(shape)) and np.prod(shape) <= DISTANCE_TRANSFORM_VOXELS:
        distances[todo] = _nearest_by_distance_transform(cubes[todo], targets, shape, spacing)
    else:
        distances[todo] = _nearest_by_search(cubes[todo], targets, shape, spacing)
    return distances


def _nearest_by_distance_transform(
    cubes: np.ndarray, targets: np.ndarray, shape: tuple[int, ...], spacing: tuple[float, float, float]
) -> np.ndarray:
    """:func:`_nearest` for many surfels far from the targets (holes all through a mask, say): the
    package's own computation, ``scipy.ndimage.distance_transform_edt`` of the targets over the grid,
    whose cost (~0.16 µs a voxel) is then below a KD-tree's (1-15 µs a far surfel)."""
    from scipy.ndimage import distance_transform_edt  # on first use, as the other scipy imports

    outside = np.ones(int(np.prod(shape)), dtype=bool)
    outside[targets] = False
    return distance_transform_edt(outside.reshape(shape), sampling=spacing).ravel()[cubes]


def _nearest_by_search(
    cubes: np.ndarray, targets: np.ndarray, shape: tuple[int, ...], spacing: tuple[float, float, float]
) -> np.ndarray:
    """:func:`_nearest` for surfels far from the targets, by ``scipy.spatial``: every pair's distance
    (``cdist``) for a few surfels, else a ``cKDTree`` of the targets (in mm).

    A KD-tree costs ~0.13 µs per target to build and a pair's distance ~2 ns, so up to
    ``BRUTE_FORCE_SURFELS`` surfels are cheaper without a tree. The tree is built by scipy's
    sliding-midpoint rule without shrinking nodes to their points (``balanced_tree=False,
    compact_nodes=False``): on lattice points that builds in half the time and answers far queries
    faster, with leaves of 32 points. The distance is recomputed from the offset to the target found
    (:func:`_lengths`), as the scan computes it."""
    from scipy.spatial import cKDTree  # on first use: 0.2 s of start-up for every evaluation otherwise
    from scipy.spatial.distance import cdist

    step = np.asarray(spacing)
    points = np.stack(np.unravel_index(cubes, shape), axis=1)
    target_points = np.stack(np.unravel_index(targets, shape), axis=1)
    if points.shape[0] <= BRUTE_FORCE_SURFELS and points.shape[0] * target_points.shape[0] <= 1 << 22:
        nearest = cdist(points * step, target_points * step, "sqeuclidean").argmin(axis=1)
    else:
        tree = cKDTree(target_points * step, leafsize=32, balanced_tree=False, compact_nodes=False)
        nearest = tree.query(points * step, k=1)[1]
    return _lengths(target_points[nearest] - points, spacing)


def _cropped(
    reference: np.ndarray, prediction: np.ndarray, spacing: Sequence[float], one_empty: float | None
) -> SurfaceDistances:
    """Validated masks -> :func:`surface_distances` on their padded union bounding box."""
    reference = np.asarray(reference, dtype=bool)
    prediction = np.asarray(prediction, dtype=bool)
    checks.same_shape(reference, prediction)
    if reference.ndim != 3:
        raise ValueError(f"masks must be 3D, got shape {reference.shape}")
    step = checks.spacing(spacing, 3)
    if one_empty is None:
        one_empty = image_diagonal(reference.shape, step)
    box = bounding_box(reference, prediction)
    if box is None:
        return SurfaceDistances(*(np.empty(0),) * 4, float(one_empty))
    return surface_distances(
        crop_padded(reference, box), crop_padded(prediction, box), tuple(step), empty_distance=float(one_empty)
    )


def image_diagonal(shape: Sequence[int], spacing: Sequence[float]) -> float:
    """Length (mm) of the grid's diagonal, ``sqrt(sum((shape * spacing)²))``: the default distance
    for a mask compared with an empty one (no finite distance exists there)."""
    return float(np.sqrt(np.sum((np.asarray(shape, dtype=float) * np.asarray(spacing, dtype=float)) ** 2)))


def hausdorff_distance(
    reference: np.ndarray,
    prediction: np.ndarray,
    spacing: Sequence[float],
    percent: float = 100.0,
    both_empty: float = 0.0,
    one_empty: float | None = None,
) -> float:
    """(Robust) Hausdorff distance in mm: the larger of the two directed area-weighted ``percent``-th
    percentiles of surfel distances (``percent=95`` gives HD95).

    Reference: DeepMind surface-distance, ``surface_distance/metrics.py``
    (``compute_robust_hausdorff``); see the module docstring for the surfel definition.

    Parameters
    ----------
    reference, prediction : (z, y, x) boolean masks of one shape.
    spacing : (3,) voxel size in mm along (z, y, x).
    percent : percentile in (0, 100]; 100 is the classical Hausdorff distance.
    both_empty : value when both masks are empty (0.0: perfect agreement).
    one_empty : value when exactly one mask is empty; ``None`` = :func:`image_diagonal` of the grid.

    Returns
    -------
    float, mm.
    """
    if not 0 < percent <= 100:
        raise ValueError(f"percent must be in (0, 100], got {percent}")
    found = _cropped(reference, prediction, spacing, one_empty)
    if found.reference_areas.size == 0 and found.prediction_areas.size == 0:
        return float(both_empty)
    return found.hd(percent)


def mean_average_surface_distance(
    reference: np.ndarray,
    prediction: np.ndarray,
    spacing: Sequence[float],
    both_empty: float = 0.0,
    one_empty: float | None = None,
) -> float:
    """MASD in mm (:meth:`SurfaceDistances.masd`); parameters as :func:`hausdorff_distance`."""
    found = _cropped(reference, prediction, spacing, one_empty)
    if found.reference_areas.size == 0 and found.prediction_areas.size == 0:
        return float(both_empty)
    return found.masd()


def normalised_surface_dice(
    reference: np.ndarray,
    prediction: np.ndarray,
    spacing: Sequence[float],
    tolerance: float,
    both_empty: float = 1.0,
) -> float:
    """Normalised surface Dice (NSD) at ``tolerance`` mm: the surfel area of both surfaces within the
    tolerance of the other surface, over the total surfel area.

    Reference: Nikolov et al. 2021; DeepMind surface-distance ``surface_distance/metrics.py``
    (``compute_surface_dice_at_tolerance``).

    Parameters
    ----------
    reference, prediction : (z, y, x) boolean masks of one shape.
    spacing : (3,) voxel size in mm along (z, y, x).
    tolerance : non-negative distance in mm.
    both_empty : value when both masks are empty (1.0); exactly one empty gives 0.0 (no surface near).

    Returns
    -------
    float in [0, 1].
    """
    if not np.isfinite(tolerance) or tolerance < 0:
        raise ValueError(f"tolerance must be a finite non-negative number of mm, got {tolerance}")
    found = _cropped(reference, prediction, spacing, None)
    if found.reference_areas.size == 0 and found.prediction_areas.size == 0:
        return float(both_empty)
    return found.nsd(tolerance)
