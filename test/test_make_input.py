"""make_input: plain algorithm outputs -> the platform's /input layout -> the same metrics."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from conftest import DEMO_INPUT

from evaluation.contract import Challenge, Phase
from evaluation.errors import ConfigurationError, SubmissionError
from evaluation.make_input import build_input, main
from evaluation.platform.predictions import Socket, load_jobs
from evaluation.registry import get, names

JOB_CHALLENGES = [n for n in names() if not get(n).phase.prediction_file and (DEMO_INPUT / n).is_dir()]


def plain_outputs(challenge: Challenge, input_dir: Path, target: Path) -> None:
    """The inverse of make_input: what each algorithm job wrote to /output, by case."""
    for job in load_jobs(input_dir):
        case_dir = target / challenge.case_of_job(job)
        for socket_value in job.outputs.values():
            source = input_dir / job.pk / "output" / socket_value.socket.relative_path
            destination = case_dir / socket_value.socket.relative_path
            destination.parent.mkdir(parents=True, exist_ok=True)
            if source.is_dir():
                shutil.copytree(source, destination)
            elif source.is_file():
                shutil.copyfile(source, destination)
            else:
                destination.write_text(json.dumps(socket_value.value))
        case_dir.mkdir(parents=True, exist_ok=True)


@pytest.mark.parametrize("challenge_name", JOB_CHALLENGES)
def test_round_trip_gives_the_same_metrics(tmp_path, evaluate_cli, challenge_name):
    challenge = get(challenge_name)
    plain_outputs(challenge, DEMO_INPUT / challenge_name, tmp_path / "plain")
    assert main(["--challenge", challenge_name, "--outputs", str(tmp_path / "plain"), "--output",
                 str(tmp_path / "built"), "--seed", "5"]) == 0  # fmt: skip
    build_input(challenge, tmp_path / "plain", tmp_path / "again", seed=5)
    assert (tmp_path / "built/predictions.json").read_bytes() == (tmp_path / "again/predictions.json").read_bytes()
    hand_made = evaluate_cli(challenge_name, DEMO_INPUT / challenge_name)
    built = evaluate_cli(challenge_name, tmp_path / "built")
    assert built.exit_code == 0, built.stderr
    assert (built.output / "metrics.json").read_bytes() == (hand_made.output / "metrics.json").read_bytes()


class ImageChallenge(Challenge):
    """A minimal job challenge with an image and a value output (not registered: no class ``name``)."""

    title = "test"
    phase = Phase(
        inputs=(Socket("ct-image", "images/ct", "Image", "Image"),),
        outputs=(Socket("seg", "images/seg", "Segmentation", "Image"), Socket("risk", "risk.json", "Float", "Value")),
        score_title="x",
        score_jsonpath="x",
    )
    load_reference = prepare = score_case = aggregate = None  # type: ignore[assignment]
    case_of_job = write_prediction_file = code_files = phase_for = check_job = None  # type: ignore[assignment]

    def job_inputs(self, case):
        return {socket: case for socket in self.phase.inputs}


def _challenge() -> Challenge:
    challenge = object.__new__(ImageChallenge)
    challenge.name = "image-test"  # type: ignore[misc]
    return challenge


def _case(root: Path, files: dict[str, str]) -> None:
    for relative, content in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(content)


def test_missing_socket_file_gives_a_job_without_that_output(tmp_path):
    _case(tmp_path / "plain/p1", {"risk.json": "0.5"})
    _case(tmp_path / "plain/p2", {"images/seg/out.mha": "x"})
    build_input(_challenge(), tmp_path / "plain", tmp_path / "built")
    jobs = load_jobs(tmp_path / "built")
    assert [sorted(job.outputs) for job in jobs] == [["risk"], ["seg"]]
    assert jobs[0].input_name("ct-image") == "p1"


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({"notes.txt": "x"}, "notes.txt is not an output of image-test"),
        ({"risk.json": "{oops"}, "risk.json is not valid JSON"),
        ({"images/seg/a.mha": "x", "images/seg/b.mha": "y"}, "must hold exactly one image; it holds 2 files"),
    ],
)
def test_bad_case_folders(tmp_path, files, message):
    _case(tmp_path / "plain/p7", files)
    with pytest.raises(SubmissionError, match=message) as error:
        build_input(_challenge(), tmp_path / "plain", tmp_path / "built")
    assert "p7" in str(error.value)


def test_empty_outputs_folder(tmp_path, capsys):
    (tmp_path / "plain").mkdir()
    assert main(["--challenge", "rare25", "--outputs", str(tmp_path / "plain"), "--output", str(tmp_path / "b")]) == 1
    assert "holds no case folder" in capsys.readouterr().err


def test_an_output_that_is_a_file_is_one_line(tmp_path, capsys):
    _case(tmp_path / "plain/p1", {"risk.json": "0.5"})
    (tmp_path / "built").write_text("a file")
    with pytest.raises(ConfigurationError, match=r"^The output folder .*built is a file, not a folder\.$"):
        build_input(_challenge(), tmp_path / "plain", tmp_path / "built")
    assert (tmp_path / "built").read_text() == "a file"


@pytest.mark.parametrize(
    ("fifo", "message"),
    [
        ("risk.json", "the output 'risk' is a FIFO \\(named pipe\\), not a regular file; it was not read"),
        ("images/seg/out.mha", "the image output 'seg' is a FIFO \\(named pipe\\), not a regular file"),
        ("stray", "stray is not an output of image-test"),
    ],
)
def test_a_fifo_is_refused_with_the_evaluations_line_never_opened(tmp_path, fifo, message):
    (tmp_path / "plain/p7" / fifo).parent.mkdir(parents=True)
    os.mkfifo(tmp_path / "plain/p7" / fifo)  # (opening it would block this test)
    with pytest.raises(SubmissionError, match=message) as error:
        build_input(_challenge(), tmp_path / "plain", tmp_path / "built")
    assert "p7" in str(error.value)
