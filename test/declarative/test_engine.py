"""Declared challenges (evaluation/declarative): the example declaration end to end through the CLI,
its numbers against independent computations (numpy by hand, DeepMind surface-distance, scipy
connected components, scikit-learn), every declared edge case and missing policy on hand-made
volumes, and bad declarations refused with the key named."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import SimpleITK as sitk
import surface_distance
from conftest import DEMO_INPUT, GROUND_TRUTH, REPO, documented_section
from declarative.helpers import A1, tiny_case, tiny_data, tiny_text, volume
from scipy import ndimage
from sklearn.metrics import balanced_accuracy_score, roc_auc_score

from evaluation.declarative.schema import parse
from evaluation.errors import ConfigurationError
from evaluation.phase import main as phase_main
from evaluation.platform.layout import JobSpec, write_input
from evaluation.registry import get, names

NAME = "kits-example"
DECLARATION = REPO / "evaluation" / "declarations" / f"{NAME}.toml"
LABELS = {"kidney": 1, "tumour": 2, "cyst": 3}


# ----------------------------------------------------------------------------- independent oracles


def read(path: Path) -> tuple[np.ndarray, tuple[float, ...]]:
    image = sitk.ReadImage(str(path))
    return sitk.GetArrayFromImage(image), tuple(reversed(image.GetSpacing()))


def lesion_counts(reference: np.ndarray, prediction: np.ndarray, threshold: float) -> tuple[int, int, int]:
    """TP / FP / FN: scipy 26-connected components, every pair's IoU, greedy by descending IoU."""
    structure = np.ones((3, 3, 3))
    ref, n_ref = ndimage.label(reference, structure)
    pred, n_pred = ndimage.label(prediction, structure)
    pairs = []
    for r in range(1, n_ref + 1):
        for p in range(1, n_pred + 1):
            inter = np.sum((ref == r) & (pred == p))
            iou = inter / np.sum((ref == r) | (pred == p))
            if iou > threshold:
                pairs.append((-iou, r, p))
    used_r, used_p = set(), set()
    for _, r, p in sorted(pairs):
        if r not in used_r and p not in used_p:
            used_r.add(r)
            used_p.add(p)
    return len(used_r), n_pred - len(used_r), n_ref - len(used_r)


def demo_submission() -> dict[str, tuple[Path | None, float | None]]:
    """case -> (predicted label image, likelihood), read straight from predictions.json."""
    found = {}
    for job in json.loads((DEMO_INPUT / NAME / "predictions.json").read_text()):
        case = job["inputs"][0]["image"]["name"].removesuffix("_0000.mha")
        image, value = None, None
        for output in job["outputs"]:
            if output["interface"]["slug"] == "kidney-segmentation":
                folder = DEMO_INPUT / NAME / job["pk"] / "output" / output["interface"]["relative_path"]
                image = next(folder.iterdir())
            else:
                value = output["value"]
        found[case] = (image, value)
    return found


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> dict:
    from evaluation.cli import main

    output = tmp_path_factory.mktemp("kits")
    code = main(["--challenge", NAME, "--input", str(DEMO_INPUT / NAME), "--output", str(output), "--workers", "2"])
    assert code == 0
    return json.loads((output / "metrics.json").read_text())


@pytest.fixture(scope="module")
def oracle() -> dict:
    """Every per-case number of the demo, computed independently of the package."""
    truth = dict(line.split(",") for line in (GROUND_TRUTH / NAME / "clinical.csv").read_text().split()[1:])
    result = {"case": {}, "label": {}, "likelihood": {}}
    for case, (image, likelihood) in sorted(demo_submission().items()):
        reference, spacing = read(GROUND_TRUTH / NAME / "labels" / f"{case}.mha")
        prediction = read(image)[0] if image is not None else np.zeros_like(reference)
        diagonal = float(np.linalg.norm(np.array(reference.shape) * np.array(spacing)))
        numbers = {}
        for label, value in LABELS.items():
            r, p = reference == value, prediction == value
            inter, total = np.sum(r & p), np.sum(r) + np.sum(p)
            numbers[f"inter_{label}"], numbers[f"total_{label}"] = int(inter), int(total)
            numbers[f"dice_{label}"] = 1.0 if total == 0 else 2 * inter / total
            if r.any() and p.any():
                distances = surface_distance.compute_surface_distances(r, p, spacing)
                numbers[f"nsd_{label}"] = surface_distance.compute_surface_dice_at_tolerance(distances, 2.0)
                numbers[f"hd95_{label}"] = surface_distance.compute_robust_hausdorff(distances, 95)
            else:  # the declared edge values
                numbers[f"nsd_{label}"] = 1.0 if total == 0 else 0.0
                numbers[f"hd95_{label}"] = 0.0 if total == 0 else diagonal
        numbers["lesions"] = lesion_counts(reference == 2, prediction == 2, 0.3)
        result["case"][case] = numbers
        result["label"][case] = int(truth[case])
        # worst-value policy: a missing likelihood is the end of [0, 1] farthest from the label
        result["likelihood"][case] = likelihood if likelihood is not None else 1.0 - int(truth[case])
    return result


# ------------------------------------------------------------------------------------ the example


def test_the_example_is_registered_from_its_declaration():
    assert NAME in names()
    challenge = get(NAME)
    assert challenge.phase.score_jsonpath == "aggregates.dice_tumour_mean"
    assert [s.slug for s in challenge.phase.outputs] == ["kidney-segmentation", "malignancy-likelihood"]


def test_demo_equals_the_expected_file(demo):
    expected = json.loads((REPO / "test" / "expected" / NAME / "metrics.json").read_text())
    assert demo == expected


def test_demo_segmentation_against_independent_computations(demo, oracle):
    cases = sorted(oracle["case"])
    aggregates = demo["aggregates"]
    for label in LABELS:
        for case in cases:
            mine, theirs = demo["case"][case], oracle["case"][case]
            assert mine[f"dice_{label}"] == pytest.approx(theirs[f"dice_{label}"], abs=1e-12)
            assert mine[f"nsd_2mm_{label}"] == pytest.approx(theirs[f"nsd_{label}"], abs=1e-9)
            assert mine[f"hd95_{label}"] == pytest.approx(theirs[f"hd95_{label}"], abs=1e-9)
        dices = [oracle["case"][c][f"dice_{label}"] for c in cases]
        assert aggregates[f"dice_{label}_mean"] == pytest.approx(np.mean(dices), abs=1e-12)
        inter = sum(oracle["case"][c][f"inter_{label}"] for c in cases)
        total = sum(oracle["case"][c][f"total_{label}"] for c in cases)
        assert aggregates[f"dice_{label}_dataset"] == pytest.approx(2 * inter / total, abs=1e-12)
        nsd = np.mean([oracle["case"][c][f"nsd_{label}"] for c in cases])
        assert aggregates[f"nsd_2mm_{label}_mean"] == pytest.approx(nsd, abs=1e-9)
    tp, fp, fn = np.sum([oracle["case"][c]["lesions"] for c in cases], axis=0)
    assert (tp, fp, fn) == tuple(
        sum(demo["case"][c][f"lesion_f1_tumour_{k}"] for c in cases) for k in ("tp", "fp", "fn")
    )
    assert aggregates["lesion_f1_tumour_dataset"] == pytest.approx(2 * tp / (2 * tp + fp + fn), abs=1e-12)
    per_case = [1.0 if sum(n) == 0 else 2 * n[0] / (2 * n[0] + n[1] + n[2]) for n in
                (oracle["case"][c]["lesions"] for c in cases)]  # fmt: skip
    assert aggregates["lesion_f1_tumour_mean"] == pytest.approx(np.mean(per_case), abs=1e-12)
    assert tp > 0 and fp > 0 and fn > 0  # the demo exercises every kind of lesion outcome


def test_demo_classification_against_independent_computations(demo, oracle):
    cases = sorted(oracle["label"])
    y = np.array([oracle["label"][c] for c in cases], dtype=float)
    p = np.array([oracle["likelihood"][c] for c in cases], dtype=float)
    aggregates = demo["aggregates"]
    assert aggregates["auroc"] == pytest.approx(roc_auc_score(y, p), abs=1e-12)
    assert aggregates["brier"] == pytest.approx(
        sum((pi - yi) ** 2 for pi, yi in zip(p, y, strict=True)) / len(y), abs=1e-12
    )
    ece = 0.0
    for k in range(5):  # equal-width right-closed bins (k/5, (k+1)/5] (Guo et al. 2017), p = 0 in the first
        inside = [(pi, yi) for pi, yi in zip(p, y, strict=True) if k / 5 < pi <= (k + 1) / 5 or (k == 0 and pi == 0.0)]
        if inside:
            ece += len(inside) / len(y) * abs(np.mean([b for _, b in inside]) - np.mean([a for a, _ in inside]))
    assert aggregates["ece"] == pytest.approx(ece, abs=1e-12)
    assert demo["missing"] == {
        "jobs": [],
        "kidney-segmentation": ["case_00005"],
        "malignancy-likelihood": ["case_00008"],
    }
    assert demo["case"]["case_00008"]["malignancy-likelihood"] is None  # the imputed value is never shown


def test_demo_confidence_intervals_reproduce_from_indices(demo, oracle):
    """The CI of the mean tumour Dice and of the AUROC, rebuilt from the documented draw
    (numpy.random.default_rng(seed).integers(0, n, (resamples, n))) by indexing, not by weights."""
    cases = sorted(oracle["case"])
    draws = np.random.default_rng(0).integers(0, len(cases), size=(1000, len(cases)))
    dices = np.array([oracle["case"][c]["dice_tumour"] for c in cases])
    means = dices[draws].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    assert demo["aggregates"]["dice_tumour_mean_ci_low"] == pytest.approx(low, abs=1e-12)
    assert demo["aggregates"]["dice_tumour_mean_ci_high"] == pytest.approx(high, abs=1e-12)
    y = np.array([oracle["label"][c] for c in cases])
    p = np.array([oracle["likelihood"][c] for c in cases])
    aucs = [roc_auc_score(y[row], p[row]) for row in draws if len(set(y[row])) == 2]
    low, high = np.percentile(aucs, [2.5, 97.5])
    assert demo["aggregates"]["auroc_ci_low"] == pytest.approx(low, abs=1e-12)
    assert demo["aggregates"]["auroc_ci_high"] == pytest.approx(high, abs=1e-12)


def test_phase_settings_of_the_example(capsys):
    assert phase_main(["--challenge", NAME]) == 0
    settings = json.loads(capsys.readouterr().out)
    assert settings["score_jsonpath"] == "aggregates.dice_tumour_mean"
    assert settings["scoring_method_choice"] == "avg"
    assert settings["extra_results_columns"][-1] == {
        "title": "Expected calibration error", "path": "aggregates.ece", "order": "asc", "exclude_from_ranking": True,
    }  # fmt: skip
    assert settings["algorithm_outputs"][1] == {
        "slug": "malignancy-likelihood", "kind": "Float", "super_kind": "Value",
        "relative_path": "malignancy-likelihood.json",
    }  # fmt: skip


# ----------------------------------------------------------------- a tiny challenge, by hand


@pytest.fixture
def tiny(tmp_path):
    return tiny_data(tmp_path)


def test_tiny_by_hand(tiny, evaluate_cli):
    root, references, predictions, likelihoods, grades = tiny
    toml, ground_truth, input_dir = tiny_case(root, predictions, references, likelihoods, grades)
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert run.exit_code == 0, run.stderr
    case, aggregates = run.metrics["case"], run.metrics["aggregates"]
    # label a: c1 2*4/(8+16) = 1/3; c2 1; c3 both empty (1.0 as declared); c4 missing -> empty mask: 0
    assert [case[c]["dice_a"] for c in ("c1", "c2", "c3", "c4")] == pytest.approx([1 / 3, 1, 1, 0])
    assert aggregates["dice_a_mean"] == pytest.approx((1 / 3 + 1 + 1 + 0) / 4)
    assert aggregates["dice_a_dataset"] == pytest.approx(2 * (4 + 8) / (24 + 16 + 8))
    # label b only in c1 (perfect); absent elsewhere
    assert aggregates["dice_b_dataset"] == 1.0 and aggregates["dice_b_mean"] == 1.0
    # IoU = |R∩P| / |R∪P|: c1 4/20
    assert case["c1"]["iou_a"] == pytest.approx(4 / 20)
    assert aggregates["iou_a_dataset"] == pytest.approx((4 + 8) / (20 + 8 + 8))
    # HD95 of c4 (one empty): the image diagonal in mm (spacing 1)
    assert case["c4"]["hd95_a"] == pytest.approx(np.linalg.norm([6, 8, 8]))
    assert case["c3"]["hd95_a"] == 0.0
    # lesions of a: c1 IoU 1/3 > 0.3 -> TP, A2 FP; c2 TP; c3 none (0.75 declared); c4 FN
    assert [case[c]["lesion_f1_a"] for c in ("c1", "c2", "c3", "c4")] == pytest.approx([2 / 3, 1, 0.75, 0])
    assert aggregates["lesion_f1_a_dataset"] == pytest.approx(2 * 2 / (4 + 1 + 1))
    # AUROC: y = c1 0, c2 1, c3 0, c4 1; c3 missing -> worst value 1 (benign)
    assert aggregates["auroc"] == pytest.approx(roc_auc_score([0, 1, 0, 1], [0.3, 0.8, 1.0, 0.6]))
    # grades: c4 missing -> misclassification
    truth = ["low", "high", "low", "high"]
    assert aggregates["balanced_accuracy"] == pytest.approx(
        balanced_accuracy_score(truth, ["low", "high", "high", "<missing>"])
    )
    assert run.metrics["missing"] == {"jobs": [], "seg": ["c4"], "p": ["c3"], "grade": ["c4"]}


def test_tiny_declared_edge_values(tiny, evaluate_cli):
    root, references, predictions, likelihoods, grades = tiny
    toml, ground_truth, input_dir = tiny_case(
        root, predictions, references, likelihoods, grades, BOTH_EMPTY='"exclude"', ONE_EMPTY="99.5"
    )
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert run.exit_code == 0, run.stderr
    case, aggregates = run.metrics["case"], run.metrics["aggregates"]
    assert case["c3"]["dice_a"] is None  # excluded (written as null), left out of the mean
    assert aggregates["dice_a_mean"] == pytest.approx((1 / 3 + 1 + 0) / 3)
    assert aggregates["dice_b_mean"] == 1.0  # only c1 counts
    assert case["c4"]["hd95_a"] == 99.5


def test_tiny_absent_everywhere_and_single_class(tmp_path, evaluate_cli):
    references = {"c1": volume(A1), "c2": volume(A1)}
    toml, ground_truth, input_dir = tiny_case(
        tmp_path, dict(references), references, {"c1": 0.2, "c2": 0.4}, {"c1": "low", "c2": "low"},
        labels_y={"c1": 0, "c2": 0},
    )  # fmt: skip
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert run.exit_code == 1 and not run.wrote_metrics
    assert "single class" in run.last_error_line and "auroc" in run.last_error_line
    toml.write_text(toml.read_text().replace('single_class = "error"', "single_class = 0.5"))
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert run.exit_code == 0, run.stderr
    assert run.metrics["aggregates"]["auroc"] == 0.5
    assert run.metrics["aggregates"]["dice_b_dataset"] == 0.25  # label b in no case: absent_everywhere


@pytest.mark.parametrize(
    ("seg", "p", "message"),
    [
        ("error", "worst-value", "Case c4 has no output 'seg'"),
        ("empty-mask", "error", "Case c3 has no output 'p' (p.json)"),
    ],
)
def test_tiny_missing_error_policy(tiny, evaluate_cli, seg, p, message):
    root, references, predictions, likelihoods, grades = tiny
    toml, ground_truth, input_dir = tiny_case(
        root, predictions, references, likelihoods, grades, SEG_MISSING=seg, P_MISSING=p
    )
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert run.exit_code == 1 and not run.wrote_metrics
    assert message in run.last_error_line


def test_tiny_exclude_policy_and_missing_job(tiny, evaluate_cli):
    root, references, predictions, likelihoods, grades = tiny
    toml, ground_truth, input_dir = tiny_case(
        root, predictions, references, likelihoods, grades, SEG_MISSING="exclude", P_MISSING="exclude"
    )
    document = json.loads((input_dir / "predictions.json").read_text())
    (input_dir / "predictions.json").write_text(json.dumps(document[:3]))  # no job for c4
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert run.exit_code == 0, run.stderr
    aggregates = run.metrics["aggregates"]
    assert aggregates["dice_a_mean"] == pytest.approx((1 / 3 + 1 + 1) / 3)  # c4 left out
    assert "dice_a" not in run.metrics["case"]["c4"]
    assert aggregates["auroc"] == pytest.approx(roc_auc_score([0, 1], [0.3, 0.8]))  # c3 and c4 left out
    assert run.metrics["missing"]["jobs"] == ["c4"] and run.metrics["missing"]["p"] == ["c3", "c4"]
    toml.write_text(toml.read_text().replace('missing = "exclude"', 'missing = "error"', 1))
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert run.exit_code == 1 and "No algorithm job for case c4" in run.last_error_line


def test_tiny_bad_submissions(tiny, evaluate_cli):
    root, references, predictions, likelihoods, grades = tiny
    bad = {**predictions, "c2": volume((5, (slice(0, 1), slice(0, 1), slice(0, 1))))}
    toml, ground_truth, input_dir = tiny_case(root, bad, references, likelihoods, grades)
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert run.exit_code == 1 and "segmentation of c2 has the label 5; only 0, 1, 2 are allowed" in run.last_error_line
    toml, ground_truth, input_dir = tiny_case(root / "b", predictions, references, {**likelihoods, "c2": 1.5}, grades)
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert run.exit_code == 1 and "The output 'p' of c2 is 1.5, outside [0, 1]" in run.last_error_line
    toml, ground_truth, input_dir = tiny_case(root / "c", predictions, references, likelihoods, {**grades, "c1": "mid"})
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert run.exit_code == 1 and "The output 'grade' of c1 is not one of the strings low, high" in run.last_error_line


def test_tiny_geometry_error_and_nearest(tiny, evaluate_cli):
    root, references, predictions, likelihoods, grades = tiny
    toml, ground_truth, input_dir = tiny_case(root, predictions, references, likelihoods, grades)
    pk = json.loads((input_dir / "predictions.json").read_text())[1]["pk"]
    path = next((input_dir / pk / "output" / "images" / "seg").iterdir())
    image = sitk.ReadImage(str(path))
    image.SetSpacing((1.0, 1.0, 1.5))
    sitk.WriteImage(image, str(path))
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert run.exit_code == 1
    assert "The 'seg' segmentation of c2 has spacing (1, 1, 1.5) but the reference grid has (1, 1, 1)" in (
        run.last_error_line
    )
    toml.write_text(
        toml.read_text().replace("labels = { a = 1, b = 2 }", 'labels = { a = 1, b = 2 }\ngeometry = "nearest"')
    )
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert run.exit_code == 0, run.stderr
    assert run.metrics["settings"]["outputs"]["seg"]["geometry"] == "nearest"


# ---------------------------------------------------------------------------- bad declarations


def _mutated(old: str, new: str) -> str:
    text = DECLARATION.read_text(encoding="utf-8")
    assert old in text
    return text.replace(old, new, 1)


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ('missing = "worst-value"', 'missing = "zero"',
         "kits.toml: outputs[1].missing: 'zero' is not one of error, empty-mask, worst-value, misclassification, "
         "exclude"),
        ('missing = "empty-mask"', 'missing = "worst-value"',
         "outputs[0].missing: 'worst-value' is not one of error, empty-mask, exclude (for a segmentation output)"),
        ('metric = "dice"', 'metric = "dise"', "metrics[0].metric: 'dise' is not one of dice, iou"),
        ('labels = ["tumour"]', 'labels = ["tumor"]', "metrics[3].labels: 'tumor' is not a label of"),
        ('tolerance_mm = 2.0', 'tolerance_mm = "2 mm"', "metrics[1].tolerance_mm: must be a number, not a string"),
        ('tolerance_mm = 2.0', '', "metrics[1].tolerance_mm: is required"),
        ('bins = 5', 'bins = 5\nbinz = 3', "metrics[6].binz: unknown key"),
        ('range = [0, 1]', 'range = [0, 2]', "metrics[5].output: brier needs a probability: declare range = [0, 1]"),
        ('score = "aggregates.dice_tumour_mean"', 'score = "aggregates.dice_tumor_mean"',
         "leaderboard.score: 'aggregates.dice_tumor_mean' is not a value this declaration writes"),
        ('title = "Tumour detection F1"', 'title = "Tumour NSD at 2 mm"',
         "leaderboard.columns[1].title: 'Tumour NSD at 2 mm' is another column's title too"),
        ('order = "asc"\nexclude', 'order = "up"\nexclude',
         "leaderboard.columns[4].order: 'up' is not one of asc, desc"),
        ('labels = { kidney = 1, tumour = 2, cyst = 3 }', 'labels = { kidney = 1, tumour = 2, cyst = 2 }',
         "outputs[0].labels: two labels share a voxel value"),
        ('range = [0, 1]', 'range = [0, 1]\nlist_noun = "likelihoods"',
         "outputs: 'malignancy-likelihood': list_noun names the list a job answers for a stacked input"),
        ('reference = "labels/{case}.mha"', 'reference = "labels/case.mha"', "outputs[0].reference: 'labels/case.mha'"),
        ('kind = "number"', 'kind = "list"', "outputs[1].kind: 'list' is not supported by this version"),
        ('kind = "number"', 'kind = "boxes"', "outputs[1].reference: a boxes output needs a path pattern"),
        ('output = "malignancy-likelihood"\nsingle', 'output = "kidney-segmentation"\nsingle',
         "metrics[4].output: auroc scores a number output; 'kidney-segmentation' is a segmentation"),
        ('name = "nsd_2mm"', 'name = "dice"\naggregates = ["mean"]',
         "metrics: two values go to aggregates.dice_kidney_mean"),
        ('strip = ["_0000"]', 'strip = "_0000"', "cases.strip: must be a list, not a string"),
        ('[bootstrap]\nresamples = 1000', '[bootstrap]\nresamples = 0', "bootstrap.resamples: must be at least 1"),
        ('title = "KiTS', 'titel = "KiTS', "kits.toml: title: is required"),
    ],
)  # fmt: skip
def test_bad_declarations_name_the_key(old, new, message):
    with pytest.raises(ConfigurationError) as caught:
        parse(_mutated(old, new), "kits.toml")
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_bad_declaration_through_the_cli(tmp_path, evaluate_cli):
    toml = tmp_path / "broken.toml"
    toml.write_text(_mutated('missing = "worst-value"', 'missing = "zero"'))
    run = evaluate_cli(str(toml), DEMO_INPUT / NAME)
    assert run.exit_code == 1 and not run.wrote_metrics
    assert run.last_error_line.startswith("broken.toml: outputs[1].missing: 'zero' is not one of")
    toml.write_text("name = [")
    run = evaluate_cli(str(toml), DEMO_INPUT / NAME)
    assert run.exit_code == 1 and run.last_error_line.startswith("broken.toml: not valid TOML")
    run = evaluate_cli(str(tmp_path / "absent.toml"), DEMO_INPUT / NAME)
    assert run.exit_code == 1 and "does not exist" in run.last_error_line


def test_declaration_by_path_equals_the_packaged_one(tmp_path, evaluate_cli, demo):
    copy = tmp_path / "mine.toml"
    copy.write_text(DECLARATION.read_text(encoding="utf-8"))
    run = evaluate_cli(str(copy), DEMO_INPUT / NAME, ground_truth=GROUND_TRUTH / NAME)
    assert run.exit_code == 0, run.stderr
    metrics = run.metrics
    assert metrics["settings"].pop("declaration") == "mine.toml"
    assert metrics == {**demo, "settings": {k: v for k, v in demo["settings"].items() if k != "declaration"}}


# ------------------------------------------------------------------------- the metric adapters


def test_value_metrics_are_the_catalogue_with_declared_edges():
    """A declared value metric is its catalogue entry: declared keys mapped to the catalogue's
    parameters, a declared edge value the catalogue's, and in the bootstrap a resample that hits an
    edge case is NaN (left out of the interval) -- each resample the catalogue's value on the drawn cases."""
    from evaluation.declarative.measures import value_metric
    from evaluation.metrics.bootstrap import resample_indices, row_counts
    from evaluation.metrics.classification import auroc, expected_calibration_error

    y, p = np.array([1.0, 1.0, 0.0, 0.0, 1.0]), np.array([0.9, 0.2, 0.2, 0.4, 0.6])
    assert value_metric("ece", y, p, {"bins": 5}) == expected_calibration_error(y, p, n_bins=5)
    assert value_metric("auroc", y[:2], p[:2], {"single_class": 0.25}) == 0.25
    assert np.isnan(value_metric("auroc", y[:2], p[:2], {"single_class": "error"}))
    assert value_metric("average_precision", y * 0, p, {"no_positive": 0.125}) == 0.125
    indices = resample_indices(5, 50, 3)
    boot = value_metric("auroc", y, p, {"single_class": 0.5}, row_counts(indices, 5))
    for row, value in zip(indices, boot, strict=True):
        single = len(set(y[row])) < 2
        assert np.isnan(value) if single else value == pytest.approx(auroc(y[row], p[row]), abs=1e-12)
    assert np.isnan(boot).any() and not np.isnan(boot).all()


def test_the_readme_example_is_the_packaged_declaration():
    """The README's complete example parses to the same declaration as the packaged file."""
    section = documented_section("The complete example")
    start = section.index("```toml\n") + len("```toml\n")
    block = section[start : section.index("\n```", start)]
    documented, packaged = parse(block, "README"), parse(DECLARATION.read_text(encoding="utf-8"), "README")
    assert documented == packaged


VALUES_ONLY = """
name = "values-only"
title = "Values only: cases listed by a CSV"
[[inputs]]
slug = "scan"
name = "{case}.tif"
[cases]
id_column = "patient"
[[outputs]]
slug = "age"
kind = "number"
reference = "truth.csv:age"
missing = "exclude"
[[outputs]]
slug = "risk"
kind = "number"
reference = "truth.csv:event"
[[outputs]]
slug = "positive"
kind = "boolean"
reference = "truth.csv:positive"
missing = "misclassification"
[[metrics]]
metric = "mae"
output = "age"
[[metrics]]
metric = "rmse"
output = "age"
[[metrics]]
metric = "average_precision"
output = "risk"
bootstrap = true
[[metrics]]
metric = "accuracy"
output = "positive"
[[metrics]]
metric = "balanced_accuracy"
output = "positive"
[leaderboard]
score = "aggregates.average_precision"
[[leaderboard.columns]]
title = "MAE"
path = "aggregates.mae"
order = "asc"
"""


def test_values_only_declaration_by_hand(tmp_path, evaluate_cli):
    from sklearn.metrics import average_precision_score

    (tmp_path / "gt").mkdir()
    rows = {"p1": (50, 1, "yes"), "p2": (60, 0, "no"), "p3": (70, 1, "true"), "p4": (80, 0, "0")}
    (tmp_path / "gt" / "truth.csv").write_text(
        "patient,age,event,positive\n" + "".join(f"{p},{a},{e},{b}\n" for p, (a, e, b) in rows.items())
    )
    toml = tmp_path / "values.toml"
    toml.write_text(VALUES_ONLY)
    challenge = get(str(toml))
    age, risk, positive = challenge.phase.outputs
    assert (positive.kind, positive.super_kind, positive.relative_path) == ("Bool", "Value", "positive.json")
    outputs = {
        "p1": {age: 55.0, risk: 0.9, positive: True},
        "p2": {age: 58.0, risk: 0.4, positive: True},
        "p3": {risk: 0.4, positive: True},
        "p4": {age: 90.0, risk: 0.1},
    }
    write_input(tmp_path / "input", [JobSpec(challenge.job_inputs(p), o) for p, o in outputs.items()])
    assert (
        json.loads((tmp_path / "input" / "predictions.json").read_text())[0]["inputs"][0]["image"]["name"] == "p1.tif"
    )
    run = evaluate_cli(str(toml), tmp_path / "input", ground_truth=tmp_path / "gt")
    assert run.exit_code == 0, run.stderr
    aggregates = run.metrics["aggregates"]
    assert aggregates["mae"] == pytest.approx((5 + 2 + 10) / 3)  # p3 excluded
    assert aggregates["rmse"] == pytest.approx(np.sqrt((25 + 4 + 100) / 3))
    assert aggregates["average_precision"] == pytest.approx(average_precision_score([1, 0, 1, 0], [0.9, 0.4, 0.4, 0.1]))
    assert aggregates["accuracy"] == pytest.approx(2 / 4)  # p2 wrong, p4 missing = wrong
    truth, predicted = ["True", "False", "True", "False"], ["True", "True", "True", "<missing>"]
    assert aggregates["balanced_accuracy"] == pytest.approx(balanced_accuracy_score(truth, predicted))
    assert run.metrics["missing"] == {"jobs": [], "age": ["p3"], "risk": [], "positive": ["p4"]}
    assert run.metrics["case"]["p2"] == {"age": 58.0, "risk": 0.4, "positive": True}
    outputs["p1"][positive] = "yes"
    write_input(tmp_path / "bad", [JobSpec(challenge.job_inputs(p), o) for p, o in outputs.items()])
    run = evaluate_cli(str(toml), tmp_path / "bad", ground_truth=tmp_path / "gt")
    assert run.exit_code == 1 and "The output 'positive' of p1 is not a JSON boolean" in run.last_error_line


def test_no_scored_case_is_a_null_value_not_the_references_fault(tmp_path, evaluate_cli):
    """Every answer of an output excluded (missing = "exclude", none submitted): its metric has no value
    (null; here the leaderboard's, so the run fails saying so), never an error blaming the reference."""
    (tmp_path / "gt").mkdir()
    (tmp_path / "gt" / "truth.csv").write_text("patient,age,event,positive\np1,50,1,yes\np2,60,0,no\n")
    risk = 'reference = "truth.csv:event"\n'
    text = VALUES_ONLY.replace(risk, risk + 'missing = "exclude"\n')
    toml = tmp_path / "values.toml"
    toml.write_text(text.replace("bootstrap = true\n", 'bootstrap = true\nno_positive = "error"\n'))
    challenge = get(str(toml))
    age, _, positive = challenge.phase.outputs
    jobs = [JobSpec(challenge.job_inputs(p), {age: 55.0, positive: True}) for p in ("p1", "p2")]
    write_input(tmp_path / "input", jobs)
    run = evaluate_cli(str(toml), tmp_path / "input", ground_truth=tmp_path / "gt")
    assert run.exit_code == 1 and not run.wrote_metrics
    assert run.last_error_line == (
        "The leaderboard value 'aggregates.average_precision' is not finite; metrics.json was not written so that "
        "the submission does not vanish from the leaderboard."
    )


def test_average_precision_declares_the_catalogues_no_positive(tmp_path, evaluate_cli):
    """AP is undefined only without a positive case (all positives give 1.0), so its declared edge
    is the catalogue's ``no_positive``: "error" refuses the run, a number is the value."""
    declared = 'metric = "average_precision"\noutput = "risk"\n'
    assert declared in VALUES_ONLY
    with pytest.raises(ConfigurationError, match=r"metrics\[2\]\.single_class: unknown key"):
        parse(VALUES_ONLY.replace(declared, declared + "single_class = 0.5\n"), "values.toml")
    (tmp_path / "gt").mkdir()
    (tmp_path / "gt" / "truth.csv").write_text("patient,age,event,positive\np1,50,0,yes\np2,60,0,no\n")
    toml = tmp_path / "values.toml"
    toml.write_text(VALUES_ONLY)
    challenge = get(str(toml))
    age, risk, positive = challenge.phase.outputs
    outputs = {"p1": {age: 55.0, risk: 0.9, positive: True}, "p2": {age: 58.0, risk: 0.4, positive: False}}
    write_input(tmp_path / "input", [JobSpec(challenge.job_inputs(p), o) for p, o in outputs.items()])
    run = evaluate_cli(str(toml), tmp_path / "input", ground_truth=tmp_path / "gt")
    assert run.exit_code == 1 and not run.wrote_metrics
    assert "holds no positive case" in run.last_error_line and "declare no_positive" in run.last_error_line
    toml.write_text(VALUES_ONLY.replace(declared, declared + "no_positive = 0.125\n"))
    run = evaluate_cli(str(toml), tmp_path / "input", ground_truth=tmp_path / "gt")
    assert run.exit_code == 0, run.stderr
    assert run.metrics["aggregates"]["average_precision"] == 0.125
    assert run.metrics["settings"]["metrics"]["average_precision"]["no_positive"] == 0.125


def test_ece_bins_at_their_edges():
    """The declared ECE bins as the catalogue's: right-closed ((k-1)/B, k/B], p = 0 in the first bin."""
    from evaluation.declarative.measures import value_metric

    p = np.array([0.0, 0.1, 0.3, 0.7, 0.9, 1.0])
    y = np.array([0.0, 0.0, 1.0, 1.0, 1.0, 1.0])
    # bins of 0.1: [0, 0.1] holds 0.0 and 0.1 | (0.2, 0.3] | (0.6, 0.7] | (0.8, 0.9] | (0.9, 1.0]
    by_hand = (2 * abs(0.0 - 0.05) + 0.7 + 0.3 + 0.1 + 0.0) / 6
    assert value_metric("ece", y, p, {"bins": 10}) == pytest.approx(by_hand, abs=1e-15)


def test_a_broken_packaged_declaration_is_named_not_raised(tmp_path, monkeypatch):
    from evaluation.challenges import declared

    (tmp_path / "broken.toml").write_text(_mutated('missing = "worst-value"', 'missing = "zero"'))
    (tmp_path / "renamed.toml").write_text(DECLARATION.read_text(encoding="utf-8"))
    monkeypatch.setattr(declared, "DECLARATIONS", tmp_path)
    found, refused = declared.entries()
    assert found == {}
    assert refused == {
        "declarations/broken.toml": "broken.toml: outputs[1].missing: 'zero' is not one of error, empty-mask, "
        "worst-value, misclassification, exclude, empty, non-concordant, tie",
        "declarations/renamed.toml": "renamed.toml: name: 'kits-example' must equal the file name's stem",
    }
    with pytest.raises(ConfigurationError, match=r"Module declarations/broken.toml could not be loaded \(broken.toml"):
        get("broken")


def test_groups_and_key_templates_shape_metrics_json(tiny, evaluate_cli):
    """Fixed key names (e.g. HECKTOR's aggregates.segmentation.dice_gtvp / dice_gtvp_mean) are
    declared with ``group`` and ``key``; the leaderboard paths follow them."""
    root, references, predictions, likelihoods, grades = tiny
    toml, ground_truth, input_dir = tiny_case(root, predictions, references, likelihoods, grades)
    text = toml.read_text().replace(
        'metric = "dice"\n',
        'metric = "dice"\ngroup = "segmentation"\nkey = { dataset = "dice_{label}", mean = "dice_{label}_mean" }\n'
        "bootstrap = true\n",
    )
    text = text.replace('metric = "auroc"\n', 'metric = "auroc"\ngroup = "classification"\nkey = "auc"\n')
    toml.write_text(text.replace("aggregates.dice_a_mean", "aggregates.segmentation.dice_a"))
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert run.exit_code == 0, run.stderr
    aggregates = run.metrics["aggregates"]
    assert sorted(aggregates["segmentation"]) == sorted(
        f"dice_{label}{form}{ci}" for label in "ab" for form in ("", "_mean") for ci in ("", "_ci_low", "_ci_high")
    )
    assert aggregates["segmentation"]["dice_a"] == pytest.approx(0.5)  # the dataset form, as by hand above
    assert aggregates["classification"] == {"auc": pytest.approx(roc_auc_score([0, 1, 0, 1], [0.3, 0.8, 1.0, 0.6]))}
    assert get(str(toml)).phase.score_jsonpath == "aggregates.segmentation.dice_a"


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (
            'key = { mean = "d_{label}" }',
            "metrics[0].key: a table of key templates needs exactly the forms mean, dataset",
        ),
        ('key = "d_{labels}_{form}"', "metrics[0].key: 'd_{labels}_{form}' may use only {name}, {label} and {form}"),
        ('key = "d.{label}_{form}"', "metrics[0].key: 'd.{label}_{form}' gives a key with characters other than"),
        ('key = "dice_{form}"', "metrics: two values go to aggregates.dice_mean"),
        (
            'group = "dice_a_mean"\nkey = "x_{label}_{form}"',
            "metrics: aggregates.dice_a_mean is both a value and a group",
        ),
    ],
)
def test_bad_key_templates(lines, message):
    text = tiny_text()
    text = text.replace('metric = "dice"\n', f'metric = "dice"\n{lines}\n')
    if "group" in lines:  # the clash needs a second metric writing the flat key
        text = text.replace('metric = "iou"\n', 'metric = "iou"\nname = "dice"\n')
    with pytest.raises(ConfigurationError) as caught:
        parse(text, "tiny.toml")
    assert message in str(caught.value)


OPTIONS = """
[[options]]
name = "resample"
default = "error"
choices = ["error", "nearest"]
sets = ["outputs.seg.geometry"]
help = "error: a prediction off the reference grid is an error; nearest: resample it"
[[options]]
name = "dice_both_empty"
default = 1.0
sets = ["metrics.dice.both_empty", "metrics.iou.both_empty"]
"""


def test_declared_options_override_declared_values(tiny, evaluate_cli):
    root, references, predictions, likelihoods, grades = tiny
    toml, ground_truth, input_dir = tiny_case(root, predictions, references, likelihoods, grades)
    toml.write_text(toml.read_text() + OPTIONS)
    challenge = get(str(toml))
    assert [(o.name, o.default, o.choices) for o in challenge.options][:2] == [
        ("resample", "error", ("error", "nearest")), ("dice_both_empty", 1.0, None),
    ]  # fmt: skip
    pk = json.loads((input_dir / "predictions.json").read_text())[1]["pk"]
    path = next((input_dir / pk / "output" / "images" / "seg").iterdir())
    image = sitk.ReadImage(str(path))
    image.SetOrigin((0.0, 0.0, 0.5))
    sitk.WriteImage(image, str(path))
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert run.exit_code == 1 and "segmentation of c2 has origin (0, 0, 0.5)" in run.last_error_line
    run = evaluate_cli(str(toml), input_dir, "--set", "resample=nearest", "--set", "dice_both_empty=0.25",
                       ground_truth=ground_truth)  # fmt: skip
    assert run.exit_code == 0, run.stderr
    settings = run.metrics["settings"]
    assert settings["resample"] == "nearest" and settings["outputs"]["seg"]["geometry"] == "nearest"
    assert settings["metrics"]["dice"]["both_empty"] == 0.25 and settings["metrics"]["iou"]["both_empty"] == 0.25
    assert run.metrics["case"]["c3"]["dice_a"] == 0.25 and run.metrics["case"]["c3"]["iou_a"] == 0.25
    run = evaluate_cli(str(toml), input_dir, "--set", "resample=linear", ground_truth=ground_truth)
    assert run.exit_code == 1 and "Option resample must be one of error, nearest; got 'linear'" in run.last_error_line


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ('"outputs.seg.geometry"', '"outputs.sag.geometry"',
         "options[0].sets: 'outputs.sag.geometry' names no declared value"),
        ('["error", "nearest"]', '["error", "sideways"]',
         "options[0].choices: 'sideways' does not give a valid declaration (tiny.toml: outputs[0].geometry: "
         "'sideways' is not one of error, nearest)"),
        ('default = 1.0', 'default = "one"', "options[1].default: 'one' does not give a valid declaration"),
        ('choices = ["error", "nearest"]', 'choices = ["error", 2]',
         "options[0].choices: 2 is not of the default's type"),
    ],
)  # fmt: skip
def test_bad_options_name_the_key(old, new, message):
    text = tiny_text()
    with pytest.raises(ConfigurationError) as caught:
        parse(text + OPTIONS.replace(old, new, 1), "tiny.toml")
    assert message in str(caught.value)


def test_the_bootstraps_options_are_reserved_beside_a_bootstrapped_metric():
    """``seed`` and ``bootstrap_resamples`` are the bootstrap's options; without a bootstrapped metric a
    declaration may have its own ``seed`` (RARE25's, for its own rule's draws)."""
    options = OPTIONS.replace('name = "resample"', 'name = "seed"', 1)
    assert next(o.name for o in parse(tiny_text() + options, "tiny.toml").options) == "seed"
    bootstrapped = tiny_text().replace('metric = "dice"\n', 'metric = "dice"\nbootstrap = true\n', 1)
    with pytest.raises(ConfigurationError, match=r"options\[0\].name: 'seed' must be a new option name"):
        parse(bootstrapped + options, "tiny.toml")


def test_blank_reference_cells_and_boolean_spellings(tmp_path, evaluate_cli):
    """blank = "skip": a case without a reference value leaves that output (scored nowhere, listed
    nowhere, its output still checked); true_values / false_values: the reference's spellings."""
    (tmp_path / "gt").mkdir()
    (tmp_path / "gt" / "truth.csv").write_text(
        "patient,age,event,positive\np1,50,1,Positive\np2,,0,negative\np3,70,1,\np4,80,0,NEGATIVE\n"
    )
    text = VALUES_ONLY.replace('reference = "truth.csv:age"\n', 'reference = "truth.csv:age"\nblank = "skip"\n')
    text = text.replace(
        'reference = "truth.csv:positive"\n',
        'reference = "truth.csv:positive"\nblank = "skip"\ntrue_values = ["positive"]\nfalse_values = ["Negative"]\n',
    )
    toml = tmp_path / "values.toml"
    toml.write_text(text)
    challenge = get(str(toml))
    age, risk, positive = challenge.phase.outputs
    outputs = {
        "p1": {age: 55.0, risk: 0.9, positive: True},
        "p2": {age: 58.0, risk: 0.4, positive: False},  # no reference age: not scored
        "p3": {risk: 0.4},  # no reference status and no output: neither scored nor missing
        "p4": {risk: 0.1, positive: False},  # age missing (as for p3): excluded, listed
    }
    write_input(tmp_path / "input", [JobSpec(challenge.job_inputs(p), o) for p, o in outputs.items()])
    run = evaluate_cli(str(toml), tmp_path / "input", ground_truth=tmp_path / "gt")
    assert run.exit_code == 0, run.stderr
    aggregates = run.metrics["aggregates"]
    assert aggregates["mae"] == 5.0 and aggregates["accuracy"] == 1.0 and aggregates["balanced_accuracy"] == 1.0
    assert run.metrics["missing"] == {"jobs": [], "age": ["p3", "p4"], "risk": [], "positive": []}
    assert "age" not in run.metrics["case"]["p2"] and "positive" not in run.metrics["case"]["p3"]
    outputs["p2"][age] = "old"  # an unscored output is still checked
    write_input(tmp_path / "bad", [JobSpec(challenge.job_inputs(p), o) for p, o in outputs.items()])
    run = evaluate_cli(str(toml), tmp_path / "bad", ground_truth=tmp_path / "gt")
    assert run.exit_code == 1 and "The output 'age' of p2 is not a number" in run.last_error_line
    toml.write_text(text.replace('false_values = ["Negative"]', 'false_values = ["no"]'))
    run = evaluate_cli(str(toml), tmp_path / "input", ground_truth=tmp_path / "gt")
    assert run.exit_code == 1
    assert run.last_error_line == "truth.csv:positive: the value of case p2 is not a boolean (positive/no)."


def test_a_mean_of_aggregates_with_its_bootstrap(tiny, evaluate_cli):
    """metric = "mean": e.g. HECKTOR's segmentation score, the mean of two aggregated Dice, its CI
    the percentiles of the resample-wise means (rebuilt here from the documented draw by indexing)."""
    root, references, predictions, likelihoods, grades = tiny
    toml, ground_truth, input_dir = tiny_case(root, predictions, references, likelihoods, grades)
    text = toml.read_text().replace('metric = "dice"\n', 'metric = "dice"\ngroup = "seg"\nbootstrap = true\n')
    score = 'metric = "mean"\nname = "score"\ngroup = "seg"\nof = ["seg.dice_a_dataset", "seg.dice_b_dataset"]'
    text = text.replace("[leaderboard]", f"[[metrics]]\n{score}\nbootstrap = true\n[leaderboard]")
    toml.write_text(text.replace("aggregates.dice_a_mean", "aggregates.seg.score"))
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert run.exit_code == 0, run.stderr
    seg = run.metrics["aggregates"]["seg"]
    assert seg["score"] == pytest.approx((0.5 + 1.0) / 2)
    # per case (c1..c4): label a intersections 4, 8, 0, 0 and totals 24, 16, 0, 8; label b 8/16 in c1 only
    inter_a, total_a = np.array([4, 8, 0, 0]), np.array([24, 16, 0, 8])
    inter_b, total_b = np.array([8, 0, 0, 0]), np.array([16, 0, 0, 0])
    draws = np.random.default_rng(0).integers(0, 4, size=(1000, 4))

    def aggregated(inter: np.ndarray, total: np.ndarray) -> np.ndarray:  # a label absent in a resample: 0.25
        sums = total[draws].sum(axis=1)
        return np.where(sums > 0, 2 * inter[draws].sum(axis=1) / np.maximum(sums, 1), 0.25)

    low, high = np.percentile((aggregated(inter_a, total_a) + aggregated(inter_b, total_b)) / 2, [2.5, 97.5])
    assert (seg["score_ci_low"], seg["score_ci_high"]) == (
        pytest.approx(low, abs=1e-12),
        pytest.approx(high, abs=1e-12),
    )
    bad = text.replace('of = ["seg.dice_a_dataset", "seg.dice_b_dataset"]', 'of = ["seg.dice_a_dataset", "auroc"]')
    with pytest.raises(ConfigurationError, match=r"metrics\[6\].bootstrap: a bootstrapped mean needs 'auroc'"):
        parse(bad, "tiny.toml")
    with pytest.raises(ConfigurationError, match=r"metrics\[6\].of: 'dice_a_dataset' is not a value of a metric"):
        parse(text.replace('"seg.dice_a_dataset", "seg', '"dice_a_dataset", "seg'), "tiny.toml")


def test_mean_over_present_cases(tiny, evaluate_cli):
    root, references, predictions, likelihoods, grades = tiny
    toml, ground_truth, input_dir = tiny_case(root, predictions, references, likelihoods, grades)
    toml.write_text(toml.read_text().replace('metric = "dice"\n', 'metric = "dice"\nmean_over = "present"\n'))
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert run.exit_code == 0, run.stderr
    assert run.metrics["case"]["c3"]["dice_a"] == 1.0  # written as declared (both empty)...
    assert run.metrics["aggregates"]["dice_a_mean"] == pytest.approx((1 / 3 + 1 + 0) / 3)  # ...but not averaged
    assert run.metrics["aggregates"]["dice_b_mean"] == 1.0  # c1 only


def test_every_declared_value_metric_is_a_catalogue_entry():
    """The declared value metrics, their edge keys and their messages come from the catalogue."""
    from evaluation.declarative import measures
    from evaluation.declarative.schema import VALUE_METRICS
    from evaluation.metrics import catalogue

    assert set(measures.VALUE_METRICS) == set(VALUE_METRICS)
    vectorised = {"auroc", "average_precision", "brier", "ece", "mae", "rmse", "balanced_accuracy", "accuracy"}
    assert vectorised | {"c_index"} == set(measures.RESAMPLE_WEIGHTS)
    for name, entry in measures.VALUE_METRICS.items():
        metric = catalogue.get(entry)
        assert metric.inputs[:1] in (("truth",), ("truth_labels",), ("time",)), name
        renamed = measures.DECLARED_EDGES.get(name, {edge: edge for edge in metric.edge_cases})
        assert {edge for edge in renamed.values() if edge is not None} <= set(metric.edge_cases), name
        assert {edge.key for edge in measures.RECORD[name].edges} == set(renamed), name
        assert set(renamed) <= {edge.key for record in measures.RECORDS for edge in record.edges}, name
        if name in measures.RESAMPLE_WEIGHTS:
            assert "weights" in metric.parameters, name  # the bootstrap's vectorised form


STATUS_ONLY = """
name = "status-only"
title = "One boolean per patient"
[[inputs]]
slug = "scan"
name = "{case}__CT.mha"
[cases]
strip = ["__CT"]
id_column = "patient"
[[outputs]]
slug = "status"
kind = "boolean"
reference = "truth.csv:status"
blank = "skip"
missing = "misclassification"
[[metrics]]
metric = "balanced_accuracy"
output = "status"
group = "status"
[report]
settings = "options"
case_values = false
per_case = false
notes_first = true
[report.missing_names]
status = "answers"
[report.constants]
ci_level = 0.95
tolerances_mm = [1.0, 2.0]
[report.notes]
definition = "balanced accuracy"
[leaderboard]
score = "aggregates.status.balanced_accuracy"
"""


@pytest.mark.filterwarnings("ignore:y_pred contains classes not in y_true")  # the missing answer's class
def test_report_layout_keys_and_a_case_blank_everywhere(tmp_path, evaluate_cli):
    """per_case = false writes "case": {}; missing_names renames an output's missing list; notes may be
    numbers and lists and come first; a patient blank in every CSV reference is no case (p3)."""
    (tmp_path / "gt").mkdir()
    (tmp_path / "gt" / "truth.csv").write_text("patient,status\np1,1\np2,0\np3,\np4,0\n")
    toml = tmp_path / "status.toml"
    toml.write_text(STATUS_ONLY)
    challenge = get(str(toml))
    assert challenge.cases_in_process  # no segmentation output: a few JSON values per case
    (status,) = challenge.phase.outputs
    outputs = {"p1": {status: True}, "p2": {status: True}}  # p4 has no job: misclassified, listed
    write_input(tmp_path / "input", [JobSpec(challenge.job_inputs(p), o) for p, o in outputs.items()])
    run = evaluate_cli(str(toml), tmp_path / "input", ground_truth=tmp_path / "gt")
    assert run.exit_code == 0, run.stderr
    truth, predicted = [True, False, False], [True, True, "missing"]  # p1, p2, p4
    expected = balanced_accuracy_score([str(t) for t in truth], [str(p) for p in predicted])
    assert run.metrics["aggregates"] == {"status": {"balanced_accuracy": pytest.approx(expected, abs=1e-12)}}
    assert run.metrics["case"] == {} and run.metrics["missing"] == {"jobs": ["p4"], "answers": ["p4"]}
    assert list(run.metrics["settings"].items()) == [
        ("challenge", "status-only"), ("ci_level", 0.95), ("tolerances_mm", [1.0, 2.0]),
        ("definition", "balanced accuracy"),
    ]  # fmt: skip
    write_input(tmp_path / "extra", [JobSpec(challenge.job_inputs("p3"), {status: True})])
    run = evaluate_cli(str(toml), tmp_path / "extra", ground_truth=tmp_path / "gt")
    assert run.exit_code == 1 and "which is not in the reference" in run.last_error_line


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("ci_level = 0.95", "ci_level = { a = 1 }", "report.constants.ci_level: must be a number, a boolean, a text"),
        ("ci_level = 0.95", "definition = 1", "report.constants.definition: is a note's key too"),
        ('status = "answers"', 'other = "answers"', "report.missing_names.other: is not an output"),
        ('status = "answers"', 'status = "jobs"', "report.missing_names.status: must be a key"),
        ("per_case = false", 'per_case = "no"', "report.per_case"),
    ],
)
def test_bad_report_layout_keys_are_named(old, new, message):
    with pytest.raises(ConfigurationError) as caught:
        parse(STATUS_ONLY.replace(old, new, 1), "status.toml")
    assert message in str(caught.value)


def test_a_negative_predicted_time_and_the_ground_truth_name(tmp_path, evaluate_cli):
    """c_index with sign = "time": a negative predicted time is the participant's error (in the
    output's unit); [cases] ground_truth_name names the ground truth when a CSV is not UTF-8."""
    text = (REPO / "evaluation" / "declarations" / "hecktor2025-task2.toml").read_text()
    toml = tmp_path / "rfs.toml"
    toml.write_text(text.replace('name = "hecktor2025-task2"', 'name = "rfs"'))
    (tmp_path / "gt").mkdir()
    (tmp_path / "gt" / "clinical.csv").write_text("PatientID,RFS,Relapse\nP1,100,1\nP2,300,0\nP3,,\n")
    challenge = get(str(toml))
    (rfs,) = challenge.phase.outputs
    write_input(tmp_path / "input", [JobSpec(challenge.job_inputs(p), {rfs: -5.0}) for p in ("P1", "P2")])
    run = evaluate_cli(str(toml), tmp_path / "input", ground_truth=tmp_path / "gt")
    assert run.exit_code == 0, run.stderr  # a risk may be negative
    assert run.metrics["aggregates"]["prognosis"]["c_index"] == 0.5  # P1 and P2 tied
    run = evaluate_cli(str(toml), tmp_path / "input", "--set", "rfs_output=time", ground_truth=tmp_path / "gt")
    assert run.exit_code == 1
    assert run.last_error_line == "The RFS output of P1 is -5 days; a predicted time cannot be negative."
    (tmp_path / "gt" / "clinical.csv").write_bytes(b"PatientID,RFS\n\xff\xfe,1\n")
    run = evaluate_cli(str(toml), tmp_path / "input", ground_truth=tmp_path / "gt")
    assert run.last_error_line == (
        "The HECKTOR ground truth clinical.csv cannot be parsed as UTF-8 CSV (UnicodeDecodeError): fix it in the "
        "phase's ground truth."
    )


@pytest.mark.filterwarnings("ignore:y_pred contains classes not in y_true")  # the missing answer's class
def test_blank_spellings_and_a_case_insensitive_marker(tmp_path, evaluate_cli):
    """blank_values: "NaN" is a blank cell (p3 is no case); [cases] strip ignores the letter case
    (a job for p1__ct.mha is p1's); a blank spelling may not also be a boolean spelling."""
    (tmp_path / "gt").mkdir()
    (tmp_path / "gt" / "truth.csv").write_text("patient,status\np1,1\np2,0\np3,NaN\np4,0\n")
    toml = tmp_path / "status.toml"
    toml.write_text(STATUS_ONLY.replace('blank = "skip"', 'blank = "skip"\nblank_values = ["", "nan"]'))
    challenge = get(str(toml))
    (status,) = challenge.phase.outputs
    jobs = [JobSpec({challenge.phase.inputs[0]: "p1__ct.mha"}, {status: True})]
    jobs += [JobSpec(challenge.job_inputs(p), {status: False}) for p in ("p2", "p4")]
    write_input(tmp_path / "input", jobs)
    run = evaluate_cli(str(toml), tmp_path / "input", ground_truth=tmp_path / "gt")
    assert run.exit_code == 0, run.stderr
    assert run.metrics["aggregates"]["status"]["balanced_accuracy"] == 1.0
    assert run.metrics["missing"] == {"jobs": [], "answers": []}
    with pytest.raises(ConfigurationError) as caught:
        parse(STATUS_ONLY.replace('blank = "skip"', 'blank = "skip"\nblank_values = ["no"]'), "status.toml")
    assert "outputs[0].blank_values: shares a spelling with true_values or false_values" in str(caught.value)
