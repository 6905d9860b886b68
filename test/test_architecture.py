"""The dependency rules of ../shared/spec/architecture.md, checked on every import statement of the
package (module level and inside functions): the layers a newcomer is told about are the layers
the code has, and no two modules import each other, directly or through others (no exemption)."""

from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest
from conftest import REPO

PACKAGE = REPO / "evaluation"


def imported(path: Path, package: Path = PACKAGE) -> set[str]:
    """Every ``evaluation.*`` module a file imports (relative imports resolved)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            base = node.module
            if node.level:
                parts = path.relative_to(package.parent).with_suffix("").parts[: -node.level]
                base = ".".join((*parts, node.module))
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return {name for name in names if name == "evaluation" or name.startswith("evaluation.")}


def _packages_above(module: str) -> set[str]:
    return {module.rsplit(".", depth)[0] for depth in range(1, module.count(".") + 1)}


def import_graph(package: Path) -> dict[str, set[str]]:
    """``{module: the package's modules that importing it runs}``: each imported module (``from a.b
    import f``: ``a.b``; ``from a import b``: ``a.b``) and the packages above it (``a/__init__.py`` runs
    before ``a.b``), except the importer's own packages, which are already being imported when it runs."""
    paths = {}
    for path in package.rglob("*.py"):
        parts = path.relative_to(package.parent).with_suffix("").parts
        paths[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph = {}
    for importer, path in paths.items():
        found = set()
        for name in imported(path, package):
            while name not in paths:
                name = name.rpartition(".")[0]
            found |= {name} | _packages_above(name)
        graph[importer] = found - _packages_above(importer) - {importer}
    return graph


def import_cycle(package: Path) -> list[str]:
    """One import cycle among the package's modules (``[a, b, a]``), or ``[]``."""
    try:
        tuple(TopologicalSorter(import_graph(package)).static_order())
    except CycleError as error:
        return list(error.args[1])
    return []


def test_no_import_cycle():
    """Every import edge counts (in-function ones too): a cycle means a module cannot be understood,
    tested or moved without the other (the contract is below challenges/ and declarative/, the
    registry above both; the runner is handed its executor)."""
    assert import_cycle(PACKAGE) == []


def test_the_cycle_check_sees_a_cycle_through_a_package_and_an_in_function_import(tmp_path):
    """What the old layout had: ``challenges/__init__`` imported ``declarative.engine`` inside a
    function, and ``declarative.engine`` imported ``challenges.base`` (running ``challenges/__init__``)."""
    package = tmp_path / "evaluation"
    for name, text in {
        "__init__.py": "",
        "challenges/__init__.py": "def get():\n    from evaluation.declarative.engine import from_file\n",
        "challenges/base.py": "",
        "declarative/__init__.py": "",
        "declarative/engine.py": "from evaluation.challenges.base import Challenge\n",
    }.items():
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        (package / name).write_text(text)
    assert sorted(set(import_cycle(package))) == ["evaluation.challenges", "evaluation.declarative.engine"]


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
        # the contract is below every challenge and the registry
        ("contract.py", ("evaluation.challenges", "evaluation.declarative", "evaluation.registry"), ()),
        # the runners import no challenge (only the contract's CaseTask); the runner no Dask: it is handed
        # its executor by the caller
        ("runner.py", ("evaluation.challenges", "evaluation.declarative", "evaluation.dask_runner"), ()),
        ("dask_runner.py", ("evaluation.challenges", "evaluation.declarative"), ()),
        # ranking/ reads metrics.json files and long tables; it does not import challenges/
        ("ranking", ("evaluation.challenges", "evaluation.declarative", "evaluation.phase"), ()),
    ],
)
def test_layer_imports(layer, forbidden, allowed):
    assert offending(files(layer), forbidden, allowed) == {}


def test_the_declarative_engine_imports_no_challenge_module_nor_the_registry():
    assert offending(files("declarative"), ("evaluation.challenges", "evaluation.registry")) == {}


def test_the_engine_neither_reads_predictions_json_nor_writes_the_settings_wrapper():
    """The contract's machinery (``Challenge.jobs_by_case``, ``Challenge.settings_echo``) does both, once."""
    assert offending(files("declarative"), ("evaluation.platform.predictions.load_jobs",)) == {}
    assert not [path for path in files("declarative") if '"challenge":' in path.read_text(encoding="utf-8")]


def test_every_challenge_is_a_declaration():
    """One way to define a challenge (issue 29): ``challenges/`` holds the registry's entries of the packaged
    declarations and nothing else, and every registered challenge is a ``DeclaredChallenge``."""
    from evaluation.declarative.engine import DeclaredChallenge
    from evaluation.registry import get, names

    held = {path.name for path in (PACKAGE / "challenges").iterdir() if path.name != "__pycache__"}
    assert held == {"__init__.py", "declared.py"}
    assert names() == sorted(path.stem for path in (PACKAGE / "declarations").glob("*.toml"))
    assert [name for name in names() if not isinstance(get(name), DeclaredChallenge)] == []


def _used_names(path: Path) -> set[str]:
    """Every name a file uses: names, attributes, keyword arguments, imported names, and the methods it
    implements (a hook the contract calls, such as ``check_job``, is used by being implemented)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.FunctionDef):
            found.add(node.name)
        elif isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.Attribute):
            found.add(node.attr)
        elif isinstance(node, ast.keyword) and node.arg:
            found.add(node.arg)
        elif isinstance(node, ast.alias):
            found.add(node.name)
    return found


def _defined(nodes: list[ast.stmt]) -> list[tuple[str, ast.stmt]]:
    """The public names the statements define (functions, classes, assigned and annotated names)."""
    found = []
    for node in nodes:
        target = node.target if isinstance(node, ast.AnnAssign) else None
        if isinstance(node, ast.Assign):
            target = node.targets[0]
        name = target.id if isinstance(target, ast.Name) else getattr(node, "name", "_")
        if not name.startswith("_"):
            found.append((name, node))
    return found


def test_the_contract_holds_only_what_is_used():
    """Every public name of contract.py, and every public method and attribute of its classes, is used
    (called, read, imported or implemented) by another module of the package: what only the deleted
    challenge modules used is gone (issue 29)."""
    contract = PACKAGE / "contract.py"
    used = set().union(*(_used_names(path) for path in files() if path != contract))
    defined = []
    for name, node in _defined(ast.parse(contract.read_text(encoding="utf-8")).body):
        defined += [name, *(member for member, _ in _defined(node.body if isinstance(node, ast.ClassDef) else []))]
    assert [name for name in defined if name not in used] == []


def test_every_default_of_the_contract_is_the_engines():
    """A method with a body in ``Challenge`` that ``DeclaredChallenge`` replaces is one it also calls
    (``super()``): a default the one implementation never runs would be dead code."""
    from evaluation.contract import Challenge
    from evaluation.declarative.engine import DeclaredChallenge

    engine = (PACKAGE / "declarative" / "engine.py").read_text(encoding="utf-8")
    concrete = [
        name
        for name, value in vars(Challenge).items()
        if callable(value) and not getattr(value, "__isabstractmethod__", False) and not name.startswith("_")
    ]
    replaced = [name for name in concrete if name in vars(DeclaredChallenge)]
    assert [name for name in replaced if f"super().{name}(" not in engine] == []


def test_a_declarations_own_rules_import_only_metrics_and_errors():
    """The open interface's files beside the packaged declarations are rules over numbers (issue 29): they
    may use the metric catalogue (``evaluation.metrics``) and say an organizer's fault (``evaluation.errors``),
    nothing of the engine, the platform or a challenge."""
    assert offending(files("declarations"), ("evaluation",), ("evaluation.metrics", "evaluation.errors")) == {}
