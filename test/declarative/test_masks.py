"""Declared 2D masks where any non-zero pixel is the label, reference patterns by stem, and the
``[report]`` layout: on the packaged DigestPath 2019 task 2 declaration (and variants of it), with
every expected value computed here by hand, with numpy or with scikit-learn."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
import SimpleITK as sitk
from conftest import REPO
from PIL import Image
from sklearn.metrics import roc_auc_score

from evaluation.declarative.schema import parse
from evaluation.errors import ConfigurationError
from evaluation.platform.images import read_nonzero_mask
from evaluation.platform.layout import JobSpec, write_input
from evaluation.registry import get

NAME = "digestpath2019-task2"
DECLARATION = REPO / "evaluation" / "declarations" / f"{NAME}.toml"
PHASE = get(NAME).phase
(IMAGE,), (MASK, LIKELIHOOD) = PHASE.inputs, PHASE.outputs


def mask(shape: tuple[int, ...], *pixels: tuple[int, int], value: int | tuple[int, ...] = 255) -> np.ndarray:
    array = np.zeros(shape, np.uint8)
    for y, x in pixels:
        array[y, x] = value
    return array


def build(
    root: Path,
    references: dict[str, np.ndarray],
    predictions: dict[str, np.ndarray],
    likelihoods: dict[str, float],
    labels: dict[str, int],
    input_names: dict[str, str] | None = None,
    suffix: str = ".png",
) -> tuple[Path, Path]:
    """Reference masks ``masks/<stem><suffix>`` (PNG through Pillow, else SimpleITK), labels.csv and
    one job per image (its input named ``input_names[image]`` or the image name)."""
    ground_truth = root / "gt"
    (ground_truth / "masks").mkdir(parents=True)
    for name, array in references.items():
        path = ground_truth / "masks" / f"{Path(name).stem}{suffix}"
        if suffix == ".png":
            Image.fromarray(array).save(path)
        else:
            sitk.WriteImage(sitk.GetImageFromArray(array), str(path))
    jobs = []
    for name, array in predictions.items():
        path = root / f"{Path(name).stem}-prediction.mha"
        sitk.WriteImage(sitk.GetImageFromArray(array), str(path))
        jobs.append(JobSpec({IMAGE: (input_names or {}).get(name, name)}, {MASK: path, LIKELIHOOD: likelihoods[name]}))
    with (ground_truth / "labels.csv").open("w", newline="") as file:
        csv.writer(file).writerows([("image", "label"), *labels.items()])
    write_input(root / "input", jobs)
    return ground_truth, root / "input"


# a: reference 3 pixels (an RGB PNG: red, green, blue), prediction 2 of them + 1 other -> 2*2/6
# b: both empty -> 1.0; c: reference 1 pixel, prediction empty -> 0.0; d: reference empty, prediction 2 -> 0.0
REFERENCES = {
    "a.png": mask((3, 4, 3), (0, 0), (0, 1), (1, 1), value=0)
    + mask((3, 4, 3), (0, 0), value=(9, 0, 0))
    + mask((3, 4, 3), (0, 1), value=(0, 9, 0))
    + mask((3, 4, 3), (1, 1), value=(0, 0, 9)),
    "b.png": mask((3, 4)),
    "c.png": mask((3, 4), (2, 3)),
    "d.png": mask((3, 4)),
}
PREDICTIONS = {
    "a.png": mask((3, 4), (0, 0), (0, 1), (2, 2), value=1),
    "b.png": mask((3, 4)),
    "c.png": mask((3, 4)),
    "d.png": mask((3, 4), (0, 0), (1, 0), value=7),
}
LIKELIHOODS = {"a.png": 0.8, "b.png": 0.3, "c.png": 0.2, "d.png": 0.6}
LABELS = {"a.png": 1, "b.png": 0, "c.png": 1, "d.png": 0}
DICE = {"a.png": 4 / 6, "b.png": 1.0, "c.png": 0.0, "d.png": 0.0}


def test_hand_computed_dice_counts_and_layout(tmp_path, evaluate_cli):
    ground_truth, input_dir = build(tmp_path, REFERENCES, PREDICTIONS, LIKELIHOODS, LABELS)
    run = evaluate_cli(NAME, input_dir, ground_truth=ground_truth)
    assert run.exit_code == 0, run.stderr
    auc = roc_auc_score(list(LABELS.values()), list(LIKELIHOODS.values()))
    assert run.metrics["aggregates"] == {
        "dice": pytest.approx(np.mean(list(DICE.values())), abs=1e-12),
        "auc": auc,
        "images": 4,
        "dice_images": 4,
    }
    assert list(run.metrics) == ["aggregates", "case", "settings"]  # report.missing = false
    assert run.metrics["case"] == {
        name: {"dice": pytest.approx(DICE[name], abs=1e-12), "lesion_in_reference": name in ("a.png", "c.png")}
        for name in DICE
    }  # report.case_values = false: no likelihood echo
    assert list(run.metrics["settings"]) == ["challenge", "dice_average", "dice", "auc"]  # layout "options"
    positives = evaluate_cli(NAME, input_dir, "--set", "dice_average=positives", ground_truth=ground_truth)
    assert positives.metrics["aggregates"]["dice"] == pytest.approx((4 / 6 + 0.0) / 2, abs=1e-12)
    assert positives.metrics["aggregates"]["dice_images"] == 2
    assert positives.metrics["settings"]["dice_average"] == "positives"


def test_demo_against_numpy_and_scikit_learn():
    """The bundled demo's expected metrics.json: Dice per image recomputed from the files, AUC by sklearn."""
    ground_truth, demo = REPO / "ground-truth" / NAME, REPO / "test" / "input" / NAME
    expected = json.loads((REPO / "test" / "expected" / NAME / "metrics.json").read_text())
    predicted = {}
    for job in json.loads((demo / "predictions.json").read_text()):
        name = next(i["image"]["name"] for i in job["inputs"])
        folder = demo / job["pk"] / "output" / MASK.relative_path
        predicted[name] = sitk.GetArrayFromImage(sitk.ReadImage(str(next(folder.iterdir())))) != 0
    with (ground_truth / "labels.csv").open() as file:
        labels = {row["image"]: int(row["label"]) for row in csv.DictReader(file)}
    for name in labels:
        reference = np.asarray(Image.open(ground_truth / "masks" / name)) != 0
        total = reference.sum() + predicted[name].sum()
        dice = 2 * (reference & predicted[name]).sum() / total if total else 1.0
        assert expected["case"][name]["dice"] == pytest.approx(dice, abs=1e-12)
    likelihoods = {}
    for job in json.loads((demo / "predictions.json").read_text()):
        name = next(i["image"]["name"] for i in job["inputs"])
        likelihoods[name] = next(o["value"] for o in job["outputs"] if o["interface"]["slug"] == LIKELIHOOD.slug)
    auc = roc_auc_score([labels[n] for n in labels], [likelihoods[n] for n in labels])
    assert expected["aggregates"]["auc"] == auc  # the catalogue's AUROC is sklearn's, to the last bit
    assert expected["aggregates"]["dice"] == pytest.approx(np.mean([c["dice"] for c in expected["case"].values()]))


def test_reference_by_stem_with_other_suffixes_and_inputs_by_stem(tmp_path, evaluate_cli):
    """masks/{stem}.* finds a.tif for the case a.png; cases.same_stem maps an input a.tif to a.png."""
    gray = {name: (a.any(axis=-1) * 200).astype(np.uint8) if a.ndim == 3 else a for name, a in REFERENCES.items()}
    inputs = {"a.png": "a.tif", "b.png": "b.jpg"}
    ground_truth, input_dir = build(tmp_path, gray, PREDICTIONS, LIKELIHOODS, LABELS, inputs, suffix=".tif")
    run = evaluate_cli(NAME, input_dir, ground_truth=ground_truth)
    assert run.exit_code == 0, run.stderr
    assert {name: case["dice"] for name, case in run.metrics["case"].items()} == pytest.approx(DICE, abs=1e-12)
    (ground_truth / "masks" / "c.png").write_bytes((ground_truth / "masks" / "c.tif").read_bytes())
    run = evaluate_cli(NAME, input_dir, ground_truth=ground_truth)
    assert run.last_error_line == "The ground truth needs exactly one mask for c.png (found 2): masks/{stem}.*."
    (ground_truth / "masks" / "c.png").unlink()
    (ground_truth / "masks" / "c.tif").rename(ground_truth / "masks" / "c.jpg")  # not a declared suffix
    run = evaluate_cli(NAME, input_dir, ground_truth=ground_truth)
    assert run.last_error_line == "The ground truth needs exactly one mask for c.png (found 0): masks/{stem}.*."


def test_messages_name_the_image(tmp_path, evaluate_cli):
    root = tmp_path / "missing"
    ground_truth, input_dir = build(root, REFERENCES, {k: v for k, v in PREDICTIONS.items() if k != "c.png"},
                                    LIKELIHOODS, LABELS)  # fmt: skip
    run = evaluate_cli(NAME, input_dir, ground_truth=ground_truth)
    assert (run.exit_code, run.wrote_metrics) == (1, False)
    assert run.last_error_line == (
        "No algorithm job for image c.png; every image needs the output 'colonoscopy-tissue-segmentation'."
    )
    root = tmp_path / "three-d"
    ground_truth, input_dir = build(root, REFERENCES, {**PREDICTIONS, "b.png": np.zeros((2, 3, 4), np.uint8)},
                                    LIKELIHOODS, LABELS)  # fmt: skip
    run = evaluate_cli(NAME, input_dir, ground_truth=ground_truth)
    assert run.last_error_line.endswith("The predicted mask of image b.png is not a 2D image.")
    root = tmp_path / "single-class"
    ground_truth, input_dir = build(root, REFERENCES, PREDICTIONS, LIKELIHOODS, dict.fromkeys(LABELS, 1))
    run = evaluate_cli(NAME, input_dir, ground_truth=ground_truth)
    assert "holds a single class" in run.last_error_line and not run.wrote_metrics


def test_positives_without_a_positive_image_is_a_clear_error(tmp_path, evaluate_cli):
    empty = dict.fromkeys(REFERENCES, mask((3, 4)))
    ground_truth, input_dir = build(tmp_path, empty, PREDICTIONS, LIKELIHOODS, LABELS)
    run = evaluate_cli(NAME, input_dir, "--set", "dice_average=positives", ground_truth=ground_truth)
    assert (run.exit_code, run.wrote_metrics) == (1, False)
    assert run.last_error_line.endswith(
        "No reference case has the label 'lesion': aggregates.dice (mean over positives) is undefined."
    )


def test_read_nonzero_mask_reduces_colour_and_refuses_3d(tmp_path):
    path = tmp_path / "rgb.png"
    Image.fromarray(REFERENCES["a.png"]).save(path)
    assert read_nonzero_mask(path, "a.png", "predicted", "image a.png").tolist() == [
        [True, True, False, False], [False, True, False, False], [False, False, False, False]
    ]  # fmt: skip
    sitk.WriteImage(sitk.GetImageFromArray(np.ones((2, 3, 4), np.uint8)), str(tmp_path / "v.mha"))
    with pytest.raises(ConfigurationError, match=r"^The reference mask of x is not a 2D image\.$"):
        read_nonzero_mask(tmp_path / "v.mha", "x", "reference", "x")


def _mutated(old: str, new: str) -> str:
    text = DECLARATION.read_text()
    assert old in text, old
    return text.replace(old, new, 1)


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ('{ lesion = "nonzero" }', '{ lesion = "nonzero", gland = 2 }',
         "outputs[0].labels.lesion: a 'nonzero' label must be the output's only label"),
        ('{ lesion = "nonzero" }', '{ lesion = "any" }',
         "outputs[0].labels.lesion: must be a positive integer voxel value or 'nonzero', not 'any'"),
        ("dimension = 2 ", "dimension = 3 ", "outputs[0].dimension: a 'nonzero' mask is a 2D image"),
        ('missing = "error"', 'geometry = "nearest"\nmissing = "error"',
         "outputs[0].geometry: a 'nonzero' mask has no physical grid to resample on"),
        ('".png", ".mha"', '"png", ".mha"', "outputs[0].reference_suffixes: must be a list of file suffixes"),
        ('"masks/{stem}.*"', '"masks/*{stem}.*"', "outputs[0].reference: 'masks/*{stem}.*' may hold '*' only"),
        ('"masks/{stem}.*"', '"masks/{stem}/{case}.png"', "outputs[0].reference: 'masks/{stem}/{case}.png' is not a "
         "path pattern with exactly one {case} or {stem}"),
        ('metric = "dice"', 'metric = "lesion_f1"',
         "metrics[0].metric: lesion_f1 needs a label image; output 'colonoscopy-tissue-segmentation' is a 'nonzero' "
         "mask"),
        ('case_key = "{name}"', 'case_key = "{nom}"', "metrics[0].case_key: '{nom}' may use only {name} and {label}"),
        ('mean_over = "all"', 'mean_over = "most"',
         "metrics[0].mean_over: 'most' is not one of all, present, positives"),
        ('noun = "malignancy likelihood"\nmissing = "error"', 'noun = "malignancy likelihood"\nmissing = "exclude"',
         "report.missing: false needs missing = 'error' on every output ('colonoscopy-tissue-malignancy-likelihood' "
         "has 'exclude')"),
        ('settings = "options"', 'settings = "short"', "report.settings: 'short' is not one of full, options"),
        ('dice_images = "dice"', 'dice_images = "auc"',
         "report.counts.dice_images: 'auc' is not 'cases' or the path of a mean aggregate (cases, dice)"),
        ('images = "cases"', 'auc = "cases"', "report.counts.auc: must be a new aggregate key"),
        ('dice_images = "dice"', 'dice_images = ["dice"]', "report.counts.dice_images: must be a string, not a list"),
        ('[report.notes]\n', '[report.notes]\ndice_average = "x"\n',
         "report.notes.dice_average: would hide the settings entry of the same name"),
        ('[report.notes]\n', '[report.notes]\nn = 1\n', "report.notes.n: must be a string, not an integer"),
        ("label_presence = true", "label_presence = 1", "report.label_presence: must be true or false"),
        ('word = "image"', 'words = "image"', "cases.words: unknown key"),
    ],
)  # fmt: skip
def test_bad_declarations_name_the_key(old, new, message):
    with pytest.raises(ConfigurationError) as caught:
        parse(_mutated(old, new), "dp.toml")
    assert f"dp.toml: {message}" in str(caught.value)


def test_a_declaration_needs_an_output_that_lists_the_cases():
    """A {stem} pattern is looked up case by case: some other output must list the cases."""
    text = """
name = "masks-only"
title = "t"
[[inputs]]
slug = "image"
[[outputs]]
slug = "mask"
kind = "segmentation"
reference = "masks/{stem}.png"
labels = { lesion = "nonzero" }
dimension = 2
[[metrics]]
metric = "dice"
output = "mask"
[leaderboard]
score = "aggregates.dice_lesion_mean"
"""
    with pytest.raises(ConfigurationError, match=r"dp\.toml: outputs: no output's reference lists the cases"):
        parse(text, "dp.toml")


def test_the_full_settings_layout_keeps_the_notes_and_bootstrap_options_appear_with_a_bootstrap(tmp_path, evaluate_cli):
    text = _mutated('settings = "options"', 'settings = "full"').replace(
        'single_class = "error"', 'single_class = "error"\nbootstrap = true'
    )
    toml = tmp_path / "dp.toml"
    toml.write_text(text)
    assert [o.name for o in get(NAME).options] == ["dice_average"]  # no bootstrap, no seed option
    assert [o.name for o in get(str(toml)).options] == ["dice_average", "seed", "bootstrap_resamples"]
    ground_truth, input_dir = build(tmp_path, REFERENCES, PREDICTIONS, LIKELIHOODS, LABELS)
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert run.exit_code == 0, run.stderr
    settings = run.metrics["settings"]
    assert list(settings)[:3] == ["challenge", "declaration", "dice_average"] and list(settings)[-2:] == ["dice", "auc"]
    assert settings["metrics"]["dice"]["mean_over"] == "all" and settings["seed"] == 0
    assert list(run.metrics["aggregates"]) == ["dice", "auc", "auc_ci_low", "auc_ci_high", "images", "dice_images"]
