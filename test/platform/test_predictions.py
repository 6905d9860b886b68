"""predictions.json parsing across platform versions."""

from __future__ import annotations

import json

import pytest

from evaluation.errors import SubmissionError
from evaluation.platform.predictions import load_jobs, parse_jobs

TODAY = {
    "pk": "8e7e32e2-abcd-4387-a32b-2804000281dd",
    "url": "https://example/", "api_url": "https://example/api", "algorithm_image": "https://example/image",
    "status": "Succeeded",
    "inputs": [
        {"pk": 266510, "value": None, "file": None,
         "image": {"pk": "46140e02-fc96-4ad1-ad81-a87ac16cb336", "name": "case_001.mha"},
         "interface": {"slug": "ct-image", "kind": "Image", "super_kind": "Image", "relative_path": "images/ct",
                       "title": "CT Image", "pk": 40, "description": "", "default_value": None,
                       "overlay_segments": [], "look_up_table": None}}
    ],
    "outputs": [
        {"pk": 266511, "value": None, "file": None, "image": {"pk": "x1", "name": "output.mha"},
         "interface": {"slug": "tumor-segmentation", "kind": "Segmentation", "super_kind": "Image",
                       "relative_path": "images/tumor-segmentation"}},
        {"pk": 266512, "value": 0.73, "file": None, "image": None,
         "interface": {"slug": "survival-risk", "kind": "Float", "super_kind": "Value",
                       "relative_path": "survival-risk.json"}},
    ],
    "hanging_protocol": None, "optional_hanging_protocols": [], "view_content": {},
    "exec_duration": "P0DT00H01M02.345000S", "invoke_duration": None,
}  # fmt: skip


def test_todays_shape():
    (job,) = parse_jobs([TODAY])
    assert job.pk == TODAY["pk"]
    assert job.input_slugs == ("ct-image",)
    assert job.input_name("ct-image") == "case_001.mha"
    assert job.outputs["survival-risk"].value == 0.73
    assert job.outputs["tumor-segmentation"].socket.relative_path == "images/tumor-segmentation"
    assert job.outputs["tumor-segmentation"].image_pk == "x1"


def test_older_and_newer_keys_are_tolerated():
    old = {
        "pk": "job-1",
        "algorithm_title": "old key",
        "started_at": "2021-01-01",
        "rendered_result_text": "",
        "inputs": [{"image": {"name": "a.mha"}, "socket": {"slug": "ct-image", "relative_path": "images/ct"}}],
    }
    (job,) = parse_jobs([old])
    assert job.input_name("ct-image") == "a.mha"
    assert job.outputs == {}


def test_file_and_value_inputs_name_their_case():
    raw = {
        "pk": "j",
        "inputs": [
            {"file": "https://host/media/1/predictions.csv", "interface": {"slug": "f", "relative_path": "p.csv"}},
            {"value": "case-7", "interface": {"slug": "v", "relative_path": "v.json"}},
        ],
    }
    (job,) = parse_jobs([raw])
    assert job.input_name("f") == "predictions.csv"
    assert job.input_name("v") == "case-7"


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"pk": 1}, "not a list"),
        ([{"inputs": []}], "entry 0 is not a job"),
        ([{"pk": "a"}, {"pk": "a"}], "lists job a twice"),
        ([{"pk": "a", "status": "Failed"}], "did not succeed"),
        ([{"pk": "a", "inputs": {}}], "inputs of job a are not a list"),
        ([{"pk": "a", "outputs": [{"value": 1}]}], "without a socket slug"),
    ],
)
def test_malformed_documents(document, message):
    with pytest.raises(SubmissionError, match=message):
        parse_jobs(document)


def test_missing_input_name_is_an_error():
    (job,) = parse_jobs([{"pk": "a"}])
    with pytest.raises(SubmissionError, match="Job a has no input 'ct-image'"):
        job.input_name("ct-image")


def test_load_jobs_errors(tmp_path):
    with pytest.raises(SubmissionError, match=r"no predictions\.json"):
        load_jobs(tmp_path)
    (tmp_path / "predictions.json").write_bytes(b"\xff\xfe")
    with pytest.raises(SubmissionError, match="not valid JSON"):
        load_jobs(tmp_path)
    (tmp_path / "predictions.json").write_text(json.dumps([TODAY]))
    assert len(load_jobs(tmp_path)) == 1
