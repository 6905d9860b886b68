"""Label images: SimpleITK reading, geometry checks (or nearest resampling) and label checks; 2D
masks where any non-zero pixel is foreground (``read_nonzero_mask``, DigestPath 2019).

HECKTOR's rules, shared by every segmentation challenge (HECKTOR and the declared ones): a label
image is single-channel with integer voxels; a prediction must share the reference's size, and its
spacing, origin and direction within ``tolerance`` (relative and absolute, 1e-4 by default), unless
it is resampled onto the reference grid (nearest neighbour); a voxel value outside the declared
labels is an error. Problems with a participant's file are ``SubmissionError``, with the organizer's
reference ``ConfigurationError``; every message names the case.

SimpleITK is imported when first used (``sitk``), so a run that reads no image (RARE25's JSON lists, a
prediction CSV) never loads it; the modules that read images take ``sitk`` from here.
"""

from __future__ import annotations

import importlib
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from evaluation.errors import ConfigurationError, EvaluationError, SubmissionError


class _Deferred:
    """Module ``name``, imported when one of its attributes is first used."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attribute: str) -> Any:
        try:
            module = importlib.import_module(self._name)
        except ModuleNotFoundError:
            raise ConfigurationError(
                f"This evaluation image has no {self._name}: it was built for a challenge without image outputs "
                "(requirements-images.txt is left out; python -m evaluation.image_packages)."
            ) from None
        return getattr(module, attribute)


if TYPE_CHECKING:
    import SimpleITK as sitk
else:
    sitk = _Deferred("SimpleITK")

GEOMETRY_TOLERANCE = 1e-4
GEOMETRY_POLICIES = ("error", "nearest")
# SimpleITK's integer pixel types, by name (looked up when an image is read)
INTEGER_PIXELS = tuple(f"sitk{sign}Int{bits}" for sign in ("U", "") for bits in (8, 16, 32, 64))


def read_image(path: Path) -> sitk.Image:
    """``sitk.ReadImage``; ITK's failure to allocate the voxels (a memory limit met while reading) raised as
    the ``MemoryError`` it is, which the runner names with the case and the limit, not as an unreadable file."""
    try:
        return sitk.ReadImage(str(path))
    except RuntimeError as error:
        if "allocate memory" in str(error) or "bad_alloc" in str(error):
            raise MemoryError(str(error).strip().splitlines()[-1]) from None
        raise


def _error(whose: str) -> type[EvaluationError]:
    return ConfigurationError if whose == "reference" else SubmissionError


def read_label_image(
    path: Path, case: str, whose: str, what: str = "segmentation", dimension: int = 3, fix: str = ""
) -> sitk.Image:
    """A ``dimension``-D single-channel integer image; ``whose`` is "reference" (organizer data) or
    the participant's word ("submitted", "predicted"); ``fix`` ends the unreadable-file message (e.g.
    "; replace labels/P2.mha in the phase's ground truth")."""
    error = _error(whose)
    try:
        image = read_image(path)
    except RuntimeError:
        raise error(f"The {whose} {what} of {case} could not be read as an image file{fix}.", case) from None
    if image.GetDimension() != dimension or image.GetNumberOfComponentsPerPixel() != 1:
        raise error(f"The {whose} {what} of {case} is not a {dimension}D single-channel label image.", case)
    if image.GetPixelID() not in {getattr(sitk, pixel) for pixel in INTEGER_PIXELS}:
        raise error(
            f"The {whose} {what} of {case} has {image.GetPixelIDTypeAsString()} voxels; an integer label image "
            "is expected.",
            case,
        )
    return image


def read_input_image(path: Path) -> sitk.Image:
    """An input image from the participant's own folder (the pre-flight check's grid: the case's
    CT or image, which the reference shares)."""
    try:
        return read_image(path)
    except RuntimeError:
        raise ConfigurationError(f"The input image {path.name} cannot be read as an image file.") from None


def image_frames(path: Path) -> int:
    """The frames of an input stack (a multi-page TIFF: its third dimension; a 2D image is one frame), from
    its header alone (the participant's own folder, as ``read_input_image``)."""
    reader = sitk.ImageFileReader()
    reader.SetFileName(str(path))
    try:
        reader.ReadImageInformation()
    except RuntimeError:
        raise ConfigurationError(f"The input stack {path.name} cannot be read as an image.") from None
    return reader.GetSize()[2] if reader.GetDimension() > 2 else 1


def on_reference_grid(
    prediction: sitk.Image,
    reference: sitk.Image,
    case: str,
    policy: str = "error",
    tolerance: float = GEOMETRY_TOLERANCE,
    what: str = "segmentation",
    grid: str = "reference grid",
    hint: str = "",
    named: str = "",
) -> sitk.Image:
    """The prediction on the reference grid: the same geometry (``policy="error"``: size exact;
    spacing, origin, direction within ``tolerance``) or resampled by nearest neighbour
    (``policy="nearest"``, background 0; an image SimpleITK cannot resample so, e.g. 2D for a 3D
    grid, is an error naming both geometries). ``grid`` names the reference grid in messages (e.g.
    "CT grid"); ``hint`` ends the size message (e.g. how to ask for resampling); ``named`` names the
    case in messages when not as ``case`` ("case 10001")."""
    named = named or case
    if policy == "nearest":
        pixel = prediction.GetPixelID()
        try:
            return sitk.Resample(prediction, reference, sitk.Transform(), sitk.sitkNearestNeighbor, 0, pixel)
        except RuntimeError:  # e.g. a 2D image for a 3D grid; SimpleITK's own text is no participant's line
            raise SubmissionError(
                f"The {what} of {named} ({prediction.GetDimension()}D, size {prediction.GetSize()}) cannot be "
                f"resampled onto the {grid} ({reference.GetDimension()}D, size {reference.GetSize()}).",
                case,
            ) from None
    if policy != "error":
        raise ValueError(f"unknown geometry policy {policy!r}")
    if prediction.GetSize() != reference.GetSize():
        raise SubmissionError(
            f"The {what} of {named} has size {prediction.GetSize()} but the {grid} is {reference.GetSize()}{hint}.",
            case,
        )
    for aspect in ("Spacing", "Origin", "Direction"):
        found, expected = getattr(prediction, f"Get{aspect}")(), getattr(reference, f"Get{aspect}")()
        if not np.allclose(found, expected, rtol=tolerance, atol=tolerance):
            shown = ", ".join(f"{v:.6g}" for v in found)
            wanted = ", ".join(f"{v:.6g}" for v in expected)
            raise SubmissionError(
                f"The {what} of {named} has {aspect.lower()} ({shown}) but the {grid} has ({wanted}).", case
            )
    return prediction


def label_array(
    image: sitk.Image, case: str, whose: str, allowed: Collection[int], what: str = "segmentation"
) -> np.ndarray:
    """The voxels as a numpy view (z, y, x); a value outside ``allowed`` (which includes 0) is an error
    naming the first offending label (the smallest below the allowed range, else the largest above,
    else the smallest unlisted one in between)."""
    array = sitk.GetArrayViewFromImage(image)
    allowed_set = {int(v) for v in allowed} | {0}
    unsigned = array.dtype.kind == "u"  # no value below 0: one pass over the voxels (the maximum), not two
    low, high = (0 if unsigned else int(array.min()), int(array.max())) if array.size else (0, 0)
    bad = None
    if low < min(allowed_set):
        bad = low
    elif high > max(allowed_set):
        bad = high
    else:  # gaps in the declared values: one comparison per unlisted value in range (a boolean temporary)
        bad = next((v for v in range(low, high + 1) if v not in allowed_set and (array == v).any()), None)
    if bad is not None:
        raise _error(whose)(
            f"The {whose} {what} of {case} has the label {bad}; only {_runs(sorted(allowed_set))} are allowed.", case
        )
    return array


def _runs(values: list[int], most: int = 20) -> str:
    """Sorted whole numbers as written ("0, 1, 2"), or, more than ``most``, as runs ("0-10000, 20005"), the
    first ``most`` of them: a region of 10,000 voxel values stays one readable line."""
    if len(values) <= most:
        return ", ".join(map(str, values))
    runs: list[list[int]] = []
    for value in values:
        if runs and value == runs[-1][1] + 1:
            runs[-1][1] = value
        else:
            runs.append([value, value])
    shown = [str(a) if a == b else f"{a}, {b}" if b == a + 1 else f"{a}-{b}" for a, b in runs]
    return ", ".join(shown[:most]) + (f" (and {len(shown) - most} more runs)" if len(shown) > most else "")


def spacing_zyx(image: sitk.Image) -> tuple[float, ...]:
    """The voxel spacing in numpy axis order (SimpleITK gives x, y, z)."""
    return tuple(float(s) for s in reversed(image.GetSpacing()))


def read_nonzero_mask(path: Path, case: str, whose: str, named: str, what: str = "mask", shown: str = "") -> np.ndarray:
    """A 2D mask as booleans where any non-zero pixel (of any channel: colour images reduce by ``any``)
    is foreground, as DigestPath 2019's masks (PNG through Pillow, other formats through SimpleITK; a
    volume of one slice counts as 2D, a volume of several is refused).

    ``whose`` is "reference" (organizer data: ``ConfigurationError`` asking to replace ``shown``, the
    file's path in the ground truth) or the participant's word ("predicted"); ``named`` is the case as
    messages name it ("image a.png")."""
    error = _error(whose)
    try:
        if path.suffix.lower() == ".png":
            from PIL import Image

            with Image.open(path) as image:
                array = np.asarray(image)
            colour = array.ndim == 3  # (height, width, channels)
        else:
            image = read_image(path)
            array, colour = sitk.GetArrayFromImage(image), image.GetNumberOfComponentsPerPixel() > 1
    except MemoryError:
        raise
    except Exception:  # every reader error means the same to a participant: unreadable
        if whose == "reference":
            raise ConfigurationError(
                f"The reference {what} of {named} cannot be read as an image: replace {shown} in the phase's ground "
                "truth.",
                case,
            ) from None
        raise SubmissionError(f"The {whose} {what} of {named} cannot be read as an image.", case) from None
    array = np.squeeze(array.any(axis=-1) if colour else array)  # a (1, height, width) volume is 2D
    if array.ndim != 2:
        raise error(f"The {whose} {what} of {named} is not a 2D image.", case)
    return array != 0


def same_size(prediction: np.ndarray, reference: np.ndarray, case: str, named: str, what: str = "mask") -> None:
    """A 2D prediction must have the reference's size (images without a physical grid: no resampling)."""
    if prediction.shape != reference.shape:
        raise SubmissionError(
            f"The predicted {what} of {named} is {prediction.shape[1]}x{prediction.shape[0]} pixels; "
            f"the image is {reference.shape[1]}x{reference.shape[0]}.",
            case,
        )


@dataclass(frozen=True, eq=False)
class LabelPair:
    """A case's reference and prediction voxels, checked and on one grid: numpy views into
    ``images`` (kept here so that the views stay valid), and the reference spacing (z, y, x)."""

    reference: np.ndarray
    prediction: np.ndarray
    spacing: tuple[float, ...]
    images: tuple[sitk.Image, ...]


def read_submitted_labels(
    path: Path,
    grid: sitk.Image | None,
    case: str,
    allowed: Collection[int],
    *,
    what: str = "segmentation",
    dimension: int = 3,
    policy: str = "error",
    tolerance: float = GEOMETRY_TOLERANCE,
    grid_name: str = "reference grid",
    hint: str = "",
) -> tuple[sitk.Image, np.ndarray]:
    """A submitted label image read and checked (pixel type, dimension, labels) and, unless ``grid``
    is ``None`` (the pre-flight check without the input image), on that grid (``on_reference_grid``);
    with its voxels, a view into the image (which the caller keeps while it uses them)."""
    image = read_label_image(path, case, "submitted", what, dimension)
    if grid is not None:
        image = on_reference_grid(image, grid, case, policy, tolerance, what, grid_name, hint)
    return image, label_array(image, case, "submitted", allowed, what)


def read_label_pair(
    reference: Path,
    prediction: Path | None,
    case: str,
    allowed: Collection[int],
    *,
    what: str = "segmentation",
    dimension: int = 3,
    policy: str = "error",
    tolerance: float = GEOMETRY_TOLERANCE,
    grid_name: str = "reference grid",
    hint: str = "",
    fix: str = "",
) -> LabelPair:
    """The reference label image (the organizer's: ``fix`` ends its unreadable-file message) and the
    submitted one on its grid, both checked; no prediction (``None``) is an empty map."""
    reference_image = read_label_image(reference, case, "reference", what, dimension, fix)
    reference_voxels = label_array(reference_image, case, "reference", allowed, what)
    if prediction is None:
        return LabelPair(reference_voxels, np.zeros_like(reference_voxels), spacing_zyx(reference_image),
                         (reference_image,))  # fmt: skip
    prediction_image, prediction_voxels = read_submitted_labels(
        prediction, reference_image, case, allowed, what=what, dimension=dimension, policy=policy,
        tolerance=tolerance, grid_name=grid_name, hint=hint,
    )  # fmt: skip
    return LabelPair(reference_voxels, prediction_voxels, spacing_zyx(reference_image),
                     (reference_image, prediction_image))  # fmt: skip
