"""HECKTOR 2026 as a declaration (``evaluation/declarations/hecktor2026.toml``, issue 29): its metrics.json is
byte for byte the former Python module's (``evaluation/challenges/hecktor.py`` at ed3f064, removed after this
comparison), on the demo under every ``--set`` option and on inputs that reach the stage spellings (a
subcategory letter, letter case and spaces, Tx / Nx, a missing stage or RFS), an invalid stage under both
``invalid_stage`` values, and a clinical.csv with one stage or one RFS blank (staging scores the patients with
both stages known). The SHA-256 below are those of the module's metrics.json on the same input."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest
from conftest import DEMO_INPUT, GROUND_TRUTH

CHALLENGE = "hecktor2026"
DEMO = DEMO_INPUT / CHALLENGE

# option -> the module's metrics.json SHA-256 on the demo ("": the defaults)
OPTIONS = {
    "": "1fadc91e9ea4e5a217018a53e93ff7354cac33325ba4c55a360bff2d68bcae27",
    "aggregate_volume=voxels": "53f07a1de465d4611a8adb308b9910d31156b973319a9dca67148eb1fc3384cd",
    "dice_both_empty=exclude": "9e354d961e60131711d4ca4e8d8b46deab0bd882e67a26af1b1657fdecc46c6d",
    "resample=nearest": "4b27065d9620f0fb2dd43ddce2cc68ae4122d7aff1f75448d284a518545982e1",
    "surface_metrics=false": "3d425a4c1e1f70c28b69f046c1ec810eada1631fe8a8a602ed7e628bc98c0ea7",
    "invalid_stage=misclassification": "354c17c0692a8e93d39f8e014cd6e4481dc064622b1dba750b1346d4153ebff7",
    "rfs_output=risk": "27a6556150eb3ed8a03e7c9c31ec4c629289ec34b4a034d7b5c9fe3bf0f5fcfa",
    "missing_prognosis=tie": "a8d35ff4d0e3ee1c30a86ec445f58ae751c292461d592e7a0aa8f4f5f7cdc618",
    "seed=7": "9c68758f720d39a9e254fe0bc102e614d08fc95a2fe5e0f2cffd5c40330f1444",
    "bootstrap_resamples=50": "1c1802986124a02e000f3cb7c5695fa36e92cc921f6dd07d66537f14b6f2a98c",
}


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("option", list(OPTIONS))
def test_the_demo_under_every_option_is_the_modules(evaluate_cli, option):
    run = evaluate_cli(CHALLENGE, DEMO, *(("--set", option) if option else ()))
    assert run.exit_code == 0, run.stderr
    assert _sha256(run.output / "metrics.json") == OPTIONS[option]


def _edited(tmp_path: Path, invalid: bool) -> Path:
    """The demo with stage spellings and missing outputs (job folders in sorted order); ``invalid``: a 'T5'
    and a number as a stage too."""
    folder = tmp_path / ("edge-invalid" if invalid else "edge")
    shutil.copytree(DEMO, folder)
    jobs = sorted(p for p in folder.iterdir() if p.is_dir())
    (jobs[0] / "output" / "t-stage.json").write_text('" t4a "')  # T4
    (jobs[1] / "output" / "n-stage.json").write_text('"N2b"')  # N2
    (jobs[2] / "output" / "t-stage.json").write_text('"Tx"')  # a misclassification
    (jobs[3] / "output" / "n-stage.json").write_text('"nx"')  # a misclassification
    (jobs[4] / "output" / "t-stage.json").unlink()  # missing
    (jobs[5] / "output" / "rfs.json").unlink(missing_ok=True)  # missing
    if invalid:
        (jobs[6] / "output" / "t-stage.json").write_text('"T5"')
        (jobs[7] / "output" / "n-stage.json").write_text("3")
    return folder


def _blank_clinical(tmp_path: Path) -> Path:
    """The demo ground truth with CHUV-002's N stage, HGJ-003's RFS and Relapse blank, and HGJ-007's T4 as T4a."""
    truth = tmp_path / "gt"
    shutil.copytree(GROUND_TRUTH / CHALLENGE, truth)
    text = (truth / "clinical.csv").read_text(encoding="utf-8")
    for old, new in (("CHUV-002,352,1,T3,N2,", "CHUV-002,352,1,T3,,"), ("HGJ-003,2060,0,", "HGJ-003,,,"),
                     ("HGJ-007,940,1,T4,", "HGJ-007,940,1,T4a,")):  # fmt: skip
        assert old in text
        text = text.replace(old, new)
    (truth / "clinical.csv").write_text(text, encoding="utf-8")
    return truth


@pytest.mark.parametrize(
    ("invalid", "blank", "options", "expected"),
    [
        (False, False, (), "7c8df2c9632f9d6defa85602003eb23c3ab02e600d99a20aab4490389a1fadae"),
        (False, False, ("invalid_stage=misclassification",),
         "45ac275790857830c41d3b6201d0eb332445ce0138d137fcf7358f363a70afdd"),
        (True, False, (), "The N stage of CHUM-005 is 3; expected a string N0..N3."),
        (True, False, ("invalid_stage=misclassification",),
         "00dcedaa46704814e4b0f244b12adf1a8db6dd8200bdd7839978994eba05dad0"),
        (False, True, (), "a2142254405e50a1ddabf3c5408800657dc3934fccbd44d63cf6870804d0d4b1"),
        (False, True, ("missing_prognosis=tie", "rfs_output=risk"),
         "459e9883b5c135b027db561b7ddbbb872de9d158fe1b73101a76fb58084a654d"),
    ],
)  # fmt: skip
def test_stage_spellings_and_blank_clinical_values_are_the_modules(
    tmp_path, evaluate_cli, invalid, blank, options, expected
):
    arguments = [part for option in options for part in ("--set", option)]
    truth = _blank_clinical(tmp_path) if blank else None
    run = evaluate_cli(CHALLENGE, _edited(tmp_path, invalid), *arguments, ground_truth=truth)
    if expected.startswith("The "):  # the module's last stderr line
        assert run.exit_code == 1 and run.last_error_line == expected, run.stderr
        assert not (run.output / "metrics.json").exists()
    else:
        assert run.exit_code == 0, run.stderr
        assert _sha256(run.output / "metrics.json") == expected
