"""files.py: real images written by SimpleITK, Pillow and tifffile pass the header checks; a TIFF's
directories are walked (declared bytes, bombs, loops, offsets beyond the file); the rlimit is read."""

from __future__ import annotations

import gzip
import io
import os
import resource
import struct
import time

import numpy as np
import pytest
import SimpleITK as sitk
import tifffile
from conftest import tiff_header
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
    assert declared == array.nbytes  # the .tif: 3 pages of 5 x 7 bytes, as ITK reads it back
    assert sitk.GetArrayFromImage(sitk.ReadImage(str(path))).nbytes == declared


def test_png_declares_width_height_and_channels(tmp_path):
    Image.fromarray(np.zeros((6, 9, 3), np.uint8)).save(tmp_path / "m.png")
    assert files.check_image_file(tmp_path / "m.png", "the mask") == 6 * 9 * 3


def test_a_palette_png_declares_what_simpleitk_allocates(tmp_path):
    """SimpleITK expands a palette to RGB: 3 bytes a pixel, not the 1 of the palette index."""
    Image.fromarray(np.zeros((6, 9), np.uint8)).convert("P").save(tmp_path / "m.png")
    image = sitk.ReadImage(str(tmp_path / "m.png"))
    allocated = image.GetNumberOfPixels() * image.GetNumberOfComponentsPerPixel() * image.GetSizeOfPixelComponent()
    assert allocated == 6 * 9 * 3
    assert files.check_image_file(tmp_path / "m.png", "the mask") == allocated


@pytest.mark.parametrize(
    ("array", "options", "pixel_bytes"),
    [
        (np.zeros((6, 9), np.uint8), {"compression": "zlib"}, 1),
        (np.zeros((6, 9), np.uint16), {"bigtiff": True, "byteorder": ">"}, 2),
        (np.zeros((6, 9, 3), np.uint8), {"tile": (16, 16)}, 4),  # RGB: at least libtiff's RGBA
        (np.zeros((6, 9), bool), {}, 4),  # bilevel: ITK reads it through libtiff's RGBA decoder
    ],
)
def test_tiff_declares_pages_width_height_and_pixel_bytes(tmp_path, array, options, pixel_bytes):
    tifffile.imwrite(tmp_path / "m.tif", array, **options)
    assert files.check_image_file(tmp_path / "m.tif", "the mask") == 6 * 9 * pixel_bytes
    image = sitk.ReadImage(str(tmp_path / "m.tif"))  # what the reader allocates: no more than declared
    assert image.GetNumberOfPixels() * image.GetNumberOfComponentsPerPixel() * image.GetSizeOfPixelComponent() <= (
        6 * 9 * pixel_bytes
    )


@pytest.mark.parametrize(("order", "big"), [("<", False), (">", False), ("<", True), (">", True)])
def test_tiff_pages_count_at_the_largest_page(tmp_path, order, big):
    """ITK reads every page as a slice of the first page's size: pages x the largest page bounds it."""
    data = tiff_header(((3, 4), (50, 2), (5, 6)), order, big)
    with tifffile.TiffFile(io.BytesIO(data)) as independent:  # the header helper, read by tifffile
        assert [(p.imagewidth, p.imagelength) for p in independent.pages] == [(3, 4), (50, 2), (5, 6)]
    (tmp_path / "m.tiff").write_bytes(data)
    assert files.check_image_file(tmp_path / "m.tiff", "the mask") == 3 * 100


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (b"\x89PNG\r\n\x1a\n" + b"\0" * 30, "it does not start with a TIFF header"),
        (b"II*", "it does not start with a TIFF header"),
        (b"II+\0\x04\0\0\0" + b"\0" * 8, "it does not start with a TIFF header"),  # BigTIFF's offset size 8
        (b"II*\0\0\0\0\0", "its TIFF header lacks a valid ImageWidth or ImageLength"),  # no directory
        (tiff_header(loop=True), "its TIFF directories form a loop"),
        (tiff_header(((4, 4), (4, 4)), loop=True), "its TIFF directories form a loop"),
        (tiff_header()[:-4], "a TIFF directory lies beyond the end of the file"),
        (b"II*\0" + struct.pack("<I", 10**6) + b"\0" * 8, "a TIFF directory lies beyond the end of the file"),
        (tiff_header(((0, 4),)), "its TIFF header lacks a valid ImageWidth or ImageLength"),
        (
            tiff_header(((100_000, 100_000),)),
            "its header declares 9536.7 MiB of voxel data, more than the memory limit in force (1024 MiB)",
        ),
        (
            tiff_header(((30_000, 30_000), (1, 1)), ">", big=True),
            "its header declares 1716.6 MiB of voxel data, more than the memory limit in force (1024 MiB)",
        ),
    ],
)
def test_broken_or_bomb_tiff_is_refused_before_any_reader(tmp_path, monkeypatch, data, why):
    monkeypatch.setattr(files, "data_limit", lambda: 2**30)
    (tmp_path / "m.tif").write_bytes(data)
    with pytest.raises(SubmissionError) as refused:
        files.check_image_file(tmp_path / "m.tif", "the mask", "a.png")
    assert str(refused.value) == f"Case a.png: the mask could not be read: {why}."


def test_too_many_tiff_pages_are_refused(tmp_path):
    (tmp_path / "m.tif").write_bytes(tiff_header(((1, 1),) * (files.TIFF_MAX_PAGES + 1)))
    with pytest.raises(SubmissionError, match=r"could not be read: it has more than 65536 TIFF pages\.$"):
        files.check_image_file(tmp_path / "m.tif", "the mask")


@pytest.mark.parametrize("name", ["m.jpg", "m.bmp", "m.nrrd", "seg"])
def test_a_format_no_header_check_knows_is_refused(tmp_path, name):
    """ITK picks a reader by content: a JPEG or BMP could be a bomb, an NRRD names external data files."""
    Image.fromarray(np.zeros((6, 9), np.uint8)).save(tmp_path / name, format="BMP")
    with pytest.raises(SubmissionError) as refused:
        files.check_image_file(tmp_path / name, "the mask")
    assert str(refused.value) == (
        "the mask could not be read: it is not a .mha, .nii, .nii.gz, .png, .tif or .tiff image file."
    )


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


@pytest.mark.parametrize("name", ["m.nii", "m.nii.gz"])
def test_nifti_declares_the_datatype_size_even_when_bitpix_says_less(tmp_path, name):
    """nifti1.h: the reader allocates by ``datatype`` (DT_INT64, 8 bytes); a header whose ``bitpix``
    claims 8 bits must not shrink the bound by 8."""
    array = np.arange(60, dtype=np.int64).reshape(3, 4, 5)
    plain = tmp_path / "plain.nii"
    sitk.WriteImage(sitk.GetImageFromArray(array), str(plain))
    header = bytearray(plain.read_bytes())
    assert struct.unpack("<hh", header[70:74]) == (1024, 64)  # DT_INT64, 64 bits, as SimpleITK wrote it
    header[72:74] = struct.pack("<h", 8)
    path = tmp_path / name
    path.write_bytes(gzip.compress(bytes(header)) if name.endswith(".gz") else bytes(header))
    image = sitk.ReadImage(str(path))
    assert image.GetNumberOfPixels() * image.GetSizeOfPixelComponent() == array.nbytes  # what ITK allocates
    assert files.check_image_file(path, "the image") == array.nbytes


def test_an_uncompressed_nifti_must_hold_its_voxels_after_vox_offset(tmp_path):
    """ITK reads a truncated .nii without complaint, the missing voxels as 0 (checked here): refused."""
    array = np.array([[[0, 1, 1, 2]]], np.uint8)
    sitk.WriteImage(sitk.GetImageFromArray(array), str(tmp_path / "whole.nii"))
    data = (tmp_path / "whole.nii").read_bytes()
    assert struct.unpack("<f", data[108:112]) == (352.0,) and len(data) == 352 + 4  # vox_offset, then the voxels
    (tmp_path / "cut.nii").write_bytes(data[:-2])
    assert sitk.GetArrayFromImage(sitk.ReadImage(str(tmp_path / "cut.nii"))).tolist() == [[[0, 1, 0, 0]]]
    with pytest.raises(SubmissionError, match=r"^the image could not be read: its header declares 4 bytes of voxel "
                       r"data but the file holds 2\.$"):  # fmt: skip
        files.check_image_file(tmp_path / "cut.nii", "the image")


@pytest.mark.parametrize(
    ("name", "header", "named"),
    [
        ("a.mha", "NDims = 1\nElementDataFile = LOCAL\n\0\1", []),
        ("a.mhd", "NDims = 1\nElementDataFile = a.raw\n", ["a.raw"]),
        ("a.mhd", "NDims = 1\nelementdatafile = /abs/a.raw\n", ["/abs/a.raw"]),
        ("a.mhd", "NDims = 3\nElementDataFile = LIST 2D\ns0.raw\n../s1.raw\n", ["s0.raw", "../s1.raw"]),
        ("a.mhd", "NDims = 3\nElementDataFile = s%02d.raw 1 5 2\n", ["s01.raw", "s03.raw", "s05.raw"]),
        ("a.mhd", "not a header", []),
        ("a.nhdr", "NRRD0004\ntype: uchar\ndata file: a.raw.gz\n", ["a.raw.gz"]),
        ("a.nhdr", "NRRD0004\ndatafile: LIST\nb.raw\n", ["b.raw"]),
        ("a.hdr", "", ["a.img", "a.IMG", "a.img.gz"]),
        ("a.png", "\x89PNG", []),
    ],
)
def test_the_data_files_an_image_header_names(tmp_path, name, header, named):
    """What ITK opens besides the header (MetaIO's ElementDataFile, NRRD's data file, an Analyze pair's .img),
    from the header's own folder."""
    (tmp_path / name).write_bytes(header.encode("latin-1"))
    found = files.image_data_files(tmp_path / name, tmp_path / name, name)
    assert found == [os.path.join(tmp_path, data) for data in named]


@pytest.mark.parametrize(
    "value",
    [
        "s%d%d.raw 1 2 1",
        "s%d.raw 1 2 0",
        "s%d.raw 0 100000 1",
        "s%d.raw x 2 1",
        "s%c.raw 1114112 1114113 1",  # (Python's "%c" of it: OverflowError)
        "s%999999999d.raw 1 2 1",  # (a name of a GB each)
        "s%.999999999d.raw 1 2 1",
        "s%s.raw 1 2 1",
    ],
)
def test_a_data_file_pattern_that_cannot_be_expanded_is_a_value_error(tmp_path, value):
    (tmp_path / "a.mhd").write_text(f"NDims = 3\nElementDataFile = {value}\n")
    with pytest.raises(ValueError):
        files.image_data_files(tmp_path / "a.mhd", tmp_path / "a.mhd", "a.mhd")
