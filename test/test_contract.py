"""The contract's machinery the declarative engine uses: jobs matched to reference cases, the settings echo."""

from __future__ import annotations

import json

import pytest

from evaluation.contract import Challenge, Phase
from evaluation.errors import SubmissionError
from evaluation.platform.predictions import Socket

IMAGE = Socket("image", "images/image", "Image", "Image")


class Tiny(Challenge):
    """The interface's least: a job is for its image's file name; nothing else is called here."""

    name = "tiny"
    title = "tiny"
    phase = Phase(inputs=(IMAGE,), outputs=(), score_title="s", score_jsonpath="s")
    load_reference = prepare = score_case = aggregate = None  # type: ignore[assignment]
    job_inputs = write_prediction_file = code_files = phase_for = check_job = None  # type: ignore[assignment]

    def case_of_job(self, job):
        return job.input_name("image")


def write_jobs(folder, names):
    jobs = [{"pk": f"j{i}", "inputs": [{"interface": {"slug": "image"}, "image": {"name": name}}], "outputs": []}
            for i, name in enumerate(names)]  # fmt: skip
    (folder / "predictions.json").write_text(json.dumps(jobs))
    return folder


def test_jobs_by_case_keeps_reference_order_and_lists_missing(tmp_path):
    matched = Tiny().jobs_by_case(write_jobs(tmp_path, ["c.tif", "a.tif"]), ["a.tif", "b.tif", "c.tif"])
    assert {case: job.pk for case, job in matched.jobs.items()} == {"a.tif": "j1", "c.tif": "j0"}
    assert list(matched.jobs) == ["a.tif", "c.tif"] and matched.missing == ["b.tif"]


def test_jobs_by_case_same_stem_takes_a_name_to_the_reference_case(tmp_path):
    folder = write_jobs(tmp_path, ["a.tif"])
    with pytest.raises(SubmissionError, match=r"job j0 is for 'a\.tif', which is not in the reference"):
        Tiny().jobs_by_case(folder, ["a.png"])
    assert list(Tiny().jobs_by_case(folder, ["a.png"], same_stem=True).jobs) == ["a.png"]


def test_settings_echo_order():
    echo = Tiny().settings_echo({"x": 1, "y": 2}, before={"b": 0}, after={"a": 3})
    assert list(echo.items()) == [("challenge", "tiny"), ("b", 0), ("x", 1), ("y", 2), ("a", 3)]
    assert Tiny().settings_echo({"x": 1}) == {"challenge": "tiny", "x": 1}
