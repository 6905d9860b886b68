"""The participant's pre-flight check (``python -m evaluation.check``): it accepts every demo
submission (as the platform's /input and as a plain folder of outputs) and rejects every hostile
submission of test_hostile.py that can be decided without the ground truth with THE SAME last
stderr line as the evaluation (test_hostile checks that line against the evaluation itself)."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import SimpleITK as sitk
import tifffile
from conftest import DEMO_INPUT, GROUND_TRUTH
from PIL import Image
from test_hostile import CASES, LIMIT_MIB, Built, digestpath2, hecktor, rare25, text
from test_make_input import plain_outputs

from evaluation.check import main
from evaluation.platform import files
from evaluation.registry import get, names

(SEGMENTATION_2025,) = get("hecktor2025-task1").phase.outputs  # the declared challenge's socket
(LIKELIHOODS,) = get("rare25").phase.outputs  # the declared challenge's socket
SEGMENTATION_2026, T_STAGE, _, RFS = get("hecktor2026").phase.outputs
TISSUE_MASK, MALIGNANCY = get("digestpath2019-task2").phase.outputs  # the declared challenge's sockets

DEMOS = [name for name in names() if (DEMO_INPUT / name).is_dir()]
# The hostile cases the check cannot decide: each is a fault of the organizer's ground truth.
NEEDS_TRUTH = {
    "rare25 corrupt val_metadata.json": "a fault of the ground truth (val_metadata.json)",
    "rare25 val_metadata.json not UTF-8": "a fault of the ground truth (val_metadata.json)",
    "isic2019 corrupt truth.csv": "a fault of the ground truth (truth.csv)",
    "digestpath1 corrupt boxes.json": "a fault of the ground truth (boxes.json)",
    "digestpath2 unreadable reference mask": "a fault of the ground truth (a reference mask)",
    "digestpath2 corrupt labels.csv": "a fault of the ground truth (labels.csv)",
    "hecktor2026 corrupt label map": "a fault of the ground truth (a reference label map)",
    "hecktor2025-task2 clinical.csv not UTF-8": "a fault of the ground truth (clinical.csv)",
}


@pytest.fixture(autouse=True)
def _data_limit(monkeypatch):
    """The memory limit test_hostile's expected lines assume."""
    monkeypatch.setattr(files, "data_limit", lambda: LIMIT_MIB * 2**20)


@pytest.fixture
def check_cli(capsys):
    """``check_cli(*args)`` -> (exit code, stdout, last non-empty stderr line)."""

    def run(*args: str | Path) -> tuple[int, str, str]:
        capsys.readouterr()
        code = main([str(a) for a in args])
        captured = capsys.readouterr()
        lines = [line for line in captured.err.splitlines() if line.strip()]
        return code, captured.out, lines[-1] if lines else ""

    return run


@pytest.mark.parametrize("challenge", DEMOS)
def test_every_demo_submission_is_accepted(check_cli, challenge):
    code, out, error = check_cli("--challenge", challenge, "--input", DEMO_INPUT / challenge)
    assert (code, error) == (0, ""), error
    assert "checked, all outputs valid" in out


@pytest.mark.parametrize("challenge", [n for n in DEMOS if not get(n).phase.prediction_file])
def test_every_demo_submission_is_accepted_as_plain_outputs(tmp_path, check_cli, challenge):
    plain_outputs(get(challenge), DEMO_INPUT / challenge, tmp_path / "plain")
    code, out, error = check_cli("--challenge", challenge, "--outputs", tmp_path / "plain")
    assert (code, error) == (0, ""), error
    cases = len(json.loads((DEMO_INPUT / challenge / "predictions.json").read_text()))
    assert f"{cases} cases checked, all outputs valid" in out


def test_the_console_command_is_declared():
    assert 'gc-check = "evaluation.check:main"' in (Path(__file__).parents[1] / "pyproject.toml").read_text()


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", CASES)
def test_hostile_submission_gets_the_evaluations_line(tmp_path, check_cli, name):
    if name in NEEDS_TRUTH:
        pytest.skip(f"needs the ground truth: {NEEDS_TRUTH[name]}")
    case = CASES[name]
    built = case.build(tmp_path)
    case.change(built)
    code, _, line = check_cli("--challenge", case.challenge, "--input", built.input, *case.extra)
    assert (code, line) == (1, case.line(built) if callable(case.line) else case.line)


def test_every_skipped_case_exists():
    assert set(NEEDS_TRUTH) <= set(CASES)


# ------------------------------------------- the check and the evaluation side by side, with --images


def _stacks(built: Built) -> Path:
    """The RARE25 input stacks of the test_hostile submission: s1.tiff 4 frames, s2.tiff 2."""
    images = built.scratch / "images"
    images.mkdir()
    for stack, count in (("s1.tiff", 4), ("s2.tiff", 2)):
        tifffile.imwrite(images / stack, np.zeros((count, 8, 8, 3), np.uint8), photometric="rgb")
    return images


def _cts(built: Built) -> Path:
    """HECKTOR CTs on the grid of the reference label maps (as the platform's data are)."""
    images = built.scratch / "images"
    images.mkdir()
    for label in (built.ground_truth / "labels").iterdir():
        ct = sitk.Cast(sitk.ReadImage(str(label)), sitk.sitkInt16)
        sitk.WriteImage(ct, str(images / f"{label.stem}__CT.mha"))
    return images


def _tissue_images(built: Built) -> Path:
    images = built.scratch / "images"
    images.mkdir()
    for mask in (built.ground_truth / "masks").iterdir():
        Image.fromarray(np.zeros((4, 4, 3), np.uint8)).save(images / mask.name)
    return images


def _spacing(built: Built, patient: str, spacing: tuple[float, float, float]) -> None:
    """A label map (reference and CT alike) with another spacing: the submitted one is off the grid."""
    path = built.ground_truth / "labels" / f"{patient}.mha"
    image = sitk.ReadImage(str(path))
    image.SetSpacing(spacing)
    sitk.WriteImage(image, str(path))


def _segmentation(built: Built, job: int, voxels: np.ndarray) -> None:
    sitk.WriteImage(sitk.GetImageFromArray(voxels), str(built.image(job, SEGMENTATION_2025.relative_path)))


def _mask(built: Built, job: int, shape: tuple[int, int]) -> None:
    path = built.image(job, TISSUE_MASK.relative_path)
    sitk.WriteImage(sitk.GetImageFromArray(np.zeros(shape, np.uint8)), str(path))


Change = Callable[[Built], None]
SIDE_BY_SIDE: dict[str, tuple[str, Callable[[Path], Built], Change, Callable[[Built], Path] | None]] = {
    "rare25 one likelihood too many": (
        "rare25", rare25, lambda b: text(b.output(1, LIKELIHOODS.relative_path), "[0.1, 0.2, 0.3]"), _stacks,
    ),
    "rare25 output missing": (
        "rare25", rare25, lambda b: b.output(0, LIKELIHOODS.relative_path).unlink(), None,
    ),
    "rare25 a likelihood that is a string": (
        "rare25", rare25, lambda b: text(b.output(0, LIKELIHOODS.relative_path), '[0.1, "x", 0.3, 0.4]'), None,
    ),
    "hecktor2025-task1 segmentation off the CT grid": (
        "hecktor2025-task1", hecktor("hecktor2025-task1"), lambda b: _spacing(b, "P2", (1.0, 1.0, 2.5)), _cts,
    ),
    "hecktor2025-task1 label 3": (
        "hecktor2025-task1",
        hecktor("hecktor2025-task1"),
        lambda b: _segmentation(b, 0, np.array([[[0, 3, 1, 2]]], np.uint8)),
        None,
    ),
    "hecktor2025-task1 float voxels": (
        "hecktor2025-task1",
        hecktor("hecktor2025-task1"),
        lambda b: _segmentation(b, 1, np.zeros((1, 1, 4), np.float32)),
        None,
    ),
    "hecktor2025-task1 a bad label in P1 and a bad header in P2: prepare's problem first": (
        "hecktor2025-task1",
        hecktor("hecktor2025-task1"),
        lambda b: (
            _segmentation(b, 0, np.array([[[0, 3, 1, 2]]], np.uint8)),
            text(b.image(1, SEGMENTATION_2025.relative_path), b"\x00garbage"),
        ),
        None,
    ),
    "rare25 a string in s1 and a missing output in s2: prepare's problem first": (
        "rare25",
        rare25,
        lambda b: (
            text(b.output(0, LIKELIHOODS.relative_path), '["x", 0.2, 0.3, 0.4]'),
            b.output(1, LIKELIHOODS.relative_path).unlink(),
        ),
        None,
    ),
    "hecktor2026 a bad header and a bad stage in one job: the header first, as prepare reads it": (
        "hecktor2026",
        hecktor("hecktor2026"),
        lambda b: (
            text(b.image(0, SEGMENTATION_2026.relative_path), b"\x00garbage"),
            text(b.output(0, T_STAGE.relative_path), '"T9"'),
        ),
        None,
    ),
    "hecktor2026 stage not a string": (
        "hecktor2026", hecktor("hecktor2026"), lambda b: text(b.output(1, T_STAGE.relative_path), "3"), None,
    ),
    "hecktor2026 RFS a string": (
        "hecktor2026", hecktor("hecktor2026"), lambda b: text(b.output(0, RFS.relative_path), '"long"'), None,
    ),
    "digestpath2 mask of another size": (
        "digestpath2019-task2", digestpath2, lambda b: _mask(b, 1, (4, 5)), _tissue_images,
    ),
    "digestpath2 likelihood missing": (
        "digestpath2019-task2",
        digestpath2,
        lambda b: (
            b.output(0, MALIGNANCY.relative_path).unlink(),
            b.edit_predictions(lambda d: d[0]["outputs"].pop()),
        ),
        None,
    ),
}  # fmt: skip


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", SIDE_BY_SIDE)
def test_the_check_and_the_evaluation_give_the_same_line(tmp_path, evaluate_cli, check_cli, name):
    challenge, build, change, images = SIDE_BY_SIDE[name]
    built = build(tmp_path)
    change(built)
    evaluated = evaluate_cli(challenge, built.input, "--workers", "1", ground_truth=built.ground_truth)
    assert evaluated.exit_code == 1
    arguments = ["--images", images(built)] if images else []
    code, _, line = check_cli("--challenge", challenge, "--input", built.input, *arguments)
    assert (code, line) == (1, evaluated.last_error_line)


def test_rare25_frames_are_counted_with_images_and_said_unchecked_without(tmp_path, check_cli):
    built = rare25(tmp_path)
    code, out, _ = check_cli("--challenge", "rare25", "--input", built.input)
    assert code == 0 and "Not checked: one likelihood per frame (give --images to count the frames)" in out
    code, out, _ = check_cli("--challenge", "rare25", "--input", built.input, "--images", _stacks(built))
    assert code == 0 and "one likelihood per frame" not in out


def test_hecktor_missing_outputs_are_warnings_not_failures(tmp_path, evaluate_cli, check_cli):
    """HECKTOR counts a missing output (empty mask, misclassification, missing risk): the check
    passes, says so on stdout, and the evaluation indeed accepts the submission."""
    built = hecktor("hecktor2026")(tmp_path)
    built.edit_predictions(lambda d: d[1].update(outputs=[o for o in d[1]["outputs"] if o["interface"]["slug"] in
                                                          ("rfs",)]))  # fmt: skip
    shutil.rmtree(built.input / built.pks[1] / "output" / "images")
    for relative in ("t-stage.json", "n-stage.json"):
        built.output(1, relative).unlink()
    code, out, line = check_cli("--challenge", "hecktor2026", "--input", built.input, "--images", _cts(built))
    assert (code, line) == (0, "")
    policy = "Warning: Case P2 has no output '{}'; the evaluation applies its missing policy '{}'."  # the engine's
    assert policy.format("t-stage", "misclassification") in out  # (the module said "it will count as missing")
    assert policy.format(SEGMENTATION_2026.slug, "empty-mask") in out  # ("... as an empty mask")
    assert "2 cases checked, all outputs valid" in out and "grid against the CT" not in out
    assert evaluate_cli("hecktor2026", built.input, ground_truth=built.ground_truth).exit_code == 0


def test_a_declared_challenges_range_and_grid(tmp_path, evaluate_cli, check_cli):
    """kits-example: the demo passes against its input images' grid; a likelihood outside the
    declared range fails with the evaluation's line."""
    images = tmp_path / "images"
    images.mkdir()
    for label in (GROUND_TRUTH / "kits-example" / "labels").iterdir():
        shutil.copyfile(label, images / f"{label.stem}_0000.mha")
    demo = DEMO_INPUT / "kits-example"
    code, out, line = check_cli("--challenge", "kits-example", "--input", demo, "--images", images)
    assert (code, line) == (0, "") and "grid" not in out
    submission = tmp_path / "input"
    shutil.copytree(demo, submission)
    target = next(submission.glob("*/output/malignancy-likelihood.json"))
    target.write_text("1.5")
    evaluated = evaluate_cli("kits-example", submission)
    code, _, line = check_cli("--challenge", "kits-example", "--input", submission)
    assert (code, line) == (1, evaluated.last_error_line) and "outside [0, 1]" in line


def test_isic_checks_the_csv_and_refuses_a_plain_outputs_folder(tmp_path, check_cli):
    code, out, _ = check_cli("--challenge", "isic2019", "--input", DEMO_INPUT / "isic2019")
    assert code == 0 and "Not checked: which cases the test set holds" in out
    (tmp_path / "plain").mkdir()
    code, _, line = check_cli("--challenge", "isic2019", "--outputs", tmp_path / "plain")
    assert (code, line) == (1, f"The outputs folder {tmp_path / 'plain'} holds no case folder.")


def test_a_fifo_in_a_plain_outputs_folder_gets_the_evaluations_line(tmp_path, check_cli):
    """make_input used to skip it (the output then counted as missing); now the check refuses it as
    the evaluation refuses it in /input (test_hostile's "rare25 output is a FIFO")."""
    built = rare25(tmp_path)
    plain_outputs(get("rare25"), built.input, tmp_path / "plain")
    target = tmp_path / "plain" / "s1" / LIKELIHOODS.relative_path
    target.parent.rename(tmp_path / "plain" / "s1.tiff")  # a folder named as the stack (val_metadata.json's name)
    target = tmp_path / "plain" / "s1.tiff" / LIKELIHOODS.relative_path
    target.unlink()
    os.mkfifo(target)
    code, _, line = check_cli("--challenge", "rare25", "--outputs", tmp_path / "plain")
    assert (code, line) == (1, CASES["rare25 output is a FIFO"].line)


def test_a_segmentation_that_cannot_be_resampled_is_a_participant_line(tmp_path, check_cli):
    """With resample=nearest, the participant's --images folder holding a 2D CT: SimpleITK cannot
    resample the 3D label map onto it. The check names both geometries (it used to give an
    internal-error line); the evaluation, on the true CT grid, accepts the submission."""
    built = hecktor("hecktor2026")(tmp_path)
    images = _cts(built)
    sitk.WriteImage(sitk.GetImageFromArray(np.zeros((1, 4), np.int16)), str(images / "P1__CT.mha"))
    code, _, line = check_cli("--challenge", "hecktor2026", "--input", built.input, "--images", images,
                              "--set", "resample=nearest")  # fmt: skip
    expected = "The segmentation of P1 (3D, size (4, 1, 1)) cannot be resampled onto the CT grid (2D, size (4, 1))."
    assert (code, line) == (1, expected)
