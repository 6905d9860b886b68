"""The README's ranking section runs as written on the shipped example data, and that data is what
its generator makes from the kits-example demo."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from conftest import documented_section

from evaluation.ranking.examples.__main__ import EXAMPLE, main

REPO = Path(__file__).resolve().parents[2]


def section_blocks(language: str) -> list[str]:
    """The ``language`` code blocks of the README's "Ranking tool" section that use the example data."""
    section = documented_section("Ranking tool (organizers): `python -m evaluation.ranking`")
    blocks = re.findall(rf"```{language}\n(.*?)```", section, flags=re.DOTALL)
    return [block for block in blocks if "kits-example-teams.csv" in block]


def in_checkout(tmp_path: Path) -> dict[str, str]:
    """A working folder that sees the checkout's package and data (outputs land in the folder)."""
    (tmp_path / "evaluation").symlink_to(REPO / "evaluation")
    return {**os.environ, "PYTHONPATH": str(REPO)}


def test_example_data_is_what_its_generator_makes(tmp_path: Path) -> None:
    assert main(["--output", str(tmp_path / "example.csv")]) == 0
    assert (tmp_path / "example.csv").read_bytes() == EXAMPLE.read_bytes()


def test_readme_ranking_commands_run(tmp_path: Path) -> None:
    env = in_checkout(tmp_path)
    (block,) = section_blocks("bash")
    commands = [c for c in block.replace("\\\n", " ").splitlines() if c.strip()]
    assert len(commands) == 2
    for command in commands:
        command = re.sub(r"^python ", f"{sys.executable} ", command)
        done = subprocess.run(command, shell=True, cwd=tmp_path, env=env, capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr[-2000:]
    document = json.loads((tmp_path / "ranking-example" / "ranking.json").read_text())
    assert document["consensus"]["weights"] == {"dice_kidney": 0.25, "dice_tumour": 0.35, "hd95_tumour": 0.4}
    assert document["design"]["smaller_better_tasks"] == ["hd95_tumour"]
    report = (tmp_path / "ranking-example" / "report.html").read_text(encoding="utf-8")
    assert "<title>KiTS example (demo-derived teams)</title>" in report
    fast = json.loads((tmp_path / "ranking-fast" / "ranking.json").read_text())
    assert set(fast["tasks"]["dice_tumour"]["robustness"]) == {"annotators"}  # nothing unasked


def test_readme_ranking_library_example_runs(tmp_path: Path) -> None:
    env = in_checkout(tmp_path)
    (block,) = section_blocks("python")
    done = subprocess.run([sys.executable, "-c", block], cwd=tmp_path, env=env, capture_output=True, text=True,
                          check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "ranking-library" / "report.html").is_file()
