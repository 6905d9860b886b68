"""``rare25`` (evaluation/declarations/rare25.toml with rare25_rules.py) writes what the former ``rare25``
module wrote: the same metrics.json bytes for every option the module offered (recorded from the module,
commit 156e73b, in test/expected/rare25/options/; the demo's in test/expected/rare25/metrics.json, compared
by test_expected.py), the same phase settings and options (test/expected/rare25/phase.json, recorded
likewise). Bad likelihoods and ground truth fail in one line (the module's lines for every hostile input:
test_hostile.py)."""

from __future__ import annotations

import json

import pytest
from conftest import REPO
from rare25_cases import write_case

from evaluation.registry import get

EXPECTED = REPO / "test" / "expected" / "rare25"
PATIENTS = {
    "n1": [0.9, 0.8], "n2": [0.7, 0.4], "n3": [0.95, 0.6], "n4": [0.3, 0.85],
    "d1": [0.1, 0.2, 0.5], "d2": [0.05, 0.65, 0.15], "d3": [0.35, 0.25, 0.12],
    "d4": [0.45, 0.02, 0.08], "d5": [0.75, 0.11, 0.09], "d6": [0.03, 0.04, 0.55],
}  # fmt: skip
OPTIONS = [
    (),
    ("seed=7",),
    ("rng=generator",),
    ("protocol=website",),
    ("protocol=website", "rng=generator", "imbalance_ratio=3", "iterations=300", "seed=11"),
    ("sample_size=3", "imbalance_ratio=2", "iterations=50"),
    ("ppv_at_recall=max_precision",),
]


def test_the_phase_settings_and_options_are_the_modules():
    challenge = get("rare25")
    recorded = json.loads((EXPECTED / "phase.json").read_text())
    assert json.loads(json.dumps(challenge.phase.settings_json())) == recorded["phase"]
    assert [[o.name, o.default, list(o.choices) if o.choices else o.choices, o.help] for o in challenge.options] == (
        recorded["options"]
    )


@pytest.mark.parametrize("options", OPTIONS, ids=lambda options: "_".join(options) or "defaults")
def test_every_option_gives_the_modules_bytes(tmp_path, evaluate_cli, options):
    frames = [(p, "neo" if p.startswith("n") else "ndbe", s) for p, scores in PATIENTS.items() for s in scores]
    write_case(tmp_path / "gt", tmp_path / "input", {"stack_b.tiff": frames[9:], "stack_a.tiff": frames[:9]})
    run = evaluate_cli("rare25", tmp_path / "input", *(a for o in options for a in ("--set", o)),
                       ground_truth=tmp_path / "gt")  # fmt: skip
    assert run.exit_code == 0, run.stderr
    name = "_".join(o.replace("=", "-") for o in options) or "defaults"
    assert (run.output / "metrics.json").read_bytes() == (EXPECTED / "options" / f"{name}.json").read_bytes()


def test_every_recorded_option_is_tested():
    names = {"_".join(o.replace("=", "-") for o in options) or "defaults" for options in OPTIONS}
    assert {path.stem for path in (EXPECTED / "options").glob("*.json")} == names


def _stacks(tmp_path):
    frames = {"s1.tiff": [("p1", "neo", 0.9), ("p2", "ndbe", 0.1)] * 2, "s2.tiff": [("p3", "ndbe", 0.2)] * 4}
    write_case(tmp_path / "gt", tmp_path / "input", frames)
    return tmp_path / "gt", tmp_path / "input"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("[0.5, NaN, 0.1, 0.2]", "Likelihood 1 of stack s1.tiff is not a finite number."),
        ('[0.5, "0.3", 0.1, 0.2]', "Likelihood 1 of stack s1.tiff is not a number."),
        ("[null, 0.3, 0.1, 0.2]", "Likelihood 0 of stack s1.tiff is not a number."),
        ("[0.5, 0.3, 0.1]", "Stack s1.tiff has 4 frames but 3 likelihoods were given."),
        ("[0.5, NaN]", "Likelihood 1 of stack s1.tiff is not a finite number."),  # a value before the count
        ('{"a": 1}', "The likelihoods of stack s1.tiff are not a JSON list of numbers."),
    ],
)
def test_bad_likelihoods_fail_in_one_line(tmp_path, evaluate_cli, content, message):
    ground_truth, input_dir = _stacks(tmp_path)
    pk = json.loads((input_dir / "predictions.json").read_text())[0]["pk"]
    (input_dir / pk / "output" / "stacked-neoplastic-lesion-likelihoods.json").write_text(content)
    run = evaluate_cli("rare25", input_dir, ground_truth=ground_truth)
    assert run.exit_code == 1 and not run.wrote_metrics
    assert run.last_error_line == message


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"s1.tiff": [{"index": ', "The RARE25 ground truth val_metadata.json is malformed (JSONDecodeError)"),
        ('{"s1.tiff": [{"index": 0, "class": "neo"}]}', "val_metadata.json is malformed (KeyError)"),
        ("{}", "The RARE25 ground truth val_metadata.json lists no stack."),
    ],
)
def test_bad_ground_truth_fails_in_one_line(tmp_path, evaluate_cli, text, message):
    ground_truth, input_dir = _stacks(tmp_path)
    (ground_truth / "val_metadata.json").write_text(text)
    run = evaluate_cli("rare25", input_dir, ground_truth=ground_truth)
    assert run.exit_code == 1 and not run.wrote_metrics
    assert message in run.last_error_line, run.last_error_line


def test_a_job_for_no_listed_stack_is_named(tmp_path, evaluate_cli):
    ground_truth, input_dir = _stacks(tmp_path)
    document = json.loads((input_dir / "predictions.json").read_text())
    document[1]["inputs"][0]["image"]["name"] = "s9.tiff"
    (input_dir / "predictions.json").write_text(json.dumps(document))
    run = evaluate_cli("rare25", input_dir, ground_truth=ground_truth)
    assert run.exit_code == 1 and "input 's9' is not a stack of the reference" in run.last_error_line


def test_choices_of_a_python_metrics_parameters_need_no_parse_of_their_own(monkeypatch):
    """Issue 29 (the start-up against the former module): rare25.toml's choices (protocol, rng, ppv_at_recall) set
    only its python metric's own parameters, which any string, number or boolean fills, so loading it parses the
    declaration once; each choice in force still gives the declaration validated whole (``with_options``)."""
    from evaluation.declarative import schema

    parsed = []
    real = schema.parse_data
    monkeypatch.setattr(schema, "parse_data", lambda *args, **kwargs: parsed.append(1) or real(*args, **kwargs))
    declaration = schema.load(REPO / "evaluation" / "declarations" / "rare25.toml")
    assert len(parsed) == 1
    for option in (o for o in declaration.options if o.choices):
        for choice in option.choices:
            changed = schema.with_options(declaration, {option.name: choice})
            assert dict(changed.metrics[0].params)["params"][option.name] == choice
