"""The platform-layout writer produces what the reader parses, deterministically."""

from __future__ import annotations

import json

from evaluation.platform.layout import JobSpec, write_input
from evaluation.platform.predictions import Socket, load_jobs
from evaluation.platform.sockets import image_output_file, read_json_output

CT = Socket("ct-image", "images/ct", "Image", "Image")
SEG = Socket("seg", "images/seg", "Segmentation", "Image")
RISK = Socket("risk", "risk.json", "Float", "Value")
LIST = Socket("scores", "scores.json", "Anything", "File")
TINY_MHA = b"NDims = 1\nDimSize = 1\nElementType = MET_UCHAR\nElementDataFile = LOCAL\n\x01"


def test_round_trip_and_same_bytes(tmp_path):
    image = tmp_path / "p1.mha"
    image.write_bytes(TINY_MHA)
    jobs = [JobSpec({CT: "p1__CT.mha"}, {SEG: image, RISK: 0.5, LIST: [1, 2]}), JobSpec({CT: "p2__CT.mha"})]
    first = write_input(tmp_path / "a", jobs, seed=3)
    second = write_input(tmp_path / "b", jobs, seed=3)
    assert first == second
    assert (tmp_path / "a/predictions.json").read_bytes() == (tmp_path / "b/predictions.json").read_bytes()
    parsed = load_jobs(tmp_path / "a")
    assert [job.pk for job in parsed] == first
    assert parsed[0].input_name("ct-image") == "p1__CT.mha"
    assert read_json_output(tmp_path / "a", parsed[0], "risk") == 0.5
    assert read_json_output(tmp_path / "a", parsed[0], "scores") == [1, 2]
    assert image_output_file(tmp_path / "a", parsed[0], "seg").read_bytes() == TINY_MHA
    assert parsed[1].outputs == {}
    raw = json.loads((tmp_path / "a/predictions.json").read_text())
    assert raw[0]["outputs"][1]["value"] == 0.5 and raw[0]["outputs"][2]["file"].endswith("/scores.json")
