"""Whether a challenge's container needs the medical-image packages (``requirements-images.txt``: SimpleITK,
Pillow, connected components, surface elements; about 300 MB of the image). A declaration needs them when it
reads images (an image output: ``Declaration.reads_images``) or when one of its Python files (the open metric
interface, a reader) can reach them: it imports one of their modules, or a module of this project that does,
at any depth (found in the sources' import statements and the module names they spell, as
``platform.images`` defers ``"SimpleITK"``). The Dockerfile asks at build time and leaves them out of the
image of any other challenge (issue 30: the image holds only what runs).

    python -m evaluation.image_packages rare25     # prints "no"; a challenge that reads images: "yes"
"""

from __future__ import annotations

import argparse
import ast
import importlib.metadata
from collections.abc import Iterator, Sequence
from functools import cache
from pathlib import Path

from evaluation.contract import DECLARATIONS
from evaluation.declarative.python_metric import code_files
from evaluation.declarative.schema import Declaration, load
from evaluation.errors import ConfigurationError

PACKAGE = Path(__file__).resolve().parent  # evaluation/
REQUIREMENTS = PACKAGE.parent / "requirements-images.txt"


def _canonical(name: str) -> str:
    return name.lower().replace("_", "-")


@cache
def image_modules() -> frozenset[str]:
    """The top-level modules of the distributions pinned in requirements-images.txt (``SimpleITK``, ``PIL``, ...)."""
    lines = (line.split("#")[0].strip() for line in REQUIREMENTS.read_text().splitlines())
    wanted = {_canonical(line.split("==")[0]) for line in lines if line}
    found = importlib.metadata.packages_distributions()
    return frozenset(module for module, names in found.items() if any(_canonical(n) in wanted for n in names))


def _names(path: Path) -> Iterator[str]:
    """The modules ``path`` imports (anywhere in it) and the string constants that spell a module name."""
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            yield node.module
            yield from (f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
            yield node.value


def _project_file(module: str) -> Path | None:
    """The source of ``evaluation.<...>`` (a module or a package's ``__init__``), None for any other module."""
    if module.split(".")[0] != PACKAGE.name:
        return None
    base = PACKAGE.parent.joinpath(*module.split("."))
    return next((p for p in (base.with_suffix(".py"), base / "__init__.py") if p.is_file()), None)


def reaches_image_packages(path: Path) -> bool:
    """Whether the Python file ``path`` imports a medical-image package, itself or through this project's modules
    (each module's file read once)."""
    waiting, seen = [path], {path}
    while waiting:
        for name in _names(waiting.pop()):
            if name.split(".")[0] in image_modules():
                return True
            found = _project_file(name)
            if found is not None and found not in seen:
                seen.add(found)
                waiting.append(found)
    return False


def needs_image_packages(declaration: Declaration) -> bool:
    """Whether ``declaration``'s evaluation may load requirements-images.txt's packages."""
    files = code_files(declaration.metrics, declaration.folder, declaration.submission.reader)
    return declaration.reads_images or any(reaches_image_packages(path) for path in files)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evaluation.image_packages", description=__doc__.splitlines()[0])
    parser.add_argument("challenge", help="a packaged declaration: evaluation/declarations/<challenge>.toml")
    arguments = parser.parse_args(argv)
    path = DECLARATIONS / f"{arguments.challenge}.toml"
    if not path.is_file():
        parser.error(f"no declaration {path.name} in {DECLARATIONS}")
    try:
        declaration = load(path)
    except ConfigurationError as error:  # (one line, not a traceback, in the image's build log)
        parser.error(str(error))
    print("yes" if needs_image_packages(declaration) else "no")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
