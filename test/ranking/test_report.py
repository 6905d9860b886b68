"""The report is one self-contained HTML file whose every image loads in headless Chromium, offline; a
publishable one (title, contents, captions, cross-task figures) screenshotted and printed to PDF."""

from __future__ import annotations

import html
import os
import re
import shutil
import subprocess
import warnings
from pathlib import Path

import numpy as np
import pytest

from evaluation.ranking.cli import main

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
PROBE = """
<script>
window.addEventListener('load', function () {
  var images = Array.from(document.images);
  var loaded = images.filter(function (i) { return i.complete && i.naturalWidth > 0; }).length;
  var marker = document.createElement('div');
  marker.id = 'image-check';
  marker.textContent = 'loaded=' + loaded + ' total=' + images.length;
  document.body.appendChild(marker);
});
</script>
"""


def two_task_table(path: Path, tasks: tuple[str, ...] = ("dice", "nsd")) -> Path:
    rng = np.random.default_rng(0)
    rows = ["task,algorithm,case,value"]
    for task in tasks:
        for algorithm in "ABCD":
            skill = rng.normal(0.7, 0.05)
            rows += [f"{task},{algorithm},c{c},{np.clip(skill + rng.normal(0, 0.1), 0, 1):.3f}" for c in range(12)]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("report")
    data = two_task_table(folder / "data.csv")
    args = ["--data", str(data), "--output", str(folder), "--bootstrap", "50", "--consensus", "euclidean", "--report"]
    assert main(args) == 0
    return folder / "report.html"


def test_report_is_self_contained(report: Path) -> None:
    text = report.read_text(encoding="utf-8")
    sources = re.findall(r'src="([^"]*)"', text)
    names = [html.unescape(name) for name in re.findall(r"<h4>([^<]*)</h4>", text)]
    assert sources and all(s.startswith("data:image/png;base64,") for s in sources)
    assert "http://" not in text and "https://" not in text and "<link" not in text
    for plot in (
        "Dot- and boxplot per algorithm",
        "Podium plot",
        "Ranking heatmap",
        "Significance map",
        "Ranks across ranking schemes",
        "Blob plot of bootstrap ranks",
        "Stacked rank frequencies",
        "Violin plot of Kendall's tau",
        "Consensus ranking (euclidean) and ranks per task",
        "Dendrogram of the task rankings",
    ):
        assert any(plot in name for name in names), plot
    assert "Missing data handling" in text and "Uncertainty handling" in text and "Seed" in text


def need_chromium() -> str:
    if CHROMIUM is None:
        if os.environ.get("EVALUATION_REQUIRE_CHROMIUM") == "1":
            pytest.fail("EVALUATION_REQUIRE_CHROMIUM=1 but no chromium on PATH (apt-get install chromium)")
        pytest.skip(
            "chromium is not installed (apt-get install chromium); set EVALUATION_REQUIRE_CHROMIUM=1 to require it"
        )
    return CHROMIUM


def test_every_image_loads_in_headless_chromium(report: Path, tmp_path: Path) -> None:
    need_chromium()
    probe = tmp_path / "probe.html"
    probe.write_text(report.read_text(encoding="utf-8").replace("</body>", PROBE + "</body>"), encoding="utf-8")
    command = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--virtual-time-budget=10000",
        "--dump-dom",
        probe.as_uri(),
    ]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    found = re.search(r"loaded=(\d+) total=(\d+)", result.stdout)
    assert found, f"no image check in Chromium's DOM (exit {result.returncode}): {result.stderr[-500:]}"
    loaded, total = map(int, found.groups())
    assert total >= 15 and loaded == total


TITLE = "HECKTOR-like Challenge 2026"
CROSS_TASK = (
    "Consensus ranking (euclidean) and ranks per task",
    "Blob plot of bootstrap ranks across tasks",
    "Ranking stability per algorithm across tasks",
    "Stacked rank frequencies per algorithm and task",
    "Dendrogram of the task rankings",
)


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A three-task report with the challenge's title and HECKTOR 2026's consensus weights."""
    folder = tmp_path_factory.mktemp("published")
    data = two_task_table(folder / "data.csv", ("segmentation", "staging", "prognosis"))
    args = ["--data", str(data), "--output", str(folder), "--bootstrap", "30", "--consensus", "euclidean",
            "--consensus-weights", "segmentation=0.25,staging=0.35,prognosis=0.40", "--report", "--title", TITLE,
            "--organizers", "The organizers", "--description", "Three subtasks ranked together."]  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no library warning leaks into the organizer's console
        assert main(args) == 0
    return folder / "report.html"


def test_published_report_has_title_contents_captions_and_cross_task_figures(published: Path) -> None:
    text = published.read_text(encoding="utf-8")
    assert f"<title>{TITLE}</title>" in text and f"<h1>{TITLE}</h1>" in text
    assert "<h2>Contents</h2>" in text and "BIAS reporting items" in text
    assert text.count("<figcaption>") == text.count("<img") >= 25
    assert all(len(c) > 60 for c in re.findall(r"<figcaption>([^<]*)</figcaption>", text))  # says how to read it
    for title in CROSS_TASK:
        assert title in text, title
    assert "segmentation 0.25, staging 0.35, prognosis 0.4" in text


def chromium(*arguments: str, profile: Path) -> subprocess.CompletedProcess[str]:
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-component-update", "--no-first-run", "--disable-sync",
             f"--user-data-dir={profile}"]  # fmt: skip
    return subprocess.run(
        [need_chromium(), *flags, *arguments], capture_output=True, text=True, timeout=180, check=False
    )


def test_published_report_in_chromium_screenshot_and_pdf(published: Path, tmp_path: Path) -> None:
    """What a reader sees: the DOM after layout (title, captions, every cross-task figure loaded), a
    screenshot whose page is drawn at full width, and a printed PDF titled like the page."""
    need_chromium()
    probe = tmp_path / "probe.html"
    probe.write_text(published.read_text(encoding="utf-8").replace("</body>", PROBE + "</body>"), encoding="utf-8")
    dom = chromium("--virtual-time-budget=10000", "--dump-dom", probe.as_uri(), profile=tmp_path / "p1").stdout
    loaded, total = map(int, re.search(r"loaded=(\d+) total=(\d+)", dom).groups())  # type: ignore[union-attr]
    assert loaded == total >= 25
    assert f"<h1>{TITLE}</h1>" in dom and all(title in dom for title in CROSS_TASK)
    screenshot = tmp_path / "report.png"
    chromium("--hide-scrollbars", "--window-size=1200,1600", f"--screenshot={screenshot}", published.as_uri(),
             profile=tmp_path / "p2")  # fmt: skip
    from PIL import Image

    with Image.open(screenshot) as image:
        pixels = np.asarray(image.convert("L"), dtype=float)
    assert pixels.shape == (1600, 1200)
    ink = pixels < 128
    assert ink[:120].any() and ink[:, 600:].any()  # the title at the top, content across the page width
    pdf = tmp_path / "report.pdf"
    chromium("--no-pdf-header-footer", f"--print-to-pdf={pdf}", published.as_uri(), profile=tmp_path / "p3")
    document = pdf.read_bytes()
    assert document.startswith(b"%PDF") and f"/Title ({TITLE})".encode() in document
    assert len(re.findall(rb"/Type\s*/Page\b", document)) >= 5
