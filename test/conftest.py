"""Shared test helpers: run the real command line in-process and read what it wrote."""

from __future__ import annotations

import json
import re
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from evaluation.cli import main

REPO = Path(__file__).resolve().parents[1]
DEMO_INPUT = REPO / "test" / "input"
GROUND_TRUTH = REPO / "ground-truth"


def documentation_pages() -> list[Path]:
    """The README and every hand-written page of the documentation site (docs/; the generated reference is
    made at build time and checked by test_docs.py)."""
    return [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]


def documentation() -> str:
    """What the README and the site say, as one text: what tests of the documented commands and snippets read."""
    return "\n".join(page.read_text(encoding="utf-8") for page in documentation_pages())


def documented_section(title: str) -> str:
    """The section headed ``title`` (any level, in the README or a site page) up to the next heading of its
    level or above; it must exist once."""
    found = []
    for page in documentation_pages():
        text = page.read_text(encoding="utf-8")
        for heading in re.finditer(rf"^(#+) {re.escape(title)}\n", text, re.MULTILINE):
            level = len(heading.group(1))
            after = re.search(rf"^#{{1,{level}}} ", text[heading.end() :], re.MULTILINE)
            found.append(text[heading.start() : heading.end() + (after.start() if after else len(text))])
    assert len(found) == 1, f"{len(found)} sections headed {title!r} in the documentation"
    return found[0]


pytest_plugins = ["suite_progress"]  # per-stage progress lines (test/suite_progress.py)


def tiff_header(
    pages: tuple[tuple[int, int], ...] = ((4, 4),), order: str = "<", big: bool = False, loop: bool = False
) -> bytes:
    """A TIFF (TIFF 6.0; ``big``: BigTIFF) holding only its header and one directory per (width,
    height) page, 8-bit grey, no pixel data: what files.check_image_file reads. ``loop`` points the
    last directory back at the first."""
    count, entry, offset = ("Q", "HHQ8s", "Q") if big else ("H", "HHI4s", "I")
    head = (b"II" if order == "<" else b"MM") + (
        struct.pack(f"{order}HHHQ", 43, 8, 0, 16) if big else struct.pack(f"{order}HI", 42, 8)
    )
    size = struct.calcsize(f"{order}{count}") + 5 * struct.calcsize(f"{order}{entry}") + struct.calcsize(offset)
    directories: list[bytes] = []
    for index, (width, height) in enumerate(pages):
        following = len(head) + (index + 1) * size if index + 1 < len(pages) else (len(head) if loop else 0)
        directories.append(struct.pack(f"{order}{count}", 5))
        # ImageWidth, ImageLength (LONG); BitsPerSample, PhotometricInterpretation, SamplesPerPixel (SHORT)
        for tag, kind, code, value in ((256, 4, "I", width), (257, 4, "I", height), (258, 3, "H", 8),
                                       (262, 3, "H", 1), (277, 3, "H", 1)):  # fmt: skip
            field = struct.pack(f"{order}{code}", value).ljust(8 if big else 4, b"\0")
            directories.append(struct.pack(f"{order}{entry}", tag, kind, 1, field))
        directories.append(struct.pack(f"{order}{offset}", following))
    return head + b"".join(directories)


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
