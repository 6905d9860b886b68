"""The declared AIROGS challenge (evaluation/declarations/airogs.toml) against the official numbers recorded in
test/metrics/golden/airogs.json (qurAI-amsterdam/airogs-evaluation ``evaluation.py``, commit there, run on the
runs of scripts/make_demo_airogs.py): partial AUC over 90-100% specificity (scikit-learn's McClish-standardised
``roc_auc_score(max_fpr=0.1)``), sensitivity at 95% specificity, the ungradability kappa and AUC. The platform
input is written by ``python -m evaluation.make_input`` and scored by ``python -m evaluation``, each in a
subprocess; stacked inputs (a job per stack, a JSON list per output, frames = the reference rows in file
order) and the class column read as a 0 / 1 target are exercised on the way, and so are their one-line errors.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
from declarative.helpers import REPO, TOL, last_line, run
from sklearn.metrics import roc_auc_score

from evaluation.errors import ConfigurationError
from evaluation.metrics.classification import auroc

DECLARATION = REPO / "evaluation" / "declarations" / "airogs.toml"
GOLDEN = json.loads((REPO / "test" / "metrics" / "golden" / "airogs.json").read_text())
KEYS = ("screening_partial_auc_90_spec", "screening_sens_at_95_spec", "ungradability_kappa", "ungradability_auc")
LIKELIHOODS = "multiple-referable-glaucoma-likelihoods"
SCREENING_FALSE = 'false_values = ["NRG"]               # no referable glaucoma: 0\n'
_spec = importlib.util.spec_from_file_location("make_demo_airogs", REPO / "scripts" / "make_demo_airogs.py")
demo = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(demo)
DEFINED = [r for r in GOLDEN["runs"] if all(isinstance(r["official"][k], float) for k in KEYS)]
UNDEFINED = [r for r in GOLDEN["runs"] if r not in DEFINED]


def _declaration(tmp_path: Path, stack_size: int, *replacements: tuple[str, str]) -> Path:
    text = DECLARATION.read_text().replace("stack_size = 300", f"stack_size = {stack_size}")
    for old, new in replacements:
        assert old in text
        text = text.replace(old, new)
    path = tmp_path / "airogs.toml"
    path.write_text(text)
    return path


def _input(tmp_path: Path, seed: int, *replacements: tuple[str, str], change=None) -> tuple[Path, dict]:
    """The run's ground truth and platform input (``change(outputs)``: the outputs edited first)."""
    size = next(r["stack_size"] for r in GOLDEN["runs"] if r["seed"] == seed)
    data = demo.generate(tmp_path / "gt", tmp_path / "outputs", seed)
    if change:
        change(tmp_path / "outputs")
    declaration = _declaration(tmp_path, size, *replacements)
    made = run("-m", "evaluation.make_input", "--challenge", str(declaration), "--outputs", str(tmp_path / "outputs"),
               "--output", str(tmp_path / "input"))  # fmt: skip
    assert made.returncode == 0, made.stderr
    return declaration, data


def _evaluate(tmp_path: Path, declaration: Path):
    return run("-m", "evaluation", "--challenge", str(declaration), "--input", str(tmp_path / "input"),
               "--ground-truth", str(tmp_path / "gt"), "--output", str(tmp_path / "out"))  # fmt: skip


def _refused(tmp_path: Path, declaration: Path) -> str:
    done = _evaluate(tmp_path, declaration)
    assert done.returncode != 0 and not (tmp_path / "out" / "metrics.json").exists(), done.stderr
    return last_line(done.stderr)


def _job_file(tmp_path: Path, stack: int, slug: str) -> Path:
    """The output file of the job of ``stack`` in the written platform input."""
    jobs = json.loads((tmp_path / "input" / "predictions.json").read_text())
    job = next(j for j in jobs if j["inputs"][0]["image"]["name"] == f"{stack}.tiff")
    return tmp_path / "input" / job["pk"] / "output" / f"{slug}.json"


@pytest.mark.parametrize("golden_run", [r for r in DEFINED if r["seed"] != 0], ids=lambda r: f"seed{r['seed']}")
def test_the_declaration_equals_the_official_numbers(tmp_path, golden_run):
    declaration, _ = _input(tmp_path, golden_run["seed"])
    done = _evaluate(tmp_path, declaration)
    assert done.returncode == 0, done.stderr
    aggregates = json.loads((tmp_path / "out" / "metrics.json").read_text())["aggregates"]
    assert aggregates == pytest.approx(golden_run["official"], abs=TOL)


def test_the_bundled_demo_equals_the_official_numbers():
    metrics = json.loads((REPO / "test" / "expected" / "airogs" / "metrics.json").read_text())
    assert metrics["aggregates"] == pytest.approx(GOLDEN["runs"][0]["official"], abs=TOL)
    assert len((REPO / "ground-truth" / "airogs" / "reference.csv").read_text().splitlines()) == 341  # 2 stacks


@pytest.mark.parametrize("golden_run", UNDEFINED, ids=lambda r: r["kind"])
def test_a_single_class_is_refused_where_the_official_code_gives_nan(tmp_path, golden_run):
    assert {"value": "NaN"} in golden_run["official"].values()
    declaration, _ = _input(tmp_path, golden_run["seed"])
    line = _refused(tmp_path, declaration)
    assert line.endswith("holds a single class over the scored cases: auroc is undefined (declare single_class = "
                         "<number> to give it a value).")  # fmt: skip


def test_partial_auroc_is_scikit_learns_also_per_bootstrap_resample():
    rng = np.random.default_rng(7)
    truth, scores = rng.integers(0, 2, 60), np.round(rng.random(60), 1)  # ties
    for max_fpr in (0.05, 0.1, 0.5, 1.0):
        assert auroc(truth, scores, max_fpr=max_fpr) == pytest.approx(roc_auc_score(truth, scores, max_fpr=max_fpr))
    weights = rng.integers(0, 3, (4, 60)).astype(float)
    expanded = [roc_auc_score(np.repeat(truth, w.astype(int)), np.repeat(scores, w.astype(int)), max_fpr=0.1)
                for w in weights]  # fmt: skip
    assert auroc(truth, scores, max_fpr=0.1, weights=weights) == pytest.approx(expanded, abs=TOL)
    assert auroc(np.ones(5, int), scores[:5], single_class=0.25, max_fpr=0.1) == 0.25
    sample_weight = rng.random(60)  # ISIC-style row weights pass through as given
    assert auroc(truth, scores, sample_weight=sample_weight, max_fpr=0.1) == roc_auc_score(
        truth, scores, sample_weight=sample_weight, max_fpr=0.1
    )


def test_frames_pair_with_the_reference_rows_in_file_order_and_a_missing_stack_is_excluded(tmp_path):
    """Stack 1 without a job under missing = "exclude": the metrics of the other frames, as scikit-learn
    computes them on the frames the official code would pair (the k-th value with the k-th row)."""
    exclude = ('reference = "reference.csv:class"\n', 'reference = "reference.csv:class"\nmissing = "exclude"\n')
    declaration, data = _input(tmp_path, 1, exclude, change=lambda outputs: _remove(outputs / "1"))
    done = _evaluate(tmp_path, declaration)
    assert done.returncode == 0, done.stderr
    metrics = json.loads((tmp_path / "out" / "metrics.json").read_text())
    kept = [i for i in range(len(data["ids"])) if not 10 <= i < 20 and data["classes"][i] != "U"]
    truth = [data["classes"][i] == "RG" for i in kept]
    likelihoods = [data["answers"][LIKELIHOODS][i] for i in kept]
    assert metrics["aggregates"]["screening_partial_auc_90_spec"] == pytest.approx(
        roc_auc_score(truth, likelihoods, max_fpr=0.1), abs=TOL
    )
    assert metrics["missing"]["jobs"] == sorted(data["ids"][10:20])


def _remove(folder: Path) -> None:
    for file in folder.iterdir():
        file.unlink()
    folder.rmdir()


def _rewrite(slug: str, stack: int, values):
    def change(outputs: Path) -> None:
        (outputs / str(stack) / f"{slug}.json").write_text(json.dumps(values))

    return change


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            _rewrite(LIKELIHOODS, 2, [0.5] * 9),
            "is a list of 9 values; the stack has 10 frames (reference rows 21-30), one value each.",
        ),
        (_rewrite(LIKELIHOODS, 0, 0.5), f"The output '{LIKELIHOODS}' of stack 0 (job "),
        (_rewrite(LIKELIHOODS, 0, [0.5] * 9 + ["high"]), f"The output '{LIKELIHOODS}' of TRAIN"),
        (_rewrite(LIKELIHOODS, 0, [0.5] * 9 + [1.5]), ", frame 9) is 1.5, outside [0, 1]."),
        (
            lambda outputs: _remove(outputs / "3"),
            f"No algorithm job for stack 3 (reference rows 31-40); every frame needs the output '{LIKELIHOODS}'.",
        ),
    ],
    ids=["short-list", "not-a-list", "a-string", "outside-range", "missing-stack"],
)
def test_a_bad_stacked_answer_is_one_line(tmp_path, change, message):
    declaration, _ = _input(tmp_path, 1, change=change)
    line = _refused(tmp_path, declaration)
    assert message in line, line


def test_nan_in_a_frame_and_a_job_beyond_the_stacks_are_one_line(tmp_path):
    declaration, _ = _input(tmp_path, 1)
    file = _job_file(tmp_path, 4, LIKELIHOODS)
    values = json.loads(file.read_text())
    file.write_text(json.dumps(values[:-1]).removesuffix("]") + ", NaN]")
    named = f"The output '{LIKELIHOODS}' of TRAIN000206 (stack 4, frame 6)"  # a NaN is named by its frame
    assert _refused(tmp_path, declaration).endswith(f"{named} is not a finite number.")
    jobs_file = tmp_path / "input" / "predictions.json"
    jobs = json.loads(jobs_file.read_text())
    jobs[0]["inputs"][0]["image"]["name"] = "7.tiff"
    jobs_file.write_text(json.dumps(jobs))
    assert _refused(tmp_path, declaration).endswith("is for stack 7; the reference has stacks 0 to 4.")


def test_a_class_outside_the_declared_spellings_is_the_organizers_error(tmp_path):
    declaration, _ = _input(tmp_path, 1, (SCREENING_FALSE, 'false_values = ["NONE"]\n'))
    assert _refused(tmp_path, declaration).endswith(
        "reference.csv:class: the class of case TRAIN000101 is none of true_values (rg) and false_values (none); a "
        "class to leave out belongs in blank_values, with blank = 'skip'."
    )


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("stack_size = 300", "stack_size = 0", r"cases\.stack_size: must be at least 1"),
        (SCREENING_FALSE, "", r"outputs\[0\]\.false_values: is required beside"),
        ("max_fpr = 0.1", "max_fpr = 0", r"metrics\[0\]\.max_fpr: must be in \(0, 1\]"),
    ],
)
def test_bad_keys_are_named(old, new, message):
    from evaluation.declarative.schema import parse

    text = DECLARATION.read_text()
    assert old in text
    with pytest.raises(ConfigurationError, match=message):
        parse(text.replace(old, new), "airogs.toml")


def test_two_jobs_for_one_stack_and_a_name_without_a_number_are_one_line(tmp_path):
    declaration, _ = _input(tmp_path, 1)
    jobs_file = tmp_path / "input" / "predictions.json"
    jobs = json.loads(jobs_file.read_text())
    jobs[1]["inputs"][0]["image"]["name"] = jobs[0]["inputs"][0]["image"]["name"]
    jobs_file.write_text(json.dumps(jobs))
    assert "are for stack 0." in _refused(tmp_path, declaration)
    jobs[1]["inputs"][0]["image"]["name"] = "stack.tiff"
    jobs_file.write_text(json.dumps(jobs))
    assert _refused(tmp_path, declaration).endswith(
        "input 'stack' ends in no number: a stacked input names its stack by a number (0.tiff, 1.tiff, ...)."
    )


def test_a_missing_stack_gets_the_worst_value(tmp_path):
    """missing = "worst-value" on the likelihoods (the other outputs "exclude"): stack 1's frames score as the
    likelihood farthest from their reference, as scikit-learn computes it with those values put in."""
    declaration, data = _input(tmp_path, 1, change=lambda outputs: _remove(outputs / "1"))
    sections = declaration.read_text().split("[[outputs]]\n")
    declaration.write_text("[[outputs]]\n".join(
        [sections[0]] + [f'missing = "{"worst-value" if LIKELIHOODS in part.split(chr(10))[0] else "exclude"}"\n{part}'
                         for part in sections[1:]]
    ))  # fmt: skip
    done = _evaluate(tmp_path, declaration)
    assert done.returncode == 0, done.stderr
    kept = [i for i in range(len(data["ids"])) if data["classes"][i] != "U"]
    truth = np.array([data["classes"][i] == "RG" for i in kept])
    likelihoods = np.array([data["answers"][LIKELIHOODS][i] for i in kept])
    in_stack_1 = np.array([10 <= i < 20 for i in kept])
    likelihoods[in_stack_1] = np.where(truth[in_stack_1], 0.0, 1.0)
    aggregates = json.loads((tmp_path / "out" / "metrics.json").read_text())["aggregates"]
    assert aggregates["screening_partial_auc_90_spec"] == pytest.approx(
        roc_auc_score(truth, likelihoods, max_fpr=0.1), abs=TOL
    )


def test_the_participants_check_reads_each_frame(tmp_path):
    declaration, _ = _input(tmp_path, 1, change=_rewrite(LIKELIHOODS, 0, [0.5] * 9 + [True]))
    done = run("-m", "evaluation.check", "--challenge", str(declaration), "--input", str(tmp_path / "input"))
    assert done.returncode != 0
    assert last_line(done.stderr).endswith(f"The output '{LIKELIHOODS}' of stack 0, frame 9 is not a number."), (
        done.stderr
    )


def test_the_official_epsilon_never_changes_which_thresholds_reach_the_specificity():
    """The official ``screening_sens_at_spec`` keeps the operating points with ``1 - fpr >= 0.95 -
    sys.float_info.epsilon`` (roc_curve's fpr = fp / negatives); ``sensitivity_at_specificity`` keeps those with
    ``(negatives - fp) / negatives >= 0.95``: the same points for every count up to 3000 negatives and the usual
    targets (a hand computation of the official formula; no need for a tolerance parameter)."""
    for target in (0.8, 0.9, 0.95, 0.975, 0.99):
        for negatives in range(1, 3001):
            fp = np.arange(negatives + 1)
            official = (1 - fp / negatives) >= (target - np.finfo(float).eps)
            assert np.array_equal((negatives - fp) / negatives >= target, official), (target, negatives)
