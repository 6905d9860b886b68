"""Regions (label unions) as declared segmentation labels: parsed, echoed, refused in one line. Their
numbers are checked against the official KiTS23 code in ``test_library.py``."""

from __future__ import annotations

import pytest
from conftest import REPO

from evaluation.declarative.schema import parse
from evaluation.errors import ConfigurationError

KITS = (REPO / "evaluation" / "declarations" / "kits-example.toml").read_text(encoding="utf-8")
LABELS = "labels = { kidney = 1, tumour = 2, cyst = 3 }"


def _with_labels(labels: str) -> str:
    assert LABELS in KITS
    return KITS.replace(LABELS, labels, 1)


def test_a_region_is_a_list_of_voxel_values():
    declaration = parse(_with_labels("labels = { kidney = [1, 2, 3], masses = [2, 3], tumour = 2 }"), "kits.toml")
    (output,) = (o for o in declaration.outputs if o.kind == "segmentation")
    assert output.labels == (("kidney", (1, 2, 3)), ("masses", (2, 3)), ("tumour", 2))
    assert output.voxel_values == (1, 2, 3)
    assert output.type.settings(output)["labels"] == {"kidney": (1, 2, 3), "masses": (2, 3), "tumour": 2}


@pytest.mark.parametrize(
    ("labels", "message"),
    [
        ("labels = { kidney = [], masses = [2, 3] }",
         "kits.toml: outputs[0].labels.kidney: a region needs at least one voxel value"),
        ("labels = { kidney = [1, 0], masses = [2, 3] }",
         "kits.toml: outputs[0].labels.kidney: a region's voxel values must be positive integers, not 0"),
        ('labels = { kidney = [1, "2"], masses = [2, 3] }',
         "kits.toml: outputs[0].labels.kidney: a region's voxel values must be positive integers, not '2'"),
        ("labels = { kidney = [1, 2.5], masses = [2, 3] }",
         "kits.toml: outputs[0].labels.kidney: a region's voxel values must be positive integers, not 2.5"),
        ("labels = { kidney = [1, 2], masses = [2, 2] }",
         "kits.toml: outputs[0].labels.masses: a region lists the voxel value 2 twice"),
        ("labels = { kidney = [1, 2], masses = [2, 1] }",
         "kits.toml: outputs[0].labels: two labels share a voxel value"),
        ("labels = { kidney = [2], masses = 2 }", "kits.toml: outputs[0].labels: two labels share a voxel value"),
        ('labels = { kidney = "1", masses = 2 }',
         "kits.toml: outputs[0].labels.kidney: must be a positive integer voxel value or 'nonzero', not '1' (or a "
         "region: a list of voxel values)"),
    ],
)  # fmt: skip
def test_bad_regions_are_refused_in_one_line(labels, message):
    with pytest.raises(ConfigurationError) as caught:
        parse(_with_labels(labels), "kits.toml")
    assert str(caught.value).startswith(message)
    assert "\n" not in str(caught.value)
