"""platform/images.py: label images read once and checked as the HECKTOR rules say (size exact;
spacing, origin, direction within 1e-4; integer voxels; labels outside the declared set refused),
participant problems as SubmissionError, organizer problems as ConfigurationError."""

from __future__ import annotations

import numpy as np
import pytest
import SimpleITK as sitk

from evaluation.errors import ConfigurationError, SubmissionError
from evaluation.platform.images import (
    label_array,
    on_reference_grid,
    read_label_image,
    read_label_pair,
    read_submitted_labels,
    spacing_zyx,
)


def image(array: np.ndarray, spacing=(1.0, 1.0, 2.0), origin=(0.0, 0.0, 0.0)) -> sitk.Image:
    result = sitk.GetImageFromArray(array)
    result.SetSpacing(spacing)
    result.SetOrigin(origin)
    return result


def test_read_refuses_float_and_multichannel_images(tmp_path):
    path = tmp_path / "float.mha"
    sitk.WriteImage(image(np.zeros((2, 3, 4), np.float32)), str(path))
    with pytest.raises(SubmissionError, match="The submitted segmentation of c has 32-bit float voxels"):
        read_label_image(path, "c", "submitted")
    with pytest.raises(ConfigurationError, match="The reference segmentation of c has 32-bit float"):
        read_label_image(path, "c", "reference")
    (tmp_path / "junk.mha").write_bytes(b"junk")
    with pytest.raises(SubmissionError, match="could not be read as an image file"):
        read_label_image(tmp_path / "junk.mha", "c", "submitted")
    path = tmp_path / "two.mha"
    sitk.WriteImage(image(np.zeros((3, 4), np.uint8), spacing=(1.0, 1.0)), str(path))
    with pytest.raises(SubmissionError, match="is not a 3D single-channel label image"):
        read_label_image(path, "c", "submitted")
    assert read_label_image(path, "c", "submitted", dimension=2).GetDimension() == 2


@pytest.mark.parametrize(
    ("allowed", "values", "bad"),
    [((1, 2), (0, 1, 3), 3), ((1, 3), (0, 2), 2), ((1, 3), (0, 1, 2, 3), 2), ((1,), (-1, 0), -1)],
)
def test_labels_outside_the_declared_set(allowed, values, bad):
    array = np.array(values, dtype=np.int16).reshape(1, 1, -1)
    with pytest.raises(SubmissionError, match=f"has the label {bad}; only"):
        label_array(image(array), "c", "submitted", allowed)


def test_labels_inside_the_declared_set_pass_as_a_view():
    array = np.array([0, 1, 3, 3], dtype=np.uint8).reshape(1, 1, 4)
    assert label_array(image(array), "c", "submitted", (1, 3)).tolist() == array.tolist()


def test_geometry_within_and_beyond_the_tolerance():
    reference = image(np.zeros((2, 3, 4), np.uint8), origin=(10.0, 0.0, 0.0))
    close = image(np.zeros((2, 3, 4), np.uint8), origin=(10.0005, 0.0, 0.0))  # 5e-5 relative
    assert on_reference_grid(close, reference, "c") is close
    far = image(np.zeros((2, 3, 4), np.uint8), origin=(10.01, 0.0, 0.0))
    with pytest.raises(SubmissionError, match=r"has origin \(10.01, 0, 0\) but the reference grid has \(10, 0, 0\)"):
        on_reference_grid(far, reference, "c")
    other_size = image(np.zeros((2, 3, 5), np.uint8))
    with pytest.raises(SubmissionError, match=r"has size \(5, 3, 2\) but the reference grid is \(4, 3, 2\)"):
        on_reference_grid(other_size, reference, "c")


def test_nearest_resampling_puts_the_prediction_on_the_reference_grid():
    reference = image(np.zeros((2, 4, 4), np.uint8), spacing=(1.0, 1.0, 1.0))
    coarse = np.zeros((2, 2, 2), np.uint8)
    coarse[:, 0, 0] = 1
    coarse_image = image(coarse, spacing=(2.0, 2.0, 1.0), origin=(0.5, 0.5, 0.0))  # voxel 0 spans -0.5..1.5 mm
    resampled = on_reference_grid(coarse_image, reference, "c", "nearest")
    assert resampled.GetSize() == reference.GetSize() and spacing_zyx(resampled) == (1.0, 1.0, 1.0)
    assert int(sitk.GetArrayFromImage(resampled).sum()) == 2 * 2 * 2  # the corner voxel now covers 2x2 pixels


def test_a_label_pair_is_read_checked_and_on_one_grid(tmp_path):
    """The reference and prediction of a case (read_label_pair): voxels (z, y, x), the reference
    spacing, an absent prediction as zeros, and the messages of both sides (organizer's fix, grid name)."""
    reference = sitk.GetImageFromArray(np.array([[[0, 1, 2, 1]]], np.uint8))
    reference.SetSpacing((1.0, 2.0, 3.0))
    sitk.WriteImage(reference, str(tmp_path / "r.mha"))
    prediction = sitk.GetImageFromArray(np.array([[[2, 1, 0, 0]]], np.uint8))
    prediction.SetSpacing((1.0, 2.0, 3.0))
    sitk.WriteImage(prediction, str(tmp_path / "p.mha"))
    pair = read_label_pair(tmp_path / "r.mha", tmp_path / "p.mha", "c1", (1, 2))
    assert pair.reference.tolist() == [[[0, 1, 2, 1]]] and pair.prediction.tolist() == [[[2, 1, 0, 0]]]
    assert pair.spacing == (3.0, 2.0, 1.0)
    empty = read_label_pair(tmp_path / "r.mha", None, "c1", (1, 2))
    assert empty.prediction.tolist() == [[[0, 0, 0, 0]]] and empty.prediction.dtype == np.uint8
    coarse = sitk.GetImageFromArray(np.zeros((1, 1, 2), np.uint8))
    sitk.WriteImage(coarse, str(tmp_path / "coarse.mha"))
    with pytest.raises(
        SubmissionError, match=r"^The mask of c1 has size \(2, 1, 1\) but the CT grid is \(4, 1, 1\) !\.$"
    ):
        read_label_pair(tmp_path / "r.mha", tmp_path / "coarse.mha", "c1", (1, 2), what="mask", grid_name="CT grid",
                        hint=" !")  # fmt: skip
    with pytest.raises(ConfigurationError, match=r"could not be read as an image file; replace it\.$"):
        read_label_pair(tmp_path / "p.mha.missing", None, "c1", (1, 2), fix="; replace it")
    with pytest.raises(
        SubmissionError, match="The submitted segmentation of c1 has the label 2; only 0, 1 are allowed"
    ):
        read_submitted_labels(tmp_path / "p.mha", None, "c1", (1,))
