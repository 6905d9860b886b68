"""A choice output's spellings (``ignore_case``, ``subcategories``, ``wrong_answers``, ``unknown``,
``expected``) and an output's ``together_with`` and ``extra_cases``, as HECKTOR 2026's stages use them
(BioMedIA-MBZUAI/HECKTOR2026 README: T1-T4, N0-N3; a subcategory letter folds into its stage)."""

from __future__ import annotations

import copy
import re
import tomllib
from typing import Any

import pytest

from evaluation.contract import DECLARATIONS
from evaluation.declarative.output_kinds import MISCLASSIFIED
from evaluation.declarative.schema import parse_data
from evaluation.errors import ConfigurationError, SubmissionError

DATA = tomllib.loads((DECLARATIONS / "hecktor2026.toml").read_text(encoding="utf-8"))


def _declared(change: Any = None) -> Any:
    data = copy.deepcopy(DATA)
    if change:
        change(data)
    return parse_data(data, "hecktor2026.toml")


def _answer(raw: Any, unknown: str = "error") -> str:
    declaration = _declared(lambda d: d["outputs"][1].update(unknown=unknown))
    output = declaration.output("t-stage")
    return output.type.answer(output, raw, "P1", "The T stage of P1", False)


@pytest.mark.parametrize(
    ("raw", "found"),
    [("T1", "T1"), (" t4a ", "T4"), ("T2b", "T2"), ("t3", "T3"), ("Tx", MISCLASSIFIED), ("TIS", MISCLASSIFIED),
     ("t0", MISCLASSIFIED)],
)  # fmt: skip
def test_a_stage_folds_into_its_class_or_is_a_misclassification(raw, found):
    assert _answer(raw) == found


@pytest.mark.parametrize(("raw", "shown"), [("T5", "'T5'"), ("T0a", "'T0a'"), (3, "3"), ("T 4", "'T 4'")])
def test_any_other_answer_is_an_error_or_a_misclassification(raw, shown):
    with pytest.raises(SubmissionError, match=rf"^The T stage of P1 is {shown}; expected a string T1\.\.T4\.$"):
        _answer(raw)
    assert _answer(raw, unknown="misclassification") == MISCLASSIFIED


def test_a_choice_without_spellings_keeps_its_message():
    def plain(data: dict[str, Any]) -> None:
        for key in ("ignore_case", "subcategories", "wrong_answers", "unknown", "expected"):
            del data["outputs"][1][key]

    output = _declared(plain).output("t-stage")
    assert output.type.answer(output, "T1", "P1", "The T stage of P1", False) == "T1"
    with pytest.raises(SubmissionError, match=r"^The T stage of P1 is not one of the strings T1, T2, T3, T4\.$"):
        output.type.answer(output, "t1", "P1", "The T stage of P1", False)


@pytest.mark.parametrize(
    ("change", "line"),
    [
        (lambda d: d["outputs"][1].update(together_with=["nope"]),
         "outputs[1].together_with: 'nope' is not another output with a CSV column reference"),
        (lambda d: d["outputs"][1].update(together_with=["head-neck-tumor-segmentation"]),
         "outputs[1].together_with: 'head-neck-tumor-segmentation' is not another output with a CSV column"),
        (lambda d: d["outputs"][1].update(unknown="maybe"), "outputs[1].unknown"),
        (lambda d: d["outputs"][1].update(extra_cases="keep"), "outputs[1].extra_cases"),
        (lambda d: d["outputs"][0].update(extra_cases="ignore"), "extra_cases"),
    ],
)  # fmt: skip
def test_the_keys_are_checked(change, line):
    with pytest.raises(ConfigurationError, match=re.escape(line)):
        _declared(change)
