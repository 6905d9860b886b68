"""Which challenges' images leave out the medical-image packages (evaluation/image_packages.py, issue 30), and
that those challenges run without them: each such demo, run with SimpleITK, Pillow, cc3d, surface-distance and
absl made unimportable, gives the bytes of its expected metrics.json."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from evaluation.contract import DECLARATIONS
from evaluation.declarative.schema import load
from evaluation.image_packages import image_modules, main, needs_image_packages, reaches_image_packages

REPO = Path(__file__).resolve().parents[1]
WITHOUT = sorted(p.stem for p in DECLARATIONS.glob("*.toml") if not needs_image_packages(load(p)))
# a run of python -m evaluation in which importing a medical-image package fails as if it were not installed
BLOCKED = """
import sys
from importlib.abc import MetaPathFinder

class Absent(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {blocked!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)

sys.meta_path.insert(0, Absent())
from evaluation.cli import main
raise SystemExit(main({arguments!r}))
"""


def test_the_packaged_challenges_that_read_no_image():
    assert image_modules() == {"SimpleITK", "PIL", "cc3d", "surface_distance", "absl"}
    assert {"rare25", "isic2019", "isic2018", "luna16", "midog2021", "airogs"} <= set(WITHOUT)
    # image outputs; and DigestPath task 1's rules import the detection metrics, whose module labels lesions (cc3d)
    assert not {"kits-example", "picai2022", "hecktor2026", "digestpath2019-task1"} & set(WITHOUT)


@pytest.mark.parametrize("challenge", WITHOUT)
def test_a_challenge_without_images_runs_without_the_packages(challenge, tmp_path):
    arguments = ["--challenge", challenge, "--input", str(REPO / "test" / "input" / challenge),
                 "--output", str(tmp_path), "--workers", "1"]  # fmt: skip
    script = BLOCKED.format(blocked=sorted(image_modules()), arguments=arguments)
    run = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    expected = REPO / "test" / "expected" / challenge / "metrics.json"
    assert (tmp_path / "metrics.json").read_bytes() == expected.read_bytes()


@pytest.mark.parametrize(
    ("source", "needs"),
    [
        ("import SimpleITK as sitk\n", True),
        ("def f():\n    from PIL import Image\n", True),  # at any depth of the file
        ("from evaluation.platform.images import read_image\n", True),  # through the project's module
        ("from evaluation.metrics import lesions\n", True),
        ("import numpy as np\nfrom evaluation.metrics import regression\n", False),
    ],
)
def test_a_python_file_reaches_the_packages_through_its_imports(source, needs, tmp_path):
    path = tmp_path / "rules.py"
    path.write_text(source)
    assert reaches_image_packages(path) is needs


def test_the_command_answers_and_refuses_an_unknown_challenge(capsys):
    command = [sys.executable, "-m", "evaluation.image_packages", "rare25"]  # as the Dockerfile asks
    run = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert (run.returncode, run.stdout) == (0, "no\n"), run.stderr
    assert main(["kits-example"]) == 0 and capsys.readouterr().out == "yes\n"
    with pytest.raises(SystemExit):
        main(["no-such-challenge"])
    assert "no declaration no-such-challenge.toml" in capsys.readouterr().err


def test_reading_an_image_without_the_packages_is_one_line_for_the_organizer():
    """The check tool's frame count (``--images``) in an image without SimpleITK: a sentence, not a traceback."""
    script = BLOCKED.split("from evaluation.cli")[0].format(blocked=sorted(image_modules()), arguments=[]) + (
        "from pathlib import Path\nfrom evaluation.errors import ConfigurationError\n"
        "from evaluation.platform.images import image_frames\n"
        "try:\n    image_frames(Path('stack.tif'))\nexcept ConfigurationError as error:\n    print(error)\n"
    )
    run = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.startswith("This evaluation image has no SimpleITK: it was built for a challenge without image")


def test_a_declaration_that_does_not_load_is_one_line(monkeypatch, tmp_path, capsys):
    """The Dockerfile's question about a broken declaration ends the build with its reason, not a traceback."""
    (tmp_path / "broken.toml").write_text('name = "broken"\n')
    monkeypatch.setattr("evaluation.image_packages.DECLARATIONS", tmp_path)
    with pytest.raises(SystemExit):
        main(["broken"])
    assert "broken.toml" in capsys.readouterr().err.splitlines()[-1]
