"""The open interface (``metric = "python"``, evaluation/declarative/python_metric.py): official metric functions
imported unmodified from their public packages (test/declarative/open_interface/rules.py: isic-challenge-scoring's
thresholded Jaccard and partial AUC above 80 % sensitivity, picai_eval's Dice) through a declaration, end to end
through the CLI, equal to the same packages called directly here (the reference); the declared edge value,
aggregates, bootstrap, groups, key templates and provenance apply; every organizer mistake is one line."""

from __future__ import annotations

import fnmatch
import hashlib
import json
import math
import warnings
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import SimpleITK as sitk
from conftest import REPO, documented_section
from declarative.helpers import bootstrap_ci, close, close_ci
from isic_challenge_scoring.metrics import auc_above_sensitivity
from isic_challenge_scoring.segmentation import SegmentationScore
from picai_eval.analysis_utils import calculate_dsc
from scipy import ndimage

from evaluation.declarative.schema import load
from evaluation.errors import ConfigurationError
from evaluation.platform.layout import JobSpec, write_input
from evaluation.registry import get

FOLDER = REPO / "test" / "declarative" / "open_interface"
DECLARATION = FOLDER / "open_interface.toml"
CASES = [f"case{k:02d}" for k in range(12)]  # sorted: the order the bootstrap draws from


def cases_data(seed: int = 5) -> tuple[dict, dict, dict, dict]:
    """References and predictions: 3D masks of random boxes (some empty), binary labels and likelihoods."""
    rng = np.random.default_rng(seed)
    references, predictions, labels, likelihoods = {}, {}, {}, {}
    for k, case in enumerate(CASES):
        reference, prediction = np.zeros((6, 10, 10), np.uint8), np.zeros((6, 10, 10), np.uint8)
        for array, boxes in ((reference, 1 + k % 3), (prediction, k % 4)):
            for _ in range(boxes if k != 3 else 0):  # case03: both empty
                z, y, x = rng.integers(0, 4), rng.integers(0, 7), rng.integers(0, 7)
                array[z : z + 2, y : y + rng.integers(2, 4), x : x + rng.integers(2, 4)] = 1
        references[case], predictions[case] = reference, prediction
        labels[case] = int(k % 3 == 0 or k == 4)
        likelihoods[case] = float(np.round(rng.uniform(0, 1), 3))
    return references, predictions, labels, likelihoods


def write_case_files(
    root: Path, declaration: Path = DECLARATION, seed: int = 5, without: frozenset[str] = frozenset()
) -> tuple[Path, Path, dict]:
    """The ground truth and the platform input of ``cases_data`` (the cases ``without`` have no outputs but a
    job); (ground truth, input, data)."""
    references, predictions, labels, likelihoods = cases_data(seed)
    ground_truth = root / "gt"
    (ground_truth / "masks").mkdir(parents=True)
    rows = ["case,malignant,site"] + [f"{c},{labels[c]},{'north' if k < 6 else 'south'}" for k, c in enumerate(CASES)]
    (ground_truth / "truth.csv").write_text("\n".join(rows) + "\n")
    challenge = get(str(declaration))
    mask, likelihood = challenge.phase.outputs
    jobs = []
    for case in CASES:
        image = sitk.GetImageFromArray(references[case])
        image.SetSpacing((0.5, 0.7, 2.0))
        sitk.WriteImage(image, str(ground_truth / "masks" / f"{case}.mha"))
        predicted = sitk.GetImageFromArray(predictions[case])
        predicted.SetSpacing((0.5, 0.7, 2.0))
        path = root / f"{case}-pred.mha"
        sitk.WriteImage(predicted, str(path))
        outputs = {} if case in without else {mask: path, likelihood: likelihoods[case]}
        jobs.append(JobSpec(challenge.job_inputs(case), outputs))
    write_input(root / "input", jobs)
    return ground_truth, root / "input", {"ref": references, "pred": predictions, "y": labels, "p": likelihoods}


@pytest.fixture(scope="module")
def official(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("open")
    ground_truth, input_dir, data = write_case_files(root)
    return {"gt": ground_truth, "input": input_dir, **data}


def isic_segmentation(data: dict, cases: list[str]) -> pd.Series:
    """isic-challenge-scoring's own ``SegmentationScore`` of the masks (its 0 / 255 images, > 128)."""
    pairs = [SimpleNamespace(truth_image=data["ref"][c] * 255, prediction_image=data["pred"][c] * 255, image_id=c)
             for c in cases]  # fmt: skip
    return SegmentationScore(pairs).macro_average


def pauc(data: dict, cases: list[str]) -> float:
    y = pd.Series([float(data["y"][c]) for c in cases])
    p = pd.Series([data["p"][c] for c in cases])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return auc_above_sensitivity(y, p, pd.Series(np.ones(len(cases))), 0.80)


def test_official_functions_through_a_declaration(official, evaluate_cli):
    run = evaluate_cli(str(DECLARATION), official["input"], "--provenance", ground_truth=official["gt"])
    assert run.exit_code == 0, run.stderr
    aggregates, per_case = run.metrics["aggregates"], run.metrics["case"]
    macro = isic_segmentation(official, CASES)
    close(aggregates["isic2018_threshold_jaccard_mean"], macro["threshold_jaccard"], "ISIC 2018 threshold Jaccard")
    close(aggregates["isic2018_jaccard_mean"], macro["jaccard"], "ISIC 2018 Jaccard")
    for case in CASES:
        one = isic_segmentation(official, [case])
        close(per_case[case]["isic2018_threshold_jaccard"], one["threshold_jaccard"], case)
    dsc = [calculate_dsc(official["pred"][c].astype(np.float32), official["ref"][c].astype(np.int32)) for c in CASES]
    close(aggregates["picai_dsc_mean"], float(np.mean(dsc)), "PI-CAI DSC mean")
    close(aggregates["picai_dsc_median"], float(np.median(dsc)), "PI-CAI DSC median")
    close(aggregates["pauc_80"], pauc(official, CASES), "ISIC partial AUC above 80 % sensitivity")
    counts = [ndimage.label(official["pred"][c], np.ones((3, 3, 3)))[1] - ndimage.label(official["ref"][c],
              np.ones((3, 3, 3)))[1] for c in CASES]  # fmt: skip
    close(aggregates["lesion_count_difference_mean"], float(np.mean(counts)), "lesion count difference")
    assert [per_case[c]["lesion_count_difference"] for c in CASES] == counts
    # the bootstrap: the per-case values resampled; the whole-set function on each resample's drawn cases
    tj = np.array([isic_segmentation(official, [c])["threshold_jaccard"] for c in CASES])
    close_ci(aggregates, "isic2018_threshold_jaccard_mean", bootstrap_ci(lambda d: tj[d].mean(), 12, 100, 3, 0.95))

    def drawn_pauc(draw: np.ndarray) -> float | None:  # the official function on the drawn cases; NaN left out
        value = pauc(official, [CASES[i] for i in draw])
        return None if math.isnan(value) else value

    close_ci(aggregates, "pauc_80", bootstrap_ci(drawn_pauc, 12, 100, 3, 0.95))
    record = json.loads((run.output / "provenance.json").read_text())
    assert record["sha256"]["code"] == {"rules.py": hashlib.sha256((FOLDER / "rules.py").read_bytes()).hexdigest()}
    settings = run.metrics["settings"]["metrics"]["pauc_80"]
    assert settings["function"] == "rules.py:isic_auc_above_80_sensitivity" and settings["over"] == "set"


# ------------------------------------------------------------------------------ organizer mistakes

OWN_RULES = """
import math
import numpy as np


def count(prediction, reference, context):
    return float(np.count_nonzero(prediction)) - float(np.count_nonzero(reference))


def raises(prediction, reference, context):
    if context.case == "case02":
        raise ValueError("no lesion table for this case")
    return 1.0


def nan_at_case03(prediction, reference, context):
    return math.nan if context.case == "case03" else float(np.count_nonzero(reference))


def text(prediction, reference, context):
    return "high"


def wrong_names(prediction, reference, context):
    return {"a": 1.0}


def two(prediction, reference):
    return 1.0


def absolute_error(prediction, reference, context):
    return abs(prediction - reference)


def mean_likelihood(predictions, references, context):
    return float(np.mean(predictions[references == 1]) - np.mean(predictions[references == 0]))


def infinite(prediction, reference, context):
    return math.inf


def boolean(prediction, reference, context):
    return True


def exhausts(prediction, reference, context):
    raise MemoryError


def sleeps(prediction, reference, context):
    import time

    time.sleep(120)


def clears(prediction, reference, context):
    prediction[...] = 0
    return 0.0


def exits(prediction, reference, context):
    raise SystemExit(3)


def cases(predictions, references, context):
    return float(len(predictions))


def fails_on_a_resample(predictions, references, context):
    if context.resample == 4:
        raise ZeroDivisionError("division by zero")
    return float(np.mean(predictions))


def spacing(prediction, reference, context):
    return {"z": context.spacing[0], "x": context.spacing[2], "voxels": float(prediction.size)}


def reads_earlier(predictions, references, context):
    return {"twice": 2 * context.aggregates["own"], "seen": float(len(context.aggregates))}
"""

OWN = """
name = "own"
title = "Own"
[[inputs]]
slug = "dermoscopic-image"
[[outputs]]
slug = "lesion-mask"
kind = "segmentation"
reference = "masks/{case}.mha"
labels = { lesion = 1 }
[[outputs]]
slug = "malignancy-likelihood"
kind = "number"
reference = "truth.csv:malignant"
range = [0, 1]
[[metrics]]
name = "own"
metric = "python"
__METRIC__
[leaderboard]
score = "aggregates.__SCORE__"
"""


def own(root: Path, metric: str, score: str = "own_mean", rules: str = OWN_RULES) -> Path:
    """A declaration with one python metric (``metric``: its other keys) and rules.py beside it."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "rules.py").write_text(rules)
    toml = root / "own.toml"
    toml.write_text(OWN.replace("__METRIC__", metric).replace("__SCORE__", score))
    return toml


SEG = 'output = "lesion-mask"\n'


@pytest.mark.parametrize(
    ("keys", "problem"),
    [
        (SEG + 'function = "missing.py:count"', "own.toml: metrics[0].function: missing.py is not a file beside "
         "the declaration"),
        (SEG + 'function = "rules.py:absent"', "own.toml: metrics[0].function: rules.py has no function 'absent'"),
        (SEG + 'function = "rules.py:two"', "own.toml: metrics[0].function: rules.py: two must accept (prediction, "
         "reference, context) (over = 'case')"),
        (SEG + 'function = "../rules.py:count"', "own.toml: metrics[0].function: '../rules.py' leaves the "
         "declaration's folder"),
        (SEG + 'function = "rules.count"', "own.toml: metrics[0].function: 'rules.count' is not 'file.py:function'"),
        (SEG + 'function = "broken.py:count"', "own.toml: metrics[0].function: broken.py: cannot be imported "
         "(ModuleNotFoundError: No module named 'no_such_package')"),
        (SEG + 'function = "rules.py:count"\nover = "set"', "own.toml: metrics[0].over: 'set' needs a value output"),
        ('output = "malignancy-likelihood"\nfunction = "rules.py:count"\nover = "set"\nnan = "exclude"',
         "own.toml: metrics[0].nan: must be a number or 'error', not 'exclude'"),
        (SEG + 'function = "rules.py:count"\naggregates = ["sum"]', "own.toml: metrics[0].aggregates: needs none "
         "or more of mean, median"),
        (SEG + 'function = "rules.py:count"\nreturns = ["a", "a"]', "own.toml: metrics[0].returns: must be distinct"),
        (SEG + 'function = "rules.py:count"\nlabels = ["lesion"]', "own.toml: metrics[0].labels: unknown key"),
    ],
)  # fmt: skip
def test_a_bad_function_is_one_line_when_the_declaration_loads(tmp_path, keys, problem):
    toml = own(tmp_path / "decl", keys)
    (tmp_path / "rules.py").write_text(OWN_RULES)
    (tmp_path / "decl" / "broken.py").write_text("import no_such_package\n")
    with pytest.raises(ConfigurationError) as error:
        load(toml)
    assert str(error.value).startswith(problem), str(error.value)
    assert "\n" not in str(error.value)


def test_phase_checks_the_signature(tmp_path, capsys):
    from evaluation.phase import main as phase_main

    toml = own(tmp_path, SEG + 'function = "rules.py:two"')
    assert phase_main(["--challenge", str(toml)]) != 0
    assert capsys.readouterr().err.strip().splitlines()[-1].endswith("must accept (prediction, reference, context) "
                                                                     "(over = 'case')")  # fmt: skip


@pytest.mark.parametrize(
    ("keys", "line"),
    [
        ('function = "rules.py:raises"', "rules.py: raises: case case02: ValueError: no lesion table for this case"),
        ('function = "rules.py:nan_at_case03"', "rules.py: nan_at_case03: case case03: returned NaN (declare nan = "
         "<number> or 'exclude' for a value)"),
        ('function = "rules.py:text"', "rules.py: text: case case*: returned str 'high', not a number"),
        ('function = "rules.py:wrong_names"\nreturns = ["b"]\nkey = "{name}_{label}_{form}"',
         "rules.py: wrong_names: case case*: returned the names a, not b (returns)"),
        ('function = "rules.py:infinite"', "rules.py: infinite: case case*: returned inf, not a finite number"),
        ('function = "rules.py:boolean"', "rules.py: boolean: case case*: returned bool 'True', not a number"),
        ('function = "rules.py:clears"', "rules.py: clears: case case*: ValueError: assignment destination is "
         "read-only"),
        ('function = "rules.py:exhausts"', "Case case*: the evaluation ran out of memory * while scoring this case "
         "in a worker process."),
        ('function = "rules.py:exits"', "rules.py: exits: case case*: SystemExit: 3"),
        ('function = "rules.py:sleeps"', "the evaluation of case case* took longer than 10 s and was stopped."),
    ],
)  # fmt: skip
def test_a_failing_function_is_one_line_and_no_metrics(tmp_path, evaluate_cli, keys, line):
    toml = own(tmp_path / "decl", SEG + keys, score="own_b_mean" if "returns" in keys else "own_mean")
    ground_truth, input_dir, _ = write_case_files(tmp_path, toml)
    timeout = ("--case-timeout", "10") if "sleeps" in keys else ()
    run = evaluate_cli(str(toml), input_dir, *timeout, ground_truth=ground_truth)
    assert run.exit_code != 0
    assert fnmatch.fnmatchcase(run.last_error_line, f"*{line}"), run.stderr  # (case*: whichever worker is first)
    assert "Traceback" not in run.stderr
    assert not (run.output / "metrics.json").exists()


def test_the_declared_nan_value_and_exclude(tmp_path, evaluate_cli):
    """A NaN return is the declared number, or (exclude) null for the case and left out of the mean."""
    for nan, expected_case03 in (("0.5", 0.5), ('"exclude"', None)):
        toml = own(tmp_path / nan.strip('"'), SEG + f'function = "rules.py:nan_at_case03"\nnan = {nan}')
        ground_truth, input_dir, data = write_case_files(tmp_path / f"{nan.strip(chr(34))}-data", toml)
        run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
        assert run.exit_code == 0, run.stderr
        counts = {c: float(np.count_nonzero(data["ref"][c])) for c in CASES}
        assert run.metrics["case"]["case03"]["own"] == expected_case03
        kept = [counts[c] for c in CASES if c != "case03"] + ([0.5] if expected_case03 is not None else [])
        close(run.metrics["aggregates"]["own_mean"], float(np.mean(kept)), f"nan = {nan}")


def test_named_values_context_and_key_templates(tmp_path, evaluate_cli):
    keys = SEG + 'function = "rules.py:spacing"\nreturns = ["z", "x", "voxels"]\nkey = "own_{label}"\ncase_key = ""'
    toml = own(tmp_path / "decl", keys, score="own_z")
    ground_truth, input_dir, _ = write_case_files(tmp_path, toml)
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert run.exit_code == 0, run.stderr
    assert run.metrics["aggregates"] == {"own_z": 2.0, "own_x": 0.5, "own_voxels": 600.0}
    assert all("own_z" not in entries for entries in run.metrics["case"].values())


def test_value_outputs_per_case_over_the_set_and_by_group(tmp_path, evaluate_cli):
    """On a number output: per case (the value and its reference), over the set, and the set's function per
    group of cases (groups = "truth.csv:site"), each against numpy by hand."""
    metric = ('output = "malignancy-likelihood"\nfunction = "rules.py:absolute_error"\naggregates = ["mean", "median"]'
              '\n[[metrics]]\nname = "separation"\nmetric = "python"\noutput = "malignancy-likelihood"\nover = "set"\n'
              'function = "rules.py:mean_likelihood"\ngroups = "truth.csv:site"\nover_groups = "mean"')  # fmt: skip
    toml = own(tmp_path / "decl", metric)
    ground_truth, input_dir, data = write_case_files(tmp_path, toml)
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert run.exit_code == 0, run.stderr
    errors = np.array([abs(data["p"][c] - data["y"][c]) for c in CASES])
    aggregates = run.metrics["aggregates"]
    close(aggregates["own_mean"], float(errors.mean()), "mean absolute error")
    close(aggregates["own_median"], float(np.median(errors)), "median absolute error")
    by_site = {}
    for site, cases in (("north", CASES[:6]), ("south", CASES[6:])):
        p, y = np.array([data["p"][c] for c in cases]), np.array([data["y"][c] for c in cases])
        by_site[site] = float(p[y == 1].mean() - p[y == 0].mean())
    for site, value in by_site.items():
        close(aggregates["separation_by_group"][site], value, site)
    close(aggregates["separation"], float(np.mean(list(by_site.values()))), "separation over groups")


def test_a_set_function_reads_the_values_computed_before_it(tmp_path, evaluate_cli):
    """``context.aggregates``: the same output's values declared before it (not the mask's), on the observed
    set and, in a bootstrap resample, that resample's (ISIC's ``overall`` is its catalogue value)."""
    metric = ('output = "malignancy-likelihood"\nover = "set"\nfunction = "rules.py:mean_likelihood"\nbootstrap = true'
              '\n[[metrics]]\nname = "lesions"\nmetric = "python"\noutput = "lesion-mask"\nfunction = "rules.py:count"'
              '\n[[metrics]]\nname = "reads"\nmetric = "python"\noutput = "malignancy-likelihood"\nover = "set"\n'
              'function = "rules.py:reads_earlier"\nreturns = ["twice", "seen"]\nbootstrap = true')  # fmt: skip
    toml = own(tmp_path / "decl", metric, score="own")
    ground_truth, input_dir, data = write_case_files(tmp_path, toml)
    run = evaluate_cli(str(toml), input_dir, "--set", "bootstrap_resamples=40", ground_truth=ground_truth)
    assert run.exit_code == 0, run.stderr
    aggregates = run.metrics["aggregates"]
    p, y = np.array([data["p"][c] for c in CASES]), np.array([data["y"][c] for c in CASES])
    close(aggregates["own"], float(p[y == 1].mean() - p[y == 0].mean()), "own")
    assert aggregates["reads_twice"] == 2 * aggregates["own"]
    assert aggregates["reads_seen"] == aggregates["reads_seen_ci_low"] == aggregates["reads_seen_ci_high"] == 1.0
    for bound in ("ci_low", "ci_high"):
        assert aggregates[f"reads_twice_{bound}"] == 2 * aggregates[f"own_{bound}"]


def test_the_readme_worked_example(tmp_path, evaluate_cli):
    """The README's worked example as written there (its rules.py and its two [[metrics]]), run end to end."""
    section = documented_section('Your own metric in Python (`metric = "python"`)')
    code = section.split("```python\n", 1)[1].split("\n```", 1)[0]
    metrics = section.split("```toml\n", 1)[1].split("\n```", 1)[0]
    toml = own(tmp_path / "decl", 'output = "lesion-mask"\nfunction = "rules.py:lesion_count_difference"',
               score="lesion_count_difference_mean", rules=code)  # fmt: skip
    text = toml.read_text()
    toml.write_text(text[: text.index("[[metrics]]")] + metrics + "\n" + text[text.index("[leaderboard]") :])
    ground_truth, input_dir, data = write_case_files(tmp_path, toml)
    run = evaluate_cli(str(toml), input_dir, "--set", "bootstrap_resamples=50", ground_truth=ground_truth)
    assert run.exit_code == 0, run.stderr
    aggregates = run.metrics["aggregates"]
    structure = np.ones((3, 3, 3))
    counts = [ndimage.label(data["pred"][c], structure)[1] - ndimage.label(data["ref"][c], structure)[1] for c in CASES]
    close(aggregates["lesion_count_difference_mean"], float(np.mean(counts)), "mean")
    close(aggregates["lesion_count_difference_median"], float(np.median(counts)), "median")
    close_ci(aggregates, "lesion_count_difference_mean",
             bootstrap_ci(lambda d: np.mean(np.array(counts)[d]), 12, 50, 0, 0.95))  # fmt: skip
    p, y = np.array([data["p"][c] for c in CASES]), np.array([data["y"][c] for c in CASES])
    close(aggregates["separation_gap"], float(p[y == 1].mean() - p[y == 0].mean()), "gap")
    assert aggregates["separation_positives"] == float((y == 1).sum())
    assert {"separation_gap_ci_low", "separation_positives_ci_high"} <= set(aggregates)


def _in_build_context(path: str) -> bool:
    """Whether ``docker build .`` sends ``path`` (relative to the repository): .dockerignore's patterns in
    order, the last that matches decides ("!" lets through; a folder's pattern covers what is below it)."""
    included = True
    for line in (REPO / ".dockerignore").read_text().splitlines():
        pattern = line.strip()
        if not pattern or pattern.startswith("#"):
            continue
        allow, pattern = pattern.startswith("!"), pattern.removeprefix("!")
        parts = path.split("/")
        prefixes = ["/".join(parts[: k + 1]) for k in range(len(parts))]
        if pattern.startswith("**/"):
            matched = any(fnmatch.fnmatchcase(part, pattern[3:]) for part in parts)
        else:
            matched = any(fnmatch.fnmatchcase(prefix, pattern) for prefix in prefixes)
        if matched:
            included = allow
    return included


def test_build_sh_puts_a_packaged_declarations_code_in_the_image():
    """A packaged declaration (evaluation/declarations/<name>.toml) keeps its rules.py beside it: the build
    context of ./build.sh holds both; the tests' own fixtures stay out."""
    assert _in_build_context("evaluation/declarations/kits-example.toml")
    assert _in_build_context("evaluation/declarations/rules.py")
    assert _in_build_context("evaluation/declarations/my-challenge/rules.py")
    assert not _in_build_context("evaluation/declarations/__pycache__/rules.cpython-311.pyc")
    assert not _in_build_context("test/declarative/open_interface/rules.py")


def test_a_set_function_failing_on_a_bootstrap_resample_is_one_line(tmp_path, evaluate_cli):
    metric = (
        'output = "malignancy-likelihood"\nover = "set"\nfunction = "rules.py:fails_on_a_resample"\nbootstrap = true'
    )
    toml = own(tmp_path / "decl", metric, score="own")
    ground_truth, input_dir, _ = write_case_files(tmp_path, toml)
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert run.exit_code != 0
    assert run.last_error_line.endswith(
        "rules.py: fails_on_a_resample: bootstrap resample 4: ZeroDivisionError: division by zero"
    ), run.stderr
    assert not (run.output / "metrics.json").exists()


def test_a_replay_names_a_changed_code_file(tmp_path, evaluate_cli, capsys):
    from evaluation.compare import replay

    toml = own(tmp_path / "decl", SEG + 'function = "rules.py:count"')
    ground_truth, input_dir, _ = write_case_files(tmp_path, toml)
    run = evaluate_cli(str(toml), input_dir, "--provenance", ground_truth=ground_truth)
    assert run.exit_code == 0, run.stderr
    rules = tmp_path / "decl" / "rules.py"
    rules.write_text(rules.read_text().replace("- float(np.count_nonzero(reference))", "+ 0.0"))
    capsys.readouterr()
    assert replay(run.output / "provenance.json") != 0
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.endswith(f"failed: the code file {rules} changed since the record."), last


def test_missing_policies_apply(tmp_path, evaluate_cli):
    """An absent mask under "empty-mask" reaches the function as zeros; an absent likelihood under "exclude"
    reaches neither the per-case nor the whole-set function."""
    metric = (
        SEG + 'function = "rules.py:count"\n[[metrics]]\nname = "error"\nmetric = "python"\n'
        'output = "malignancy-likelihood"\nfunction = "rules.py:absolute_error"\n[[metrics]]\nname = "n"\n'
        'metric = "python"\noutput = "malignancy-likelihood"\nover = "set"\nfunction = "rules.py:cases"'
    )
    toml = own(tmp_path / "decl", metric)
    text = toml.read_text().replace("labels = { lesion = 1 }", 'labels = { lesion = 1 }\nmissing = "empty-mask"')
    toml.write_text(text.replace("range = [0, 1]", 'range = [0, 1]\nmissing = "exclude"'))
    ground_truth, input_dir, data = write_case_files(tmp_path, toml, without=frozenset({"case01", "case05"}))
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert run.exit_code == 0, run.stderr
    per_case = run.metrics["case"]
    for case in ("case01", "case05"):
        assert per_case[case]["own"] == -float(np.count_nonzero(data["ref"][case]))  # the empty mask
        assert "error" not in per_case[case]
    assert run.metrics["aggregates"]["n"] == 10.0
    kept = [abs(data["p"][c] - data["y"][c]) for c in CASES if c not in ("case01", "case05")]
    close(run.metrics["aggregates"]["error_mean"], float(np.mean(kept)), "mean over the scored cases")


def test_the_editors_schema_accepts_the_declaration_and_refuses_a_misspelt_key():
    jsonschema = pytest.importorskip("jsonschema")
    import tomllib

    from evaluation.declarative import derived

    validator = jsonschema.Draft202012Validator(derived.json_schema())
    data = tomllib.loads(DECLARATION.read_text())
    assert [error.message for error in validator.iter_errors(data)] == []
    data["metrics"][0]["funtion"] = data["metrics"][0].pop("function")
    assert list(validator.iter_errors(data))
