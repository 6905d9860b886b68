"""MkDocs hook (mkdocs.yml ``hooks``): the site's reference pages, generated at every build from the
sources that define them, so they cannot drift: the metrics from their records
(``evaluation.declarative.derived.metric_table``), a declaration's keys from the editors' JSON Schema
(``derived.json_schema``, itself built from the records and the output kinds), every console command's
options from its argument parser (the ``[project.scripts]`` of pyproject.toml), and one page per packaged
declaration (``evaluation/declarations/*.toml``: its own opening comment, its metrics, leaderboard, options and
``[provenance]``) with the library's table of them. None of these pages is in ``docs/``: only the hand-written
guides are, and where one shows catalogue entries or declarations' options and leaderboards, a
``<!-- generated: ... -->`` line of it is replaced by their table (``on_page_markdown``).
"""

from __future__ import annotations

import argparse
import ast
import functools
import importlib
import json
import re
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from evaluation.declarative.derived import json_schema, metric_table  # noqa: E402
from evaluation.declarative.metric_records import RECORDS  # noqa: E402
from evaluation.declarative.schema import Provenance, load  # noqa: E402
from evaluation.metrics import catalogue  # noqa: E402

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
        kind = " or ".join(schema["type"]) if isinstance(schema["type"], list) else schema["type"]
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
        default = "required" if key in required else f"`{json.dumps(node['default'])}`" if "default" in node else ""
        yield f"| `{prefix}{key}` | {_cell(_constraint(node))} | {default} | {_cell(node['description'])} |"


HEADER = ["| key | type and constraint | default | meaning |", "| --- | --- | --- | --- |"]


def _table(key: str, node: dict[str, Any]) -> Iterator[str]:
    """A section's keys (``[key]``, or ``[[key]]`` for an array of tables), then its arrays of tables."""
    table = node if "properties" in node else node.get("items", {})
    if "properties" not in table:
        return
    bracket = f"[[{key}]]" if node.get("type") == "array" else f"[{key}]"
    yield from ["", f"## `{bracket}`", "", _cell(node["description"]), "", *HEADER]
    yield from _key_rows(table["properties"], table.get("required", []), "")
    for sub, inner in table["properties"].items():
        if "properties" in inner.get("items", {}):
            yield from _table(f"{key}.{sub}", inner)


def _either(nodes: list[dict[str, Any]]) -> dict[str, Any]:
    """A key that differs by metric: its variants' constraints and meanings, side by side."""
    meanings = " Or: ".join(dict.fromkeys(node["description"] for node in nodes))
    kinds = {node.get("type") for node in nodes}
    if len(kinds) == 1 and None not in kinds:  # (the choices by metric: on its page)
        return {"type": kinds.pop(), "description": meanings}
    return {"anyOf": [{k: v for k, v in node.items() if k not in ("description", "default")} for node in nodes],
            "description": meanings}  # fmt: skip


def declaration_page() -> str:
    """Every key of a declaration: the sections, each output kind's keys, then the metrics' table."""
    schema = json_schema()
    lines = ["# Declaration keys", "",
             "Generated from the editors' JSON Schema of a declaration (`evaluation/declarations/"
             "declaration.schema.json`), itself built from where each key is defined: the sections' dataclasses",
             "(`evaluation/declarative/schema.py`), the output kinds (`output_kinds.py`) and the metric records.",
             "The parser's checks remain the authority: references between sections, paths and key templates are",
             "checked when a declaration loads, each refusal one `file: key: problem` line.", "",
             "## Top-level keys", "", *HEADER]  # fmt: skip
    top = schema["properties"]
    lines += _key_rows({k: v for k, v in top.items() if "properties" not in v and "items" not in v},
                       schema["required"], "")  # fmt: skip
    lines += [line for key, node in top.items() if key not in ("outputs", "metrics") for line in _table(key, node)]
    outputs = top["outputs"]["items"]
    branches = [branch["then"] for branch in outputs["allOf"]]
    common = {k: v for k, v in branches[0]["properties"].items() if all(b["properties"].get(k) == v for b in branches)}
    lines += ["", "## `[[outputs]]`", "", _cell(top["outputs"]["description"]), "", "### Every kind", "", *HEADER,
              *_key_rows(common, outputs["required"], ""), ""]  # fmt: skip
    for then in branches:
        kind = then["properties"]["kind"]
        own = {k: v for k, v in then["properties"].items() if k not in common and k != "kind"}
        lines += [f"### kind = `{kind['const']}`", "", _cell(kind["description"]), "", *HEADER,
                  *_key_rows(own, then["required"], ""), ""]  # fmt: skip
    params = {param.key for record in RECORDS for param in (*record.params, *(e.param(False) for e in record.edges))}
    variants: dict[str, list[dict[str, Any]]] = {"metric": [top["metrics"]["items"]["properties"]["metric"]]}
    for branch in top["metrics"]["items"]["allOf"]:
        for key, node in branch["then"]["properties"].items():
            if key not in params and node not in variants.setdefault(key, []) and key != "metric":
                variants[key].append(node)
    common = {key: nodes[0] if len(nodes) == 1 else _either(nodes) for key, nodes in variants.items()}
    lines += ["## `[[metrics]]`", "", "The keys every metric (or a metric of its sort) takes; each metric's own "
              "parameters and edge values are in [the metrics](metrics.md).", "", *HEADER,
              *_key_rows(common, ["metric", "output"], ""), ""]  # fmt: skip
    return "\n".join(lines)


def metrics_page() -> str:
    return "\n".join(["# Metrics", "",
                      "Every declarable metric, generated from its record in "
                      "`evaluation/declarative/metric_records.py`.", "", metric_table(), "## The catalogue", "",
                      "Every entry of the metric catalogue (`evaluation/metrics/catalogue.py`): its function, the "
                      "reference it reproduces and what differs from that reference's code.", "",
                      catalogue_table(catalogue.names())])  # fmt: skip


def catalogue_table(names: Iterable[str]) -> str:
    """The catalogue entries ``names``: each one's function, the reference it reproduces and its deviation."""
    rows = ["| catalogue | function | reproduces | documented deviation |", "| --- | --- | --- | --- |"]
    for name in names:
        entry = catalogue.get(name)
        function = getattr(entry.function, "func", entry.function)  # (a partial: its function)
        where = f"{function.__module__.removeprefix('evaluation.metrics.')}.{function.__name__}"
        rows.append(f"| `{name}` | `{where}` | {_cell(entry.reference)} | {_cell(entry.deviation or 'none')} |")
    return "\n".join(rows) + "\n"


def editions_table(names: Iterable[str]) -> str:
    """Packaged declarations side by side: the outputs each reads (a prediction-file phase: its CSV's columns)
    and its leaderboard paths (the score, then the columns; those shown but not ranked apart)."""
    rows = ["| edition | outputs read | leaderboard paths (ranked; scoring method) |", "| --- | --- | --- |"]
    for name in names:
        declaration = load(DECLARATIONS / f"{name}.toml")
        board = declaration.leaderboard
        outputs = ", ".join(f"`{output.relative_path}` ({output.kind})" for output in declaration.outputs)
        if declaration.submission.csv:
            outputs = f"`{declaration.submission.file}`: `{declaration.submission.id_column}`, " + ", ".join(
                f"{', '.join(f'`{column}`' for column in output.csv_columns)} ({output.kind})"
                for output in declaration.outputs
            )
        ranked = [board.score, *(column.path for column in board.columns if not column.exclude_from_ranking)]
        shown = [column.path for column in board.columns if column.exclude_from_ranking]
        paths = ", ".join(f"`{path}`" for path in ranked) + f" ({board.scoring_method})"
        if shown:
            paths += "; shown, not ranked: " + ", ".join(f"`{path}`" for path in shown)
        rows.append(f"| {name} | {outputs} | {paths} |")
    return "\n".join(rows) + "\n"


def options_table(names: Iterable[str]) -> str:
    """The ``--set`` options of packaged declarations (``[[options]]``), one row per option: its default (each
    declaration's where they differ), its choices and its help; then the bootstrap's, where a metric is
    bootstrapped."""
    found: dict[str, tuple[Any, dict[str, str]]] = {}
    bootstrap: dict[str, str] = {}
    for name in names:
        declaration = load(DECLARATIONS / f"{name}.toml")
        for option in declaration.options:
            found.setdefault(option.name, (option, {}))[1][name] = f"`{json.dumps(option.default)}`"
        if any(metric.bootstrap for metric in declaration.metrics):
            bootstrap[name] = f"`{declaration.seed}`, `{declaration.resamples}`"
    rows = ["| option | default | choices | meaning |", "| --- | --- | --- | --- |"]
    for option, defaults in found.values():
        default = ", ".join(f"{value} ({name})" for name, value in defaults.items()) if len(
            set(defaults.values())) > 1 else next(iter(defaults.values()))  # fmt: skip
        choices = ", ".join(f"`{json.dumps(choice)}`" for choice in option.choices or
                            ((True, False) if isinstance(option.default, bool) else ()))  # fmt: skip
        rows.append(f"| `{option.name}` | {default} | {choices or 'any'} | {_cell(option.help)} |")
    if bootstrap:
        rows.append(f"| `seed`, `bootstrap_resamples` | {' / '.join(dict.fromkeys(bootstrap.values()))} | any | "
                    "the bootstrap of the metrics declared with `bootstrap = true` |")  # fmt: skip
    return "\n".join(rows) + "\n"


GENERATED = re.compile(r"^<!-- generated: (catalogue|editions|options) (.+?) -->$", re.MULTILINE)
TABLES = {"catalogue": catalogue_table, "editions": editions_table, "options": options_table}


def on_page_markdown(markdown: str, **_: Any) -> str:
    """MkDocs' event: a hand-written page's ``<!-- generated: catalogue|editions|options NAME ... -->`` line becomes
    the table of those catalogue entries or packaged declarations, so the page restates none of them by hand."""
    return GENERATED.sub(lambda found: TABLES[found.group(1)](found.group(2).split()), markdown)


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


def _purpose(path: str) -> str:
    """The first paragraph of a repository file's module docstring: what a generator or a test covers."""
    docstring = ast.get_docstring(ast.parse((REPO / path).read_text(encoding="utf-8"))) or ""
    text = " ".join(docstring.split("\n\n")[0].split())
    return "".join(part if part.startswith("`") else part.replace("<", "&lt;") for part in CODE.split(text))


CODE = re.compile(r"(`+[^`]*`+)")  # a code span (kept whole); outside it a docstring's "<name>" is text, not HTML


def _reproduces(provenance: Provenance, title: str) -> str:
    """What a declaration reproduces: the official code's repository and file, then what it computes."""
    where = "no official code is public" if provenance.repository == "none" else \
        f"`{provenance.repository}` `{provenance.path}`"  # fmt: skip
    return f"{where}: {provenance.reproduces or title}"


def library_page(path: Path) -> str:
    """One packaged declaration: what its opening comment says, its metrics, its leaderboard, where its numbers
    come from (``[provenance]``: the official code, what it computes, what differs, the tests), the file."""
    text, loaded = path.read_text(encoding="utf-8"), load(path)
    declaration, provenance = loaded.raw, loaded.provenance  # (merged with the declaration it extends)
    board = declaration["leaderboard"]
    base = Path(loaded.bases[0]).stem if loaded.bases else ""
    extends = [f"It extends [{base}]({base}.md) (`extends`): its metrics, leaderboard and options below are the "
               "merged declaration's.", ""] if base else []  # fmt: skip
    lines = [f"# {declaration['name']}", "", f"**{declaration['title']}**", "", _opening_comment(text), "",
             f"`python -m evaluation --challenge {declaration['name']}` (packaged: `evaluation/declarations/"
             f"{path.name}`).", "", *extends, "## Metrics", "", "| name | metric | output |",
             "| --- | --- | --- |"]  # fmt: skip
    for metric in declaration["metrics"]:
        lines.append(f"| `{metric.get('name', metric['metric'])}` | `{metric['metric']}` | "
                     f"`{metric.get('output', '')}` |")  # fmt: skip
    lines += ["", "## Leaderboard", "", f"Score: `{board['score']}` ({board.get('title', '')}, "
              f"{board.get('sort', 'desc')})", ""]  # fmt: skip
    lines += [f"- {column['title']}: `{column['path']}`" for column in board.get("columns", [])]
    if "options" in declaration:
        lines += ["", "## Options", "", "`--set <option>=<value>` (`[[options]]`):", "", options_table([path.stem])]
    lines += ["", "## Provenance", "", "The official implementation it reproduces (`[provenance]`):", "",
              "| repository | commit | path |", "| --- | --- | --- |",
              "| " + " | ".join(f"`{_cell(value)}`" if value else "" for value in
                               (provenance.repository, provenance.commit, provenance.path)) + " |", "",
              f"Reproduces: {provenance.reproduces or declaration['title']}", "",
              f"What differs: {provenance.deviations}", ""]  # fmt: skip
    if provenance.tests:
        lines += ["Made and tested by:", "", *(f"- `{test}`: {_purpose(test)}" for test in provenance.tests)]
    lines += ["", "## The declaration", "", "```toml", text.rstrip(), "```", ""]
    return "\n".join(lines)


def library_index(paths: list[Path]) -> str:
    """Every packaged declaration: what it reproduces, its generator and tests, what differs (``[provenance]``)."""
    rows = ["# The library", "", "Every packaged declaration, each page generated from its file; the columns are its "
            "`[provenance]` (what the official numbers are, the generator of its data and the test comparing with "
            "them, what differs).", "", "| challenge | reproduces | generator / test | documented deviation |",
            "| --- | --- | --- | --- |"]  # fmt: skip
    for path in paths:
        loaded = load(path)
        declaration, provenance = loaded.raw, loaded.provenance
        tests = " / ".join(f"`{test}`" for test in provenance.tests)
        rows.append(f"| [{declaration['name']}]({path.stem}.md) | "
                    f"{_cell(_reproduces(provenance, declaration['title']))} | {tests} | "
                    f"{_cell(provenance.deviations)} |")  # fmt: skip
    return "\n".join(rows) + "\n"


LAYOUT_EXAMPLES = {"kits-example": ("aggregates", "case", "missing", "settings"), "cibmtr2025": ("aggregates",),
                   "rare25": ("flat",)}  # fmt: skip


@functools.cache
def _run(challenge: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """metrics.json and provenance.json of a real run of the challenge's demo submission (``test/input``)."""
    with tempfile.TemporaryDirectory() as folder:
        paths = ["--input", str(REPO / "test" / "input" / challenge), "--ground-truth",
                 str(REPO / "ground-truth" / challenge)]  # fmt: skip
        run = subprocess.run(
            [sys.executable, "-m", "evaluation", "--challenge", challenge, *paths, "--output", folder, "--workers", "1",
             "--provenance"],
            cwd=REPO, capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
        if run.returncode != 0:
            raise RuntimeError(f"the {challenge} demo failed: {run.stderr[-2000:]}")
        return tuple(json.loads((Path(folder) / name).read_text(encoding="utf-8"))  # type: ignore[return-value]
                     for name in ("metrics.json", "provenance.json"))  # fmt: skip


def _excerpt(value: Any, items: int = 3) -> Any:
    """A JSON document cut to its first ``items`` entries at every level (``"..."``: more)."""
    if isinstance(value, dict):
        cut = {key: _excerpt(inner, items) for key, inner in list(value.items())[:items]}
        return {**cut, "...": f"{len(value) - items} more"} if len(value) > items else cut
    if isinstance(value, list) and len(value) > items:
        return [_excerpt(inner, items) for inner in value[:items]] + ["..."]
    return value


def _json(value: Any, items: int = 3) -> list[str]:
    return ["```json", json.dumps(_excerpt(value, items), indent=2), "```", ""]


def metrics_json_page() -> str:
    """What a run writes: metrics.json's sections, each described beside its writer (``engine.METRICS_JSON``) and
    shown as a real run of a demo writes it, every library phase's leaderboard paths, then provenance.json."""
    from evaluation import provenance
    from evaluation.declarative.engine import METRICS_JSON
    from evaluation.registry import get, names

    lines = ["# metrics.json", "", "What `python -m evaluation` writes to `/output/metrics.json`: each section as the "
             "engine describes it (`evaluation/declarative/engine.py`, `METRICS_JSON`) and as a real run of a demo "
             "submission (`test/input/<challenge>`) writes it, made as this page is built (cut to three entries per "
             "level).", ""]  # fmt: skip
    shown = {section: name for name, sections in LAYOUT_EXAMPLES.items() for section in sections}
    for section, meaning in METRICS_JSON.items():
        lines += [f"## `{section}`", "", meaning, ""]
        if section in shown:
            document = _run(shown[section])[0]
            part = document if section == "flat" else document[section]  # (every top-level key, cut below)
            cut = {key: _excerpt(value, 8 if section == "settings" else 3) for key, value in part.items()}
            lines += [f"From `{shown[section]}`:", "", *_json(cut if section == "flat" else {section: cut}, 99)]
    lines += ["## Each library phase's paths", "", "| challenge | leaderboard paths |", "| --- | --- |"]
    lines += [f"| `{name}` | {_cell(', '.join(f'`{path}`' for path in get(name).phase.leaderboard_paths))} |"
              for name in names()]  # fmt: skip
    record = (provenance.__doc__ or "").split("\n\n")[1]
    lines += ["", "## `provenance.json`", "", f"With `--provenance`, beside metrics.json: {' '.join(record.split())}",
              "", "From `cibmtr2025`:", "", *_json(_run("cibmtr2025")[1], 10)]  # fmt: skip
    return "\n".join(lines) + "\n"


def errors_page() -> str:
    """The participant's and organizer's last lines: every row of ``test/test_hostile.py``'s ``CASES``, the hostile
    change (its name) and the exact line the test asserts (a line naming generated folders: from a build of it)."""
    sys.path.insert(0, str(REPO / "test"))
    import test_hostile

    lines = ["# Error lines", "", "Bad input ends the run with exit code 1, no metrics.json and one line as the last "
             "line of stderr. Each line below is asserted, exactly, by `test/test_hostile.py` (its table `CASES`): "
             "a tiny valid submission of the challenge made hostile by the change named on the left.", ""]  # fmt: skip
    by_challenge: dict[str, list[tuple[str, str]]] = {}
    for name, case in test_hostile.CASES.items():
        line = case.line
        if callable(line):
            with tempfile.TemporaryDirectory() as folder:
                line = line(case.build(Path(folder))).replace(folder, "<tmp>")
        by_challenge.setdefault(case.challenge, []).append((name.removeprefix(f"{case.challenge} "), line))
    for challenge, rows in by_challenge.items():
        lines += [f"## {challenge}", "", "| input | last line |", "| --- | --- |"]
        lines += [f"| {_cell(name)} | `{_cell(line).replace('`', '')}` |" for name, line in rows] + [""]
    return "\n".join(lines)


def generated_pages() -> dict[str, Callable[[], str]]:
    """The site path of every generated page and what writes it."""
    paths = sorted(DECLARATIONS.glob("*.toml"))
    pages: dict[str, Callable[[], str]] = {
        "reference/declaration.md": declaration_page,
        "reference/metrics.md": metrics_page,
        "reference/commands.md": commands_page,
        "reference/metrics-json.md": metrics_json_page,
        "reference/errors.md": errors_page,
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
