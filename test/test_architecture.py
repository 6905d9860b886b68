"""The dependency rules of ../shared/spec/architecture.md, checked on every import statement of the
package (module level and inside functions): the layers a newcomer is told about are the layers
the code has."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from conftest import REPO

PACKAGE = REPO / "evaluation"
CHALLENGE_MODULES = {p.stem for p in (PACKAGE / "challenges").glob("*.py")} - {"__init__", "base"}


def imported(path: Path) -> set[str]:
    """Every ``evaluation.*`` module a file imports (relative imports resolved)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            base = node.module
            if node.level:
                parts = path.relative_to(PACKAGE.parent).with_suffix("").parts[: -node.level]
                base = ".".join((*parts, node.module))
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return {name for name in names if name == "evaluation" or name.startswith("evaluation.")}


def files(*parts: str) -> list[Path]:
    target = PACKAGE.joinpath(*parts)
    return sorted(target.rglob("*.py")) if target.is_dir() else [target]


def offending(paths: list[Path], forbidden: tuple[str, ...], allowed: tuple[str, ...] = ()) -> dict[str, list[str]]:
    found = {}
    for path in paths:
        bad = sorted(name for name in imported(path) if name.startswith(forbidden) and not name.startswith(allowed))
        if bad:
            found[path.relative_to(PACKAGE).as_posix()] = bad
    return found


@pytest.mark.parametrize(
    ("layer", "forbidden", "allowed"),
    [
        # platform/ imports no challenge and no metric
        (
            "platform",
            ("evaluation.challenges", "evaluation.declarative", "evaluation.metrics", "evaluation.runner"),
            (),
        ),
        # metrics/ imports nothing of the project but itself
        ("metrics", ("evaluation",), ("evaluation.metrics",)),
        # the runners import no challenge (the per-case task type lives with the runner)
        ("runner.py", ("evaluation.challenges", "evaluation.declarative"), ()),
        ("dask_runner.py", ("evaluation.challenges", "evaluation.declarative"), ()),
        # ranking/ reads metrics.json files and long tables; it does not import challenges/
        ("ranking", ("evaluation.challenges", "evaluation.declarative", "evaluation.phase"), ()),
    ],
)
def test_layer_imports(layer, forbidden, allowed):
    assert offending(files(layer), forbidden, allowed) == {}


def test_a_challenge_imports_no_other_challenge():
    for name in CHALLENGE_MODULES:
        others = tuple(f"evaluation.challenges.{other}" for other in CHALLENGE_MODULES - {name})
        assert offending(files("challenges", f"{name}.py"), others) == {}, name


def test_the_declarative_engine_imports_no_challenge_module():
    modules = tuple(f"evaluation.challenges.{name}" for name in CHALLENGE_MODULES)
    assert offending(files("declarative"), modules) == {}


def test_no_challenge_module_reads_predictions_json_or_writes_the_settings_wrapper():
    """The shared machinery (``Challenge.jobs_by_case``, ``Challenge.settings_echo``) does both, once."""
    for name in CHALLENGE_MODULES:
        path = PACKAGE / "challenges" / f"{name}.py"
        assert offending([path], ("evaluation.platform.predictions.load_jobs",)) == {}, name
        assert '"challenge":' not in path.read_text(encoding="utf-8"), name
    assert offending(files("declarative"), ("evaluation.platform.predictions.load_jobs",)) == {}
