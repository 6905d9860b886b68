"""Shared test helpers: run the real command line in-process and read what it wrote."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from evaluation.cli import main

REPO = Path(__file__).resolve().parents[1]
DEMO_INPUT = REPO / "test" / "input"
GROUND_TRUTH = REPO / "ground-truth"


@dataclass
class Run:
    """The outcome of one ``python -m evaluation`` call."""

    exit_code: int
    stdout: str
    stderr: str
    output: Path

    @property
    def last_error_line(self) -> str:
        lines = [line for line in self.stderr.splitlines() if line.strip()]
        return lines[-1] if lines else ""

    @property
    def metrics(self) -> dict[str, Any]:
        return json.loads((self.output / "metrics.json").read_text())

    @property
    def wrote_metrics(self) -> bool:
        return (self.output / "metrics.json").exists()


@pytest.fixture
def evaluate_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    """``evaluate_cli(challenge, input_dir, *extra_args)`` runs the CLI and returns a ``Run``."""

    def run(challenge: str, input_dir: Path, *extra: str, ground_truth: Path | None = None) -> Run:
        output = tmp_path / f"output-{len(list(tmp_path.glob('output-*')))}"
        args = ["--challenge", challenge, "--input", str(input_dir), "--output", str(output), "--workers", "2"]
        if ground_truth is not None:
            args += ["--ground-truth", str(ground_truth)]
        capsys.readouterr()
        code = main([*args, *extra])
        captured = capsys.readouterr()
        return Run(code, captured.out, captured.err, output)

    return run
