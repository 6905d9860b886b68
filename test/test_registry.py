"""The challenge registry: one entry per packaged declaration; a run reads only its own (refused ones:
test/declarative/test_engine.py)."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from conftest import REPO

from evaluation import registry
from evaluation.errors import ConfigurationError


def test_every_challenge_of_the_spec_is_registered():
    assert set(registry.names()) >= {
        "rare25", "isic2019", "isic2018", "digestpath2019-task1", "digestpath2019-task2",
        "hecktor2025-task1", "hecktor2025-task2", "hecktor2025-task3", "hecktor2026",
    }  # fmt: skip


def test_an_unknown_name_lists_the_known_ones_and_reads_no_file_outside_the_declarations():
    """A name is looked up among the packaged files' stems, never joined into a path (``../x``)."""
    for name in ("nope", "../declarations/rare25", "rare25.py"):
        with pytest.raises(ConfigurationError, match=rf"^Unknown challenge '{re.escape(name)}'; known: .*\brare25\b"):
            registry.get(name)


@pytest.mark.parametrize(
    ("name", "module"),
    [
        ("rare25", "declared"),
        ("isic2018", "declared"),
        ("digestpath2019-task1", "declared"),
        ("digestpath2019-task2", "declared"),
        ("hecktor2025-task2", "declared"),
        ("hecktor2026", "declared"),
    ],
)
def test_get_imports_only_the_declared_entries(name, module):
    script = (
        "import sys\n"
        "from evaluation.registry import get\n"
        f"get({name!r})\n"
        "print(sorted(m.rsplit('.', 1)[1] for m in sys.modules if m.startswith('evaluation.challenges.')))\n"
    )
    run = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, check=True)
    assert json.loads(run.stdout.replace("'", '"')) == [module]


def test_a_packaged_declaration_reads_only_its_own_file():
    """A run of a declared challenge parses its own TOML file, not the other declarations'."""
    script = (
        "from evaluation.registry import get\n"
        "from evaluation.challenges import declared\n"
        "get('rare25')\n"
        "print(declared._entry.cache_info().currsize)\n"
    )
    run = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, check=True)
    assert run.stdout.strip() == "1"


def test_cheap_challenges_run_their_cases_in_process_image_reading_ones_in_the_pool():
    in_process = {name for name in registry.names() if registry.get(name).cases_in_process}
    assert in_process == {"rare25", "isic2019", "isic2018", "digestpath2019-task1", "hecktor2025-task2",
                          "hecktor2025-task3", "midog2021", "cibmtr2025", "airogs", "luna16"}  # fmt: skip


def test_the_runner_imports_no_challenge_and_no_dask():
    """It is handed its executor (``pipeline.evaluate``'s ``executor``): Dask is the caller's choice."""
    found = "('evaluation.challenges', 'evaluation.declarative', 'evaluation.dask_runner', 'distributed')"
    script = f"import sys, evaluation.runner\nprint([m for m in sys.modules if m.startswith({found})])"
    run = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, check=True)
    assert run.stdout.strip() == "[]"
