"""MkDocs hook (mkdocs.yml ``hooks``): the site's reference pages, generated at every build from the
sources that define them, so they cannot drift: the metrics from their records
(``evaluation.declarative.derived.metric_table``), a declaration's keys from the editors' JSON Schema
(``derived.json_schema``, itself built from the records and the output kinds), every console command's
options from its argument parser (the ``[project.scripts]`` of pyproject.toml), and one page per packaged
declaration (``evaluation/declarations/*.toml``: its own opening comment, its metrics and leaderboard).
None of these pages is in ``docs/``: only the hand-written guides are.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from evaluation.declarative.derived import json_schema, metric_table  # noqa: E402

DECLARATIONS = REPO / "evaluation" / "declarations"


def _cell(text: str) -> str:
    """Text made safe for a Markdown table cell."""
    return " ".join(text.split()).replace("|", "\\|")


def _constraint(schema: dict[str, Any]) -> str:
    """A JSON Schema node said in a few words: its type, choices, bounds and pattern."""
    if "anyOf" in schema:
        return " or ".join(_constraint(branch) for branch in schema["anyOf"])
    said = []
    if "const" in schema:
        said.append(f"`{json.dumps(schema['const'])}`")
    if "enum" in schema:
        said.append("one of " + ", ".join(f"`{json.dumps(choice)}`" for choice in schema["enum"]))
    if "type" in schema and not said:
        kind = schema["type"]
        if kind == "array" and isinstance(schema.get("items"), dict):
            kind = f"array of {_constraint(schema['items']) or 'values'}"
        said.append(kind)
    bounds = {
        "minimum": ">=",
        "exclusiveMinimum": ">",
        "maximum": "<=",
        "exclusiveMaximum": "<",
        "minItems": "items >=",
    }
    said += [f"{word} {schema[key]}" for key, word in bounds.items() if key in schema]
    if "pattern" in schema:
        said.append(f"matching `{schema['pattern']}`")
    return ", ".join(said)


def _key_rows(properties: dict[str, Any], required: list[str], prefix: str) -> Iterator[str]:
    for key, node in properties.items():
        mark = " (required)" if key in required else ""
        yield f"| `{prefix}{key}`{mark} | {_cell(_constraint(node))} |"


def declaration_page() -> str:
    """Every key of a declaration: the sections, each output kind's keys, then the metrics' table."""
    schema = json_schema()
    lines = ["# Declaration keys", "",
             "Generated from the editors' JSON Schema of a declaration (`evaluation/declarations/"
             "declaration.schema.json`, built from the metric records and the output kinds). The parser's checks",
             "remain the authority: references between sections, paths and key templates are checked when a",
             "declaration loads, each refusal one `file: key: problem` line.", "",
             "## Top-level keys and sections", "", "| key | type and constraint |", "| --- | --- |"]  # fmt: skip
    top = schema["properties"]
    for key, node in top.items():
        if node.get("type") == "object" and "properties" in node:
            lines += _key_rows(node["properties"], node.get("required", []), f"{key}.")
        elif node.get("type") == "array" and "properties" in node.get("items", {}):
            lines += _key_rows(node["items"]["properties"], node["items"].get("required", []), f"{key}[].")
        elif key not in ("outputs", "metrics"):
            lines += _key_rows({key: node}, schema["required"], "")
    lines += ["", "## Outputs, by kind", ""]
    for branch in top["outputs"]["items"]["allOf"]:
        then = branch["then"]
        lines += [f"### kind = `{then['properties']['kind']['const']}`", "", "| key | type and constraint |",
                  "| --- | --- |", *_key_rows(then["properties"], then["required"], ""), ""]  # fmt: skip
    lines += ["## Metrics", "", "See [the metrics](metrics.md): each metric's parameters and edge values.", ""]
    return "\n".join(lines)


def metrics_page() -> str:
    return "\n".join(["# Metrics", "",
                      "Every declarable metric, generated from its record in "
                      "`evaluation/declarative/metric_records.py`.", "", metric_table()])  # fmt: skip


def _commands() -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """Each console command of pyproject.toml with the parser of its module."""
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    for command, target in scripts.items():
        module = importlib.import_module(target.split(":")[0])
        yield command, module.parser()


def _default(action: argparse.Action) -> str:
    if action.default in (None, argparse.SUPPRESS) or isinstance(action, argparse._StoreTrueAction):
        return ""
    return f"`{action.default}`"


def commands_page() -> str:
    """Every command's options, from its argument parser."""
    lines = ["# Commands", "", "Generated from each console command's argument parser (`[project.scripts]` of",
             "pyproject.toml; `gc-evaluate` is `python -m evaluation`).", ""]  # fmt: skip
    for command, parser in _commands():
        lines += [f"## {command}", "", _cell(parser.description or ""), "", "```text", parser.format_usage().strip(),
                  "```", "", "| option | default | meaning |", "| --- | --- | --- |"]  # fmt: skip
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            names = ", ".join(f"`{name}`" for name in action.option_strings) or f"`{action.dest}`"
            meaning = (action.help or "").replace("%(default)s", str(action.default)).replace("%%", "%")
            lines.append(f"| {names} | {_default(action)} | {_cell(meaning)} |")
        lines.append("")
    return "\n".join(lines)


def _opening_comment(text: str) -> str:
    """A declaration's opening comment lines, as prose."""
    lines = []
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        lines.append(line.lstrip("#").strip())
    return " ".join(lines)


def library_page(path: Path) -> str:
    """One packaged declaration: what its opening comment says, its metrics, its leaderboard, the file."""
    text = path.read_text(encoding="utf-8")
    declaration = tomllib.loads(text)
    board = declaration["leaderboard"]
    lines = [f"# {declaration['name']}", "", f"**{declaration['title']}**", "", _opening_comment(text), "",
             f"`python -m evaluation --challenge {declaration['name']}` (packaged: `evaluation/declarations/"
             f"{path.name}`).", "", "## Metrics", "", "| name | metric | output |", "| --- | --- | --- |"]  # fmt: skip
    for metric in declaration["metrics"]:
        lines.append(f"| `{metric.get('name', metric['metric'])}` | `{metric['metric']}` | "
                     f"`{metric.get('output', '')}` |")  # fmt: skip
    lines += ["", "## Leaderboard", "", f"Score: `{board['score']}` ({board.get('title', '')}, "
              f"{board.get('sort', 'desc')})", ""]  # fmt: skip
    lines += [f"- {column['title']}: `{column['path']}`" for column in board.get("columns", [])]
    lines += ["", "## The declaration", "", "```toml", text.rstrip(), "```", ""]
    return "\n".join(lines)


def library_index(paths: list[Path]) -> str:
    rows = ["# The library", "", "Every packaged declaration; each page is generated from its file.", "",
            "| challenge | title |", "| --- | --- |"]  # fmt: skip
    for path in paths:
        declaration = tomllib.loads(path.read_text(encoding="utf-8"))
        rows.append(f"| [{declaration['name']}]({path.stem}.md) | {_cell(declaration['title'])} |")
    return "\n".join(rows) + "\n"


def generated_pages() -> dict[str, Callable[[], str]]:
    """The site path of every generated page and what writes it."""
    paths = sorted(DECLARATIONS.glob("*.toml"))
    pages: dict[str, Callable[[], str]] = {
        "reference/declaration.md": declaration_page,
        "reference/metrics.md": metrics_page,
        "reference/commands.md": commands_page,
        "library/index.md": lambda: library_index(paths),
    }
    for path in paths:
        pages[f"library/{path.stem}.md"] = lambda path=path: library_page(path)
    return pages


def on_files(files: Any, config: Any) -> Any:
    """MkDocs' event: the generated pages join the hand-written ones."""
    from mkdocs.structure.files import File

    for uri, write in generated_pages().items():
        files.append(File.generated(config, uri, content=write()))
    return files
