"""The library of public challenges declared in evaluation/declarations/: each declaration, run as a
participant's submission is (``python -m evaluation.make_input``, then ``python -m evaluation`` in a
subprocess) on the synthetic cases of ``test/metrics/synthetic_segmentations.py``, gives the numbers
the challenge's OFFICIAL evaluation code computed on the same cases, to 1e-9.

Goldens: ``test/metrics/golden/<challenge>.json`` (the official repository, its commit and the
environment recorded in each file): KiTS23, github neheller/kits23 at
c1088353084c17b8882a11db71429e7c022b7785, ``kits23/evaluation/metrics.py`` ``compute_metrics_for_case``;
autoPET IV, github lab-midas/autoPETCTIV at 80af68d9a190bccc27ce0b93d64934d7b42aaa00,
``evaluation_metrics/evaluation_metrics.py`` ``compute_metrics`` (NaN as null); BraTS 2023 glioma, github
rachitsaluja/BraTS-2023-Metrics at 43c905242b2eecf421d4ab2da7af8ece9777d322, ``metrics.py``
``get_LesionWiseResults(..., "BraTS-GLI")`` and ``"BraTS-MET"``.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import tomllib
from functools import partial
from pathlib import Path

import pytest
from conftest import REPO
from declarative.helpers import TOL, evaluate

from evaluation.declarative.schema import PROVENANCE_REQUIRED, load, parse_data
from evaluation.errors import ConfigurationError

GOLDEN = REPO / "test" / "metrics" / "golden"
DECLARATIONS = REPO / "evaluation" / "declarations"
_spec = importlib.util.spec_from_file_location("make_demo_library", REPO / "scripts" / "make_demo_library.py")
library = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(library)


def _kits23() -> dict[str, dict[str, float]]:
    """KiTS23's Dice and surface Dice per case and HEC region, under the declaration's keys."""
    cases = json.loads((GOLDEN / "kits23.json").read_text())["cases"]
    return {
        case: {f"{ours}_{region}": row[theirs] for region, row in regions.items() for ours, theirs in
               (("dice", "Dice"), ("sd", "SD"))}
        for case, regions in cases.items()
    }  # fmt: skip


def _autopet4() -> dict[str, dict[str, float | None]]:
    """autoPET IV's Dice, false-positive and false-negative volume per case (their names are the keys)."""
    cases = json.loads((GOLDEN / "autopet.json").read_text())["cases"]
    return {case: editions["autoPET-IV"] for case, editions in cases.items()}


BRATS_KEYS = {  # the official row's column -> the declaration's per-case key
    "Num_TP": "lesion_wise_dice_{}_tp", "Num_FP": "lesion_wise_dice_{}_fp", "Num_FN": "lesion_wise_dice_{}_fn",
    "LesionWise_Score_Dice": "lesion_wise_dice_{}", "LesionWise_Score_HD95": "lesion_wise_hd95_{}",
    "Legacy_Dice": "legacy_dice_{}", "Legacy_HD95": "legacy_hd95_{}", "Sensitivity": "voxel_sensitivity_{}",
    "Specificity": "voxel_specificity_{}", "GT_Complete_Volume": "gt_complete_volume_{}",
}  # fmt: skip


def _brats2023(challenge: str) -> dict[str, dict[str, float]]:
    """The official row of ``challenge`` (BraTS-GLI, BraTS-MET) per case and region (WT, TC, ET), every column."""
    cases = json.loads((GOLDEN / "brats2023.json").read_text())["cases"]
    return {
        case: {BRATS_KEYS[column].format(region): value for region, row in challenges[challenge].items()
               for column, value in row.items()}
        for case, challenges in cases.items()
    }  # fmt: skip


EXPECTED = {
    "kits23": _kits23,
    "autopet4": _autopet4,
    "brats2023-gli": partial(_brats2023, "BraTS-GLI"),
    "brats2023-met": partial(_brats2023, "BraTS-MET"),
}


def _compare(actual: dict, expected: dict[str, dict[str, float | None]]) -> None:
    assert sorted(actual) == sorted(expected)
    for case, values in expected.items():
        for key, value in values.items():
            got = actual[case][key]
            if value is None:  # the official NaN
                assert got is None, f"{case} {key}: {got} != null"
            else:
                assert got is not None and abs(got - value) <= TOL, f"{case} {key}: {got} != {value}"


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_library_challenge_reproduces_the_official_numbers(tmp_path: Path, name: str):
    ground_truth, outputs = tmp_path / "ground-truth", tmp_path / "outputs"
    library.write_case_data(name, ground_truth, outputs)
    run, metrics = evaluate(DECLARATIONS / f"{name}.toml", outputs, ground_truth, tmp_path)
    assert run.returncode == 0, run.stderr
    _compare(metrics["case"], EXPECTED[name]())


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_library_demo_holds_the_official_numbers(name: str):
    """The bundled demo is the golden cases: its expected metrics.json holds the official numbers."""
    metrics = json.loads((REPO / "test" / "expected" / name / "metrics.json").read_text())
    _compare(metrics["case"], EXPECTED[name]())


def test_kits23_averages_dice_and_surface_dice_over_the_hecs():
    """KiTS23's average Dice and surface Dice: the mean over the HECs and the cases of the official values."""
    metrics = json.loads((REPO / "test" / "expected" / "kits23" / "metrics.json").read_text())
    cases = json.loads((GOLDEN / "kits23.json").read_text())["cases"]
    for ours, theirs in (("dice_average", "Dice"), ("sd_average", "SD")):
        values = [row[theirs] for regions in cases.values() for row in regions.values()]
        assert abs(metrics["aggregates"][ours] - sum(values) / len(values)) <= TOL


def test_every_library_challenge_is_tested():
    assert sorted(EXPECTED) == sorted(library.LIBRARY)
    assert sum(len(values) for values in _brats2023("BraTS-MET").values()) == 300  # every official number


@pytest.mark.parametrize("path", sorted(DECLARATIONS.glob("*.toml")), ids=lambda path: path.stem)
def test_every_packaged_declaration_states_its_provenance(path: Path):
    """Each packaged declaration names the official code it reproduces (``[provenance]``, shown on its page of
    the documentation and in the library's table); a golden file of the challenge records the same commit; the
    generator and tests it names exist, each with a docstring (its page shows what each covers)."""
    provenance = load(path).provenance
    assert provenance is not None and provenance.deviations, path.name
    for test in provenance.tests:
        assert (REPO / test).is_file() and ast.get_docstring(ast.parse((REPO / test).read_text())), (path.name, test)
    if provenance.repository == "none":
        return
    goldens = [golden.read_text() for golden in GOLDEN.glob("*.json") if provenance.commit in golden.read_text()]
    # no golden file: see their deviations (isic: the package runs in the tests)
    from_elsewhere = ("hecktor", "picai2022", "rare25", "isic")
    assert goldens or path.stem.startswith(from_elsewhere), path.name


def test_provenance_beyond_its_four_keys_is_optional_and_checked():
    """``reproduces`` and ``tests`` may be left out (the documentation shows the title and no tests); ``tests`` is
    a list of paths, anything else one line."""
    data = tomllib.loads((DECLARATIONS / "kits23.toml").read_text())
    four = {key: data["provenance"][key] for key in PROVENANCE_REQUIRED}
    found = parse_data({**data, "provenance": four}, "k.toml").provenance
    assert (found.reproduces, found.tests) == ("", ())
    with pytest.raises(ConfigurationError, match=r"^k.toml: provenance.tests: must be a list of strings$"):
        parse_data({**data, "provenance": {**four, "tests": ["a.py", 1]}}, "k.toml")
