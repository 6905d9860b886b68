"""The report is one self-contained HTML file whose every image loads in headless Chromium, offline."""

from __future__ import annotations

import html
import os
import re
import shutil
import subprocess
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


def two_task_table(path: Path) -> Path:
    rng = np.random.default_rng(0)
    rows = ["task,algorithm,case,value"]
    for task in ("dice", "nsd"):
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


def test_every_image_loads_in_headless_chromium(report: Path, tmp_path: Path) -> None:
    if CHROMIUM is None:
        if os.environ.get("EVALUATION_REQUIRE_CHROMIUM") == "1":
            pytest.fail("EVALUATION_REQUIRE_CHROMIUM=1 but no chromium on PATH (apt-get install chromium)")
        pytest.skip(
            "chromium is not installed (apt-get install chromium); set EVALUATION_REQUIRE_CHROMIUM=1 to require it"
        )
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
