"""The step every demo script of a library challenge shares (scripts/make_demo_<name>.py): the
synthetic data written by its ``generate`` into ground-truth/<name>/ and, through make_input's
builder, the platform input test/input/<name>/ (test/expected/<name>/metrics.json is then
``python -m evaluation --challenge <name> --input test/input/<name> --output test/expected/<name>``)."""

from __future__ import annotations

import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from evaluation.make_input import build_input  # noqa: E402
from evaluation.registry import get  # noqa: E402


def write_demo(name: str, generate: Callable[[Path, Path], Any]) -> None:
    ground_truth = REPO / "ground-truth" / name
    platform_input = REPO / "test" / "input" / name
    for folder in (ground_truth, platform_input):
        shutil.rmtree(folder, ignore_errors=True)
    with tempfile.TemporaryDirectory() as work:
        outputs = Path(work) / "outputs"
        generate(ground_truth, outputs)
        build_input(get(name), outputs, platform_input)
    print(f"wrote {ground_truth} and {platform_input}")
