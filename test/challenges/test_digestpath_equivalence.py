"""While both exist (issue 29): the declaration evaluation/declarations/digestpath2019-task1.toml writes the
metrics.json of the former module evaluation/challenges/digestpath.py byte for byte, on the demo and on every
golden input of test_digestpath.py, under every option the module offers, and ends every hostile input of
test_hostile.py with the same last stderr line."""

from __future__ import annotations

import json

import pytest
from challenges.test_digestpath import GOLDEN_PREDICTIONS, task1_case
from conftest import REPO
from test_hostile import CASES, LIMIT_MIB

from evaluation import pipeline
from evaluation.challenges.digestpath import DigestPath2019Task1
from evaluation.platform import files
from evaluation.registry import get

OPTIONS = [(), ("iou_threshold=0.5",), ("iou_threshold=0.1",), ("matching=hungarian",),
           ("matching=hungarian", "iou_threshold=0.2")]  # fmt: skip
DEMO = (REPO / "ground-truth" / "digestpath2019-task1", REPO / "test" / "input" / "digestpath2019-task1")


@pytest.fixture
def both(monkeypatch, evaluate_cli):
    """``both(input, ground_truth, *options)``: the (module's, declaration's) runs."""
    monkeypatch.setattr(pipeline, "get", lambda name: DigestPath2019Task1() if name == "module" else get(name))

    def run(input_dir, ground_truth, *options):
        extra = [arg for option in options for arg in (("--set", option) if "=" in option else (option,))]
        return tuple(evaluate_cli(name, input_dir, *extra, ground_truth=ground_truth)
                     for name in ("module", "digestpath2019-task1"))  # fmt: skip

    return run


def _inputs(tmp_path):
    hungarian_truth = {"p.jpg": [[0, 0, 10, 10], [8, 0, 18, 10]], "n.jpg": []}
    hungarian = {"p.jpg": [[5, 0, 15, 10, 0.9], [9, 0, 19, 10, 0.8]], "n.jpg": []}
    tied = {k: [[*row[:4], 0.5] for row in rows] for k, rows in GOLDEN_PREDICTIONS.items()}
    return {
        "demo": DEMO,
        "golden": task1_case(tmp_path / "golden"),
        "golden VOC": task1_case(tmp_path / "voc", voc=True),
        "tied scores": task1_case(tmp_path / "tied", predictions=tied),
        "hungarian": task1_case(tmp_path / "hungarian", hungarian, hungarian_truth),
    }


def test_the_same_bytes_under_every_option(tmp_path, both):
    for name, (ground_truth, input_dir) in _inputs(tmp_path).items():
        for options in OPTIONS:
            module, declared = both(input_dir, ground_truth, *options)
            assert module.exit_code == declared.exit_code == 0, (name, options, declared.stderr[-800:])
            written = [(run.output / "metrics.json").read_bytes() for run in (module, declared)]
            assert written[0] == written[1], (name, options)
            assert "Declared" not in type(pipeline.get("module")).__name__
            assert json.loads(written[1])["settings"]["challenge"] == "digestpath2019-task1"


@pytest.mark.parametrize("name", [name for name, case in CASES.items() if case.challenge == "digestpath2019-task1"])
def test_the_same_last_line_for_every_hostile_input(tmp_path, monkeypatch, both, name):
    monkeypatch.setattr(files, "data_limit", lambda: LIMIT_MIB * 2**20)
    case = CASES[name]
    built = case.build(tmp_path / "built")
    case.change(built)
    module, declared = both(built.input, built.ground_truth, "--workers", "1")
    assert (module.exit_code, module.wrote_metrics) == (declared.exit_code, declared.wrote_metrics) == (1, False)
    assert module.last_error_line == declared.last_error_line


def test_the_same_line_without_a_negative_image(tmp_path, both):
    truth = {"p1.jpg": [[10, 10, 30, 30]]}
    module, declared = both(*reversed(task1_case(tmp_path, {"p1.jpg": GOLDEN_PREDICTIONS["p1.jpg"]}, truth)))
    assert module.exit_code == declared.exit_code == 1
    assert module.last_error_line == declared.last_error_line
