"""Every code block of the README and the site (test/conftest.py ``documentation_pages``) is checked: each
names its language; a Python or JSON block parses; a TOML block is parsed and, being a whole declaration,
loaded by the declaration parser; a shell block is valid bash, and its commands are run by the tests
``test_cli.RUN_BY`` names (the README-command test). A block that is deliberately partial says so on the line
before it, in a comment this test reads:

- ``<!-- snippet: fragment of NAME -->``: TOML completing the declaration NAME (packaged, or a whole declaration
  of the site): its ``[[outputs]]`` and ``[[metrics]]`` take the place of NAME's of the same slug or name (or join
  them), its other tables replace NAME's, and the whole is loaded;
- ``<!-- snippet: fragment run by FILE::TEST -->``: TOML that TEST runs end to end, reading it from the site;
- ``<!-- snippet: usage of MODULE -->``: a command's synopsis, every option of it one of MODULE's ``parser()``.
"""

from __future__ import annotations

import copy
import importlib
import json
import re
import subprocess
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO, documentation_pages
from test_cli import readme_commands

from evaluation.declarative.schema import parse, parse_data

LANGUAGES = ("bash", "toml", "python", "json", "text")
MARKER = re.compile(r"<!-- snippet: (.+?) -->\n$")


@dataclass(frozen=True)
class Snippet:
    page: Path
    line: int
    language: str
    text: str
    marker: str  # what the comment before it says ("" without one)

    def __str__(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"


def snippets() -> list[Snippet]:
    found = []
    for page in documentation_pages():
        text = page.read_text(encoding="utf-8")
        for block in re.finditer(r"^```(\w*)\n(.*?)^```", text, re.DOTALL | re.MULTILINE):
            before = MARKER.search(text[: block.start()])
            line = text[: block.start()].count("\n") + 1
            found.append(Snippet(page, line, block.group(1), block.group(2), before.group(1) if before else ""))
    return found


SNIPPETS = snippets()
TOML = [snippet for snippet in SNIPPETS if snippet.language == "toml"]


def test_every_block_names_its_language():
    assert len(SNIPPETS) > 30
    for snippet in SNIPPETS:
        assert snippet.language in LANGUAGES, f"{snippet}: a code block needs a language ({', '.join(LANGUAGES)})"


def _whole() -> dict[str, str]:
    """The site's whole declarations by name (a fragment may complete one of them)."""
    found = {}
    for snippet in TOML:
        data = tomllib.loads(snippet.text)
        if not snippet.marker:
            found[data["name"]] = snippet.text
    return found


@pytest.mark.parametrize("snippet", TOML, ids=str)
def test_every_toml_block_loads(snippet: Snippet, tmp_path: Path):
    data = tomllib.loads(snippet.text)
    if not snippet.marker:
        parse(snippet.text, f"{snippet}")  # a whole declaration
        return
    kind, _, what = snippet.marker.partition(" ")
    assert kind == "fragment", f"{snippet}: unknown marker {snippet.marker!r}"
    if what.startswith("run by "):
        file, _, test = what.removeprefix("run by ").partition("::")
        assert re.search(rf"^def {re.escape(test)}\(", (REPO / file).read_text(encoding="utf-8"), re.MULTILINE), what
        return
    name = what.removeprefix("of ")
    packaged = REPO / "evaluation" / "declarations" / f"{name}.toml"
    base = packaged.read_text(encoding="utf-8") if packaged.is_file() else _whole()[name]
    parse_data(_completed(tomllib.loads(base), data), f"{snippet}", folder=str(packaged.parent))


def _completed(base: dict[str, Any], fragment: dict[str, Any]) -> dict[str, Any]:
    """``base`` with ``fragment``'s outputs and metrics in place of its own of the same slug or name (or added),
    its other tables replacing base's."""
    whole = copy.deepcopy(base)
    for key, value in fragment.items():
        if key not in ("outputs", "metrics"):
            whole[key] = value
            continue
        field = "slug" if key == "outputs" else "name"
        entries = whole.setdefault(key, [])
        for entry in value:
            same = [i for i, e in enumerate(entries) if e.get(field, e.get("metric")) == entry.get(field)]
            if same:
                entries[same[0]] = entry
            else:
                entries.append(entry)
    return whole


@pytest.mark.parametrize("snippet", [s for s in SNIPPETS if s.language == "bash"], ids=str)
def test_every_shell_block_is_bash_whose_commands_a_test_runs(snippet: Snippet):
    check = subprocess.run(["bash", "-n"], input=snippet.text, capture_output=True, text=True, timeout=30)
    assert check.returncode == 0, f"{snippet}: {check.stderr}"
    commands = readme_commands()  # (test_cli.test_every_readme_command_is_run_by_a_test: each is run by a test)
    for line in snippet.text.replace("\\\n", " ").splitlines():
        command = line.split("  #")[0].strip()
        assert not command or command.startswith("#") or command in commands, f"{snippet}: {command!r}"


@pytest.mark.parametrize("snippet", [s for s in SNIPPETS if s.marker.startswith("usage of ")], ids=str)
def test_every_usage_block_names_only_the_parsers_options(snippet: Snippet):
    parser = importlib.import_module(snippet.marker.removeprefix("usage of ")).parser()
    options = {name for action in parser._actions for name in action.option_strings}
    flags = set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", snippet.text))
    assert flags and flags <= options, f"{snippet}: {sorted(flags - options)}"


@pytest.mark.parametrize("snippet", [s for s in SNIPPETS if s.language in ("python", "json")], ids=str)
def test_every_python_and_json_block_parses(snippet: Snippet):
    if snippet.language == "json":
        json.loads(snippet.text)
    else:
        compile(snippet.text, str(snippet), "exec")
