"""RARE25 end to end through the command line: golden numbers from the official code, bad input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import DEMO_INPUT, GROUND_TRUTH
from oracles.rare25_official import official_bootstrap, platform_arrays, summary, website_bootstrap
from rare25_cases import write_case
from sklearn.metrics import average_precision_score, precision_recall_curve, roc_auc_score

from evaluation.metrics.precision_recall import grouped_curve_metrics
from evaluation.metrics.prevalence_bootstrap import _median, official_bootstrap_counts, website_bootstrap_counts
from evaluation.platform.layout import JobSpec
from evaluation.registry import get

(INPUT,), (OUTPUT,) = get("rare25").phase.inputs, get("rare25").phase.outputs


def official_bootstrap_weights(labels: np.ndarray, patients: list[str], **draws: Any) -> np.ndarray:
    """Frame weights (iterations x frames) of the official protocol: the frame-level view of the
    evaluation's patient draw counts (the evaluation never builds it)."""
    patient_index, counts = official_bootstrap_counts(labels, patients, **draws)
    return counts[:, patient_index]


def website_bootstrap_weights(labels: np.ndarray, **draws: Any) -> np.ndarray:
    """Frame weights (iterations x frames) of the website protocol: NDBE frames once, neoplastic frames drawn."""
    group, counts = website_bootstrap_counts(labels, **draws)
    return counts[:, group]


# Issue 2's bootstrap example; numbers computed with the official evaluate.py right after
# np.random.seed(0) (10 neoplastic : 1000 NDBE patients per iteration, 1000 iterations).
GOLDEN_PATIENTS = {
    "n1": [0.9, 0.8], "n2": [0.7, 0.4], "n3": [0.95, 0.6], "n4": [0.3, 0.85],
    "d1": [0.1, 0.2, 0.5], "d2": [0.05, 0.65, 0.15], "d3": [0.35, 0.25, 0.12],
    "d4": [0.45, 0.02, 0.08], "d5": [0.75, 0.11, 0.09], "d6": [0.03, 0.04, 0.55],
}  # fmt: skip
GOLDEN = {
    "Score": 0.01768172888015717,
    "AUROC Full Dataset": 0.9027777777777778,
    "AUPRC Full Dataset": 0.8422619047619048,
    "PPV@90RECALL Full Dataset": 0.545054945054945,
}
OFFICIAL_KEYS = [
    "Score", "PPV@90RECALL", "PPV@90RECALL 95% CI Lower Bound", "PPV@90RECALL 95% CI Upper Bound",
    "AUROC", "AUROC 95% CI Lower Bound", "AUROC 95% CI Upper Bound", "AUPRC", "AUPRC 95% CI Lower Bound",
    "AUPRC 95% CI Upper Bound", "AUROC Full Dataset", "AUPRC Full Dataset", "PPV@90RECALL Full Dataset",
]  # fmt: skip


def make_case(root: Path, stacks: dict[str, list[tuple[str, str, float]]], jobs: list[JobSpec] | None = None):
    """Ground truth and a submission for ``{stack: [(patient, class, likelihood), ...]}``."""
    ground_truth, input_dir = root / "gt", root / "input"
    write_case(ground_truth, input_dir, stacks, jobs)
    return ground_truth, input_dir


def golden_stacks() -> dict[str, list[tuple[str, str, float]]]:
    frames = [(p, "neo" if p.startswith("n") else "ndbe", s) for p, scores in GOLDEN_PATIENTS.items() for s in scores]
    return {"stack_a.tiff": frames[:9], "stack_b.tiff": frames[9:]}


def test_official_bootstrap_golden(tmp_path, evaluate_cli):
    ground_truth, input_dir = make_case(tmp_path, golden_stacks())
    run = evaluate_cli("rare25", input_dir, ground_truth=ground_truth)
    assert run.exit_code == 0, run.stderr
    for key, expected in GOLDEN.items():
        assert run.metrics[key] == pytest.approx(expected, abs=1e-12)
    assert run.metrics["settings"]["seed"] == 0 and run.metrics["settings"]["rng"] == "legacy"
    assert list(run.metrics)[: len(OFFICIAL_KEYS)] == OFFICIAL_KEYS


def test_demo_equals_official_loop_on_every_key(evaluate_cli):
    """The bundled demo (1,086 frames, 40 patients) against the official algorithm run as a loop."""
    run = evaluate_cli("rare25", DEMO_INPUT / "rare25")
    assert run.exit_code == 0, run.stderr
    arrays = platform_arrays(GROUND_TRUTH / "rare25" / "val_metadata.json", DEMO_INPUT / "rare25")
    reference = summary(*official_bootstrap(*arrays))
    for key in OFFICIAL_KEYS:
        assert run.metrics[key] == pytest.approx(reference[key], abs=1e-12), key


def test_same_input_same_bytes(evaluate_cli):
    first = evaluate_cli("rare25", DEMO_INPUT / "rare25")
    second = evaluate_cli("rare25", DEMO_INPUT / "rare25", "--workers", "1")
    assert (first.output / "metrics.json").read_bytes() == (second.output / "metrics.json").read_bytes()


def test_options_change_the_protocol_and_are_recorded(tmp_path, evaluate_cli):
    ground_truth, input_dir = make_case(tmp_path, golden_stacks())
    base = evaluate_cli("rare25", input_dir, ground_truth=ground_truth).metrics
    other_seed = evaluate_cli("rare25", input_dir, "--set", "seed=7", ground_truth=ground_truth).metrics
    generator = evaluate_cli("rare25", input_dir, "--set", "rng=generator", ground_truth=ground_truth).metrics
    website = evaluate_cli("rare25", input_dir, "--set", "protocol=website", ground_truth=ground_truth).metrics
    bootstrap_keys = [key for key in OFFICIAL_KEYS if "Full" not in key]
    assert other_seed["settings"]["seed"] == 7
    assert [other_seed[k] for k in bootstrap_keys] != [base[k] for k in bootstrap_keys]
    assert generator["settings"]["rng"] == "generator"
    assert website["settings"]["protocol"] == "website"
    for metrics in (other_seed, generator, website):
        assert metrics["AUROC Full Dataset"] == base["AUROC Full Dataset"]


@pytest.mark.parametrize(
    ("protocol", "rng"), [("official", "generator"), ("website", "legacy"), ("website", "generator")]
)
def test_other_protocols_and_draws_equal_their_loops(tmp_path, evaluate_cli, protocol, rng):
    """``protocol=website`` and ``rng=generator``: every key equals the loop written with scikit-learn."""
    ground_truth, input_dir = make_case(tmp_path, golden_stacks())
    options = [f"protocol={protocol}", f"rng={rng}", "iterations=300", "imbalance_ratio=3", "seed=11"]
    run = evaluate_cli("rare25", input_dir, *(a for o in options for a in ("--set", o)), ground_truth=ground_truth)
    assert run.exit_code == 0, run.stderr
    labels, scores, patients = platform_arrays(ground_truth / "val_metadata.json", input_dir)
    if protocol == "official":
        loop = official_bootstrap(labels, scores, patients, iterations=300, ratio=3, seed=11, rng=rng)
    else:
        loop = website_bootstrap(labels, scores, iterations=300, ratio=3, seed=11, rng=rng)
    reference = summary(*loop)
    for key in OFFICIAL_KEYS:
        assert run.metrics[key] == pytest.approx(reference[key], abs=1e-12), key
    assert (run.metrics["settings"]["protocol"], run.metrics["settings"]["rng"]) == (protocol, rng)


def test_the_bootstraps_median_is_numpys_to_the_bit():
    """The summaries' median is ``np.median``'s number (the middle value, or the mean of the middle two) for odd and
    even counts, ties, wide magnitudes and NaN (there: np.median itself)."""
    rng = np.random.default_rng(3)
    for size in [*range(1, 40), 999, 1000]:
        for values in (rng.random(size), rng.integers(0, 4, size) / 7, rng.normal(size=size) * 1e300,
                       np.round(rng.random(size), 2), np.r_[rng.random(size - 1), np.nan]):  # fmt: skip
            assert _median(values) == float(np.median(values)) or (np.isnan(_median(values)) and np.isnan(values).any())


def test_official_weights_are_patient_draws():
    labels = np.array([1, 1, 0, 0, 0, 1, 0])
    patients = ["a", "a", "b", "c", "c", "d", "d"]
    settings = {"iterations": 50, "sample_size": 3, "imbalance_ratio": 2, "rng": "legacy", "seed": 1}
    weights = official_bootstrap_weights(labels, patients, **settings)
    # frames of one patient always share a weight; 3 neoplastic and 6 NDBE patients per iteration
    assert (weights[:, 0] == weights[:, 1]).all() and (weights[:, 3] == weights[:, 4]).all()
    assert (weights[:, [0, 5]].sum(axis=1) == 3).all()
    assert (weights[:, [2, 3]].sum(axis=1) == 6).all()
    # the legacy stream is np.random.choice's, in the official loop's order
    np.random.seed(1)
    first_neo = np.random.choice(["a", "d"], size=3, replace=True)
    assert weights[0, 0] == list(first_neo).count("a")


def test_website_weights_keep_ndbe_once_and_draw_neoplastic_frames():
    labels = np.array([0] * 250 + [1] * 4)
    settings = {"iterations": 20, "imbalance_ratio": 100, "rng": "generator", "seed": 0}
    weights = website_bootstrap_weights(labels, **settings)
    assert (weights[:, :250] == 1).all()
    assert (weights[:, 250:].sum(axis=1) == round(250 / 100)).all()


# --- bad input: exit 1, no metrics.json, last stderr line names the stack ---------------------------


def _stack_frames(n: int = 4):
    return {"s1.tiff": [("p1", "neo", 0.9), ("p2", "ndbe", 0.1)] * (n // 2), "s2.tiff": [("p3", "ndbe", 0.2)] * n}


def _corrupt(input_dir: Path, stack_index: int, text: str) -> None:
    document = json.loads((input_dir / "predictions.json").read_text())
    pk = document[stack_index]["pk"]
    (input_dir / pk / "output" / OUTPUT.relative_path).write_text(text)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("[0.5, NaN, 0.1, 0.2]", "Likelihood 1 of stack s1.tiff is not a finite number"),
        ("[0.5, 0.1, 0.2, -Infinity]", "Likelihood 3 of stack s1.tiff is not a finite number"),
        ("[0.5, 1e999, 0.1, 0.2]", "Likelihood 1 of stack s1.tiff is not a finite number"),
        ('[0.5, "0.3", 0.1, 0.2]', "Likelihood 1 of stack s1.tiff is not a number"),
        ("[0.5, true, 0.1, 0.2]", "Likelihood 1 of stack s1.tiff is not a number"),
        ("[0.5, 0.3, 0.1, 0.2, 0.7]", "Stack s1.tiff has 4 frames but 5 likelihoods"),
        ("[0.5, 0.3, 0.1]", "Stack s1.tiff has 4 frames but 3 likelihoods"),
        ('{"a": 1}', "not a JSON list"),
        ("[0.5, 0.3,", "not valid JSON"),
    ],
)
def test_bad_likelihoods(tmp_path, evaluate_cli, content, message):
    ground_truth, input_dir = make_case(tmp_path, _stack_frames())
    _corrupt(input_dir, 0, content)
    run = evaluate_cli("rare25", input_dir, ground_truth=ground_truth)
    assert run.exit_code == 1 and not run.wrote_metrics
    assert message in run.last_error_line and "s1.tiff" in run.last_error_line


def _jobs(*pairs):
    return [JobSpec({INPUT: stack}, {OUTPUT: scores} if scores is not None else {}) for stack, scores in pairs]


@pytest.mark.parametrize(
    ("jobs", "message"),
    [
        (_jobs(("s1.tiff", [0.1] * 4)), "No algorithm job for stack s2.tiff"),
        (_jobs(("s1.tiff", [0.1] * 4), ("s2.tiff", [0.1] * 4), ("s9.tiff", [0.1])), "input 's9'"),
        (_jobs(("s1.tiff", [0.1] * 4), ("s2.tiff", [0.1] * 4), ("s2.tiff", [0.1] * 4)), "Two jobs"),
        (_jobs(("s1.tiff", [0.1] * 4), ("s2.tiff", None)), "Stack s2.tiff (job "),
        ([], "No algorithm job for stack s1.tiff;"),
    ],
)
def test_bad_jobs(tmp_path, evaluate_cli, jobs, message):
    ground_truth, input_dir = make_case(tmp_path, _stack_frames(), jobs=jobs)
    run = evaluate_cli("rare25", input_dir, ground_truth=ground_truth)
    assert run.exit_code == 1 and not run.wrote_metrics
    assert message in run.last_error_line


def test_unknown_stack_is_named(tmp_path, evaluate_cli):
    jobs = _jobs(("s1.tiff", [0.1] * 4), ("s2.tiff", [0.1] * 4), ("s9.tiff", [0.1]))
    ground_truth, input_dir = make_case(tmp_path, _stack_frames(), jobs=jobs)
    line = evaluate_cli("rare25", input_dir, ground_truth=ground_truth).last_error_line
    assert "input 's9' is not a stack of the reference" in line


def test_missing_output_file_on_disk(tmp_path, evaluate_cli):
    ground_truth, input_dir = make_case(tmp_path, _stack_frames())
    pk = json.loads((input_dir / "predictions.json").read_text())[1]["pk"]
    (input_dir / pk / "output" / OUTPUT.relative_path).unlink()
    run = evaluate_cli("rare25", input_dir, ground_truth=ground_truth)
    assert run.exit_code == 1 and "Stack s2.tiff (job " in run.last_error_line
    assert f"has no output '{OUTPUT.slug}' ({OUTPUT.relative_path})." in run.last_error_line


@pytest.mark.parametrize("text", ["{not json", '{"pk": 1}', "[1, 2]", '[{"pk": "a", "inputs": 3}]'])
def test_malformed_predictions_json(tmp_path, evaluate_cli, text):
    ground_truth, input_dir = make_case(tmp_path, _stack_frames())
    (input_dir / "predictions.json").write_text(text)
    run = evaluate_cli("rare25", input_dir, ground_truth=ground_truth)
    assert run.exit_code == 1 and not run.wrote_metrics
    assert run.last_error_line.startswith("predictions.json")
    assert "Traceback" not in run.stderr


@pytest.mark.parametrize("escape", ["relative", "symlink"])
def test_output_path_escaping_input(tmp_path, evaluate_cli, escape):
    ground_truth, input_dir = make_case(tmp_path, _stack_frames())
    outside = tmp_path / "secret.json"
    outside.write_text("[0.1, 0.2, 0.3, 0.4]")
    document = json.loads((input_dir / "predictions.json").read_text())
    if escape == "relative":
        document[0]["outputs"][0]["interface"]["relative_path"] = "../../../secret.json"
        (input_dir / "predictions.json").write_text(json.dumps(document))
    else:
        target = input_dir / document[0]["pk"] / "output" / OUTPUT.relative_path
        target.unlink()
        target.symlink_to(outside)
    run = evaluate_cli("rare25", input_dir, ground_truth=ground_truth)
    assert run.exit_code == 1 and not run.wrote_metrics
    assert "points outside the input folder" in run.last_error_line and "s1.tiff" in run.last_error_line


def test_empty_input_folder(tmp_path, evaluate_cli):
    ground_truth, input_dir = make_case(tmp_path, _stack_frames())
    shutil.rmtree(input_dir)
    input_dir.mkdir()
    run = evaluate_cli("rare25", input_dir, ground_truth=ground_truth)
    assert run.exit_code == 1 and not run.wrote_metrics
    assert "no predictions.json" in run.last_error_line


def test_stack_name_without_suffix_in_reference(tmp_path, evaluate_cli):
    stacks = {"s1": [("p1", "neo", 0.9), ("p2", "ndbe", 0.1)], "s2": [("p3", "ndbe", 0.2)]}
    jobs = _jobs(("s1.tiff", [0.9, 0.1]), ("s2.tif", [0.2]))
    ground_truth, input_dir = make_case(tmp_path, stacks, jobs=jobs)
    run = evaluate_cli("rare25", input_dir, "--set", "iterations=5", ground_truth=ground_truth)
    assert run.exit_code == 0, run.stderr
    assert run.metrics["dataset"]["frames"] == 3  # every reference frame matched to its job's likelihood
    assert run.metrics["AUROC Full Dataset"] == pytest.approx(roc_auc_score([1, 0, 0], [0.9, 0.1, 0.2]), abs=1e-12)


@pytest.mark.parametrize("protocol", ["official", "website"])
@pytest.mark.parametrize("rng", ["legacy", "generator"])
@pytest.mark.parametrize("method", ["interp", "max_precision"])
def test_every_mode_equals_scikit_learn_on_the_drawn_frames(protocol, rng, method):
    """Per iteration, the patient-level counts give scikit-learn's numbers on the expanded frames."""
    generator = np.random.default_rng(5)
    patient = np.sort(generator.integers(0, 40, 300))
    labels = ((generator.random(40) < 0.3)[patient] & (generator.random(300) < 0.7)).astype(np.int8)
    scores = np.round(generator.beta(2, 5, 300) + 0.3 * labels, 2)
    patients = [f"p{p}" for p in patient]
    settings = {"iterations": 12, "imbalance_ratio": 4, "rng": rng, "seed": 2}
    if protocol == "official":
        group, counts = official_bootstrap_counts(labels, patients, sample_size=3, **settings)
        frame_weights = official_bootstrap_weights(labels, patients, sample_size=3, **settings)
    else:
        group, counts = website_bootstrap_counts(labels, **settings)
        frame_weights = website_bootstrap_weights(labels, **settings)
    result = grouped_curve_metrics(labels, scores, group, counts, 0.9, method)
    for row, weights in enumerate(frame_weights):
        index = np.repeat(np.arange(labels.size), weights)
        y, s = labels[index], scores[index]
        precisions, recalls, _ = precision_recall_curve(y, s)
        if method == "interp":
            ppv = np.interp(0.9, recalls[::-1], precisions[::-1])
        else:
            ppv = precisions[recalls >= 0.9].max()
        assert result.auroc[row] == pytest.approx(roc_auc_score(y, s), abs=1e-12)
        assert result.auprc[row] == pytest.approx(average_precision_score(y, s), abs=1e-12)
        assert result.ppv[row] == pytest.approx(ppv, abs=1e-12)
