"""The command line: --list, --help documents every option, configuration errors are one line."""

from __future__ import annotations

import pytest
from conftest import DEMO_INPUT

from evaluation.challenges import get, names
from evaluation.cli import main


def test_list(capsys):
    assert main(["--list"]) == 0
    assert "rare25" in capsys.readouterr().out.split()


def test_help_shows_every_option_with_its_default(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    text = capsys.readouterr().out
    for flag in ("--challenge", "--input", "--output", "--ground-truth", "--set", "--workers", "--list"):
        assert flag in text
    for name in names():
        for option in get(name).options:
            assert f"{option.name} = {option.default!r}" in text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--challenge", "nope"], "Unknown challenge 'nope'"),
        (["--challenge", "rare25", "--set", "seed"], "--set expects KEY=VALUE"),
        (["--challenge", "rare25", "--set", "colour=red"], "rare25 has no option 'colour'"),
        (["--challenge", "rare25", "--set", "seed=abc"], "Option seed expects a int"),
        (["--challenge", "rare25", "--set", "protocol=fast"], "Option protocol must be one of official, website"),
        (["--challenge", "rare25", "--workers", "0"], "--workers must be at least 1"),
    ],
)
def test_configuration_errors(tmp_path, capsys, args, message):
    code = main([*args, "--input", str(DEMO_INPUT / "rare25"), "--output", str(tmp_path)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and message in err[-1]
    assert not (tmp_path / "metrics.json").exists()


def test_challenge_from_environment(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("EVALUATION_CHALLENGE", "rare25")
    monkeypatch.setenv("EVALUATION_WORKERS", "1")
    assert main(["--input", str(DEMO_INPUT / "rare25"), "--output", str(tmp_path), "--set", "iterations=10"]) == 0
    assert (tmp_path / "metrics.json").exists()


def test_no_challenge(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("EVALUATION_CHALLENGE", raising=False)
    assert main(["--input", str(tmp_path), "--output", str(tmp_path)]) == 1
    assert "No challenge given" in capsys.readouterr().err


def test_internal_error_is_one_generic_line_with_the_traceback_on_stdout(tmp_path, capsys, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("ground truth value 0.123 leaked")

    monkeypatch.setattr("evaluation.cli.evaluate", broken)
    assert main(["--challenge", "rare25", "--input", str(tmp_path), "--output", str(tmp_path)]) == 1
    captured = capsys.readouterr()
    assert captured.err.strip().splitlines() == [
        "The evaluation failed with an internal error (RuntimeError); "
        "the challenge organizers can see the details in the logs."
    ]
    assert "Traceback" in captured.out and "0.123" not in captured.err
