"""Submissions generated from a declaration, for ``python -m evaluation.verify --synthesize``: for each
output kind the cases official evaluations treat specially (empty and full masks, a single voxel,
shifted / dilated / eroded / split / merged copies of the reference, extra and missing lesions, tied
scores, boundary values, missing outputs), drawn reproducibly from a seed.

One entry per output kind in ``SYNTHESIS`` (keyed by the kind's name, beside the kinds of
``output_kinds.KINDS``): reference value in, named variants out, the first (``IDENTICAL``) the neutral
one a shrunk case falls back to. A variant's value is an array (an image kind: written on the
reference's grid), a JSON value, or ``MISSING`` (the job lacks the output).
"""

from __future__ import annotations

import csv
import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from scipy import ndimage

from evaluation.declarative.output_kinds import KINDS, OutputSpec, region_of
from evaluation.declarative.reference import load_declared_reference
from evaluation.declarative.schema import Declaration
from evaluation.errors import ConfigurationError
from evaluation.platform.images import sitk  # (imported on first use: an image without it says so in one line)

IDENTICAL = "identical"
MISSING = None  # the variant's value of an absent output
MISSING_JOB = "missing-job"  # a case without any job (the case folder absent)
MISSING_OUTPUT = "missing-output"  # a job without this output
ABSENT = (MISSING_OUTPUT, MISSING_JOB)  # the variants that leave an output out
Variants = dict[str, Any]


@dataclass(frozen=True)
class Truth:
    """One case's reference of one output: an array on its image's grid (image kinds), its objects
    (points (n, 3), boxes (n, 4)) or its value; ``radius``: the declared match distance of its
    detection metrics (points exactly on it), 1.0 when none is declared."""

    value: Any
    image: sitk.Image | None = None
    radius: float = 1.0


def _foreground_values(output: OutputSpec) -> tuple[int, ...]:
    return tuple(v for _, value in output.labels for v in region_of(value)[:1]) or (1,)


def _components(mask: np.ndarray) -> tuple[np.ndarray, int]:
    """The 26- (3D) or 8-connected (2D) components of ``mask``."""
    return ndimage.label(mask, structure=np.ones((3,) * mask.ndim, dtype=bool))


def _shifted(array: np.ndarray, axis: int) -> np.ndarray:
    """``array`` moved by one voxel along ``axis``, zero-filled (no wrap)."""
    moved = np.zeros_like(array)
    source = [slice(None)] * array.ndim
    target = [slice(None)] * array.ndim
    source[axis], target[axis] = slice(0, -1), slice(1, None)
    moved[tuple(target)] = array[tuple(source)]
    return moved


def _far_voxel(mask: np.ndarray) -> tuple[int, ...]:
    """The voxel farthest from ``mask`` (a corner when it is empty)."""
    if not mask.any():
        return (0,) * mask.ndim
    distance = ndimage.distance_transform_edt(~mask)
    return tuple(int(i) for i in np.unravel_index(int(np.argmax(distance)), mask.shape))


def _label_variants(truth: np.ndarray, values: tuple[int, ...], rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Label-image variants of ``truth`` (any voxel values), as the official codes' special cases."""
    mask = truth != 0
    first = int(values[0])
    found: dict[str, np.ndarray] = {IDENTICAL: truth.copy(), "empty": np.zeros_like(truth)}
    found["full"] = np.full_like(truth, first)
    single = np.zeros_like(truth)
    spots = np.argwhere(mask)
    spot = spots[rng.integers(len(spots))] if len(spots) else np.array(truth.shape) // 2
    single[tuple(spot)] = first
    found["single-voxel"] = single
    found["shifted"] = _shifted(truth, int(rng.integers(truth.ndim)))
    found["dilated"] = ndimage.grey_dilation(truth, size=(3,) * truth.ndim)
    eroded = truth.copy()
    for value in np.unique(truth[mask]):
        eroded[(truth == value) & ~ndimage.binary_erosion(truth == value)] = 0
    found["eroded"] = eroded
    labelled, count = _components(mask)
    split = truth.copy()
    if count:
        sizes = np.bincount(labelled.ravel())[1:]
        largest = np.argwhere(labelled == int(np.argmax(sizes)) + 1)
        axis = int(np.argmax(largest.max(axis=0) - largest.min(axis=0)))
        middle = (int(largest[:, axis].min()) + int(largest[:, axis].max())) // 2
        plane = [slice(None)] * truth.ndim
        plane[axis] = slice(middle, middle + 1)
        split[tuple(plane)] = 0
    found["split"] = split
    merged = truth.copy()
    if count >= 2:  # a line of voxels joining the first two components' centres
        centres = ndimage.center_of_mass(mask, labelled, [1, 2])
        for t in np.linspace(0.0, 1.0, 2 * max(truth.shape)):
            point = tuple(round(a + t * (b - a)) for a, b in zip(*centres, strict=True))
            merged[point] = merged[point] or first
    else:
        merged = ndimage.grey_dilation(truth, size=(5,) * truth.ndim)
    found["merged"] = merged
    extra = truth.copy()
    extra[_far_voxel(mask)] = first
    found["extra-lesion"] = extra
    missing = truth.copy()
    if count:
        sizes = np.bincount(labelled.ravel())[1:]
        missing[labelled == int(np.argmin(sizes)) + 1] = 0
    found["missing-lesion"] = missing
    return found


def segmentation_variants(output: OutputSpec, truth: Truth, rng: np.random.Generator) -> Variants:
    """Empty and full masks, a single voxel, shifted / dilated / eroded / split / merged copies, an
    extra and a missing lesion, and a missing output."""
    found: Variants = dict(_label_variants(np.asarray(truth.value), _foreground_values(output), rng))
    found[MISSING_OUTPUT] = MISSING
    return found


def heat_map_variants(output: OutputSpec, truth: Truth, rng: np.random.Generator) -> Variants:
    """Detection maps from the reference lesions: each lesion a candidate with its own score (drawn),
    the mask variants as maps, tied scores, the boundary scores 1 and a tiny one, and a missing map."""
    mask = np.asarray(truth.value) != 0
    found: Variants = {}
    for name, variant in _label_variants(mask.astype(np.uint8), (1,), rng).items():
        labelled, count = _components(variant != 0)
        scores = np.concatenate([[0.0], rng.uniform(0.05, 0.95, count)]).astype(np.float32)
        found[name] = scores[labelled]
    labelled, count = _components(mask)
    tied = np.where(mask, np.float32(0.5), np.float32(0.0))
    tied[_far_voxel(mask)] = 0.5  # a false positive tied with the lesions
    found["tied-scores"] = tied
    found["boundary-one"] = mask.astype(np.float32)
    found["boundary-tiny"] = np.where(mask, np.float32(1e-6), np.float32(0.0))
    found[MISSING_OUTPUT] = MISSING
    return found


def number_variants(output: OutputSpec, truth: Truth, rng: np.random.Generator) -> Variants:
    """The reference value, the range's ends (or 0 and 1), a tie (0.5, the same in every case), a
    drawn value, and a missing answer."""
    low, high = output.range or (0.0, 1.0)
    value = float(truth.value)
    return {IDENTICAL: value, "boundary-low": low, "boundary-high": high, "tied": (low + high) / 2,
            "drawn": float(rng.uniform(low, high)), MISSING_OUTPUT: MISSING}  # fmt: skip


def boolean_variants(output: OutputSpec, truth: Truth, rng: np.random.Generator) -> Variants:
    return {IDENTICAL: bool(truth.value), "wrong": not bool(truth.value), MISSING_OUTPUT: MISSING}


def choice_variants(output: OutputSpec, truth: Truth, rng: np.random.Generator) -> Variants:
    wrong = next(c for c in output.classes if c != truth.value)
    return {IDENTICAL: truth.value, "wrong": wrong, "first-class": output.classes[0], MISSING_OUTPUT: MISSING}


def probabilities_variants(output: OutputSpec, truth: Truth, rng: np.random.Generator) -> Variants:
    """One-hot on the truth, uniform (every class tied), all mass on a wrong class, drawn, missing."""
    classes = output.classes
    wrong = next(c for c in classes if c != truth.value)
    drawn = rng.dirichlet(np.ones(len(classes)))
    return {IDENTICAL: {c: float(c == truth.value) for c in classes},
            "uniform": dict.fromkeys(classes, 1.0 / len(classes)),
            "wrong": {c: float(c == wrong) for c in classes},
            "drawn": dict(zip(classes, (float(p) for p in drawn), strict=True)),
            MISSING_OUTPUT: MISSING}  # fmt: skip


def _points_json(points: list[list[float]], scores: Any) -> dict[str, Any]:
    """Points with their scores as the platform's "Multiple points" JSON."""
    items = [{"point": list(map(float, o)), "probability": float(p)} for o, p in zip(points, scores, strict=True)]
    return {"type": "Multiple points", "points": items, "version": {"major": 1, "minor": 0}}


def _boxes_json(boxes: list[list[float]], scores: Any) -> dict[str, Any]:
    """Boxes (x1, y1, x2, y2) with their scores as the platform's "Multiple 2D bounding boxes" JSON."""
    items = [{"corners": [[x1, y1, 0.0], [x2, y1, 0.0], [x2, y2, 0.0], [x1, y2, 0.0]], "probability": float(p)}
             for (x1, y1, x2, y2), p in zip(boxes, scores, strict=True)]  # fmt: skip
    return {"type": "Multiple 2D bounding boxes", "boxes": items, "version": {"major": 1, "minor": 0}}


def _object_variants(
    written: Callable[[list[list[float]], Any], dict[str, Any]],
    truth: np.ndarray,
    moved: np.ndarray,
    far: list[float],
    rng: np.random.Generator,
) -> Variants:
    """The variants shared by points and boxes: the reference objects with drawn scores, none, ``moved``
    copies, duplicated, tied, extra and missing objects, the boundary scores 0 and 1, a missing output."""
    objects = [list(map(float, o)) for o in truth]
    drawn = rng.uniform(0.05, 0.95, len(objects))
    return {
        IDENTICAL: written(objects, drawn),
        "empty": written([], []),
        "moved": written([list(map(float, o)) for o in moved], drawn),
        "duplicated": written(objects + objects, np.concatenate([drawn, drawn])),
        "tied-scores": written(objects, np.full(len(objects), 0.5)),
        "extra": written([*objects, far], [*drawn, 0.5]),
        "missing-one": written(objects[1:], drawn[1:]),
        "boundary-scores": written(objects, (np.arange(len(objects)) % 2).astype(float)),
        MISSING_OUTPUT: MISSING,
    }


def points_variants(output: OutputSpec, truth: Truth, rng: np.random.Generator) -> Variants:
    """Points: the reference's, each moved exactly the match radius along x (on it) and 1.5 times it
    (beyond), duplicated, tied, extra, missing; and the shared object variants."""
    points = np.asarray(truth.value, dtype=float).reshape(-1, 3)
    on = points + np.array([truth.radius, 0.0, 0.0])
    far = [float(points[:, 0].max(initial=0.0) + 10 * truth.radius), 0.0, 0.0]
    found = _object_variants(_points_json, points, on, far, rng)
    found["on-radius"] = found.pop("moved")
    beyond = points + np.array([1.5 * truth.radius, 0.0, 0.0])
    found["beyond-radius"] = _points_json(beyond.tolist(), np.full(len(points), 0.5))
    return found


def boxes_variants(output: OutputSpec, truth: Truth, rng: np.random.Generator) -> Variants:
    """Boxes: the reference's, shifted by half their width, enlarged twice about their centres,
    duplicated, tied, extra, missing; and the shared object variants."""
    boxes = np.asarray(truth.value, dtype=float).reshape(-1, 4)
    width = boxes[:, 2] - boxes[:, 0]
    shifted = boxes + np.stack([width / 2, 0 * width, width / 2, 0 * width], axis=1)
    far_x = float(boxes[:, 2].max(initial=0.0)) + 10.0
    found = _object_variants(_boxes_json, boxes, shifted, [far_x, 0.0, far_x + 4.0, 4.0], rng)
    found["shifted"] = found.pop("moved")
    centre, half = (boxes[:, :2] + boxes[:, 2:]) / 2, (boxes[:, 2:] - boxes[:, :2])
    found["enlarged"] = _boxes_json(np.hstack([centre - half, centre + half]).tolist(), np.full(len(boxes), 0.5))
    return found


def label_truth(output: OutputSpec, index: int, rng: np.random.Generator) -> np.ndarray:
    """A drawn reference label image: 8 x 16 x 16 (2D: 32 x 32), two boxes of its voxel values (none in
    the first case)."""
    shape = (32, 32) if output.dimension == 2 else (8, 16, 16)
    array = np.zeros(shape, dtype=np.uint8)
    values = output.voxel_values or (1,)
    for _ in range(2 if index else 0):
        corner = [int(rng.integers(0, s - 3)) for s in shape]
        size = [int(rng.integers(1, 4)) for _ in shape]
        array[tuple(slice(c, c + z) for c, z in zip(corner, size, strict=True))] = rng.choice(values)
    return array


def number_truth(output: OutputSpec, index: int, rng: np.random.Generator) -> str:
    """A drawn reference CSV cell: 0 and 1 in turn for a [0, 1] range (a binary reference), else drawn."""
    low, high = output.range or (0.0, 1.0)
    return repr(float(index % 2)) if (low, high) == (0.0, 1.0) else repr(float(rng.uniform(low, high)))


def boolean_truth(output: OutputSpec, index: int, rng: np.random.Generator) -> str:
    return output.true_values[0] if index % 2 else output.false_values[0]


def class_truth(output: OutputSpec, index: int, rng: np.random.Generator) -> str:
    return str(output.classes[index % len(output.classes)])


@dataclass(frozen=True)
class Synthesis:
    """What --synthesize draws for one output kind: the variants of a reference value, and a reference
    value (an image array, or a CSV cell) for a synthetic ground truth; None: not drawn."""

    variants: Callable[[OutputSpec, Truth, np.random.Generator], Variants]
    truth: Callable[[OutputSpec, int, np.random.Generator], Any] | None


# output kind -> what is synthesised for it
SYNTHESIS: dict[str, Synthesis] = {
    "segmentation": Synthesis(segmentation_variants, label_truth),
    "heat_map": Synthesis(heat_map_variants, label_truth),
    "number": Synthesis(number_variants, number_truth),
    "boolean": Synthesis(boolean_variants, boolean_truth),
    "choice": Synthesis(choice_variants, class_truth),
    "probabilities": Synthesis(probabilities_variants, class_truth),
    "boxes": Synthesis(boxes_variants, None),
    "points": Synthesis(points_variants, None),
}
assert set(SYNTHESIS) == set(KINDS), "every output kind has an entry"


def case_rng(seed: int, case: str, slug: str) -> np.random.Generator:
    """A case's own generator: the same draws for the same seed, whatever else is generated."""
    digest = hashlib.sha256(f"{seed}/{case}/{slug}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


def case_variants(declaration: Declaration, ground_truth: Path, seed: int) -> dict[str, dict[str, Variants]]:
    """case -> output slug -> that output's variants, from the reference of every case."""

    reference = load_declared_reference(ground_truth, declaration)
    radii = {m.output: float(dict(m.params)["threshold"]) for m in reversed(declaration.metrics)
             if dict(m.params).get("match") == "distance" and "threshold" in dict(m.params)}  # fmt: skip
    found: dict[str, dict[str, Variants]] = {}
    for case in reference.cases:
        found[case] = {}
        for output in declaration.outputs:
            if output.type.image:
                image = sitk.ReadImage(str(reference.files[output.slug][case]))
                truth = Truth(sitk.GetArrayFromImage(image), image)
            else:
                truth = Truth(reference.values[output.slug].get(case), radius=radii.get(output.slug, 1.0))
            found[case][output.slug] = SYNTHESIS[output.kind].variants(output, truth, case_rng(seed, case, output.slug))
    return found


def plan(cases: list[str], names: Mapping[str, list[str]], submissions: int) -> list[dict[str, dict[str, str]]]:
    """Which variant each case's output gets in each submission: every variant in turn (round robin,
    each output and each case offset), a missing job among them; the first submission's cases the
    first variants, none of them absent (a missing output or job, which a declaration may refuse: the
    first submission is scored whatever the missing policies)."""
    plans = []
    for k in range(submissions):
        chosen: dict[str, dict[str, str]] = {}
        for i, case in enumerate(cases):
            chosen[case] = {}
            for j, (slug, options) in enumerate(names.items()):
                turn = [*options, MISSING_JOB] if j == 0 else options
                if k == 0:
                    turn = [name for name in turn if name not in ABSENT]
                chosen[case][slug] = turn[(i + k * len(cases) + j) % len(turn)]
        plans.append(chosen)
    return plans


def write_outputs(
    declaration: Declaration,
    variants: Mapping[str, Mapping[str, Variants]],
    chosen: Mapping[str, Mapping[str, str]],
    target: Path,
    images: Mapping[str, Mapping[str, sitk.Image]],
) -> None:
    """The algorithm outputs of one submission, as ``make_input`` reads them: ``target/<case>/`` holds
    what a job wrote (images at ``images/<slug>/<case>.mha`` on the reference's grid, values as JSON);
    a missing job has no folder."""
    for case, outputs in chosen.items():
        if MISSING_JOB in outputs.values():
            continue
        folder = target / case
        folder.mkdir(parents=True)
        for output in declaration.outputs:
            value = variants[case][output.slug][outputs[output.slug]]
            if value is MISSING:
                continue
            if output.type.image:
                image = sitk.GetImageFromArray(value)
                image.CopyInformation(images[case][output.slug])
                path = folder / output.relative_path / f"{case}.mha"
                path.parent.mkdir(parents=True, exist_ok=True)
                sitk.WriteImage(image, str(path), useCompression=False)
            else:  # a prediction-file phase's output: <slug>.json, as make_input reads it
                path = folder / (output.relative_path or f"{output.slug}.json")
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(json.dumps(value))


def reference_images(declaration: Declaration, ground_truth: Path) -> dict[str, dict[str, sitk.Image]]:
    """case -> slug -> the reference image (its grid) of every image output."""
    reference = load_declared_reference(ground_truth, declaration)
    return {case: {o.slug: sitk.ReadImage(str(reference.files[o.slug][case])) for o in declaration.outputs
                   if o.type.image} for case in reference.cases}  # fmt: skip


def synthetic_ground_truth(declaration: Declaration, target: Path, seed: int, cases: int = 4) -> Path:
    """A small ground truth drawn from the declaration when the organizer gives none: ``cases`` cases,
    each output's reference drawn by its kind (``Synthesis.truth``: a label image, a CSV cell)."""
    names = [f"synth-{i:02d}" for i in range(cases)]
    rows: dict[str, dict[str, dict[str, str]]] = {}  # csv file -> case -> column -> cell
    for output in declaration.outputs:
        reference = output.reference
        for index, case in enumerate(names):
            rng = case_rng(seed, case, f"truth/{output.slug}")
            draw = SYNTHESIS[output.kind].truth
            if draw is not None and output.type.image and reference.pattern and "{case}" in reference.pattern:
                path = target / reference.pattern.replace("{case}", case).replace(".*", ".mha")
                path.parent.mkdir(parents=True, exist_ok=True)
                image = sitk.GetImageFromArray(draw(output, index, rng))
                sitk.WriteImage(image, str(path), useCompression=False)
            elif draw is not None and reference.csv_file and reference.column:
                rows.setdefault(reference.csv_file, {}).setdefault(case, {})[reference.column] = draw(
                    output, index, rng
                )
            else:
                raise ConfigurationError(f"--synthesize cannot draw a ground truth for output '{output.slug}' "
                                         f"({reference.text}): give --ground-truth.")  # fmt: skip
    for file, by_case in rows.items():
        columns = sorted({column for cells in by_case.values() for column in cells})
        path = target / file
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow([declaration.cases.id_column, *columns])
            for case, cells in sorted(by_case.items()):
                writer.writerow([case, *(cells.get(column, "") for column in columns)])
    return target
