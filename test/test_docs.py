"""The documentation site (mkdocs.yml): it builds with ``--strict`` (every link and anchor resolves), loads
nothing from outside, its generated reference names every metric record, every declaration key with its meaning,
every console command's every option, every hostile-input line, metrics.json's sections, every catalogue entry
and every packaged declaration with its provenance (the library's table too), the hand-written pages' generated
tables are in place, and headless Chromium renders it from a local server with search working and
no console error."""

from __future__ import annotations

import functools
import html
import http.server
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import REPO
from ranking.test_report import need_chromium

sys.path.insert(0, str(REPO / "scripts"))

import docs_hooks

from evaluation.declarative.metric_records import RECORDS
from evaluation.declarative.schema import load
from evaluation.metrics import catalogue


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("site")
    build = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", str(folder)],
        cwd=REPO, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    return folder


def test_site_loads_nothing_from_outside(site: Path) -> None:
    for page in site.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        assert not re.search(r'<script[^>]+src="(https?:)?//', text), page
        assert not re.search(r'<link[^>]+rel="stylesheet"[^>]+href="(https?:)?//', text), page
        assert not re.search(r'<link[^>]+href="(https?:)?//[^"]+"[^>]+rel="stylesheet"', text), page


SEED_PAGES = {
    "rare25": ["rare25"],
    "isic": ["isic2019", "isic2018"],
    "digestpath": ["digestpath2019-task1", "digestpath2019-task2"],
    "hecktor": ["hecktor2026", "hecktor2025-task1", "hecktor2025-task2", "hecktor2025-task3"],
}


def test_reference_is_generated_from_the_records_parsers_and_declarations(site: Path) -> None:
    metrics = (site / "reference" / "metrics.html").read_text(encoding="utf-8")
    assert all(f"<code>{record.name}</code>" in metrics for record in RECORDS)
    commands = (site / "reference" / "commands.html").read_text(encoding="utf-8")
    for command, parser in docs_hooks._commands():
        assert f'id="{command}"' in commands
        for action in parser._actions:
            assert all(f"<code>{name}</code>" in commands for name in action.option_strings), (command, action)
    assert all(f"<code>{name}</code>" in metrics for name in catalogue.names())
    library = (site / "library" / "index.html").read_text(encoding="utf-8")
    for path in docs_hooks.DECLARATIONS.glob("*.toml"):
        assert f'href="{path.stem}.html"' in library
        page = (site / "library" / f"{path.stem}.html").read_text(encoding="utf-8")
        assert 'id="provenance"' in page and "What differs:" in page, path.name
        assert all(f"<code>{test}</code>" in library and f"<code>{test}</code>" in page
                   for test in load(path).provenance.tests), path.name  # fmt: skip
    for page in site.rglob("*.html"):  # each hand-written page's generated tables are in place
        assert "<!-- generated:" not in page.read_text(encoding="utf-8"), page
    hecktor = (site / "challenges" / "hecktor.html").read_text(encoding="utf-8")
    assert "<code>rfs_output</code>" in hecktor and "<code>aggregates.hpv.balanced_accuracy</code>" in hecktor
    for page, names in SEED_PAGES.items():  # each seed page's options and leaderboard, from the declarations
        text = (site / "challenges" / f"{page}.html").read_text(encoding="utf-8")
        for name in names:
            declaration = load(docs_hooks.DECLARATIONS / f"{name}.toml")
            shown = [declaration.leaderboard.score, *(column.path for column in declaration.leaderboard.columns)]
            assert all(f"<code>{key}</code>" in text for key in shown), (page, name)
            assert all(f"<code>{option.name}</code>" in text for option in declaration.options), (page, name)
    assert "<code>lesion_wise</code>" in (site / "declare" / "catalogue.html").read_text(encoding="utf-8")
    declaration = (site / "reference" / "declaration.html").read_text(encoding="utf-8")
    assert "<code>[leaderboard]</code>" in declaration and "kind = <code>segmentation</code>" in declaration


def _keys(node: object, where: str = "") -> Iterator[tuple[str, str, dict]]:
    """Every key of the JSON Schema (where, key, its node), in any section, kind or metric's branch."""
    if isinstance(node, dict):
        for key, inner in (node.get("properties") or {}).items():
            if not where.endswith("/if"):  # (a branch's condition, not a key)
                yield where, key, inner
        for key, inner in node.items():
            yield from _keys(inner, f"{where}/{key}")
    elif isinstance(node, list):
        for inner in node:
            yield from _keys(inner, where)


def test_every_declaration_key_has_a_meaning_and_is_on_its_generated_page(site: Path) -> None:
    from evaluation.declarative.derived import json_schema

    declaration = (site / "reference" / "declaration.html").read_text(encoding="utf-8")
    metrics = (site / "reference" / "metrics.html").read_text(encoding="utf-8")
    found = list(_keys(json_schema()))
    assert len(found) > 300
    for where, key, node in found:
        assert node.get("description"), (where, key)
        spelled = (f"<code>{key}</code>", f"<code>[{key}]</code>", f"<code>[[{key}]]</code>", f".{key}]</code>")
        page = declaration + metrics if "/metrics/" in where else declaration
        assert any(spelling in page for spelling in spelled), (where, key)


def test_the_error_lines_and_metrics_json_pages_are_generated(site: Path) -> None:
    sys.path.insert(0, str(REPO / "test"))
    import test_hostile

    errors = (site / "reference" / "errors.html").read_text(encoding="utf-8")
    for case in test_hostile.CASES.values():
        if not callable(case.line):
            assert html.escape(case.line, quote=False) in errors, case.line
    layout = (site / "reference" / "metrics-json.html").read_text(encoding="utf-8")
    for section in ("aggregates", "case", "missing", "settings", "flat", "leaderboard"):
        assert f'id="{section}"' in layout, section
    assert "stratified_c_index_by_group" in layout and "aggregates.dsc_agg" in layout and "sha256" in layout


@pytest.fixture(scope="module")
def served(site: Path) -> Iterator[str]:
    """The site on a local server (the search's web worker needs http, not file://)."""
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    """The site's files; ``/__wait`` answers after a tenth of a second (see ``SEARCH_PROBE``)."""

    def do_GET(self) -> None:
        if self.path.startswith("/__wait"):
            time.sleep(0.1)
            self.send_response(204)
            self.end_headers()
            return
        super().do_GET()

    def log_message(self, format: str, *args: object) -> None:
        pass


# The search page in a frame, polled until its web worker has answered. Chromium's virtual time does not wait
# for a worker, but it stands still while a fetch is pending: each poll waits on the server's /__wait.
SEARCH_PROBE = """<!doctype html><html><body><div id="probe">waiting</div><script>
const frame = document.createElement("iframe");
frame.src = "search.html?q=QUERY";
document.body.appendChild(frame);
(async () => {
  for (let i = 0; i < 300; i++) {
    await fetch("/__wait?" + i);
    const results = frame.contentDocument && frame.contentDocument.getElementById("mkdocs-search-results");
    if (results && results.querySelector("article")) {
      document.getElementById("probe").innerHTML = results.innerHTML;
      return;
    }
  }
  document.getElementById("probe").textContent = "no results after 30 s";
})();
</script></body></html>"""


def _render(url: str, profile: Path) -> tuple[str, str]:
    """Chromium's DOM of ``url`` after its scripts ran, and its console lines."""
    run = subprocess.run(
        [need_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--no-first-run", "--disable-sync", f"--user-data-dir={profile}",
         "--enable-logging=stderr", "--v=0", "--virtual-time-budget=60000", "--dump-dom", url],
        capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip
    console = [line for line in run.stderr.splitlines() if ":CONSOLE" in line]
    return run.stdout, "\n".join(console)


@pytest.mark.slow
def test_site_renders_and_searches_in_chromium(site: Path, served: str, tmp_path: Path) -> None:
    home, console = _render(f"{served}/index.html", tmp_path / "p1")
    assert "Where to look" in home and "reference/metrics.html" in home
    assert "ERROR" not in console and "Uncaught" not in console, console
    metrics, console = _render(f"{served}/reference/metrics.html", tmp_path / "p2")
    assert "<code>nsd</code>" in metrics and "ERROR" not in console, console
    (site / "search-probe.html").write_text(SEARCH_PROBE.replace("QUERY", "hausdorff"), encoding="utf-8")
    found, console = _render(f"{served}/search-probe.html", tmp_path / "p3")
    results = found.partition('id="probe"')[2]
    assert 'href="./reference/metrics.html' in results, results[:2000]
    assert "ERROR" not in console and "Uncaught" not in console, console
