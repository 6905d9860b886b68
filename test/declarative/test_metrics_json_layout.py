"""Declared challenges: the keys that let a declaration reproduce a hand-written metrics.json (HECKTOR
2025 task 1): label-by-label order, lesion count forms and per-case count keys, labels absent
everywhere, metrics not computed, option values, a reference folder that lists the cases, and the
messages' grid name, resampling hint and ground-truth fix. Values by hand on test_engine's tiny
volumes; each bad key refused with its name."""

from __future__ import annotations

import numpy as np
import pytest
import SimpleITK as sitk
from declarative.helpers import A1, A1_SHIFTED, A2, tiny_case, tiny_data, tiny_text, volume

from evaluation.declarative.schema import parse
from evaluation.errors import ConfigurationError


@pytest.fixture
def tiny(tmp_path):
    return tiny_data(tmp_path)


LESIONS = """metric = "lesion_f1"
output = "seg"
labels = ["a"]
aggregates = ["dataset", "tp", "fp", "fn"]
case_key = ""
case_count_key = "lesions_{count}_{label}"
bootstrap = true
"""


def _run(root, references, predictions, likelihoods, grades, evaluate_cli, edit, *extra):
    toml, ground_truth, input_dir = tiny_case(root, predictions, references, likelihoods, grades)
    toml.write_text(edit(toml.read_text()))
    return evaluate_cli(str(toml), input_dir, *extra, ground_truth=ground_truth)


def _lesions_by_label(text: str) -> str:
    text = text.replace('metric = "lesion_f1"\noutput = "seg"\nlabels = ["a"]\naggregates = ["dataset", "mean"]\n',
                        LESIONS)  # fmt: skip
    text = text.replace('[leaderboard]\n', '[report]\norder = "label"\n'
                        'absent_labels = { path = "absent", output = "seg" }\n[leaderboard]\n')  # fmt: skip
    return text


def test_label_order_lesion_counts_and_absent_labels(tiny, evaluate_cli):
    root, references, predictions, likelihoods, grades = tiny
    references["c1"], predictions["c1"] = volume(A1), volume(A1_SHIFTED, A2)  # label b nowhere
    run = _run(root, references, predictions, likelihoods, grades, evaluate_cli, _lesions_by_label)
    assert run.exit_code == 0, run.stderr
    aggregates, case = run.metrics["aggregates"], run.metrics["case"]
    # label a first (every metric of the run), then b; then the value metrics; the absent labels last
    assert list(aggregates) == [
        "dice_a_mean", "dice_a_dataset", "iou_a_mean", "iou_a_dataset", "hd95_a_mean",
        "lesion_f1_a_dataset", "lesion_f1_a_dataset_ci_low", "lesion_f1_a_dataset_ci_high",
        "lesion_f1_a_tp", "lesion_f1_a_fp", "lesion_f1_a_fn",
        "dice_b_mean", "dice_b_dataset", "auroc", "balanced_accuracy", "absent",
    ]  # fmt: skip
    # lesions of a: c1 IoU 1/3 > 0.3 -> TP, A2 FP; c2 TP; c3 none; c4 missing -> FN
    assert [aggregates[f"lesion_f1_a_{k}"] for k in ("tp", "fp", "fn")] == [2, 1, 1]
    assert aggregates["lesion_f1_a_dataset"] == pytest.approx(2 * 2 / (2 * 2 + 1 + 1))
    assert aggregates["absent"] == ["b"]
    assert list(case["c1"]) == ["dice_a", "iou_a", "hd95_a", "lesions_tp_a", "lesions_fp_a", "lesions_fn_a",
                                "dice_b", "p", "grade"]  # fmt: skip
    assert [case["c1"][f"lesions_{k}_a"] for k in ("tp", "fp", "fn")] == [1, 1, 0]
    assert [case["c4"][f"lesions_{k}_a"] for k in ("tp", "fp", "fn")] == [0, 0, 1]


def test_a_metric_not_computed_is_null_but_where_both_maps_are_empty(tiny, evaluate_cli):
    root, references, predictions, likelihoods, grades = tiny

    def edit(text: str) -> str:
        return text.replace('metric = "hd95"\n', 'metric = "hd95"\ncompute = false\nmean_over = "present"\n')

    run = _run(root, references, predictions, likelihoods, grades, evaluate_cli, edit)
    assert run.exit_code == 0, run.stderr
    case = run.metrics["case"]
    assert [case[c]["hd95_a"] for c in ("c1", "c2", "c4")] == [None, None, None]
    assert case["c3"]["hd95_a"] == 0.0  # no label in either map: both_empty, nothing to compute
    assert run.metrics["aggregates"]["hd95_a_mean"] is None


OPTION = """
[[options]]
name = "dice_both_empty"
default = "one"
choices = ["one", "exclude"]
values = { one = 1.0, exclude = "exclude" }
sets = ["metrics.dice.both_empty"]
[[options]]
name = "resample"
default = "none"
choices = ["none", "nearest"]
values = { none = "error", nearest = "nearest" }
sets = ["outputs.seg.geometry"]
"""


def test_option_values_grid_name_and_resampling_hint(tiny, evaluate_cli):
    root, references, predictions, likelihoods, grades = tiny

    def edit(text: str) -> str:
        return text.replace("labels = { a = 1, b = 2 }", 'labels = { a = 1, b = 2 }\ngrid = "CT grid"') + OPTION

    run = _run(root, references, predictions, likelihoods, grades, evaluate_cli, edit, "--set",
               "dice_both_empty=exclude")  # fmt: skip
    assert run.exit_code == 0, run.stderr
    assert run.metrics["case"]["c3"]["dice_a"] is None  # both empty: excluded
    assert run.metrics["aggregates"]["dice_a_mean"] == pytest.approx((1 / 3 + 1 + 0) / 3)
    assert run.metrics["settings"]["dice_both_empty"] == "exclude"
    assert run.metrics["settings"]["metrics"]["dice"]["both_empty"] == "exclude"
    predictions["c2"] = np.zeros((6, 8, 9), np.uint8)
    run = _run(root / "size", references, predictions, likelihoods, grades, evaluate_cli, edit)
    assert run.last_error_line == (
        "The 'seg' segmentation of c2 has size (9, 8, 6) but the CT grid is (8, 8, 6) "
        "(or evaluate with --set resample=nearest)."
    )
    run = _run(root / "nearest", references, predictions, likelihoods, grades, evaluate_cli, edit, "--set",
               "resample=nearest")  # fmt: skip
    assert run.exit_code == 0, run.stderr


def test_an_unreadable_reference_names_the_file_to_replace(tiny, evaluate_cli):
    root, references, predictions, likelihoods, grades = tiny
    toml, ground_truth, input_dir = tiny_case(root, predictions, references, likelihoods, grades)
    (ground_truth / "labels" / "c2.mha").write_bytes(b"not an image")
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert run.last_error_line == (
        "The reference 'seg' segmentation of c2 could not be read as an image file; replace labels/c2.mha in the "
        "phase's ground truth."
    )


def _listing(text: str) -> str:
    return text.replace('reference = "labels/{case}.mha"',
                        'reference = "labels/{case}.*"\nreference_suffixes = [".nii.gz", ".mha"]').replace(
        '[[inputs]]\nslug = "ct-image"\n', '[[inputs]]\nslug = "ct-image"\n[cases]\nstrip = ["__CT"]\n')  # fmt: skip


def test_a_folder_lists_the_cases_by_suffix_and_marker(tiny, evaluate_cli):
    root, references, predictions, likelihoods, grades = tiny
    toml, ground_truth, input_dir = tiny_case(root, predictions, references, likelihoods, grades)
    toml.write_text(_listing(toml.read_text()))
    labels = ground_truth / "labels"
    sitk.WriteImage(sitk.ReadImage(str(labels / "c2.mha")), str(labels / "c2.nii.gz"))
    (labels / "c2.mha").unlink()
    (labels / "c3.mha").rename(labels / "c3__ct.mha")  # the marker: letter case ignored
    (labels / "notes.txt").write_text("not a label image")
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert run.exit_code == 0, run.stderr
    assert sorted(run.metrics["case"]) == ["c1", "c2", "c3", "c4"]
    assert run.metrics["case"]["c2"]["dice_a"] == 1.0 and run.metrics["case"]["c3"]["dice_a"] == 1.0
    sitk.WriteImage(sitk.GetImageFromArray(volume(A1)), str(labels / "c1.nii.gz"))
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert run.last_error_line == "The ground truth has two label files for c1."
    for path in labels.iterdir():
        path.unlink()
    assert evaluate_cli(str(toml), input_dir, ground_truth=ground_truth).last_error_line == (
        "The ground truth labels/ folder holds no label image."
    )
    labels.rmdir()
    toml.write_text(toml.read_text().replace("[cases]\n", '[cases]\nground_truth_name = "TINY"\n'))
    assert evaluate_cli(str(toml), input_dir, ground_truth=ground_truth).last_error_line == (
        "The TINY ground truth has no labels/ folder."
    )


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ('reference = "labels/{case}.mha"', 'reference = "labels/{case}/seg.*"',
         "outputs[0].reference: 'labels/{case}/seg.*': a '.*' pattern with {case} must end in '{case}.*'"),
        ('aggregates = ["dataset", "tp", "fp", "fn"]', 'aggregates = ["dataset", "tq"]',
         "metrics[3].aggregates: 'tq' is not one of mean, dataset, tp, fp, fn (for lesion_f1)"),
        ('case_count_key = "lesions_{count}_{label}"', 'case_count_key = "lesions_{label}"',
         "metrics[3].case_count_key: 'lesions_{label}' must give one key per label and count"),
        ('case_count_key = "lesions_{count}_{label}"', 'case_count_key = "lesions_{counts}"',
         "metrics[3].case_count_key: 'lesions_{counts}' may use only {name}, {label} and {count}"),
        ('output = "seg" }', 'output = "p" }', "report.absent_labels.output: 'p' is not a segmentation output"),
        ('path = "absent"', 'path = "auroc"', "report.absent_labels.path: 'auroc' must be a new aggregate key"),
        ('order = "label"', 'order = "labels"', "report.order: 'labels' is not one of metric, label"),
        ('metric = "hd95"\n', 'metric = "hd95"\ncompute = "no"\n', "metrics[2].compute: must be true or false"),
        ('metric = "dice"\n', 'metric = "dice"\ncompute = false\n', "metrics[0].compute: unknown key"),
    ],
)  # fmt: skip
def test_bad_layout_keys_are_named(old, new, message):
    text = _lesions_by_label(tiny_text())
    assert old in text
    with pytest.raises(ConfigurationError) as caught:
        parse(text.replace(old, new, 1), "tiny.toml")
    assert message in str(caught.value)


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ('values = { one = 1.0, exclude = "exclude" }', 'values = { one = 1.0 }',
         "options[0].values: needs choices, and one entry per choice"),
        ('values = { one = 1.0, exclude = "exclude" }', 'values = { one = 1.0, exclude = "none" }',
         "options[0].choices: 'exclude' does not give a valid declaration"),
    ],
)  # fmt: skip
def test_bad_option_values_are_named(old, new, message):
    with pytest.raises(ConfigurationError) as caught:
        parse(tiny_text() + OPTION.replace(old, new, 1), "tiny.toml")
    assert message in str(caught.value)


def test_the_hecktor_task1_declaration_in_force():
    """The packaged declaration's options reach the values they set (the byte-identical metrics.json
    is test_expected's; the options' numbers are test_hecktor's)."""
    from evaluation.registry import get

    challenge = get("hecktor2025-task1")
    assert [o.name for o in challenge.options] == [
        "aggregate_volume", "dice_both_empty", "resample", "surface_metrics", "seed", "bootstrap_resamples",
    ]  # fmt: skip
    declaration = challenge.in_force({"dice_both_empty": "exclude", "resample": "nearest", "surface_metrics": False})
    assert dict(declaration.metrics[0].params)["both_empty"] == "exclude"
    assert declaration.outputs[0].geometry == "nearest"
    assert [dict(m.params).get("compute") for m in declaration.metrics[1:4]] == [False, False, False]
    assert [s.slug for s in challenge.phase.outputs] == ["tumor-lymph-node-segmentation"]
