"""Reading output sockets: value, file and image outputs; paths never leave the input folder."""

from __future__ import annotations

import pytest
from conftest import tiff_header

from evaluation.errors import SubmissionError
from evaluation.platform.predictions import Job, Socket, SocketValue
from evaluation.platform.sockets import finite_number, image_output_file, inside, read_json_output

VALUE = Socket("risk", "risk.json", "Float", "Value")
IMAGE = Socket("seg", "images/seg", "Segmentation", "Image")


def _job(value=None) -> Job:
    return Job("job-1", outputs={VALUE.slug: SocketValue(VALUE, value=value), IMAGE.slug: SocketValue(IMAGE)})


def test_value_file_is_read_and_inline_value_is_the_fallback(tmp_path):
    job = _job(value=0.25)
    assert read_json_output(tmp_path, job, "risk") == 0.25
    (tmp_path / "job-1" / "output").mkdir(parents=True)
    (tmp_path / "job-1" / "output" / "risk.json").write_text("0.5")
    assert read_json_output(tmp_path, job, "risk") == 0.5
    assert read_json_output(tmp_path, job, "absent") is None
    assert read_json_output(tmp_path, _job(), "risk") == 0.5


def test_missing_value_without_inline_is_none(tmp_path):
    assert read_json_output(tmp_path, _job(), "risk") is None


def test_nan_literal_is_refused(tmp_path):
    (tmp_path / "job-1" / "output").mkdir(parents=True)
    (tmp_path / "job-1" / "output" / "risk.json").write_text("NaN")
    with pytest.raises(SubmissionError, match="contains NaN"):
        read_json_output(tmp_path, _job(), "risk", case="p1")


@pytest.mark.parametrize(("names", "expected"), [(["a.mha"], "a.mha"), (["b.tiff"], "b.tiff"), (["c.tif"], "c.tif")])
def test_image_folder_with_one_image(tmp_path, names, expected):
    folder = tmp_path / "job-1" / "output" / "images" / "seg"
    folder.mkdir(parents=True)
    for name in names:
        metaimage = b"NDims = 1\nDimSize = 1\nElementType = MET_UCHAR\nElementDataFile = LOCAL\nx"
        (folder / name).write_bytes(metaimage if name.endswith(".mha") else tiff_header())
    assert image_output_file(tmp_path, _job(), "seg").name == expected


def test_image_folder_with_two_images_is_an_error(tmp_path):
    folder = tmp_path / "job-1" / "output" / "images" / "seg"
    folder.mkdir(parents=True)
    (folder / "a.mha").write_bytes(b"x")
    (folder / "b.mha").write_bytes(b"x")
    with pytest.raises(SubmissionError, match="holds 2 image files"):
        image_output_file(tmp_path, _job(), "seg", case="p1")


def test_missing_image_is_none(tmp_path):
    assert image_output_file(tmp_path, _job(), "seg") is None


def test_inside_refuses_escapes(tmp_path):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "link").symlink_to(tmp_path)
    assert inside(tmp_path / "in", "a/b") == (tmp_path / "in" / "a" / "b").resolve()
    for relative in ("../x", "a/../../x", "/etc/passwd", "link/x"):
        with pytest.raises(SubmissionError, match="outside the input folder"):
            inside(tmp_path / "in", relative)


def test_job_pk_cannot_escape(tmp_path):
    job = Job("..", outputs={VALUE.slug: SocketValue(VALUE)})
    with pytest.raises(SubmissionError):
        read_json_output(tmp_path / "in", job, "risk")


@pytest.mark.parametrize("value", ["1", None, True, float("nan"), float("inf"), [1]])
def test_finite_number_refuses(value):
    with pytest.raises(SubmissionError):
        finite_number(value, "x")


def test_finite_number_accepts_int_and_float():
    assert finite_number(3, "x") == 3.0 and finite_number(0.5, "x") == 0.5
