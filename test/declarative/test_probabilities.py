"""The declared output kind ``probabilities`` (multi-class class probabilities per case) and its metrics:
a tiny declaration written here, run through the command line on hand-made ground truth and input,
every value checked against scikit-learn or a hand computation written here to 1e-9, every edge
case as declared, every validation error's exact line, and bad declarations refused naming the key."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from conftest import documented_section
from declarative.helpers import first_argmax
from sklearn.metrics import (
    accuracy_score,
    average_precision_score,
    balanced_accuracy_score,
    brier_score_loss,
    cohen_kappa_score,
    recall_score,
    roc_auc_score,
)

from evaluation.declarative.schema import parse
from evaluation.errors import ConfigurationError
from evaluation.platform.layout import JobSpec, write_input
from evaluation.registry import get

CLASSES = ("mel", "nev", "bkl", "df")
N = 16
RESAMPLES = 200

DECLARATION = """
name = "catalogue-probabilities"
title = "Declared multi-class probability metrics"
[[inputs]]
slug = "dermoscopy"
[cases]
id_column = "image"
[[outputs]]
slug = "diagnosis"
kind = "probabilities"
classes = ["mel", "nev", "bkl", "df"]
reference = "truth.csv:diagnosis"
missing = "error"
[[metrics]]
metric = "auroc"
output = "diagnosis"
bootstrap = true
[[metrics]]
name = "ap"
metric = "average_precision"
output = "diagnosis"
bootstrap = true
[[metrics]]
metric = "brier"
output = "diagnosis"
bootstrap = true
[[metrics]]
name = "top_label"
metric = "top_label_calibration_error"
output = "diagnosis"
bins = 5
bootstrap = true
[[metrics]]
metric = "ece"
output = "diagnosis"
bins = 4
[[metrics]]
metric = "accuracy"
output = "diagnosis"
[[metrics]]
metric = "balanced_accuracy"
output = "diagnosis"
bootstrap = true
[[metrics]]
name = "kappa"
metric = "cohen_kappa"
output = "diagnosis"
[[metrics]]
name = "kappa_quadratic"
metric = "cohen_kappa"
output = "diagnosis"
weights = "quadratic"
[[metrics]]
metric = "sensitivity"
output = "diagnosis"
bootstrap = true
[[metrics]]
metric = "specificity"
output = "diagnosis"
aggregates = ["macro"]
[bootstrap]
resamples = 200
[leaderboard]
score = "aggregates.auroc_macro"
"""


def data(seed: int = 3, absent: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Reference classes (every class present unless ``absent``) and probabilities in twentieths
    (exact sums, argmax ties on purpose in rows 0 and 1)."""
    rng = np.random.default_rng(seed)
    present = [c for c in CLASSES if c != absent]
    truth = np.array((present * N)[:N])[rng.permutation(N)]
    counts = rng.multinomial(20, [0.25] * 4, size=N)
    counts[0], counts[1] = [6, 6, 4, 4], [2, 7, 7, 4]  # ties: mel over nev, nev over bkl
    return truth, counts / 20.0


def write_case(
    root: Path, truth: np.ndarray, probabilities: np.ndarray, text: str = DECLARATION, answers: dict | None = None
) -> tuple[Path, Path, Path]:
    """The declaration, truth.csv and an input: rows as JSON objects (even cases) or lists (odd);
    ``answers`` replaces a case's answer (``None``: the job has no such output)."""
    toml, ground_truth = root / "probabilities.toml", root / "gt"
    ground_truth.mkdir(parents=True)
    toml.write_text(text)
    cases = [f"img{i:02d}" for i in range(len(truth))]
    rows = ["image,diagnosis"] + [f"{c},{t}" for c, t in zip(cases, truth, strict=True)]
    (ground_truth / "truth.csv").write_text("\n".join(rows) + "\n")
    challenge = get(str(toml))
    (socket,) = challenge.phase.outputs
    jobs = []
    for i, case in enumerate(cases):
        answer = dict(zip(CLASSES, probabilities[i].tolist(), strict=True)) if i % 2 == 0 else probabilities[i].tolist()
        if answers and case in answers:
            answer = answers[case]
        jobs.append(JobSpec(challenge.job_inputs(case), {} if answer is None else {socket: answer}))
    write_input(root / "input", jobs)
    return toml, ground_truth, root / "input"


def binned_ece(correct: np.ndarray, confidence: np.ndarray, bins: int) -> float:
    """ECE by hand: bin m holds (m-1)/B < p <= m/B (p = 0 in the first), sum of |Σy - Σp| / n."""
    total = 0.0
    for m in range(1, bins + 1):
        low, high = (m - 1) / bins, m / bins
        inside = [(y, p) for y, p in zip(correct, confidence, strict=True) if low < p <= high or (m == 1 and p == 0)]
        total += abs(sum(float(y) for y, _ in inside) - sum(p for _, p in inside))
    return total / len(correct)


def sklearn_brier(truth: np.ndarray, probabilities: np.ndarray) -> float:
    """scikit-learn's multi-class Brier score; it takes the columns in sorted class order."""
    order = np.argsort(CLASSES)
    return brier_score_loss(truth, probabilities[:, order], labels=sorted(CLASSES))


def brier_by_hand(truth: np.ndarray, probabilities: np.ndarray) -> float:
    return float(np.mean([sum((p - (c == t)) ** 2 for c, p in zip(CLASSES, row, strict=True))
                          for t, row in zip(truth, probabilities, strict=True)]))  # fmt: skip


def reference_values(truth: np.ndarray, probabilities: np.ndarray) -> dict[str, float]:
    """Every declared aggregate of DECLARATION from scikit-learn or a hand computation."""
    predicted = first_argmax(probabilities, CLASSES)
    expected: dict[str, float] = {}
    for j, c in enumerate(CLASSES):
        expected[f"auroc_{c}"] = roc_auc_score(truth == c, probabilities[:, j])
        expected[f"ap_{c}"] = average_precision_score(truth == c, probabilities[:, j])
        expected[f"ece_{c}"] = binned_ece(truth == c, probabilities[:, j], 4)
        expected[f"sensitivity_{c}"] = recall_score(truth == c, predicted == c)
    for name in ("auroc", "ap", "ece", "sensitivity"):
        expected[f"{name}_macro"] = float(np.mean([expected[f"{name}_{c}"] for c in CLASSES]))
    expected["specificity_macro"] = float(
        np.mean([recall_score(truth == c, predicted == c, pos_label=False) for c in CLASSES])
    )
    expected["brier"] = sklearn_brier(truth, probabilities)
    confidence = probabilities.max(axis=1)
    expected["top_label"] = binned_ece(predicted == truth, confidence, 5)
    expected["accuracy"] = accuracy_score(truth, predicted)
    expected["balanced_accuracy"] = balanced_accuracy_score(truth, predicted)
    expected["kappa"] = cohen_kappa_score(truth, predicted, labels=list(CLASSES))
    expected["kappa_quadratic"] = cohen_kappa_score(truth, predicted, labels=list(CLASSES), weights="quadratic")
    return expected


def test_every_metric_against_scikit_learn_and_by_hand(tmp_path, evaluate_cli):
    truth, probabilities = data()
    assert first_argmax(probabilities[:2], CLASSES).tolist() == ["mel", "nev"]  # the tie rule: the first declared class
    toml, ground_truth, input_dir = write_case(tmp_path, truth, probabilities)
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert run.exit_code == 0, run.stderr
    got = run.metrics["aggregates"]
    expected = reference_values(truth, probabilities)
    assert brier_by_hand(truth, probabilities) == pytest.approx(expected["brier"], abs=1e-12)
    for key, value in expected.items():
        assert got[key] == pytest.approx(value, abs=1e-9), key
    value_keys = [k for k in got if not k.endswith(("_ci_low", "_ci_high"))]
    assert sorted(value_keys) == sorted(expected)  # per class and macro, exactly the documented keys
    assert run.metrics["case"]["img00"]["diagnosis"] == dict(zip(CLASSES, probabilities[0], strict=True))
    assert run.metrics["case"]["img01"]["diagnosis"] == dict(zip(CLASSES, probabilities[1], strict=True))
    settings = run.metrics["settings"]["outputs"]["diagnosis"]
    assert settings == {"kind": "probabilities", "reference": "truth.csv:diagnosis", "missing": "error",
                        "blank": "error", "classes": list(CLASSES), "sum": "one", "sum_tolerance": 0.001}  # fmt: skip
    assert run.metrics["settings"]["metrics"]["auroc"]["aggregates"] == ["per_class", "macro"]

    # bootstrap CIs, rebuilt from the documented draw (numpy default_rng(seed).integers) by indexing
    draws = np.random.default_rng(0).integers(0, N, size=(RESAMPLES, N))

    def interval(values: list[float]) -> tuple[float, float]:
        return tuple(np.percentile([v for v in values if v is not None], [2.5, 97.5]))

    def one_vs_rest(score, r, j):
        """Class j against the rest on draw r; None where undefined (left out of the interval)."""
        y = truth[r] == CLASSES[j]
        defined = y.any() and (score is average_precision_score or not y.all())
        return score(y, probabilities[r][:, j]) if defined else None

    for j, c in enumerate(CLASSES):
        auroc = [one_vs_rest(roc_auc_score, r, j) for r in draws]
        assert (got[f"auroc_{c}_ci_low"], got[f"auroc_{c}_ci_high"]) == pytest.approx(interval(auroc), abs=1e-9)
    macro = []
    for r in draws:
        values = [one_vs_rest(roc_auc_score, r, j) for j, c in enumerate(CLASSES)]
        macro.append(None if None in values else float(np.mean(values)))
    assert (got["auroc_macro_ci_low"], got["auroc_macro_ci_high"]) == pytest.approx(interval(macro), abs=1e-9)
    ap_macro = []
    for r in draws:
        values = [one_vs_rest(average_precision_score, r, j) for j, c in enumerate(CLASSES)]
        ap_macro.append(None if None in values else float(np.mean(values)))
    assert (got["ap_macro_ci_low"], got["ap_macro_ci_high"]) == pytest.approx(interval(ap_macro), abs=1e-9)
    predicted = first_argmax(probabilities, CLASSES)
    rebuilt = {
        "brier": [brier_by_hand(truth[r], probabilities[r]) for r in draws],
        "top_label": [binned_ece(predicted[r] == truth[r], probabilities[r].max(axis=1), 5) for r in draws],
        "balanced_accuracy": [balanced_accuracy_score(truth[r], predicted[r]) for r in draws],
        "sensitivity_mel": [recall_score(truth[r] == "mel", predicted[r] == "mel") if (truth[r] == "mel").any()
                            else None for r in draws],
    }  # fmt: skip
    for name, values in rebuilt.items():
        assert (got[f"{name}_ci_low"], got[f"{name}_ci_high"]) == pytest.approx(interval(values), abs=1e-9), name


def test_a_class_absent_from_the_reference(tmp_path, evaluate_cli):
    """Class df in no reference: per-class AUROC, AP and sensitivity undefined. "error" (the default)
    refuses the run naming the class and the key; a number is that class's value (in the macro);
    "exclude" writes null and leaves the class out of the macro mean."""
    truth, probabilities = data(absent="df")
    toml, ground_truth, input_dir = write_case(tmp_path / "a", truth, probabilities)
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert run.exit_code == 1 and not run.wrote_metrics
    assert run.last_error_line == (
        "The reference of output 'diagnosis' holds no case of class 'df' over the scored cases: auroc is undefined "
        "for it (declare single_class = <number> or 'exclude')."
    ), run.last_error_line
    text = DECLARATION.replace('metric = "auroc"\n', 'metric = "auroc"\nsingle_class = "exclude"\n')
    text = text.replace('metric = "average_precision"\n', 'metric = "average_precision"\nno_positive = 0.25\n')
    text = text.replace('metric = "sensitivity"\n', 'metric = "sensitivity"\nno_positive = "exclude"\n')
    toml, ground_truth, input_dir = write_case(tmp_path / "b", truth, probabilities, text)
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert run.exit_code == 0, run.stderr
    got = run.metrics["aggregates"]
    present = CLASSES[:3]
    auroc = {c: roc_auc_score(truth == c, probabilities[:, j]) for j, c in enumerate(present)}
    assert got["auroc_df"] is None and got["auroc_df_ci_low"] is None
    assert got["auroc_macro"] == pytest.approx(np.mean(list(auroc.values())), abs=1e-12)
    ap = [average_precision_score(truth == c, probabilities[:, j]) for j, c in enumerate(present)]
    assert got["ap_df"] == 0.25
    assert got["ap_macro"] == pytest.approx((sum(ap) + 0.25) / 4, abs=1e-12)
    predicted = first_argmax(probabilities, CLASSES)
    sensitivity = [recall_score(truth == c, predicted == c) for c in present]
    assert got["sensitivity_df"] is None
    assert got["sensitivity_macro"] == pytest.approx(np.mean(sensitivity), abs=1e-12)
    assert got["brier"] == pytest.approx(sklearn_brier(truth, probabilities), abs=1e-12)
    # the macro's CI under "exclude": the mean over the classes each resample holds
    draws = np.random.default_rng(0).integers(0, N, size=(RESAMPLES, N))
    macro = []
    for r in draws:
        values = [roc_auc_score(truth[r] == c, probabilities[r][:, j]) for j, c in enumerate(present)
                  if 0 < (truth[r] == c).sum() < N]  # fmt: skip
        macro.append(np.mean(values))
    low, high = np.percentile(macro, [2.5, 97.5])
    assert (got["auroc_macro_ci_low"], got["auroc_macro_ci_high"]) == pytest.approx((low, high), abs=1e-9)

    only = np.array(["mel"] * N)  # one class everywhere: no class left for the macro AUROC under "exclude"
    toml, ground_truth, input_dir = write_case(tmp_path / "c", only, probabilities, text)
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert run.exit_code == 1 and run.last_error_line == (
        "The reference of output 'diagnosis' leaves no class for the macro auroc: every class is excluded "
        "(single_class = 'exclude')."
    ), run.last_error_line


@pytest.mark.parametrize(
    ("policy", "row"),
    [
        ("uniform", [0.25, 0.25, 0.25, 0.25]),
        ("worst-value", None),  # all mass on the first declared class that is not the reference
        ("exclude", "left out"),
    ],
)
def test_missing_policies(tmp_path, evaluate_cli, policy, row):
    truth, probabilities = data()
    absent = (3, 8)
    text = DECLARATION.replace('missing = "error"', f'missing = "{policy}"')
    toml, ground_truth, input_dir = write_case(
        tmp_path, truth, probabilities, text, {f"img{i:02d}": None for i in absent}
    )
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert run.exit_code == 0, run.stderr
    imputed = probabilities.copy()
    for i in absent:
        if row is None:
            wrong = next(c for c in CLASSES if c != truth[i])
            imputed[i] = [float(c == wrong) for c in CLASSES]
        elif row != "left out":
            imputed[i] = row
    kept = [i for i in range(N) if row != "left out" or i not in absent]
    expected = reference_values(truth[kept], imputed[kept])
    got = run.metrics["aggregates"]
    for key in ("auroc_macro", "ap_mel", "brier", "top_label", "accuracy", "kappa", "sensitivity_macro"):
        assert got[key] == pytest.approx(expected[key], abs=1e-9), key
    assert run.metrics["missing"]["diagnosis"] == ["img03", "img08"]
    assert run.metrics["case"]["img03"]["diagnosis"] is None  # an imputed value is never shown


def test_missing_output_under_error(tmp_path, evaluate_cli):
    truth, probabilities = data()
    toml, ground_truth, input_dir = write_case(tmp_path, truth, probabilities, answers={"img05": None})
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert run.exit_code == 1 and not run.wrote_metrics
    assert run.last_error_line == "Case img05 has no output 'diagnosis' (diagnosis.json)."


BAD_ANSWERS = [
    ({"mel": 0.5, "nev": 0.5, "bkl": 0.0}, "The output 'diagnosis' of img04 has no probability for class 'df'."),
    (
        {"mel": 0.5, "nev": 0.5, "bkl": 0.0, "df": 0.0, "scc": 0.0},
        "The output 'diagnosis' of img04 has a probability for 'scc', which is not a class (mel, nev, bkl, df).",
    ),
    (
        {"mel": 1.0, "nev": 0.0, "bkl": 0.0, "df": 0.0, "x" * 41: 0.0},  # a long key: cut at 40 characters
        f"The output 'diagnosis' of img04 has a probability for '{'x' * 40}...', which is not a class (mel, nev, "
        "bkl, df).",
    ),
    (
        [0.5, 0.5, 0.0],
        "The output 'diagnosis' of img04 is a list of 3 values; it needs 4, one per class in the order mel, nev, "
        "bkl, df.",
    ),
    (
        "mel",
        "The output 'diagnosis' of img04 is neither a JSON object of class probabilities nor a list of numbers.",
    ),
    ([0.5, "0.5", 0.0, 0.0], "The output 'diagnosis' of img04, class 'nev', is not a number."),
    ([0.5, True, 0.0, 0.0], "The output 'diagnosis' of img04, class 'nev', is not a number."),
    ({"mel": 1.0, "nev": None, "bkl": 0, "df": 0}, "The output 'diagnosis' of img04, class 'nev', is not a number."),
    ([1.2, -0.2, 0.0, 0.0], "The output 'diagnosis' of img04, class 'mel', is 1.2, outside [0, 1]."),
    ([0.6, 0.6, -0.2, 0.0], "The output 'diagnosis' of img04, class 'bkl', is -0.2; a probability cannot be negative."),
    (
        [0.5, 0.3, 0.1, 0.0],
        "The output 'diagnosis' of img04 sums to 0.9; the probabilities must sum to 1 (within 0.001).",
    ),
]


@pytest.mark.parametrize(("answer", "line"), BAD_ANSWERS)
def test_each_bad_answer_is_one_line_naming_the_case(tmp_path, evaluate_cli, answer, line):
    truth, probabilities = data()
    toml, ground_truth, input_dir = write_case(tmp_path, truth, probabilities, answers={"img04": answer})
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert run.exit_code == 1 and not run.wrote_metrics
    assert run.last_error_line == line, run.last_error_line
    assert "Traceback" not in run.stderr


def test_non_finite_numbers_are_refused(tmp_path, evaluate_cli):
    """1e400 parses as infinity; NaN is no JSON number: both refused naming the case."""
    truth, probabilities = data()
    toml, ground_truth, input_dir = write_case(tmp_path, truth, probabilities)
    job = json.loads((input_dir / "predictions.json").read_text())[4]
    answer = input_dir / job["pk"] / "output" / "diagnosis.json"
    answer.write_text("[1e400, 0, 0, 0]")
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert run.exit_code == 1
    assert run.last_error_line == "The output 'diagnosis' of img04, class 'mel', is not a finite number."
    answer.write_text('{"mel": NaN, "nev": 1, "bkl": 0, "df": 0}')
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert run.exit_code == 1
    assert run.last_error_line == "Case img04: the output 'diagnosis' contains NaN, which is not a finite number."


def test_sum_rules(tmp_path, evaluate_cli):
    """sum = "one" accepts a sum within sum_tolerance of 1 and uses the values as given (not
    renormalised); sum = "any" accepts independent scores (AUROC per class as given)."""
    truth, probabilities = data()
    near = probabilities.copy()
    near[6] = [0.2505, 0.25, 0.25, 0.25]  # sums to 1.0005: within the default 0.001
    toml, ground_truth, input_dir = write_case(tmp_path / "a", truth, near)
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert run.exit_code == 0, run.stderr
    expected = sklearn_brier(truth, near)
    assert run.metrics["aggregates"]["brier"] == pytest.approx(expected, abs=1e-12)
    scores = np.random.default_rng(1).uniform(0, 1, (N, 4)).round(3)  # independent scores
    text = DECLARATION.replace('missing = "error"', 'missing = "error"\nsum = "any"')
    toml, ground_truth, input_dir = write_case(tmp_path / "b", truth, scores, text)
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert run.exit_code == 0, run.stderr
    for j, c in enumerate(CLASSES):
        assert run.metrics["aggregates"][f"auroc_{c}"] == pytest.approx(roc_auc_score(truth == c, scores[:, j]))
    assert run.metrics["settings"]["outputs"]["diagnosis"]["sum"] == "any"
    text = DECLARATION.replace('missing = "error"', 'missing = "error"\nsum_tolerance = 1e-6')
    toml, ground_truth, input_dir = write_case(tmp_path / "c", truth, near, text)
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert run.exit_code == 1 and run.last_error_line == (
        "The output 'diagnosis' of img06 sums to 1.0005; the probabilities must sum to 1 (within 1e-06)."
    )


def test_a_reference_class_that_is_not_declared(tmp_path, evaluate_cli):
    truth, probabilities = data()
    truth[2] = "scc"
    toml, ground_truth, input_dir = write_case(tmp_path, truth, probabilities)
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert run.exit_code == 1 and run.last_error_line == (
        "truth.csv:diagnosis: the value of case img02 is not one of the declared classes."
    )


def test_key_templates_and_forms(tmp_path, evaluate_cli):
    text = DECLARATION.replace(
        'name = "ap"\nmetric = "average_precision"\noutput = "diagnosis"\n',
        'name = "ap"\nmetric = "average_precision"\noutput = "diagnosis"\ngroup = "ovr"\n'
        'key = { per_class = "AP-{label}", macro = "AP" }\n',
    )
    truth, probabilities = data()
    toml, ground_truth, input_dir = write_case(tmp_path, truth, probabilities, text)
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert run.exit_code == 0, run.stderr
    group = run.metrics["aggregates"]["ovr"]
    expected = reference_values(truth, probabilities)
    assert group["AP"] == pytest.approx(expected["ap_macro"], abs=1e-12)
    assert group["AP-df"] == pytest.approx(expected["ap_df"], abs=1e-12) and "AP_ci_low" in group


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            'kind = "probabilities"',
            'kind = "list"',
            r"outputs\[0\]\.kind: 'list' is not supported by this version \(supported: segmentation, number, boolean, "
            r"choice, probabilities, boxes, points, heat_map\); a list of class probabilities per case is kind = "
            r"'probabilities'",
        ),
        ('classes = ["mel", "nev", "bkl", "df"]\n', "", r"outputs\[0\]\.classes: is required"),
        ('"df"]', '"d f"]', r"outputs\[0\]\.classes: 'd f' may hold letters, digits"),
        (
            'missing = "error"',
            'missing = "misclassification"',
            r"outputs\[0\]\.missing: 'misclassification' is not one"
            r" of error, worst-value, uniform, exclude \(for a probabilities output\)",
        ),
        ('missing = "error"', 'missing = "error"\nsum = "two"', r"outputs\[0\]\.sum: 'two' is not one of one, any"),
        ('missing = "error"', 'missing = "error"\nsum_tolerance = 1.5', r"outputs\[0\]\.sum_tolerance: must be in"),
        (
            'missing = "error"',
            'missing = "error"\nsum = "any"\nsum_tolerance = 0.1',
            r"outputs\[0\]\.sum_tolerance: applies to sum = 'one' only",
        ),
        ('missing = "error"', 'missing = "error"\nrange = [0, 1]', r"outputs\[0\]\.range: unknown key"),
        (
            'reference = "truth.csv:diagnosis"',
            'reference = "labels/{case}.json"',
            r"outputs\[0\]\.reference: .* is not",
        ),
        (
            'metric = "auroc"\n',
            'metric = "auroc"\nsingle_class = "skip"\n',
            r"metrics\[0\]\.single_class: must be a number or 'error' or 'exclude', not 'skip'",
        ),
        (
            'metric = "auroc"\n',
            'metric = "auroc"\naggregates = ["mean"]\n',
            r"metrics\[0\]\.aggregates: needs one or both of per_class, macro, each once",
        ),
        (
            'metric = "sensitivity"\n',
            'metric = "sensitivity"\nthreshold = 0.5\n',
            r"metrics\[9\]\.threshold: unknown key",
        ),
        (
            'metric = "ece"\n',
            'metric = "mae"\n',
            r"metrics\[4\]\.output: mae scores a number output; 'diagnosis' is a "
            r"probabilities",
        ),
        ('name = "top_label"\n', 'name = "top_label"\nmacro = true\n', r"metrics\[3\]\.macro: unknown key"),
        ("bins = 5", "bins = 0", r"metrics\[3\]\.bins: must be at least 1"),
        (
            'weights = "quadratic"',
            'weights = "quadratic"\nkey = { per_class = "k" }',
            r"metrics\[8\]\.key: a table of key templates needs exactly the forms value",
        ),
        ('aggregates = ["macro"]', 'key = "spec"', r"metrics: two values go to aggregates\.spec"),
    ],
)
def test_bad_declarations_name_the_key(old, new, message):
    assert old in DECLARATION
    with pytest.raises(ConfigurationError, match=message):
        parse(DECLARATION.replace(old, new, 1), "probabilities.toml")


def test_the_socket_is_the_platforms_generic_json_kind():
    from evaluation.declarative.engine import DeclaredChallenge

    (socket,) = DeclaredChallenge(parse(DECLARATION, "probabilities.toml")).phase.outputs
    assert (socket.slug, socket.relative_path, socket.kind, socket.super_kind) == (
        "diagnosis", "diagnosis.json", "Anything", "Value"
    )  # fmt: skip


def test_edge_values_of_every_per_class_metric():
    """Only cases of class mel: every declared edge value where it applies, by hand."""
    from evaluation.declarative.measures import per_class_metric, probability_metric

    truth = np.array(["mel"] * 4)
    probabilities = np.array([[0.7, 0.1, 0.1, 0.1], [0.4, 0.6, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0], [0.5, 0.5, 0.0, 0.0]])
    values, macro = per_class_metric("auroc", truth, probabilities, CLASSES, {"single_class": 0.5})
    assert values.tolist() == [0.5] * 4 and macro == 0.5  # mel: only cases of it; the others: no case
    values, macro = per_class_metric("average_precision", truth, probabilities, CLASSES, {"no_positive": 0.0})
    assert values.tolist() == [1.0, 0.0, 0.0, 0.0] and macro == 0.25  # all positives: AP 1
    values, macro = per_class_metric("sensitivity", truth, probabilities, CLASSES, {"no_positive": "exclude"})
    assert values[0] == 0.75 and np.isnan(values[1:]).all() and macro == 0.75  # row 3 ties: mel wins
    values, macro = per_class_metric("specificity", truth, probabilities, CLASSES, {"no_negative": 0.25})
    assert values.tolist() == [0.25, 0.75, 1.0, 1.0] and macro == pytest.approx(0.75)
    values, macro = per_class_metric("ece", truth, probabilities, CLASSES, {"bins": 2})
    expected_mel = (abs(2 - 0.4 - 0.5) + abs(2 - 0.7 - 1.0)) / 4  # (0, 0.5]: 0.4, 0.5; (0.5, 1]: 0.7, 1.0
    assert values[0] == pytest.approx(expected_mel, abs=1e-12)
    assert values[1] == pytest.approx((0.1 + 0.6 + 0.5) / 4, abs=1e-12)  # no positive: |0 - Σp| per bin
    kappa = {"weights": "none", "perfect_chance": 0.5}
    same = np.array([[0.9, 0.1, 0.0, 0.0]] * 4)
    assert probability_metric("cohen_kappa", truth, same, CLASSES, kappa) == 0.5


def test_the_participants_check_gives_the_evaluations_line(tmp_path, evaluate_cli, capsys):
    """``python -m evaluation.check`` accepts a valid input and refuses a bad answer with the very line
    the evaluation ends with."""
    from evaluation.check import main

    truth, probabilities = data()
    toml, ground_truth, input_dir = write_case(tmp_path / "a", truth, probabilities)
    capsys.readouterr()
    assert main(["--challenge", str(toml), "--input", str(input_dir)]) == 0
    assert f"{N} cases checked, all outputs valid" in capsys.readouterr().out
    toml, ground_truth, input_dir = write_case(tmp_path / "b", truth, probabilities, answers={"img04": [0.5, 0.3]})
    assert main(["--challenge", str(toml), "--input", str(input_dir)]) == 1
    check_line = [line for line in capsys.readouterr().err.splitlines() if line.strip()][-1]
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert run.exit_code == 1 and check_line == run.last_error_line
    assert check_line == (
        "The output 'diagnosis' of img04 is a list of 2 values; it needs 4, one per class in the order mel, nev, bkl, "
        "df."
    )


def test_the_readme_sketch_runs(tmp_path, evaluate_cli):
    """The README's probabilities sketch, as written, on five images (one without an answer: uniform)."""
    section = documented_section("More catalogue metrics")
    block = next(b.split("\n```", 1)[0] for b in section.split("```toml\n")[1:] if 'kind = "probabilities"' in b)
    toml, ground_truth = tmp_path / "diagnosis-example.toml", tmp_path / "gt"
    toml.write_text(block)
    ground_truth.mkdir()
    truth = np.array(["MEL", "NV", "NV", "BKL", "MEL"])
    (ground_truth / "truth.csv").write_text("image,diagnosis\n" + "".join(f"i{k},{t}\n" for k, t in enumerate(truth)))
    answers = np.array([[0.6, 0.3, 0.1], [0.2, 0.7, 0.1], [0.5, 0.4, 0.1], [0.1, 0.1, 0.8], [0.3, 0.3, 0.4]])
    challenge = get(str(toml))
    (socket,) = challenge.phase.outputs
    jobs = [JobSpec(challenge.job_inputs(f"i{k}"), {socket: answers[k].tolist()} if k != 4 else {}) for k in range(5)]
    write_input(tmp_path / "input", jobs)
    run = evaluate_cli(str(toml), tmp_path / "input", ground_truth=ground_truth)
    assert run.exit_code == 0, run.stderr
    answers[4] = 1 / 3  # missing = "uniform"
    got = run.metrics["aggregates"]
    classes = ["MEL", "NV", "BKL"]
    auroc = [roc_auc_score(truth == c, answers[:, j]) for j, c in enumerate(classes)]
    assert [got[f"auroc_{c}"] for c in classes] == pytest.approx(auroc, abs=1e-12)
    assert got["auroc_macro"] == pytest.approx(np.mean(auroc), abs=1e-12)
    assert got["brier"] == pytest.approx(np.mean(np.sum((answers - (truth[:, None] == classes)) ** 2, axis=1)))
    predicted = np.array(classes)[[0, 1, 0, 2, 0]]  # the uniform row: the first declared class (MEL), right here
    assert got["balanced_accuracy"] == pytest.approx(balanced_accuracy_score(truth, predicted), abs=1e-12)
    correct, confidence = predicted == truth, np.max(answers, axis=1)
    assert got["calibration"] == pytest.approx(binned_ece(correct, confidence, 10), abs=1e-12)
