"""Make the data of the library of public challenges declared in evaluation/declarations/ (kits23,
...): the synthetic label maps of test/metrics/synthetic_segmentations.py (the cases the official
evaluation code scored for test/metrics/golden/*.json, with their edge cases), written as each
declaration's ground truth and as a participant's outputs; the demo is exactly the golden cases, so
test/expected/<name>/metrics.json holds the official numbers.

Deterministic. Usage: python scripts/make_demo_library.py [NAME ...]   (writes ground-truth/<name>,
test/input/<name> and test/expected/<name>/metrics.json). ``write_case_data`` is also what
test/declarative/test_library.py calls to build the same data in a temporary folder.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import SimpleITK as sitk

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "test"))

from metrics.synthetic_segmentations import PET_SPACING, cases  # noqa: E402

Pair = tuple[np.ndarray, np.ndarray, tuple[float, float, float]]


def _as_labels(reference: np.ndarray, prediction: np.ndarray, spacing: tuple[float, float, float]) -> Pair:
    return reference, prediction, spacing


def _as_pet_masks(reference: np.ndarray, prediction: np.ndarray, spacing: tuple[float, float, float]) -> Pair:
    """autoPET's goldens: the lesion mask (any label) at a PET spacing."""
    return (reference > 0).astype(np.uint8), (prediction > 0).astype(np.uint8), PET_SPACING


# name: (the segmentation output's slug, how a synthetic case becomes that challenge's data)
LIBRARY: dict[str, tuple[str, Callable[..., Pair]]] = {
    "kits23": ("kidney-segmentation", _as_labels),
    "autopet4": ("lesion-segmentation", _as_pet_masks),
    "brats2023-gli": ("tumour-segmentation", _as_labels),
    "brats2023-met": ("tumour-segmentation", _as_labels),
}


def _write(array: np.ndarray, spacing: tuple[float, float, float], path: Path) -> None:
    image = sitk.GetImageFromArray(array.astype(np.uint8))
    image.SetSpacing(tuple(float(s) for s in reversed(spacing)))  # SimpleITK's (x, y, z)
    image.SetOrigin((-120.0, 35.5, 10.25))
    path.parent.mkdir(parents=True, exist_ok=True)
    sitk.WriteImage(image, str(path), useCompression=True)


def write_case_data(name: str, ground_truth: Path, outputs: Path) -> list[str]:
    """The ground truth (``labels/<case>.mha``) and the outputs (``<case>/images/<slug>/<case>.mha``,
    ``make_input``'s layout) of challenge ``name``; the case names."""
    slug, convert = LIBRARY[name]
    for case, data in cases().items():
        reference, prediction, spacing = convert(*data)
        _write(reference, spacing, ground_truth / "labels" / f"{case}.mha")
        _write(prediction, spacing, outputs / case / "images" / slug / f"{case}.mha")
    return list(cases())


def main(names: list[str]) -> None:
    for name in names or list(LIBRARY):
        declaration = REPO / "evaluation" / "declarations" / f"{name}.toml"
        ground_truth, demo = REPO / "ground-truth" / name, REPO / "test" / "input" / name
        expected = REPO / "test" / "expected" / name
        for folder in (ground_truth, demo):
            shutil.rmtree(folder, ignore_errors=True)
        with tempfile.TemporaryDirectory() as scratch:
            outputs = Path(scratch) / "outputs"
            write_case_data(name, ground_truth, outputs)
            python = [sys.executable, "-m"]
            subprocess.run([*python, "evaluation.make_input", "--challenge", str(declaration), "--outputs",
                            str(outputs), "--output", str(demo)], cwd=REPO, check=True)  # fmt: skip
            subprocess.run([*python, "evaluation", "--challenge", name, "--input", str(demo), "--output",
                            str(Path(scratch) / "out")], cwd=REPO, check=True)  # fmt: skip
            expected.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(Path(scratch) / "out" / "metrics.json", expected / "metrics.json")
        print(f"{name}: ground-truth/{name}, test/input/{name}, test/expected/{name}/metrics.json")


if __name__ == "__main__":
    main(sys.argv[1:])
