"""The command line: --list, --help documents every option, configuration errors are one line."""

from __future__ import annotations

import argparse
import importlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import DEMO_INPUT, REPO, documentation

from evaluation.cli import main, program
from evaluation.registry import get, names


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


@pytest.mark.parametrize(
    ("args", "environment", "message"),
    [
        (["--workers", "two"], {}, "--workers must be a whole number of worker processes, got 'two'."),
        (["--workers", "1.5"], {}, "--workers must be a whole number of worker processes, got '1.5'."),
        (["--workers", "-2"], {}, "--workers must be at least 1, got -2."),
        ([], {"EVALUATION_WORKERS": "lots"},
         "EVALUATION_WORKERS must be a whole number of worker processes, got 'lots'."),
        ([], {"EVALUATION_WORKERS": "0"}, "EVALUATION_WORKERS must be at least 1, got 0."),
        (["--case-timeout", "nan"], {}, "--case-timeout must be a finite number of seconds above 0, got 'nan'."),
        (["--case-timeout", "inf"], {}, "--case-timeout must be a finite number of seconds above 0, got 'inf'."),
        (["--case-timeout", "-5"], {}, "--case-timeout must be a finite number of seconds above 0, got '-5'."),
        (["--case-timeout", "0"], {}, "--case-timeout must be a finite number of seconds above 0, got '0'."),
        (["--case-timeout", "soon"], {}, "--case-timeout must be a number of seconds, got 'soon'."),
        ([], {"EVALUATION_CASE_TIMEOUT": "1h"}, "EVALUATION_CASE_TIMEOUT must be a number of seconds, got '1h'."),
        ([], {"EVALUATION_CASE_TIMEOUT": "NaN"},
         "EVALUATION_CASE_TIMEOUT must be a finite number of seconds above 0, got 'NaN'."),
    ],
)  # fmt: skip
def test_garbage_worker_and_timeout_settings_are_one_line(tmp_path, capsys, monkeypatch, args, environment, message):
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    code = main(["--challenge", "rare25", "--input", str(DEMO_INPUT / "rare25"), "--output", str(tmp_path), *args])
    assert code == 1
    assert capsys.readouterr().err.strip().splitlines() == [message]
    assert not (tmp_path / "metrics.json").exists()


def test_the_case_timeout_flag_wins_over_the_environment(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("EVALUATION_CASE_TIMEOUT", "garbage")
    args = ["--challenge", "rare25", "--input", str(DEMO_INPUT / "rare25"), "--output", str(tmp_path)]
    assert main([*args, "--case-timeout", "60", "--set", "iterations=10"]) == 0


def _read_only_folder(tmp_path):
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o555)
    if os.access(folder, os.W_OK):  # root ignores permissions: use a folder of a filesystem that takes no files
        return Path("/sys/kernel"), "is not writable (Permission denied); metrics.json cannot be written."
    return folder, "is not writable (Permission denied); metrics.json cannot be written."


@pytest.mark.parametrize("kind", ["file", "missing under a file", "read-only"])
def test_an_unusable_output_folder_is_one_sentence_before_any_work(tmp_path, capsys, kind):
    if kind == "file":
        output, problem = tmp_path / "metrics-folder", "is a file, not a folder."
        output.write_text("not a folder")
    elif kind == "missing under a file":
        (tmp_path / "a-file").write_text("")
        output, problem = tmp_path / "a-file" / "out", "does not exist and cannot be created (Not a directory)."
    else:
        output, problem = _read_only_folder(tmp_path)
    code = main(["--challenge", "rare25", "--input", str(DEMO_INPUT / "rare25"), "--output", str(output)])
    captured = capsys.readouterr()
    assert code == 1
    assert captured.err.strip().splitlines() == [f"The output folder {output} {problem}"]
    assert "Challenge rare25" not in captured.out  # refused before the ground truth or the input was read


def test_a_stale_metrics_file_is_removed_before_the_run(tmp_path, capsys):
    (tmp_path / "metrics.json").write_text("{}")
    assert main(["--challenge", "rare25", "--input", str(tmp_path / "missing"), "--output", str(tmp_path)]) == 1
    assert not (tmp_path / "metrics.json").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # the write check leaves nothing behind


# ----------------------------------------------------------------- every console command's --help

COMMANDS = ("evaluation", "evaluation.demo", "evaluation.phase", "evaluation.make_input", "evaluation.compare",
            "evaluation.batch", "evaluation.check")  # fmt: skip


@pytest.mark.parametrize("module", COMMANDS)
def test_every_commands_help_is_plain_text_with_every_default(module):
    """Issue 21: the usage names the command, the description is whole sentences without reST
    literals, every option has a help text and says its default."""
    made = importlib.import_module(module if module != "evaluation" else "evaluation.cli").parser()
    text = made.format_help()
    assert made.prog == f"python -m {module}"
    assert "`" not in text
    assert made.description.rstrip().endswith("."), made.description
    for action in made._actions:
        if isinstance(action, argparse._HelpAction) or action.dest == argparse.SUPPRESS:
            continue
        assert action.help, (module, action.option_strings or action.dest)
        shown = action.option_strings and action.default not in (None, False, [], argparse.SUPPRESS)
        assert not shown or "default" in action.help, (module, action.option_strings, action.help)


def test_the_usage_names_the_console_script_it_was_started_as(monkeypatch):
    monkeypatch.setattr(sys, "argv", ["/somewhere/bin/gc-demo", "--help"])
    assert program("evaluation.demo") == "gc-demo"
    monkeypatch.setattr(sys, "argv", [str(REPO / "evaluation" / "demo.py"), "--help"])
    assert program("evaluation.demo") == "python -m evaluation.demo"


def test_the_challenge_option_of_the_evaluation_has_a_help_text(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    assert re.search(r"--challenge CHALLENGE\s+challenge name", capsys.readouterr().out)


# ------------------------------------------------------------------ the README's commands are run

# How a README command starts -> the test files that run it (each of its flags must appear in one).
# The Docker scripts run in test/test_docker*.py and test/test_sagemaker_shim.py, the ranking tool in
# test/ranking/, the wheel's install in scripts/wheel-check.sh, dask's own commands in test/test_dask.py.
RUN_BY = {
    "python -m evaluation.phase": ("test/test_phase.py", "test/test_hostile.py"),
    "gc-phase": ("test/test_phase.py",),
    "python -m evaluation.make_input": ("test/test_make_input.py",),
    "gc-make-input": ("test/test_make_input.py",),
    "python -m evaluation.compare": ("test/test_compare.py",),
    "gc-compare": ("test/test_compare.py",),
    "python -m evaluation.batch": ("test/test_batch.py", "test/test_dask.py"),
    "gc-batch": ("test/test_batch.py",),
    "python -m evaluation.check": ("test/test_check.py", "test/test_cli.py"),
    "gc-check": ("test/test_check.py",),
    "python -m evaluation.demo": ("test/test_demo.py",),
    "gc-demo": ("test/test_demo.py",),
    "python -m evaluation.platform.invoke": ("test/platform/test_invoke.py",),
    "python -m evaluation.declarative.derived": ("test/declarative/test_records.py",),
    "python -m evaluation.image_packages": ("test/test_image_packages.py",),
    "./demo.sh": ("test/test_demo.py",),
    "python -m evaluation": ("test/test_cli.py", "test/conftest.py", "test/test_dask.py", "test/test_compare.py"),
    "gc-evaluate": ("test/test_cli.py",),
    "python -m evaluation.verify": ("test/test_verify.py", "test/test_verify_docker.py"),
    "gc-verify": ("test/test_verify.py",),
    "python test/verify_references/ground_truth.py": ("test/test_verify.py",),
}
ELSEWHERE = (
    "./build.sh", "./test-run.sh", "./export.sh", "./test.sh", "bash scripts/", "pip ", "dask ",
    "gc-challenge-evaluation",
    "docker ", "EVALUATION_IMAGE=",  # the invoke image: test/test_sagemaker_shim.py builds and runs it
    "EXPORT_GZIP_LEVEL=",  # test/test_docker.py: export.sh at its default level and a refused one
    ".venv/bin/mkdocs ",  # test/test_docs.py builds the site (python -m mkdocs build --strict)
    "python -m evaluation.ranking", "gc-rank", "gc-absolute", "gc-mean-of-ranks", "gc-median-of-ranks",
    "evalutils ",  # test/test_verify_docker.py: evalutils' template generated and built
)  # fmt: skip


def readme_commands() -> list[str]:
    """Every command the README shows: the lines of its bash blocks and its inline commands."""
    readme = documentation()
    lines = [line.split("  #")[0].strip() for block in re.findall(r"```bash\n(.*?)```", readme, re.DOTALL)
             for line in block.replace("\\\n", " ").splitlines()]  # fmt: skip
    inline = re.findall(r"`((?:python -m evaluation|gc-|\./)[^`]*)`", readme.replace("\n   ", " "))
    return [c for c in lines + inline if c and not c.startswith("#")]


def test_every_readme_command_is_run_by_a_test():
    commands = readme_commands()
    assert len(commands) > 30
    for command in commands:
        if command.startswith(ELSEWHERE):
            continue
        start = max((s for s in RUN_BY if command == s or command.startswith(f"{s} ")), key=len, default=None)
        assert start is not None, f"no test runs the README command {command!r}"
        tests = "".join((REPO / path).read_text(encoding="utf-8") for path in RUN_BY[start])
        for flag in re.findall(r"(?<![\w-])--[a-z][a-z-]*", command):
            assert f'"{flag}"' in tests or f"'{flag}'" in tests or f" {flag} " in tests, (command, flag)


@pytest.mark.parametrize(
    "command",
    ["python -m evaluation --list", "python -m evaluation --help", "python -m evaluation.phase --challenge rare25",
     "python -m evaluation.check --help", "python -m evaluation.phase --challenge kits-example"],
)  # fmt: skip
def test_the_readmes_quick_commands_run_as_written(command):
    assert command in readme_commands() or command.endswith("kits-example")
    run = subprocess.run([sys.executable, *command.split()[1:]], cwd=REPO, capture_output=True, text=True,
                         timeout=300)  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip()
