"""The declared LUNA16 challenge (evaluation/declarations/luna16.toml) against the official numbers recorded
in test/metrics/golden/luna16.json (the LUNA16 script and the organizers' CPM calculator, at the commits
recorded there), on the scans scripts/make_demo_luna16.py writes: the CPM, every sensitivity and, with the
script's bootstrap (``bootstrap_draws = "legacy"``), every bound. The platform input is written by
``python -m evaluation.make_input`` and scored by ``python -m evaluation``, each in a subprocess; the
declaration is varied (the cap, the bootstrap) in a copy.
"""

from __future__ import annotations

import importlib.util
import json

import pytest
from declarative.helpers import REPO, TOL, run

DECLARATION = REPO / "evaluation" / "declarations" / "luna16.toml"
GOLDEN = json.loads((REPO / "test" / "metrics" / "golden" / "luna16.json").read_text())
_spec = importlib.util.spec_from_file_location("make_demo_luna16", REPO / "scripts" / "make_demo_luna16.py")
demo = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(demo)
KEYS = ("0_125", "0_25", "0_5", "1", "2", "4", "8")


def _compare(aggregates: dict, golden_run: dict, bounds: bool) -> None:
    assert aggregates["cpm"] == pytest.approx(golden_run["cpm"], abs=TOL)
    found = [aggregates[f"cpm_at_{key}"] for key in KEYS]
    assert found == pytest.approx(golden_run["nearest"], abs=TOL)
    if bounds:
        boot = golden_run["bootstrap"]
        assert [aggregates[f"cpm_at_{key}_ci_low"] for key in KEYS] == pytest.approx(boot["low"], abs=TOL)
        assert [aggregates[f"cpm_at_{key}_ci_high"] for key in KEYS] == pytest.approx(boot["high"], abs=TOL)


JSON_REFERENCE = """reference = "nodules/{case}.json"
reference_diameter = "diameter_mm"
reference_ignore = "excluded"
missing = "empty"
"""


def _json_reference(text: str) -> str:
    """The declaration reading one "Multiple points" JSON per scan instead of the script's CSVs."""
    head, _, rest = text.partition('reference = "annotations.csv"')
    return head + JSON_REFERENCE + rest.split('missing = "empty"', 1)[1].split("\n", 1)[1]


def _evaluate(tmp_path, seed: int, declaration_text: str, *options: str, reference: str = "csv") -> dict:
    demo.generate(tmp_path / "gt", tmp_path / "outputs", seed, reference)
    declaration = tmp_path / "luna16.toml"
    declaration.write_text(declaration_text)
    made = run("-m", "evaluation.make_input", "--challenge", str(declaration), "--outputs", str(tmp_path / "outputs"),
               "--output", str(tmp_path / "input"))  # fmt: skip
    assert made.returncode == 0, made.stderr
    sets = [word for option in options for word in ("--set", option)]
    done = run("-m", "evaluation", "--challenge", str(declaration), "--input", str(tmp_path / "input"),
               "--ground-truth", str(tmp_path / "gt"), "--output", str(tmp_path / "out"), *sets)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads((tmp_path / "out" / "metrics.json").read_text())["aggregates"]


@pytest.mark.parametrize("golden_run", GOLDEN["runs"], ids=lambda r: f"seed{r['seed']}-cap{r['max_marks']}")
def test_the_declaration_equals_the_official_evaluation(tmp_path, golden_run):
    text = DECLARATION.read_text()
    if golden_run["max_marks"] != 100:
        cap = f"max_marks = {golden_run['max_marks']}" if golden_run["max_marks"] > 0 else ""
        text = text.replace("max_marks = 100", cap)
    options = ()
    if "bootstrap" in golden_run:
        boot = golden_run["bootstrap"]
        options = (f"seed={boot['seed']}", f"bootstrap_resamples={boot['resamples']}")
    else:
        text = text.replace("bootstrap = true", "bootstrap = false").replace('bootstrap_draws = "legacy"', "")
    aggregates = _evaluate(tmp_path, golden_run["seed"], text, *options)
    _compare(aggregates, golden_run, "bootstrap" in golden_run)


def test_the_bundled_demo_equals_the_official_evaluation():
    metrics = json.loads((REPO / "test" / "expected" / "luna16" / "metrics.json").read_text())
    _compare(metrics["aggregates"], GOLDEN["runs"][0], bounds=True)
    assert metrics["settings"]["seed"] == GOLDEN["runs"][0]["bootstrap"]["seed"]


def test_the_interpolated_reading_and_the_calculator_without_excluded_findings(tmp_path):
    """``reading = "interpolate"`` (np.interp on the script's curve) and, reference points named
    "excluded" no longer ignored but left out, the organizers' calculator run alone (no cap)."""
    golden_run = GOLDEN["runs"][0]
    text = DECLARATION.read_text().replace("bootstrap = true", 'reading = "interpolate"')
    text = text.replace('bootstrap_draws = "legacy"', "")
    found = _evaluate(tmp_path, golden_run["seed"], text)
    assert [found[f"cpm_at_{key}"] for key in KEYS] == pytest.approx(golden_run["interpolate"], abs=TOL)
    text = DECLARATION.read_text().replace("max_marks = 100", "").replace("bootstrap = true", "")
    text = text.replace('bootstrap_draws = "legacy"', "").replace('reference_excluded = "annotations_excluded.csv"', "")
    found = _evaluate(tmp_path / "alone", golden_run["seed"], text)
    assert found["cpm"] == pytest.approx(golden_run["calculator_cpm_without_excluded_uncapped"], abs=TOL)


def test_a_reference_json_per_scan_gives_the_same_numbers(tmp_path):
    """The reference as one "Multiple points" JSON per scan (``diameter_mm`` per point, the excluded
    findings named "excluded"), with the script's bootstrap."""
    golden_run = GOLDEN["runs"][-1]
    boot = golden_run["bootstrap"]
    text = _json_reference(DECLARATION.read_text())
    options = (f"seed={boot['seed']}", f"bootstrap_resamples={boot['resamples']}")
    found = _evaluate(tmp_path, golden_run["seed"], text, *options, reference="json")
    _compare(found, golden_run, bounds=True)


def test_legacy_draws_need_a_bootstrap(tmp_path):
    text = DECLARATION.read_text().replace("bootstrap = true", "")
    (tmp_path / "luna16.toml").write_text(text)
    demo_input, ground_truth = REPO / "test" / "input" / "luna16", REPO / "ground-truth" / "luna16"
    done = run("-m", "evaluation", "--challenge", str(tmp_path / "luna16.toml"), "--input", str(demo_input),
               "--ground-truth", str(ground_truth), "--output", str(tmp_path / "out"))  # fmt: skip
    assert done.returncode != 0
    assert "bootstrap_draws" in done.stderr.strip().splitlines()[-1]
    assert not (tmp_path / "out" / "metrics.json").exists()


@pytest.mark.parametrize(
    ("reference", "file", "old", "new", "message"),
    [
        ("json", "nodules/scan-02.json", '"diameter_mm": 8.0', '"diameter_mm": "big"', "'diameter_mm' of point 0"),
        ("csv", "annotations.csv", "scan-02,0.0,0.0,0.0,8.0", "scan-02,0.0,0.0,0.0,big", "line 4: diameter_mm"),
        ("csv", "annotations_excluded.csv", "scan-02,30.0", "scan-02,nan", "line 2: coordX of case scan-02"),
        ("csv", "seriesuids.csv", "scan-02\n", "", "annotations.csv has case scan-02, which"),
        ("csv", "seriesuids.csv", "scan-05\n", "scan-05\nscan-05\n", "lists case scan-05 twice"),
        ("csv", "annotations.csv", "coordZ", "z", "annotations.csv lacks the column(s) coordZ"),
    ],
)  # fmt: skip
def test_a_bad_reference_is_the_organizers_error(tmp_path, reference, file, old, new, message):
    demo.generate(tmp_path / "gt", tmp_path / "outputs", 0, reference)
    path = tmp_path / "gt" / file
    assert old in path.read_text()
    path.write_text(path.read_text().replace(old, new, 1))
    declaration = tmp_path / "luna16.toml"
    declaration.write_text(_json_reference(DECLARATION.read_text()) if reference == "json" else DECLARATION.read_text())
    done = run("-m", "evaluation", "--challenge", str(declaration), "--input", str(REPO / "test" / "input" / "luna16"),
               "--ground-truth", str(tmp_path / "gt"), "--output", str(tmp_path / "out"))  # fmt: skip
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert message in last and "Traceback" not in done.stderr, last
    assert not (tmp_path / "out" / "metrics.json").exists()


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ('reference_coordinates = ["coordX", "coordY", "coordZ"]', "", "reference_coordinates"),
        ('reference_coordinates = ["coordX", "coordY", "coordZ"]', 'reference_coordinates = ["coordX"]',
         "must name the 2 or 3 coordinate columns"),
        ('reference_cases = "seriesuids.csv"', 'reference_cases = "../seriesuids.csv"', "inside the ground truth"),
        ('reference_cases = "seriesuids.csv"', 'reference_cases = "seriesuids.txt"', "is not a .csv file"),
        ('reference_cases = "seriesuids.csv"', 'reference_ignore = "excluded"', "reference_excluded"),
        ('reference = "annotations.csv"', 'reference = "nodules/{case}.json"', "only a reference CSV"),
        ("max_marks = 100", "max_marks = 100\nfp_rates = [1, 1.0]", "must be distinct rates"),
        ("bootstrap = true", "", "declare bootstrap = true"),
    ],
)  # fmt: skip
def test_a_bad_points_reference_declaration_is_refused(old, new, message):
    from evaluation.declarative.schema import parse
    from evaluation.errors import ConfigurationError

    text = DECLARATION.read_text()
    assert old in text
    with pytest.raises(ConfigurationError, match=message):
        parse(text.replace(old, new), "luna16.toml")


def test_the_projects_bootstrap_resamples_the_scans(tmp_path):
    """``bootstrap_draws = "project"``: the percentile interval of each resample's values, the resamples
    drawn as every declared metric's (``metrics.bootstrap.resample_weights``) in seriesuids.csv's order."""
    from evaluation.metrics import hit_radius as hr
    from evaluation.metrics.bootstrap import drawn_cases, percentile_interval, resample_weights

    text = DECLARATION.read_text().replace('bootstrap_draws = "legacy"', "")
    found = _evaluate(tmp_path, 0, text, "seed=3", "bootstrap_resamples=40")
    scans = demo.scan_findings(demo.luna_scans(0))
    entries = [hr.scan_entries(scan, max_marks=100) for scan in scans]
    boot = hr.resampled_sensitivities(entries, drawn_cases(resample_weights(len(scans), 40, 3)), hr.CPM_FP_RATES,
                                      "nearest")  # fmt: skip
    for key, values in zip(("cpm", *(f"cpm_at_{k}" for k in KEYS)), (boot.mean(axis=1), *boot.T), strict=True):
        assert (found[f"{key}_ci_low"], found[f"{key}_ci_high"]) == pytest.approx(percentile_interval(values), abs=TOL)
