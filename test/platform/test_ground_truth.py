"""Ground truth is looked up in the order of challenges.md (shared rules)."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
import SimpleITK as sitk
from conftest import DEMO_INPUT, GROUND_TRUTH
from test_hostile import (
    DECLARATION,
    Built,
    _audited,
    _kits_case,
    _last_line,
    digestpath1,
    fifo,
    hecktor,
    isic,
    kits,
    metaimage,
    rare25,
    text,
)

from evaluation.errors import ConfigurationError
from evaluation.platform.ground_truth import resolve_ground_truth


def test_order(tmp_path):
    explicit, platform, bundled = tmp_path / "explicit", tmp_path / "platform", tmp_path / "bundled"
    (bundled / "rare25").mkdir(parents=True)
    platform.mkdir()
    assert resolve_ground_truth("rare25", None, platform, bundled) == bundled / "rare25"  # empty tarball dir
    (platform / "val_metadata.json").write_text("{}")
    assert resolve_ground_truth("rare25", None, platform, bundled) == platform
    explicit.mkdir()
    assert resolve_ground_truth("rare25", explicit, platform, bundled) == explicit


def test_nothing_found(tmp_path):
    with pytest.raises(ConfigurationError, match="No ground truth found"):
        resolve_ground_truth("x", None, tmp_path / "none", tmp_path)
    with pytest.raises(ConfigurationError, match="does not exist"):
        resolve_ground_truth("x", tmp_path / "none", tmp_path / "none", tmp_path)


# ------------------------------------------------------- nothing outside the ground-truth folder is opened
# Every kind of ground-truth file the engine opens, through ``python -m evaluation`` as organizers run it (under
# test_hostile's audit hook: every path Python opens is logged): a link that leaves the ground truth is the
# organizer's one line, its target never opened; a link that stays inside is followed; a FIFO never hangs.


def _midog(root: Path) -> Built:
    """A copy of the bundled MIDOG 2021 demo (a per-case JSON reference: points/{case}.json)."""
    shutil.copytree(GROUND_TRUTH / "midog2021", root / "gt")
    shutil.copytree(DEMO_INPUT / "midog2021", root / "input")
    return Built(root / "gt", root / "input", [], root)


def _kits_mhd(root: Path) -> Built:
    """The kits-example demo with its reference labels as detached MetaImage headers (labels/<case>.mhd, each
    naming its <case>.raw beside it), declared as k.toml."""
    _kits_case(root)
    for label in sorted((root / "gt" / "labels").glob("*.mha")):
        sitk.WriteImage(sitk.ReadImage(str(label)), str(label.with_suffix(".mhd")))
        label.unlink()
    (root / DECLARATION).write_text(kits((r'"labels/\{case\}.mha"', '"labels/{case}.mhd"')), encoding="utf-8")
    return Built(root / "gt", root / "in", [], root)


def _moved(relative: str, where: str) -> Callable[[Built, Path], None]:
    """The ground truth's ``relative`` moved ``where`` ("outside": beside the run's folder; "inside": to another
    folder of the ground truth) and linked from its place."""

    def change(built: Built, outside: Path) -> None:
        path = built.ground_truth / relative
        target = (outside if where == "outside" else built.ground_truth / "kept") / path.name
        target.parent.mkdir(exist_ok=True)
        shutil.move(path, target)
        path.symlink_to(target)

    return change


def _data_file(relative: str, named: Callable[[Path], str], make: Callable[[Path], None]) -> Callable:
    """The header ``relative`` rewritten to name ``named(outside)`` as its data file, made by ``make``."""

    def change(built: Built, outside: Path) -> None:
        data = Path(named(outside))
        make(data if data.is_absolute() else (built.ground_truth / relative).parent / data)
        header = built.ground_truth / relative
        if header.suffix == ".mha":
            text(header, metaimage(data_file=named(outside), data=b""))
        else:
            kept = re.sub(r"ElementDataFile = .*", f"ElementDataFile = {named(outside)}", header.read_text())
            header.write_text(kept)

    return change


def _fifo(relative: str) -> Callable[[Built, Path], None]:
    """The ground truth's ``relative`` replaced by a FIFO."""
    return lambda built, outside: fifo(built.ground_truth / relative)


HECKTOR, MHD = "hecktor2025-task1", "labels/case_00000.mhd"
LEAVES = "links outside the ground-truth folder."
NAMES = "names a data file outside the ground-truth folder."
GROUND_TRUTH_FILES = {  # (challenge, build, change, the last line; None: the run succeeds)
    "a reference CSV links outside": ("isic2019", isic, _moved("truth.csv", "outside"),
                                      f"The ground truth's truth.csv {LEAVES}"),
    "a reference CSV links inside": ("isic2019", isic, _moved("truth.csv", "inside"), None),
    "the stacks' JSON links outside": ("rare25", rare25, _moved("val_metadata.json", "outside"),
                                       f"The ground truth's val_metadata.json {LEAVES}"),
    "the stacks' JSON links inside": ("rare25", rare25, _moved("val_metadata.json", "inside"), None),
    "the stacks' JSON is a FIFO": ("rare25", rare25, _fifo("val_metadata.json"),
                                   "The RARE25 ground truth has no val_metadata.json."),
    "a per-case JSON links outside": ("midog2021", _midog, _moved("points/001.json", "outside"),
                                      f"The ground truth's points/001.json {LEAVES}"),
    "a per-case JSON links inside": ("midog2021", _midog, _moved("points/001.json", "inside"), None),
    "a per-case JSON is a FIFO": ("midog2021", _midog, _fifo("points/001.json"),
                                  "job 0f4ea9d0-85ab-467b-8022-08891fbea22b is for '001', which is not in the "
                                  "reference."),  # (a FIFO is no case's file: the job has no reference case)
    "a boxes document links outside": ("digestpath2019-task1", digestpath1, _moved("boxes.json", "outside"),
                                       f"The ground truth's boxes.json {LEAVES}"),
    "a boxes document links inside": ("digestpath2019-task1", digestpath1, _moved("boxes.json", "inside"), None),
    "a label image links outside": (HECKTOR, hecktor(HECKTOR), _moved("labels/P1.mha", "outside"),
                                    f"The ground truth's labels/P1.mha {LEAVES}"),
    "a label image links inside": (HECKTOR, hecktor(HECKTOR), _moved("labels/P1.mha", "inside"), None),
    "an .mha names a FIFO outside": (HECKTOR, hecktor(HECKTOR),
                                     _data_file("labels/P1.mha", lambda out: str(out / "P1.raw"), os.mkfifo),
                                     f"The ground truth's labels/P1.mha {NAMES}"),
    "an .mhd names a file outside": (DECLARATION, _kits_mhd, _data_file(
        MHD, lambda out: "../../../outside/case_00000.raw", lambda path: path.write_bytes(bytes(2**20))),
                                     f"The ground truth's {MHD} {NAMES}"),
    "an .mhd names its .raw inside": (DECLARATION, _kits_mhd, lambda built, outside: None, None),
    "an .mhd names a FIFO inside": (DECLARATION, _kits_mhd, _data_file(MHD, lambda out: "p.raw", os.mkfifo),
                                    f"The ground truth's {MHD} names a data file that is a FIFO (named pipe); it "
                                    "was not read."),
}  # fmt: skip


@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", GROUND_TRUTH_FILES)
def test_a_ground_truth_file_stays_inside_the_ground_truth(tmp_path, name):
    challenge, build, change, expected = GROUND_TRUTH_FILES[name]
    (tmp_path / "outside").mkdir()
    built = build(tmp_path / "run")
    change(built, tmp_path / "outside")
    challenge = str(tmp_path / "run" / challenge) if challenge.endswith(".toml") else challenge
    paths = (
        "--input",
        str(built.input),
        "--ground-truth",
        str(built.ground_truth),
        "--output",
        str(built.scratch / "out"),
    )
    run, outside = _audited(tmp_path / "run", "evaluation", "--challenge", challenge, *paths)
    assert outside == [] and "Traceback" not in run.stdout + run.stderr, (outside, run.stderr[-2000:])
    if expected is None:
        assert run.returncode == 0 and (built.scratch / "out" / "metrics.json").is_file(), run.stderr[-2000:]
    else:
        assert (run.returncode, _last_line(run)) == (1, expected), run.stderr[-2000:]
        assert not (built.scratch / "out" / "metrics.json").exists()
