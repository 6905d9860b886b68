"""A boxes reference in one JSON document ``{image: boxes}`` (``reference = "boxes.json"``): the same
metrics as one file per image, and its organizer's faults in one line each."""

from __future__ import annotations

import json
import shutil

import pytest
from declarative.helpers import platform_boxes
from declarative.test_catalogue_metrics import DETECTION, REFERENCE_BOXES, detection_case

from evaluation.declarative.schema import parse
from evaluation.errors import ConfigurationError

ONE_DOCUMENT = DETECTION.replace('reference = "boxes/{case}.json"', 'reference = "boxes.json"')


def document_case(tmp_path, document=None):
    """The catalogue's detection example with its reference boxes in ``boxes.json`` (both forms)."""
    toml, ground_truth, input_dir = detection_case(tmp_path, ONE_DOCUMENT)
    if document is None:
        document = {c: platform_boxes(rows) if i % 2 else rows for i, (c, rows) in enumerate(REFERENCE_BOXES.items())}
    (ground_truth / "boxes.json").write_text(document if isinstance(document, str) else json.dumps(document))
    for file in (ground_truth / "boxes").iterdir():
        file.unlink()
    return toml, ground_truth, input_dir


def test_one_document_scores_as_one_file_per_image(tmp_path, evaluate_cli):
    toml, ground_truth, input_dir = detection_case(tmp_path / "files")
    per_file = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    toml, ground_truth, input_dir = document_case(tmp_path / "document")
    one = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert per_file.exit_code == one.exit_code == 0, one.stderr
    assert one.metrics["aggregates"] == per_file.metrics["aggregates"]
    assert list(one.metrics["case"]) == list(REFERENCE_BOXES)  # the document lists the cases


@pytest.mark.parametrize(
    ("document", "line"),
    [
        (None, "The ground truth has no boxes.json (the reference boxes of every case)."),
        ("[]", "The reference boxes boxes.json is not a JSON object {case: boxes}."),
        ("[" * 100_000, "The reference boxes boxes.json is not valid JSON (nested too deeply)."),
        ({**REFERENCE_BOXES, "i1": [[1, 2, 3]]}, "The reference boxes of case i1: Detection 0 of image i1 is not "
         "[x1, y1, x2, y2]."),
        ({**REFERENCE_BOXES, "i1": [[5, 5, 1, 9]]}, "The reference boxes of case i1: Detection 0 of image i1 is "
         "degenerate (x2 <= x1 or y2 <= y1)."),
    ],
)  # fmt: skip
def test_one_document_faults_are_one_line(tmp_path, evaluate_cli, document, line):
    toml, ground_truth, input_dir = document_case(tmp_path)
    if document is None:
        (ground_truth / "boxes.json").unlink()
    else:
        (ground_truth / "boxes.json").write_text(document if isinstance(document, str) else json.dumps(document))
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert (run.exit_code, run.wrote_metrics, run.last_error_line) == (1, False, line)


def test_a_job_for_an_image_the_document_lacks_is_refused(tmp_path, evaluate_cli):
    toml, ground_truth, input_dir = document_case(tmp_path, {k: v for k, v in REFERENCE_BOXES.items() if k != "i3"})
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert run.exit_code == 1 and "i3" in run.last_error_line and "not in the reference" in run.last_error_line


VOC = ONE_DOCUMENT.replace('reference = "boxes.json"', 'reference = "boxes.json"\nreference_voc = true')


def test_without_the_document_pascal_voc_files_give_the_boxes(tmp_path, evaluate_cli):
    """Each image's boxes in a PASCAL VOC file (named by <filename>, else by the file's stem)."""
    toml, ground_truth, input_dir = detection_case(tmp_path / "files")
    per_file = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    toml, ground_truth, input_dir = document_case(tmp_path / "voc")
    toml.write_text(VOC)
    (ground_truth / "boxes.json").unlink()
    (ground_truth / "annotations").mkdir()
    for index, (case, rows) in enumerate(REFERENCE_BOXES.items()):
        named = f"<filename>{case}</filename>" if index % 2 else ""
        boxes = "".join(f"<object><bndbox><xmin>{a}</xmin><ymin>{b}</ymin><xmax>{c}</xmax><ymax>{d}</ymax></bndbox>"
                        "</object>" for a, b, c, d in rows)  # fmt: skip
        (ground_truth / "annotations" / f"{case}.xml").write_text(f"<annotation>{named}{boxes}</annotation>")
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert run.exit_code == per_file.exit_code == 0, run.stderr
    assert run.metrics["aggregates"] == per_file.metrics["aggregates"]
    (ground_truth / "annotations" / "i2.xml").write_text("<annotation><bndbox><xmin>1</xmin></bndbox>")
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert run.last_error_line == "The PASCAL VOC file annotations/i2.xml cannot be read (ParseError)."
    fault = "The cell boxes are malformed ({problem}): fix boxes.json or the XML files."
    toml.write_text(VOC.replace("reference_voc = true", f"reference_voc = true\nreference_fault = {fault!r}"))
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert run.last_error_line == "The cell boxes are malformed (ParseError): fix boxes.json or the XML files."
    shutil.rmtree(ground_truth / "annotations")
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    assert run.last_error_line == "The ground truth has no boxes.json and no PASCAL VOC XML file."


@pytest.mark.parametrize("where", ["inside", "outside"])
def test_a_pascal_voc_file_is_read_inside_the_ground_truth_only(tmp_path, evaluate_cli, where):
    """A VOC file linked within the ground truth is read (named by the link's stem); one linked outside it is the
    organizer's one line, never opened (platform/ground_truth.py)."""
    toml, ground_truth, input_dir = document_case(tmp_path / "voc")
    toml.write_text(VOC)
    (ground_truth / "boxes.json").unlink()
    (ground_truth / "annotations").mkdir()
    store = tmp_path / "store" if where == "outside" else ground_truth / "store"
    store.mkdir()
    for case, rows in REFERENCE_BOXES.items():
        boxes = "".join(f"<object><bndbox><xmin>{a}</xmin><ymin>{b}</ymin><xmax>{c}</xmax><ymax>{d}</ymax></bndbox>"
                        "</object>" for a, b, c, d in rows)  # fmt: skip
        (store / f"kept-{case}.txt").write_text(f"<annotation>{boxes}</annotation>")
        (ground_truth / "annotations" / f"{case}.xml").symlink_to(store / f"kept-{case}.txt")
    run = evaluate_cli(str(toml), input_dir, ground_truth=ground_truth)
    if where == "inside":
        assert run.exit_code == 0, run.stderr
        assert list(run.metrics["case"]) == list(REFERENCE_BOXES)
    else:
        first = next(iter(REFERENCE_BOXES))
        line = f"The ground truth's annotations/{first}.xml links outside the ground-truth folder."
        assert (run.exit_code, run.wrote_metrics, run.last_error_line) == (1, False, line)


@pytest.mark.parametrize("key", ["reference_voc = true", 'reference_fault = "bad ({problem})"'])
def test_voc_and_fault_need_one_document(key):
    text = DETECTION.replace('reference = "boxes/{case}.json"', f'reference = "boxes/{{case}}.json"\n{key}')
    name = key.split(" ")[0]
    with pytest.raises(ConfigurationError, match=rf"outputs\[0\]\.{name}: needs the reference in one document"):
        parse(text, "det.toml")
