"""files.py: real images written by SimpleITK and Pillow pass the header checks; the rlimit is read."""

from __future__ import annotations

import os
import resource
import time

import numpy as np
import pytest
import SimpleITK as sitk
from PIL import Image

from evaluation.errors import SubmissionError
from evaluation.platform import files


@pytest.mark.parametrize(
    ("name", "compress", "pixel"),
    [
        ("a.mha", False, np.uint8),
        ("b.mha", True, np.int16),
        ("c.nii", False, np.uint8),
        ("d.nii.gz", True, np.uint16),
        ("e.tif", False, np.uint8),
    ],
)
def test_images_written_by_simpleitk_are_accepted_with_their_declared_size(tmp_path, name, compress, pixel):
    array = np.zeros((3, 5, 7), dtype=pixel)
    array[1, 2, 3] = 2
    path = tmp_path / name
    sitk.WriteImage(sitk.GetImageFromArray(array), str(path), compress)
    declared = files.check_image_file(path, "the image")
    assert declared == (array.nbytes if not name.endswith(".tif") else path.stat().st_size)


def test_png_declares_width_height_and_channels(tmp_path):
    Image.fromarray(np.zeros((6, 9, 3), np.uint8)).save(tmp_path / "m.png")
    assert files.check_image_file(tmp_path / "m.png", "the mask") == 6 * 9 * 3


def test_data_limit_is_the_soft_rlimit():
    soft, _ = resource.getrlimit(resource.RLIMIT_DATA)
    assert files.data_limit() == (None if soft == resource.RLIM_INFINITY else soft)
    budget, described = files.memory_budget()
    assert budget > 0 and ("memory limit in force" in described or "this machine's memory" in described)


def test_a_fifo_is_refused_without_blocking(tmp_path):
    os.mkfifo(tmp_path / "pipe.json")
    start = time.monotonic()
    with pytest.raises(SubmissionError, match=r"^x is a FIFO \(named pipe\), not a regular file; it was not read\.$"):
        files.read_bytes(tmp_path / "pipe.json", "x")
    assert time.monotonic() - start < 1


def test_contained_resolves_a_linked_root_first(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "f.json").write_text("1")
    (tmp_path / "linked").symlink_to(tmp_path / "real")
    assert files.contained(tmp_path / "linked", "f.json") == tmp_path / "real" / "f.json"
    (tmp_path / "real" / "out").symlink_to(tmp_path)
    with pytest.raises(SubmissionError, match="points outside the input folder"):
        files.contained(tmp_path / "linked", "out/elsewhere.json")
