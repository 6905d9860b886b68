"""Hostile submissions (issue 15): escapes, silent acceptance, unhelpful messages, memory.

Every case is built by code from a tiny valid submission and one hostile change; each must end
with exit code 1, no metrics.json and EXACTLY the expected last stderr line (what participants
see). A new class of hostile input adds rows to ``CASES``. The witness tests check that nothing
outside the input folder is opened: the target is a FIFO, which would block whoever opens it.
"""

from __future__ import annotations

import io
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import SimpleITK as sitk
import tifffile
from conftest import REPO, tiff_header
from PIL import Image

from evaluation.platform import files, sockets
from evaluation.platform.layout import JobSpec, write_input
from evaluation.registry import get

LIMIT_MIB = 1024  # the data limit the in-process runs pretend is in force (deterministic messages)
HUGE = 20 * 2**30  # a 20 GiB sparse file: the size is real, the disk is not used
ISIC_HEADER = "image,MEL,NV,BCC,AK,BKL,DF,VASC,SCC,UNK"
TASK2 = get("digestpath2019-task2").phase  # the declared challenge's sockets
(STACK,), (LIKELIHOODS,) = get("rare25").phase.inputs, get("rare25").phase.outputs  # the declared challenge's sockets
(DETECTION_INPUT,), (DETECTIONS,) = get("digestpath2019-task1").phase.inputs, get("digestpath2019-task1").phase.outputs
(TISSUE_INPUT,), (TISSUE_MASK, MALIGNANCY) = TASK2.inputs, TASK2.outputs
(HPV,) = get("hecktor2025-task3").phase.outputs  # the declared challenge's socket
(SEGMENTATION_2025,) = get("hecktor2025-task1").phase.outputs  # the declared challenge's socket
CT, PET = get("hecktor2026").phase.inputs  # the declared challenge's sockets
SEGMENTATION_2026, T_STAGE, N_STAGE, RFS = get("hecktor2026").phase.outputs


@dataclass
class Built:
    """A valid tiny submission and its ground truth, ready to be made hostile."""

    ground_truth: Path
    input: Path
    pks: list[str]
    scratch: Path

    def output(self, job: int, relative: str) -> Path:
        return self.input / self.pks[job] / "output" / relative

    def image(self, job: int, slug_path: str) -> Path:
        return next((self.input / self.pks[job] / "output" / slug_path).iterdir())

    def edit_predictions(self, change: Callable[[list], None]) -> None:
        document = json.loads((self.input / "predictions.json").read_text())
        change(document)
        (self.input / "predictions.json").write_text(json.dumps(document))


def _folders(root: Path) -> tuple[Path, Path]:
    for folder in (root / "gt", root / "scratch"):
        folder.mkdir(parents=True)
    return root / "gt", root / "scratch"


def rare25(root: Path) -> Built:
    ground_truth, scratch = _folders(root)
    frames = {"s1.tiff": ["neo", "ndbe", "ndbe", "neo"], "s2.tiff": ["ndbe", "neo"]}
    metadata = {
        stack: [
            {"filename": f"{stack}-{i}.png", "index": i, "class": c, "patient_id": f"{stack}-p{i % 2}"}
            for i, c in enumerate(classes)
        ]
        for stack, classes in frames.items()
    }
    (ground_truth / "val_metadata.json").write_text(json.dumps(metadata))
    jobs = [JobSpec({STACK: s}, {LIKELIHOODS: [0.1 * (i + 1) for i in range(len(c))]}) for s, c in frames.items()]
    return Built(ground_truth, root / "input", write_input(root / "input", jobs), scratch)


def isic(root: Path) -> Built:
    ground_truth, scratch = _folders(root)
    rows = [f"ISIC_000000{i}," + ",".join("1.0" if c == i else "0.0" for c in range(9)) for i in range(3)]
    (ground_truth / "truth.csv").write_text("\n".join([ISIC_HEADER, *rows]) + "\n")
    (root / "input").mkdir()
    submitted = [f"ISIC_000000{i}," + ",".join("0.9" if c == i else "0.1" for c in range(9)) for i in range(3)]
    (root / "input" / "predictions.csv").write_text("\n".join([ISIC_HEADER, *submitted]) + "\n")
    return Built(ground_truth, root / "input", [], scratch)


def digestpath1(root: Path) -> Built:
    ground_truth, scratch = _folders(root)
    (ground_truth / "boxes.json").write_text(json.dumps({"p1.jpg": [[10, 10, 30, 30]], "n1.jpg": []}))
    jobs = [
        JobSpec({DETECTION_INPUT: "p1.jpg"}, {DETECTIONS: [[10, 10, 30, 30, 0.9]]}),
        JobSpec({DETECTION_INPUT: "n1.jpg"}, {DETECTIONS: []}),
    ]
    return Built(ground_truth, root / "input", write_input(root / "input", jobs), scratch)


def digestpath2(root: Path) -> Built:
    ground_truth, scratch = _folders(root)
    (ground_truth / "masks").mkdir()
    lesion = np.zeros((4, 4), np.uint8)
    lesion[:2, :2] = 255
    jobs = []
    for name, mask, label in (("a.png", lesion, 1), ("b.png", np.zeros((4, 4), np.uint8), 0)):
        Image.fromarray(mask).save(ground_truth / "masks" / name)
        sitk.WriteImage(sitk.GetImageFromArray((mask > 0).astype(np.uint8)), str(scratch / f"{name}.mha"))
        jobs.append(JobSpec({TISSUE_INPUT: name}, {TISSUE_MASK: scratch / f"{name}.mha", MALIGNANCY: 0.5 + label / 4}))
    (ground_truth / "labels.csv").write_text("image,label\na.png,1\nb.png,0\n")
    return Built(ground_truth, root / "input", write_input(root / "input", jobs), scratch)


def hecktor(challenge: str) -> Callable[[Path], Built]:
    """Two patients P1, P2 (1x1x4 label maps, clinical rows) and every output the phase reads."""

    def build(root: Path) -> Built:
        ground_truth, scratch = _folders(root)
        (ground_truth / "labels").mkdir()
        rows = ["PatientID,RFS,Relapse,T-stage,N-stage,HPV Status", "P1,100,1,T1,N0,1", "P2,300,0,T2,N1,0"]
        (ground_truth / "clinical.csv").write_text("\n".join(rows) + "\n")
        jobs = []
        for index, patient in enumerate(("P1", "P2")):
            label = sitk.GetImageFromArray(np.array([[[0, 1, 1, 2]]], np.uint8))
            sitk.WriteImage(label, str(ground_truth / "labels" / f"{patient}.mha"))
            sitk.WriteImage(label, str(scratch / f"{patient}.mha"))
            outputs: dict = {
                "hecktor2026": {
                    SEGMENTATION_2026: scratch / f"{patient}.mha",
                    T_STAGE: "T1",
                    N_STAGE: "N0",
                    RFS: 200.0 + index,
                },
                "hecktor2025-task1": {SEGMENTATION_2025: scratch / f"{patient}.mha"},
                "hecktor2025-task2": {RFS: 0.5 + index},
                "hecktor2025-task3": {HPV: True},
            }[challenge]
            jobs.append(JobSpec({CT: f"{patient}__CT.mha", PET: f"{patient}__PT.mha"}, outputs))
        if challenge in ("hecktor2025-task2", "hecktor2025-task3"):
            shutil.rmtree(ground_truth / "labels")
        return Built(ground_truth, root / "input", write_input(root / "input", jobs), scratch)

    return build


# ------------------------------------------------------------------------------- hostile changes


def replace_with(path: Path, make: Callable[[Path], None]) -> None:
    """Remove ``path`` (file or folder) and put something else in its place."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif os.path.lexists(path):
        path.unlink()
    make(path)


def fifo(path: Path) -> None:
    replace_with(path, os.mkfifo)


def folder(path: Path) -> None:
    replace_with(path, lambda p: p.mkdir())


def sparse(path: Path, size: int = HUGE, head: bytes = b"[") -> None:
    def make(target: Path) -> None:
        with open(target, "wb") as stream:
            stream.write(head)
            stream.truncate(size)

    replace_with(path, make)


def link(path: Path, target: Path) -> None:
    replace_with(path, lambda p: p.symlink_to(target))


def text(path: Path, content: str | bytes) -> None:
    data = content.encode() if isinstance(content, str) else content
    replace_with(path, lambda p: p.write_bytes(data))


def metaimage(dims: str = "4 1 1", data_file: str = "LOCAL", data: bytes = b"\0\1\1\2", extra: str = "") -> bytes:
    return (
        f"ObjectType = Image\nNDims = {len(dims.split())}\nDimSize = {dims}\nElementType = MET_UCHAR\n{extra}"
        f"ElementDataFile = {data_file}\n"
    ).encode() + data


def nifti(magic: bytes = b"n+1\0", dims: tuple[int, ...] = (3, 4, 1, 1, 1, 1, 1, 1)) -> bytes:
    header = bytearray(352)
    header[0:4] = (348).to_bytes(4, "little")
    header[40:56] = np.array(dims, "<i2").tobytes()
    header[70:74] = np.array([2, 8], "<i2").tobytes()  # uint8, 8 bits
    header[108:112] = np.array([352.0], "<f4").tobytes()
    header[344:348] = magic
    return bytes(header) + b"\0\1\1\2"


def relative_path(job: int, slug: str, value: str) -> Callable[[Built], None]:
    def change(document: list) -> None:
        for output in document[job]["outputs"]:
            if output["interface"]["slug"] == slug:
                output["interface"]["relative_path"] = value

    return lambda built: built.edit_predictions(change)


@dataclass(frozen=True)
class Hostile:
    challenge: str
    build: Callable[[Path], Built]
    change: Callable[[Built], None]
    line: str | Callable[[Built], str]
    extra: tuple[str, ...] = ()


R = LIKELIHOODS.relative_path
D = DETECTIONS.relative_path
M = MALIGNANCY.relative_path
SEG25, SEG26 = SEGMENTATION_2025.relative_path, SEGMENTATION_2026.relative_path
NOT_REGULAR = "not a regular file; it was not read."
OWN = "points outside the output folder of its own job"
EXTERNAL = "its MetaImage header names an external data file (ElementDataFile must be LOCAL: only a self-contained .mha is accepted)."  # noqa: E501
TOO_BIG_IMAGE = "more than the memory limit in force (1024 MiB)."


def _lesion_tiff() -> bytes:
    """Job 0's mask (a.png: the top-left 2x2 lesion) as a zlib-compressed TIFF written by tifffile."""
    stream = io.BytesIO()
    tifffile.imwrite(stream, np.pad(np.ones((2, 2), np.uint8), ((0, 2), (0, 2))), compression="zlib")
    return stream.getvalue()


LESION_TIFF = _lesion_tiff()


def tiff_mask(built: Built, job: int, data: bytes) -> None:
    """Replace job ``job``'s mask by ``data`` named mask.tif."""
    built.image(job, TISSUE_MASK.relative_path).unlink()
    (built.output(job, TISSUE_MASK.relative_path) / "mask.tif").write_bytes(data)


def seg_line(case: str, slug: str, why: str) -> str:
    return f"Case {case}: the image output '{slug}' could not be read: {why}"


CASES: dict[str, Hostile] = {
    # --- escapes: predictions.json itself
    "rare25 predictions.json links to /etc/passwd": Hostile(
        "rare25",
        rare25,
        lambda b: link(b.input / "predictions.json", Path("/etc/passwd")),
        "predictions.json is a link that points outside the input folder; it was not read.",
    ),
    "rare25 predictions.json links to the ground truth": Hostile(
        "rare25",
        rare25,
        lambda b: link(b.input / "predictions.json", b.ground_truth / "val_metadata.json"),
        "predictions.json is a link that points outside the input folder; it was not read.",
    ),
    "rare25 predictions.json is a FIFO": Hostile(
        "rare25",
        rare25,
        lambda b: fifo(b.input / "predictions.json"),
        f"predictions.json is a FIFO (named pipe), {NOT_REGULAR}",
    ),
    "rare25 predictions.json is a folder": Hostile(
        "rare25", rare25, lambda b: folder(b.input / "predictions.json"), f"predictions.json is a folder, {NOT_REGULAR}"
    ),
    "rare25 predictions.json is 20 GiB": Hostile(
        "rare25",
        rare25,
        lambda b: sparse(b.input / "predictions.json"),
        "predictions.json is 20480.0 MiB, more than the 256.0 MiB allowed; it was not read.",
    ),
    "rare25 predictions.json nested too deeply": Hostile(
        "rare25",
        rare25,
        lambda b: text(b.input / "predictions.json", "[" * 200_000 + "]" * 200_000),
        "predictions.json is not valid JSON (nested too deeply).",
    ),
    "hecktor2026 predictions.json links to clinical.csv": Hostile(
        "hecktor2026",
        hecktor("hecktor2026"),
        lambda b: link(b.input / "predictions.json", b.ground_truth / "clinical.csv"),
        "predictions.json is a link that points outside the input folder; it was not read.",
    ),
    # --- escapes: output files
    "rare25 output links to /etc/passwd": Hostile(
        "rare25",
        rare25,
        lambda b: link(b.output(0, R), Path("/etc/passwd")),
        lambda b: f"Case s1.tiff: the output path '{b.pks[0]}/output/{R}' points outside the input folder.",
    ),
    "rare25 output links to the ground truth": Hostile(
        "rare25",
        rare25,
        lambda b: link(b.output(1, R), b.ground_truth / "val_metadata.json"),
        lambda b: f"Case s2.tiff: the output path '{b.pks[1]}/output/{R}' points outside the input folder.",
    ),
    "rare25 output links into another job": Hostile(
        "rare25",
        rare25,
        lambda b: link(b.output(0, R), b.output(1, R)),
        lambda b: f"Case s1.tiff: the output '{LIKELIHOODS.slug}' ({R}) {OWN} {b.pks[0]}; it was not read.",
    ),
    "rare25 relative_path into another job": Hostile(
        "rare25",
        rare25,
        lambda b: relative_path(0, LIKELIHOODS.slug, f"../../{b.pks[1]}/output/{R}")(b),
        lambda b: (
            f"Case s1.tiff: the output '{LIKELIHOODS.slug}' (../../{b.pks[1]}/output/{R}) {OWN} {b.pks[0]}; "
            "it was not read."
        ),
    ),
    "rare25 output is a FIFO": Hostile(
        "rare25",
        rare25,
        lambda b: fifo(b.output(0, R)),
        f"Case s1.tiff: the output '{LIKELIHOODS.slug}' is a FIFO (named pipe), {NOT_REGULAR}",
    ),
    "rare25 output is a folder": Hostile(
        "rare25",
        rare25,
        lambda b: folder(b.output(1, R)),
        f"Case s2.tiff: the output '{LIKELIHOODS.slug}' is a folder, {NOT_REGULAR}",
    ),
    "rare25 output is 20 GiB": Hostile(
        "rare25",
        rare25,
        lambda b: sparse(b.output(0, R)),
        "The likelihoods of stack s1.tiff is 20480.0 MiB, more than the 64.0 MiB allowed; it was not read.",
    ),
    "rare25 job folder links to another job": Hostile(
        "rare25",
        rare25,
        lambda b: link(b.input / b.pks[0], b.input / b.pks[1]),
        lambda b: f"Case s1.tiff: the output '{LIKELIHOODS.slug}' ({R}) {OWN} {b.pks[0]}; it was not read.",
    ),
    "rare25 relative_path with a NUL byte": Hostile(
        "rare25",
        rare25,
        relative_path(0, LIKELIHOODS.slug, "likelihoods\u0000.json"),
        lambda b: f"Case s1.tiff: the output path '{b.pks[0]}/output/likelihoods\\x00.json' is not a valid file name.",
    ),
    "rare25 absolute relative_path": Hostile(
        "rare25",
        rare25,
        relative_path(1, LIKELIHOODS.slug, "/etc/passwd"),
        "Case s2.tiff: the output path '/etc/passwd' points outside the input folder.",
    ),
    # --- unhelpful messages, RARE25
    "rare25 likelihoods nested too deeply": Hostile(
        "rare25",
        rare25,
        lambda b: text(b.output(0, R), "[" * 200_000 + "]" * 200_000),
        "The likelihoods of stack s1.tiff is not valid JSON (nested too deeply).",
    ),
    "rare25 likelihood too large for a float": Hostile(
        "rare25",
        rare25,
        lambda b: text(b.output(0, R), f"[0.1, {10**400}, 0.3, 0.4]"),
        "Likelihood 1 of stack s1.tiff is too large for a floating-point number.",
    ),
    "rare25 likelihood with 5000 digits": Hostile(
        "rare25",
        rare25,
        lambda b: text(b.output(0, R), f"[0.1, {'9' * 5000}, 0.3, 0.4]"),
        "The likelihoods of stack s1.tiff is not valid JSON (a number has too many digits).",
    ),
    "rare25 likelihoods null": Hostile(
        "rare25",
        rare25,
        lambda b: text(b.output(1, R), "null"),
        "The likelihoods of stack s2.tiff are not a JSON list of numbers.",
    ),
    "rare25 corrupt val_metadata.json": Hostile(
        "rare25",
        rare25,
        lambda b: text(b.ground_truth / "val_metadata.json", '{"s1.tiff": [{"index": '),
        "The RARE25 ground truth val_metadata.json is malformed (JSONDecodeError): fix it in the phase's ground "
        "truth (see the documentation's RARE25 page for its format).",
    ),
    "rare25 val_metadata.json not UTF-8": Hostile(
        "rare25",
        rare25,
        lambda b: text(b.ground_truth / "val_metadata.json", b'{"s\xe9": []}'),
        "The RARE25 ground truth val_metadata.json is malformed (UnicodeDecodeError): fix it in the phase's ground "
        "truth (see the documentation's RARE25 page for its format).",
    ),
    # --- ISIC (a prediction-file phase)
    "isic2019 predictions.csv links to /etc/passwd": Hostile(
        "isic2019",
        isic,
        lambda b: link(b.input / "predictions.csv", Path("/etc/passwd")),
        "the output path 'predictions.csv' points outside the input folder.",
    ),
    "isic2019 the only CSV links to truth.csv": Hostile(
        "isic2019",
        isic,
        lambda b: (
            b.input.joinpath("predictions.csv").unlink(),
            link(b.input / "mine.csv", b.ground_truth / "truth.csv"),
        ),
        "the output path 'mine.csv' points outside the input folder.",
    ),
    "isic2019 predictions.csv is a FIFO": Hostile(
        "isic2019",
        isic,
        lambda b: fifo(b.input / "predictions.csv"),
        f"The prediction file predictions.csv is a FIFO (named pipe), {NOT_REGULAR}",
    ),
    "isic2019 predictions.csv is a folder": Hostile(
        "isic2019",
        isic,
        lambda b: folder(b.input / "predictions.csv"),
        f"The prediction file predictions.csv is a folder, {NOT_REGULAR}",
    ),
    "isic2019 predictions.csv is 20 GiB": Hostile(
        "isic2019",
        isic,
        lambda b: sparse(b.input / "predictions.csv", head=ISIC_HEADER.encode()),
        "The prediction file predictions.csv is 21474.8 MB, more than the 100 MB allowed; a CSV of probabilities "
        "for every image is far smaller.",
    ),
    "isic2019 non-numeric value names the row": Hostile(
        "isic2019",
        isic,
        lambda b: text(b.input / "predictions.csv", (b.input / "predictions.csv").read_text().replace("0.9", "x", 1)),
        "CSV contains non-floating-point value(s) in columns: ['MEL']. First rows at fault: ISIC_0000000 (MEL='x').",
    ),
    "isic2019 not UTF-8 names the line": Hostile(
        "isic2019",
        isic,
        lambda b: text(
            b.input / "predictions.csv", (b.input / "predictions.csv").read_bytes().replace(b"_0000001", b"_\xff001")
        ),
        "Could not parse CSV: could not decode file as UTF-8. First lines that are not UTF-8: 3 (ISIC_\\xff001).",
    ),
    "isic2019 corrupt truth.csv": Hostile(
        "isic2019",
        isic,
        lambda b: text(b.ground_truth / "truth.csv", b"image,MEL\n\xff\xfe,1\n"),
        "The ISIC ground truth truth.csv cannot be parsed as UTF-8 CSV (UnicodeDecodeError): fix it in the phase's "
        "ground truth.",
    ),
    # --- DigestPath task 1
    "digestpath1 negative coordinate": Hostile(
        "digestpath2019-task1",
        digestpath1,
        lambda b: text(b.output(0, D), "[[-4, 10, 30, 30, 0.9]]"),
        "Detection 0 of image p1.jpg has a negative coordinate.",
    ),
    "digestpath1 negative corner in platform boxes": Hostile(
        "digestpath2019-task1",
        digestpath1,
        lambda b: text(
            b.output(1, D),
            json.dumps({"boxes": [{"corners": [[5, -1, 0], [9, -1, 0], [9, 8, 0], [5, 8, 0]], "probability": 0.4}]}),
        ),
        "Detection 0 of image n1.jpg has a negative coordinate.",
    ),
    "digestpath1 detections null": Hostile(
        "digestpath2019-task1",
        digestpath1,
        lambda b: text(b.output(0, D), "null"),
        f"Case p1.jpg: the output '{DETECTIONS.slug}' holds null instead of a value.",
    ),
    "digestpath1 detections nested too deeply": Hostile(
        "digestpath2019-task1",
        digestpath1,
        lambda b: text(b.output(0, D), "[" * 200_000 + "]" * 200_000),
        f"Case p1.jpg: the output '{DETECTIONS.slug}' is not valid JSON (nested too deeply).",
    ),
    "digestpath1 coordinate too large for a float": Hostile(
        "digestpath2019-task1",
        digestpath1,
        lambda b: text(b.output(0, D), f"[[1, 1, {10**400}, 30, 0.9]]"),
        "Detection 0 of image p1.jpg is too large for a floating-point number.",
    ),
    "digestpath1 detections are 20 GiB": Hostile(
        "digestpath2019-task1",
        digestpath1,
        lambda b: sparse(b.output(0, D)),
        f"Case p1.jpg: the output '{DETECTIONS.slug}' is 20480.0 MiB, more than the 64.0 MiB allowed; it was not read.",
    ),
    "digestpath1 detections are a FIFO": Hostile(
        "digestpath2019-task1",
        digestpath1,
        lambda b: fifo(b.output(1, D)),
        f"Case n1.jpg: the output '{DETECTIONS.slug}' is a FIFO (named pipe), {NOT_REGULAR}",
    ),
    "digestpath1 detections link to boxes.json": Hostile(
        "digestpath2019-task1",
        digestpath1,
        lambda b: link(b.output(0, D), b.ground_truth / "boxes.json"),
        lambda b: f"Case p1.jpg: the output path '{b.pks[0]}/output/{D}' points outside the input folder.",
    ),
    "digestpath1 relative_path into another job": Hostile(
        "digestpath2019-task1",
        digestpath1,
        lambda b: relative_path(1, DETECTIONS.slug, f"../../{b.pks[0]}/output/{D}")(b),
        lambda b: (
            f"Case n1.jpg: the output '{DETECTIONS.slug}' (../../{b.pks[0]}/output/{D}) {OWN} {b.pks[1]}; "
            "it was not read."
        ),
    ),
    "digestpath1 corrupt boxes.json": Hostile(
        "digestpath2019-task1",
        digestpath1,
        lambda b: text(b.ground_truth / "boxes.json", "[" * 100_000),
        "The DigestPath ground-truth boxes are malformed (RecursionError): fix boxes.json (or the XML files) in the "
        "phase's ground truth.",
    ),
    # --- DigestPath task 2: image outputs
    "digestpath2 mask reads the reference mask": Hostile(
        "digestpath2019-task2",
        digestpath2,
        lambda b: text(
            b.image(0, TISSUE_MASK.relative_path), metaimage("4 4", str(b.ground_truth / "masks" / "a.png"), b"")
        ),
        seg_line("a.png", TISSUE_MASK.slug, EXTERNAL),
    ),
    "digestpath2 mask with a LIST of data files": Hostile(
        "digestpath2019-task2",
        digestpath2,
        lambda b: text(b.image(1, TISSUE_MASK.relative_path), metaimage("4 4", "LIST 2D\n/etc/hostname", b"")),
        seg_line("b.png", TISSUE_MASK.slug, EXTERNAL),
    ),
    "digestpath2 mask declares more voxels than memory": Hostile(
        "digestpath2019-task2",
        digestpath2,
        lambda b: text(b.image(0, TISSUE_MASK.relative_path), metaimage("100000 100000", data=b"\0" * 16)),
        seg_line("a.png", TISSUE_MASK.slug, f"its header declares 9536.7 MiB of voxel data, {TOO_BIG_IMAGE}"),
    ),
    "digestpath2 mask is truncated": Hostile(
        "digestpath2019-task2",
        digestpath2,
        lambda b: text(b.image(0, TISSUE_MASK.relative_path), metaimage("4 4", data=b"\0" * 10)),
        seg_line("a.png", TISSUE_MASK.slug, "its header declares 16 bytes of voxel data but the file holds 10."),
    ),
    "digestpath2 mask is a FIFO": Hostile(
        "digestpath2019-task2",
        digestpath2,
        lambda b: fifo(b.image(1, TISSUE_MASK.relative_path)),
        f"Case b.png: the image output '{TISSUE_MASK.slug}' is a FIFO (named pipe), {NOT_REGULAR}",
    ),
    "digestpath2 mask links to the reference mask": Hostile(
        "digestpath2019-task2",
        digestpath2,
        lambda b: link(b.image(0, TISSUE_MASK.relative_path), b.ground_truth / "masks" / "a.png"),
        lambda b: (
            f"Case a.png: the output path '{b.pks[0]}/output/{TISSUE_MASK.relative_path}/"
            f"{b.image(0, TISSUE_MASK.relative_path).name}' points outside the input folder."
        ),
    ),
    "digestpath2 mask folder links to another job": Hostile(
        "digestpath2019-task2",
        digestpath2,
        lambda b: link(b.output(1, TISSUE_MASK.relative_path), b.output(0, TISSUE_MASK.relative_path)),
        lambda b: (
            f"Case b.png: the output '{TISSUE_MASK.slug}' ({TISSUE_MASK.relative_path}) {OWN} {b.pks[1]}; "
            "it was not read."
        ),
    ),
    "digestpath2 PNG mask declares more pixels than memory": Hostile(
        "digestpath2019-task2",
        digestpath2,
        lambda b: (
            b.image(0, TISSUE_MASK.relative_path).unlink(),
            text(
                b.output(0, TISSUE_MASK.relative_path) / "mask.png",
                b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + (200_000).to_bytes(4, "big") * 2 + b"\x08\x00\0\0\0" + b"\0" * 4,
            ),
        ),
        seg_line("a.png", TISSUE_MASK.slug, f"its header declares 38147.0 MiB of voxel data, {TOO_BIG_IMAGE}"),
    ),
    "digestpath2 TIFF mask is a decompression bomb": Hostile(
        "digestpath2019-task2",
        digestpath2,
        lambda b: tiff_mask(b, 0, tiff_header(((100_000, 100_000),))),
        seg_line("a.png", TISSUE_MASK.slug, f"its header declares 9536.7 MiB of voxel data, {TOO_BIG_IMAGE}"),
    ),
    "digestpath2 TIFF mask pages add up beyond memory": Hostile(
        "digestpath2019-task2",
        digestpath2,
        lambda b: tiff_mask(b, 1, tiff_header(((20_000, 20_000), (1, 1), (1, 1)), ">", big=True)),
        seg_line("b.png", TISSUE_MASK.slug, f"its header declares 1144.4 MiB of voxel data, {TOO_BIG_IMAGE}"),
    ),
    "digestpath2 TIFF mask without a TIFF header": Hostile(
        "digestpath2019-task2",
        digestpath2,
        lambda b: tiff_mask(b, 0, b"GIF89a" + b"\0" * 20),
        seg_line("a.png", TISSUE_MASK.slug, "it does not start with a TIFF header."),
    ),
    "digestpath2 TIFF mask directories loop": Hostile(
        "digestpath2019-task2",
        digestpath2,
        lambda b: tiff_mask(b, 1, tiff_header(((4, 4), (4, 4)), loop=True)),
        seg_line("b.png", TISSUE_MASK.slug, "its TIFF directories form a loop."),
    ),
    "digestpath2 TIFF mask directory beyond the file": Hostile(
        "digestpath2019-task2",
        digestpath2,
        lambda b: tiff_mask(b, 0, b"MM\0*\x7f\xff\xff\xff" + b"\0" * 8),
        seg_line("a.png", TISSUE_MASK.slug, "a TIFF directory lies beyond the end of the file."),
    ),
    "digestpath2 mask in a format no header check knows": Hostile(
        "digestpath2019-task2",
        digestpath2,
        lambda b: text(b.output(0, TISSUE_MASK.relative_path), b"BM" + b"\0" * 60),
        seg_line("a.png", TISSUE_MASK.slug, "it is not a .mha, .nii, .nii.gz, .png, .tif or .tiff image file."),
    ),
    "digestpath2 likelihood null": Hostile(
        "digestpath2019-task2",
        digestpath2,
        lambda b: text(b.output(0, M), "null"),
        f"Case a.png: the output '{MALIGNANCY.slug}' holds null instead of a value.",
    ),
    "digestpath2 likelihood too large for a float": Hostile(
        "digestpath2019-task2",
        digestpath2,
        lambda b: text(b.output(1, M), str(10**400)),
        "The malignancy likelihood of image b.png is too large for a floating-point number.",
    ),
    "digestpath2 unreadable reference mask": Hostile(
        "digestpath2019-task2",
        digestpath2,
        lambda b: text(b.ground_truth / "masks" / "b.png", b"not a png"),
        "The reference mask of image b.png cannot be read as an image: replace masks/b.png in the phase's ground "
        "truth.",
    ),
    "digestpath2 corrupt labels.csv": Hostile(
        "digestpath2019-task2",
        digestpath2,
        lambda b: text(b.ground_truth / "labels.csv", b"image,label\na.png,\xff\n"),
        "labels.csv must be UTF-8 CSV with columns image,label and 0/1 labels (UnicodeDecodeError): fix it in the "
        "phase's ground truth.",
    ),
    # --- HECKTOR: values
    "hecktor2026 negative RFS time": Hostile(
        "hecktor2026",
        hecktor("hecktor2026"),
        lambda b: text(b.output(0, RFS.relative_path), "-5"),
        "The RFS output of P1 is -5 days; a predicted time cannot be negative.",
    ),
    "hecktor2026 RFS null": Hostile(
        "hecktor2026",
        hecktor("hecktor2026"),
        lambda b: text(b.output(1, RFS.relative_path), "null"),
        "Case P2: the output 'rfs' holds null instead of a value.",
    ),
    "hecktor2025-task2 RFS null": Hostile(
        "hecktor2025-task2",
        hecktor("hecktor2025-task2"),
        lambda b: text(b.output(0, RFS.relative_path), "null"),
        "Case P1: the output 'rfs' holds null instead of a value.",
    ),
    "hecktor2025-task2 RFS too large for a float": Hostile(
        "hecktor2025-task2",
        hecktor("hecktor2025-task2"),
        lambda b: text(b.output(1, RFS.relative_path), str(-(10**400))),
        "The RFS output of P2 is too large for a floating-point number.",
    ),
    "hecktor2025-task2 RFS nested too deeply": Hostile(
        "hecktor2025-task2",
        hecktor("hecktor2025-task2"),
        lambda b: text(b.output(0, RFS.relative_path), "[" * 200_000 + "]" * 200_000),
        "Case P1: the output 'rfs' is not valid JSON (nested too deeply).",
    ),
    "hecktor2025-task2 rfs.json links to clinical.csv": Hostile(
        "hecktor2025-task2",
        hecktor("hecktor2025-task2"),
        lambda b: link(b.output(0, RFS.relative_path), b.ground_truth / "clinical.csv"),
        lambda b: f"Case P1: the output path '{b.pks[0]}/output/rfs.json' points outside the input folder.",
    ),
    "hecktor2025-task2 relative_path into another job": Hostile(
        "hecktor2025-task2",
        hecktor("hecktor2025-task2"),
        lambda b: relative_path(1, RFS.slug, f"../../{b.pks[0]}/output/rfs.json")(b),
        lambda b: f"Case P2: the output 'rfs' (../../{b.pks[0]}/output/rfs.json) {OWN} {b.pks[1]}; it was not read.",
    ),
    "hecktor2025-task3 HPV null": Hostile(
        "hecktor2025-task3",
        hecktor("hecktor2025-task3"),
        lambda b: text(b.output(1, HPV.relative_path), "null"),
        "Case P2: the output 'hpv-status' holds null instead of a value.",
    ),
    "hecktor2025-task3 HPV is a FIFO": Hostile(
        "hecktor2025-task3",
        hecktor("hecktor2025-task3"),
        lambda b: fifo(b.output(0, HPV.relative_path)),
        f"Case P1: the output 'hpv-status' is a FIFO (named pipe), {NOT_REGULAR}",
    ),
    "hecktor2026 N4 stage": Hostile(
        "hecktor2026",
        hecktor("hecktor2026"),
        lambda b: text(b.output(0, N_STAGE.relative_path), '"N4"'),
        "The N stage of P1 is 'N4'; expected a string N0..N3.",
    ),
    "hecktor2026 T5 stage": Hostile(
        "hecktor2026",
        hecktor("hecktor2026"),
        lambda b: text(b.output(1, T_STAGE.relative_path), '"T5"'),
        "The T stage of P2 is 'T5'; expected a string T1..T4.",
    ),
    "hecktor2026 stage is 20 GiB": Hostile(
        "hecktor2026",
        hecktor("hecktor2026"),
        lambda b: sparse(b.output(1, T_STAGE.relative_path)),
        "Case P2: the output 't-stage' is 20480.0 MiB, more than the 64.0 MiB allowed; it was not read.",
    ),
    "hecktor2026 T stage null": Hostile(
        "hecktor2026",
        hecktor("hecktor2026"),
        lambda b: text(b.output(0, T_STAGE.relative_path), "null"),
        "Case P1: the output 't-stage' holds null instead of a value.",
    ),
    "hecktor2025-task3 HPV links into another job": Hostile(
        "hecktor2025-task3",
        hecktor("hecktor2025-task3"),
        lambda b: link(b.output(0, HPV.relative_path), b.output(1, HPV.relative_path)),
        lambda b: f"Case P1: the output 'hpv-status' ({HPV.relative_path}) {OWN} {b.pks[0]}; it was not read.",
    ),
    "hecktor2025-task1 lower-case elementdatafile": Hostile(
        "hecktor2025-task1",
        hecktor("hecktor2025-task1"),
        lambda b: text(
            b.image(0, SEG25), metaimage(data_file="/etc/hostname", data=b"").replace(b"ElementData", b"elementdata")
        ),
        seg_line("P1", SEGMENTATION_2025.slug, EXTERNAL),
    ),
    # --- HECKTOR: segmentations
    "hecktor2025-task1 segmentation reads the reference label map": Hostile(
        "hecktor2025-task1",
        hecktor("hecktor2025-task1"),
        lambda b: text(b.image(0, SEG25), metaimage(data_file=str(b.ground_truth / "labels" / "P1.mha"), data=b"")),
        seg_line("P1", SEGMENTATION_2025.slug, EXTERNAL),
    ),
    "hecktor2025-task1 segmentation with a file pattern": Hostile(
        "hecktor2025-task1",
        hecktor("hecktor2025-task1"),
        lambda b: text(b.image(1, SEG25), metaimage("4 1 2", "../../../../gt/slice%d.raw 1 2 1", b"")),
        seg_line("P2", SEGMENTATION_2025.slug, EXTERNAL),
    ),
    "hecktor2025-task1 detached .mhd header": Hostile(
        "hecktor2025-task1",
        hecktor("hecktor2025-task1"),
        lambda b: (
            text(b.image(0, SEG25).with_suffix(".mhd"), metaimage(data_file="x.raw", data=b"")),
            relative_path(0, SEGMENTATION_2025.slug, f"{SEG25}/{b.image(0, SEG25).stem}.mhd")(b),
        ),
        seg_line(
            "P1",
            SEGMENTATION_2025.slug,
            "it is a detached MetaImage header (.mhd); only a self-contained .mha is accepted.",
        ),
    ),
    "hecktor2025-task1 segmentation declares more voxels than memory": Hostile(
        "hecktor2025-task1",
        hecktor("hecktor2025-task1"),
        lambda b: text(b.image(0, SEG25), metaimage("2048 2048 2048", extra="CompressedData = True\n", data=b"x")),
        seg_line("P1", SEGMENTATION_2025.slug, f"its header declares 8192.0 MiB of voxel data, {TOO_BIG_IMAGE}"),
    ),
    "hecktor2025-task1 segmentation is a 20 GiB sparse file": Hostile(
        "hecktor2025-task1",
        hecktor("hecktor2025-task1"),
        lambda b: sparse(b.image(1, SEG25), head=metaimage("4096 4096 1280", data=b"")),
        seg_line("P2", SEGMENTATION_2025.slug, f"its header declares 20480.0 MiB of voxel data, {TOO_BIG_IMAGE}"),
    ),
    "hecktor2025-task1 segmentation is a FIFO": Hostile(
        "hecktor2025-task1",
        hecktor("hecktor2025-task1"),
        lambda b: fifo(b.image(0, SEG25)),
        f"Case P1: the image output '{SEGMENTATION_2025.slug}' is a FIFO (named pipe), {NOT_REGULAR}",
    ),
    "hecktor2025-task1 segmentation is a folder": Hostile(
        "hecktor2025-task1",
        hecktor("hecktor2025-task1"),
        lambda b: folder(b.image(1, SEG25)),
        f"Case P2: the image output '{SEGMENTATION_2025.slug}' is a folder, {NOT_REGULAR}",
    ),
    "hecktor2025-task1 NIfTI .hdr/.img pair": Hostile(
        "hecktor2025-task1",
        hecktor("hecktor2025-task1"),
        lambda b: (b.image(0, SEG25).unlink(), text(b.output(0, SEG25) / "seg.nii", nifti(b"ni1\0"))),
        seg_line(
            "P1", SEGMENTATION_2025.slug, "it is not a single-file NIfTI image (an .hdr/.img pair or Analyze header)."
        ),
    ),
    "hecktor2025-task1 NIfTI is truncated": Hostile(  # ITK would fill the missing voxels with 0, silently
        "hecktor2025-task1",
        hecktor("hecktor2025-task1"),
        lambda b: (b.image(0, SEG25).unlink(), text(b.output(0, SEG25) / "seg.nii", nifti()[:-2])),
        seg_line("P1", SEGMENTATION_2025.slug, "its header declares 4 bytes of voxel data but the file holds 2."),
    ),
    "hecktor2025-task1 NIfTI voxels after the end of the file": Hostile(
        "hecktor2025-task1",
        hecktor("hecktor2025-task1"),
        lambda b: (
            b.image(0, SEG25).unlink(),
            text(b.output(0, SEG25) / "seg.nii", nifti()[:108] + np.array([1e6], "<f4").tobytes() + nifti()[112:]),
        ),
        seg_line("P1", SEGMENTATION_2025.slug, "its header declares 4 bytes of voxel data but the file holds 0."),
    ),
    "hecktor2025-task1 NIfTI declares more voxels than memory": Hostile(
        "hecktor2025-task1",
        hecktor("hecktor2025-task1"),
        lambda b: (
            b.image(1, SEG25).unlink(),
            text(b.output(1, SEG25) / "seg.nii", nifti(dims=(3, 30000, 30000, 30000, 1, 1, 1, 1))),
        ),
        seg_line("P2", SEGMENTATION_2025.slug, f"its header declares 25749206.5 MiB of voxel data, {TOO_BIG_IMAGE}"),
    ),
    "hecktor2026 segmentation links to the reference label map": Hostile(
        "hecktor2026",
        hecktor("hecktor2026"),
        lambda b: link(b.image(0, SEG26), b.ground_truth / "labels" / "P1.mha"),
        lambda b: (
            f"Case P1: the output path '{b.pks[0]}/output/{SEG26}/{b.image(0, SEG26).name}' points outside the "
            "input folder."
        ),
    ),
    "hecktor2026 segmentation not a MetaImage": Hostile(
        "hecktor2026",
        hecktor("hecktor2026"),
        lambda b: text(b.image(1, SEG26), b"\x00garbage"),
        seg_line("P2", SEGMENTATION_2026.slug, "it does not start with a MetaImage header."),
    ),
    # --- HECKTOR: organizer faults
    "hecktor2026 corrupt label map": Hostile(
        "hecktor2026",
        hecktor("hecktor2026"),
        lambda b: text(b.ground_truth / "labels" / "P2.mha", metaimage()[:-2]),
        "The reference segmentation of P2 could not be read as an image file; replace labels/P2.mha in the phase's "
        "ground truth.",
    ),
    "hecktor2025-task2 clinical.csv not UTF-8": Hostile(
        "hecktor2025-task2",
        hecktor("hecktor2025-task2"),
        lambda b: text(b.ground_truth / "clinical.csv", b"PatientID,RFS\n\xff\xfe,1\n"),
        "The HECKTOR ground truth clinical.csv cannot be parsed as UTF-8 CSV (UnicodeDecodeError): fix it in the "
        "phase's ground truth.",
    ),
}


@pytest.fixture(autouse=True)
def _data_limit(monkeypatch):
    """Memory messages are deterministic: the in-process runs see a fixed RLIMIT_DATA."""
    monkeypatch.setattr(files, "data_limit", lambda: LIMIT_MIB * 2**20)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", CASES)
def test_hostile_submission(tmp_path, evaluate_cli, name):
    case = CASES[name]
    built = case.build(tmp_path)
    case.change(built)
    run = evaluate_cli(case.challenge, built.input, "--workers", "1", *case.extra, ground_truth=built.ground_truth)
    expected = case.line(built) if callable(case.line) else case.line
    assert (run.exit_code, run.wrote_metrics, run.last_error_line) == (1, False, expected), run.stdout[-2000:]
    assert "Traceback" not in run.stderr


def test_at_least_sixty_cases_across_the_challenges():
    assert len(CASES) >= 60
    challenges = {case.challenge for case in CASES.values()}
    assert challenges >= {
        "rare25",
        "isic2019",
        "digestpath2019-task1",
        "digestpath2019-task2",
        "hecktor2026",
        "hecktor2025-task1",
        "hecktor2025-task2",
        "hecktor2025-task3",
    }


@pytest.mark.parametrize(
    ("challenge", "build", "change"),
    [
        ("rare25", rare25, lambda b: link(b.output(0, R), b.scratch / "ok.json")),
        ("hecktor2025-task2", hecktor("hecktor2025-task2"), lambda b: text(b.output(0, RFS.relative_path), "-3.5")),
        ("hecktor2026", hecktor("hecktor2026"), lambda b: text(b.output(0, RFS.relative_path), "0")),
        ("digestpath2019-task2", digestpath2, lambda b: tiff_mask(b, 0, LESION_TIFF)),
    ],
)
def test_what_stays_accepted(tmp_path, evaluate_cli, challenge, build, change):
    """Links that stay inside the input folder... are refused only when they leave it: a link from an
    output to another file of the same job's output folder is followed; a negative risk (rfs_output
    risk, HECKTOR 2025) is a valid real number; an RFS time of 0 days is not negative; a compressed
    TIFF mask (its directories walked) is read."""
    built = build(tmp_path)
    if challenge == "rare25":  # the link target must be inside the job's own output folder
        target = built.output(0, "copy.json")
        shutil.copyfile(built.output(0, R), target)
        change = lambda b: link(b.output(0, R), target)  # noqa: E731
    change(built)
    run = evaluate_cli(challenge, built.input, "--workers", "1", ground_truth=built.ground_truth)
    assert run.exit_code == 0, run.stderr


def test_a_linked_input_root_is_resolved_first(tmp_path, evaluate_cli):
    """sagemaker-shim may stage /input as a symlink (..._USE_LINKED_INPUT): the root is resolved
    before anything is compared with it."""
    built = rare25(tmp_path)
    linked = tmp_path / "linked-input"
    linked.symlink_to(built.input)
    run = evaluate_cli("rare25", linked, "--workers", "1", ground_truth=built.ground_truth)
    assert run.exit_code == 0, run.stderr


# ------------------------------------------------------------------ nothing outside /input is opened


def _run_with_witness(evaluate_cli, challenge: str, built: Built, witness: Path, *extra: str):
    """Run the CLI in a thread while ``witness`` (a FIFO outside the input folder) waits: opening it
    for reading would block until a writer comes. If the run has not finished after a minute, a
    writer is opened to release it and the test fails."""
    result = {}
    thread = threading.Thread(
        target=lambda: result.update(
            run=evaluate_cli(
                challenge,
                built.input,
                "--workers",
                "1",
                "--case-timeout",
                "30",
                *extra,
                ground_truth=built.ground_truth,
            )
        )
    )
    thread.start()
    thread.join(60)
    if thread.is_alive():
        os.close(os.open(witness, os.O_WRONLY | os.O_NONBLOCK))
        thread.join(10)
        pytest.fail(f"the evaluation opened {witness}, a file outside the input folder")
    return result["run"]


@pytest.mark.timeout(180)
@pytest.mark.parametrize("route", ["predictions.json", "output link", "ElementDataFile", "ElementDataFile LIST"])
def test_a_file_outside_the_input_folder_is_never_opened(tmp_path, evaluate_cli, route):
    witness = tmp_path / "witness.fifo"
    os.mkfifo(witness)
    built = hecktor("hecktor2025-task1")(tmp_path / "case")
    if route == "predictions.json":
        link(built.input / "predictions.json", witness)
        expected = "predictions.json is a link that points outside the input folder; it was not read."
    elif route == "output link":
        link(built.image(0, SEG25), witness)
        expected = (
            f"Case P1: the output path '{built.pks[0]}/output/{SEG25}/{built.image(0, SEG25).name}' "
            "points outside the input folder."
        )
    elif route == "ElementDataFile":
        text(built.image(0, SEG25), metaimage(data_file=str(witness), data=b""))
        expected = seg_line("P1", SEGMENTATION_2025.slug, EXTERNAL)
    else:
        text(built.image(1, SEG25), metaimage(data_file=f"LIST 3D\n{witness}", data=b""))
        expected = seg_line("P2", SEGMENTATION_2025.slug, EXTERNAL)
    run = _run_with_witness(evaluate_cli, "hecktor2025-task1", built, witness)
    assert (run.exit_code, run.wrote_metrics, run.last_error_line) == (1, False, expected)


def _run_under_rlimit(challenge: str, built: Built, output: Path, limit: int) -> subprocess.CompletedProcess:
    """``python -m evaluation`` in a fresh process whose RLIMIT_DATA is ``limit`` (what sagemaker-shim
    sets from GRAND_CHALLENGE_COMPONENT_MAX_MEMORY_MB)."""

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))

    return subprocess.run(
        [
            sys.executable,
            "-m",
            "evaluation",
            "--challenge",
            challenge,
            "--input",
            str(built.input),
            "--output",
            str(output),
            "--ground-truth",
            str(built.ground_truth),
            "--workers",
            "1",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=limited,
    )


def test_the_real_rlimit_bounds_what_is_read(tmp_path):
    """End to end in a fresh process under RLIMIT_DATA = 2 GiB (what sagemaker-shim sets from
    GRAND_CHALLENGE_COMPONENT_MAX_MEMORY_MB): a 20 GiB sparse segmentation whose header is
    consistent with its size is refused by its declared size, without being read."""
    built = hecktor("hecktor2025-task1")(tmp_path)
    sparse(built.image(0, SEG25), head=metaimage("4096 4096 1280", data=b""))
    completed = _run_under_rlimit("hecktor2025-task1", built, tmp_path / "out", 2 * 2**30)
    assert completed.returncode == 1 and not (tmp_path / "out" / "metrics.json").exists()
    assert completed.stderr.strip().splitlines()[-1] == seg_line(
        "P1",
        SEGMENTATION_2025.slug,
        "its header declares 20480.0 MiB of voxel data, more than the memory limit in force (2048 MiB).",
    )


def test_the_real_rlimit_bounds_a_tiff_bomb(tmp_path):
    """The same in a fresh process under RLIMIT_DATA = 512 MiB: a 70-byte TIFF mask declaring
    30000 x 30000 pixels (858 MiB, an 8-bit grey page) is refused from its directory, never decoded;
    a legit compressed TIFF mask under the same limit evaluates."""
    built = digestpath2(tmp_path / "bomb")
    tiff_mask(built, 0, tiff_header(((30_000, 30_000),)))
    completed = _run_under_rlimit("digestpath2019-task2", built, tmp_path / "out", 512 * 2**20)
    assert completed.returncode == 1 and not (tmp_path / "out" / "metrics.json").exists()
    assert completed.stderr.strip().splitlines()[-1] == seg_line(
        "a.png",
        TISSUE_MASK.slug,
        "its header declares 858.3 MiB of voxel data, more than the memory limit in force (512 MiB).",
    )
    legit = digestpath2(tmp_path / "legit")
    tiff_mask(legit, 0, LESION_TIFF)
    completed = _run_under_rlimit("digestpath2019-task2", legit, tmp_path / "legit-out", 512 * 2**20)
    assert completed.returncode == 0, completed.stderr[-2000:]


# ------------------------------------------------------------------- the organizer's side (issue 21)
# Faults of the organizer's own files and settings: declarations, environment, batch, phase, make_input.
# Each runs as its own process (the real exit code, the real last stderr line) beside a stale
# metrics.json of an earlier run and a file of the organizer's own, and must end in one line naming
# the file (or option) and the key, a non-zero exit, no metrics.json, no new file, no traceback.

KITS = (REPO / "evaluation/declarations/kits-example.toml").read_text(encoding="utf-8")
KITS_INPUT, KITS_TRUTH = REPO / "test/input/kits-example", REPO / "ground-truth/kits-example"
DECLARATION = "k.toml"
ORGANIZER_FILE = "organizer-notes.txt"  # in the output folder: never removed


def kits(*changes: tuple[str, str]) -> str:
    """The packaged kits-example declaration with each (regular expression, replacement) applied once."""
    text = KITS
    for pattern, replacement in changes:
        found = re.search(pattern, text, flags=re.MULTILINE)
        assert found is not None, pattern
        text = text[: found.start()] + replacement + text[found.end() :]
    return text


def nested(depth: int, opening: str = "[", closing: str = "]") -> str:
    return f"x = {opening * depth}{closing * depth}\n"


@dataclass
class Fault:
    """One organizer fault: the command after ``python -m``, the declaration text it reads (``None``:
    none), the environment it adds, and the words its last stderr line must hold."""

    tool: str  # evaluation, evaluation.batch, evaluation.phase, evaluation.make_input
    words: tuple[str, ...]
    declaration: str | None = None
    extra: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    challenge: str = ""  # without a declaration: a packaged challenge (default kits-example)
    raw: bytes | None = None  # the declaration's bytes, when they are not UTF-8 text
    ground_truth: Callable[[Path], None] | None = None  # changes a copy of kits-example's in ``root / "gt"``

    def arguments(self, root: Path) -> list[str]:
        challenge = str(root / DECLARATION) if self.declaration is not None or self.raw else self.challenge
        challenge = challenge or "kits-example"
        common = ["--challenge", challenge]
        if self.tool == "evaluation":  # (the fault's own options last: they win)
            common += ["--input", str(KITS_INPUT), "--ground-truth", str(KITS_TRUTH), "--output", str(root / "out")]
        elif self.tool == "evaluation.batch":
            common += ["--submissions", str(root / "submissions"), "--output", str(root / "batch")]
        elif self.tool == "evaluation.make_input":
            common += ["--outputs", str(root / "outputs"), "--output", str(root / "made")]
        elif self.tool == "evaluation.compare":
            common = []
        truth = ["--ground-truth", str(root / "gt")] if self.ground_truth is not None else []
        return [*common, *truth, *self.extra]


def _label_0(change: Callable[[Path, Path], None]) -> Callable[[Path], None]:
    """A copy of kits-example's ground truth in ``root / "gt"`` whose first label, ``labels/case_00000.mha``, is
    ``change(label, root)``."""

    def made(root: Path) -> None:
        shutil.copytree(KITS_TRUTH, root / "gt")
        change(root / "gt" / "labels" / "case_00000.mha", root)

    return made


def _linked_outside(label: Path, root: Path) -> None:
    shutil.copyfile(label, root / "elsewhere.mha")
    replace_with(label, lambda path: path.symlink_to(root / "elsewhere.mha"))


def _data_file(named: str, made: Callable[[Path], None] | None = None) -> Callable[[Path, Path], None]:
    """The label a MetaImage header naming ``named`` as its data file (``made``: makes that file, from the label)."""

    def change(label: Path, root: Path) -> None:
        text(label, metaimage(data_file=named, data=b""))
        if made is not None:
            made(label)

    return change


def _voxels_outside(label: Path) -> None:
    text(label.parents[2] / "elsewhere.raw", b"\0\1\1\2")  # (beside the ground truth, not in it)


def ground_truth_faults(tool: str) -> dict[str, Fault]:
    """A ground truth whose files lead outside its folder, or to a FIFO: the organizer's one line, nothing opened."""
    outside = ("The ground truth's labels/case_00000.mha",)
    return {
        "a label linked outside": Fault(tool, (*outside, "links outside the ground-truth folder."),
                                        ground_truth=_label_0(_linked_outside)),
        "a label whose data file is outside": Fault(
            tool, (*outside, "names a data file outside the ground-truth folder."),
            ground_truth=_label_0(_data_file("../../elsewhere.raw", _voxels_outside))),
        "a label whose data file is a FIFO": Fault(
            tool, (*outside, "names a data file that is a FIFO"),
            ground_truth=_label_0(_data_file("case_00000.raw", lambda label: os.mkfifo(label.with_suffix(".raw"))))),
        "a label whose data-file pattern is a %c": Fault(
            tool, (*outside, "names its data files in a way this engine cannot check."),
            ground_truth=_label_0(_data_file("s%c.raw 1114112 1114113 1"))),
    }  # fmt: skip


def declaration_faults(tool: str) -> dict[str, Fault]:
    """The declaration faults every tool that reads a declaration must report alike."""
    return {
        "resamples 10**18": Fault(tool, ("k.toml: bootstrap.resamples:", "100000"),
                                  kits((r"^resamples = 1000", "resamples = 1000000000000000000"))),
        "seed 2**80": Fault(tool, ("k.toml: bootstrap.seed:", "64-bit"),
                            kits((r"^seed = 0", f"seed = {2**80}"))),
        "seed 2**40": Fault(tool, ("k.toml: bootstrap.seed:", "4294967295"), kits((r"^seed = 0", f"seed = {2**40}"))),
        "decimal_places 10**15": Fault(tool, ("k.toml: leaderboard.decimal_places:", "15"),
                                       kits((r"^decimal_places = 4", "decimal_places = 1000000000000000"))),
        "nested 5,000 deep": Fault(tool, ("k.toml: x:", "nested more than 16 levels deep (line 1)"),
                                   nested(5000) + KITS),
        "a 25-million-element array": Fault(tool, ("k.toml: (top level):", "more than the 262144"),
                                            "x = [" + "0," * 200_000 + "]\n" + KITS),
    }  # fmt: skip


def _organizer_faults() -> dict[str, Fault]:
    faults: dict[str, Fault] = {}
    evaluation = "evaluation"
    declared = {  # python -m evaluation --challenge k.toml: the declaration's faults
        "resamples 0": (("k.toml: bootstrap.resamples:",), kits((r"^resamples = 1000", "resamples = 0"))),
        "resamples negative": (("k.toml: bootstrap.resamples:",), kits((r"^resamples = 1000", "resamples = -5"))),
        "resamples a float": (("k.toml: bootstrap.resamples:",), kits((r"^resamples = 1000", "resamples = 1e3"))),
        "seed negative": (("k.toml: bootstrap.seed:", "not -1"), kits((r"^seed = 0", "seed = -1"))),
        "seed 2**64": (("k.toml: bootstrap.seed:", "64-bit"), kits((r"^seed = 0", f"seed = {2**64}"))),
        "level nan": (("k.toml: bootstrap.level:", "finite"), kits((r"^level = 0.95", "level = nan"))),
        "level 1.5": (("k.toml: bootstrap.level:",), kits((r"^level = 0.95", "level = 1.5"))),
        "decimal_places negative": (("k.toml: leaderboard.decimal_places:",),
                                    kits((r"^decimal_places = 4", "decimal_places = -1"))),
        "decimal_places a float": (("k.toml: leaderboard.decimal_places:",),
                                   kits((r"^decimal_places = 4", "decimal_places = 4.5"))),
        "max_mb 1e308": (("k.toml: submission.max_mb:", "100000"),
                         kits((r"^\[bootstrap\]", "[submission]\nmax_mb = 1e308\n\n[bootstrap]"))),
        "max_mb inf": (("k.toml: submission.max_mb:", "finite"),
                       kits((r"^\[bootstrap\]", "[submission]\nmax_mb = inf\n\n[bootstrap]"))),
        "tolerance inf": (("k.toml: outputs[0].tolerance:", "finite"),
                          kits((r"^tolerance = 1e-4", "tolerance = inf"))),
        "range with nan": (("k.toml: outputs[1].range[1]:", "finite"),
                           kits((r"^range = \[0, 1\]", "range = [0, nan]"))),
        "label value 2**64": (("k.toml: outputs[0].labels.kidney:", "64-bit"),
                              kits((r"kidney = 1,", f"kidney = {2**64},"))),
        "nested 300 deep (parses)": (("k.toml: x:", "nested more than 16 levels deep"), nested(300) + KITS),
        "inline tables nested 5,000 deep": (("k.toml: x", "nested more than 16 levels deep"),
                                            nested(5000, "{a=", "}") .replace("{a=}", "{a=1}") + KITS),
        "nested inside a table": (("k.toml: bootstrap.x:", "nested more than 16 levels deep"),
                                  kits((r"^level = 0.95", "level = 0.95\n" + nested(3000).strip()))),
        "an array of 20,000 labels": (("k.toml: outputs[0].strip:", "20000 entries"),
                                      kits((r"^\[\[outputs\]\]", "[[outputs]]\nstrip = [" + '"a",' * 20_000 + "]"))),
        "a megabyte of comments": (("k.toml: (top level):", "bytes"), "#" * 2**20 + "\n" + KITS),
        "not valid TOML": (("k.toml: not valid TOML", "line"), kits((r"^seed = 0", "seed = = 0"))),
        "not UTF-8": (("k.toml: cannot be read",), None),
        "name missing": (("k.toml: name: is required",), kits((r"^name = .*$", ""))),
        "name in capitals": (("k.toml: name:",), kits((r'^name = "kits-example"', 'name = "KiTS"'))),
        "title a number": (("k.toml: title:",), kits((r"^title = .*$", "title = 3"))),
        "unknown top-level key": (("k.toml: colour: unknown key",), 'colour = "red"\n' + KITS),
        "misspelt output key": (("k.toml: outputs[0].reference:", "'refrence'"),
                                kits((r"^reference = ", "refrence = "))),
        "unknown output kind": (("k.toml: outputs[0].kind:",), kits((r'kind = "segmentation"', 'kind = "mesh"'))),
        "reference outside the ground truth": (("k.toml: outputs[0].reference:",),
                                               kits((r'"labels/\{case\}.mha"', '"../labels/{case}.mha"'))),
        "unknown missing policy": (("k.toml: outputs[0].missing:",),
                                   kits((r'missing = "empty-mask"', 'missing = "zero"'))),
        "no labels": (("k.toml: outputs[0].labels",), kits((r"^labels = \{.*\}$", "labels = {}"))),
        "dimension 4": (("k.toml: outputs[0].dimension:",), kits((r"^geometry = ", "dimension = 4\ngeometry = "))),
        "unknown metric": (("k.toml: metrics[0].metric:",), kits((r'^metric = "dice"', 'metric = "dicey"'))),
        "metric of an unknown output": (("k.toml: metrics[0].output:",),
                                        kits((r'^output = "kidney-segmentation"', 'output = "liver"'))),
        "leaderboard sort sideways": (("k.toml: leaderboard.sort:",), kits((r'^sort = "desc"', 'sort = "up"'))),
        "leaderboard score not written": (("k.toml: leaderboard.score:",),
                                          kits((r'^score = "aggregates.dice_tumour_mean"', 'score = "aggregates.x"'))),
        "bootstrap a string": (("k.toml: bootstrap:", "must be a table"),
                               'bootstrap = "yes"\n' + kits((r"^\[bootstrap\]\n(.*\n){3}", ""))),
        "strip not strings": (("k.toml: cases.strip",), kits((r'^strip = \["_0000"\]', "strip = [1]"))),
    }  # fmt: skip
    for name, (words, text) in declared.items():
        faults[f"declaration: {name}"] = Fault(evaluation, words, text, raw=None if text else b'name = "\xff"\n')
    for tool, label in ((evaluation, "declaration"), ("evaluation.phase", "phase"), ("evaluation.batch", "batch"),
                        ("evaluation.make_input", "make_input")):  # fmt: skip
        for name, fault in declaration_faults(tool).items():
            faults[f"{label}: {name}"] = fault
    for name, fault in ground_truth_faults(evaluation).items():  # (batch: the line of each submission it failed)
        faults[f"ground truth: {name}"] = fault
    options = {  # the run's options and environment (python -m evaluation)
        "EVALUATION_WORKERS garbage": (("EVALUATION_WORKERS",), (), (("EVALUATION_WORKERS", "many"),)),
        "EVALUATION_WORKERS 0": (("EVALUATION_WORKERS",), (), (("EVALUATION_WORKERS", "0"),)),
        "EVALUATION_CASE_TIMEOUT garbage": (("EVALUATION_CASE_TIMEOUT",), (), (("EVALUATION_CASE_TIMEOUT", "soon"),)),
        "EVALUATION_CASE_TIMEOUT nan": (("EVALUATION_CASE_TIMEOUT",), (), (("EVALUATION_CASE_TIMEOUT", "nan"),)),
        "EVALUATION_CASE_RESULTS garbage": (("EVALUATION_CASE_RESULTS",), (), (("EVALUATION_CASE_RESULTS", "all"),)),
        "--case-timeout nan": (("--case-timeout",), ("--case-timeout", "nan"), ()),
        "--case-timeout inf": (("--case-timeout",), ("--case-timeout", "inf"), ()),
        "--case-timeout negative": (("--case-timeout",), ("--case-timeout", "-1"), ()),
        "--set bootstrap_resamples=10**18": (("Option bootstrap_resamples", "100000"),
                                             ("--set", "bootstrap_resamples=1000000000000000000"), ()),
        "--set seed=2**80": (("Option seed",), ("--set", f"seed={2**80}"), ()),
        "--set seed=-1": (("Option seed", "not -1"), ("--set", "seed=-1"), ()),
        "--set unknown option": (("kits-example has no option 'colour'",), ("--set", "colour=red"), ()),
        "--ground-truth missing": (("ground-truth folder",), ("--ground-truth", "/nonexistent/truth"), ()),
    }  # fmt: skip
    for name, (words, extra, env) in options.items():
        faults[f"options: {name}"] = Fault(evaluation, words, extra=extra, env=env)
    faults["options: rare25 --set iterations=10**18"] = Fault(
        evaluation, ("Option iterations",), extra=("--set", "iterations=1000000000000000000"), challenge="rare25"
    )
    faults["batch: EVALUATION_WORKERS garbage"] = Fault(
        "evaluation.batch", ("EVALUATION_WORKERS",), env=(("EVALUATION_WORKERS", "many"),)
    )
    faults["batch: --case-timeout nan"] = Fault(
        "evaluation.batch", ("--case-timeout",), extra=("--case-timeout", "nan")
    )
    faults["batch: --set seed=2**80"] = Fault("evaluation.batch", ("Option seed",), extra=("--set", f"seed={2**80}"))
    faults["batch: unknown challenge"] = Fault("evaluation.batch", ("Unknown challenge 'nope'",), challenge="nope")
    faults["batch: --submissions is a file"] = Fault(
        "evaluation.batch",
        ("The submissions folder list.json is a file, not a folder.",),
        extra=("--submissions", "list.json"),
    )
    faults["make_input: --outputs is a file"] = Fault(
        "evaluation.make_input",
        ("The outputs folder list.json is a file, not a folder.",),
        extra=("--outputs", "list.json"),
    )
    faults["phase: --set bootstrap_resamples=10**18"] = Fault(
        "evaluation.phase", ("Option bootstrap_resamples",), extra=("--set", "bootstrap_resamples=1000000000000000000")
    )
    faults["phase: --check of broken JSON"] = Fault(
        "evaluation.phase", ("broken.json is not valid JSON (line 2, column 7: Expecting value)",),
        extra=("--check", "broken.json"),
    )  # fmt: skip
    faults["phase: --check of JSON nested 100,000 deep"] = Fault(
        "evaluation.phase", ("deep.json is not valid JSON (nested too deeply)",), extra=("--check", "deep.json")
    )
    for name, extra, words in (
        ("broken JSON", ("broken.json", "deep.json"), "broken.json is not valid JSON (line 2, column 7"),
        ("JSON nested 100,000 deep", ("deep.json", "broken.json"), "deep.json is not valid JSON (nested too deeply)"),
        (
            "--replay of a missing record",
            ("--replay", "nope.json"),
            "nope.json cannot be read (No such file or directory)",
        ),
        ("--replay of a file that is no record", ("--replay", "broken.json"), "broken.json is not valid JSON (line 2"),
        ("--replay of JSON that is no record", ("--replay", "list.json"), "list.json is not a provenance record"),
    ):
        faults[f"compare: {name}"] = Fault("evaluation.compare", (words,), extra=extra)
    faults["make_input: unknown challenge"] = Fault("evaluation.make_input", ("Unknown challenge 'nope'",),
                                                    challenge="nope")  # fmt: skip
    return faults


ORGANIZER = _organizer_faults()


def _run_fault(root: Path, fault: Fault) -> subprocess.CompletedProcess:
    (root / "out").mkdir(parents=True)
    if fault.tool == "evaluation":  # the result of an earlier run
        (root / "out" / "metrics.json").write_text('{"stale": true}')
    (root / "out" / ORGANIZER_FILE).write_text("mine")
    (root / "submissions" / "a").mkdir(parents=True)
    (root / "outputs" / "case_00000").mkdir(parents=True)
    (root / "broken.json").write_text('{"Score": 1,\n "x": }')
    (root / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    (root / "list.json").write_text("[1, 2]")
    if fault.ground_truth is not None:
        fault.ground_truth(root)
    if fault.raw is not None:
        (root / DECLARATION).write_bytes(fault.raw)
    elif fault.declaration is not None:
        (root / DECLARATION).write_text(fault.declaration, encoding="utf-8")
    environment = {**os.environ, "PYTHONPATH": str(REPO), "EVALUATION_WORKERS": "1", **dict(fault.env)}
    for name in ("EVALUATION_CASE_TIMEOUT", "EVALUATION_CASE_RESULTS", "EVALUATION_CHALLENGE"):
        if name not in dict(fault.env):
            environment.pop(name, None)
    command = [sys.executable, "-m", fault.tool, *fault.arguments(root)]
    return subprocess.run(command, cwd=root, env=environment, capture_output=True, text=True, timeout=240)


@pytest.fixture(scope="module")
def organizer_runs(request, tmp_path_factory) -> dict[str, tuple[Path, subprocess.CompletedProcess]]:
    """The selected organizer faults, run in parallel (each a process of its own; most of its time
    is imports)."""
    selected = [item.callspec.params["name"] for item in request.session.items
                if getattr(item, "originalname", "") == "test_organizer_fault"]  # fmt: skip
    roots = {name: tmp_path_factory.mktemp("organizer") for name in selected}
    with ThreadPoolExecutor(max_workers=max(2, min(6, os.cpu_count() or 1))) as pool:
        runs = list(pool.map(_run_fault, roots.values(), (ORGANIZER[name] for name in selected)))
    return {name: (roots[name], run) for name, run in zip(selected, runs, strict=True)}


@pytest.mark.timeout(900)
@pytest.mark.parametrize("name", ORGANIZER)
def test_organizer_fault(organizer_runs, name):
    root, run = organizer_runs[name]
    fault = ORGANIZER[name]
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    last = lines[-1] if lines else ""
    assert run.returncode == 1, (run.returncode, run.stderr[-2000:])
    assert all(word in last for word in fault.words), last
    assert len(last) < 1024 and "Traceback" not in run.stdout + run.stderr, run.stdout[-2000:] + run.stderr[-2000:]
    assert "internal error" not in last
    assert not (root / "out" / "metrics.json").exists()  # the stale result of an earlier run is gone ...
    assert (root / "out" / ORGANIZER_FILE).read_text() == "mine"  # ... and nothing else of the folder
    assert not (root / "batch").exists() and not (root / "made").exists()


def test_at_least_sixty_organizer_faults_across_the_tools():
    tools = {fault.tool for fault in ORGANIZER.values()}
    assert len(ORGANIZER) >= 60
    assert tools == {
        "evaluation",
        "evaluation.batch",
        "evaluation.phase",
        "evaluation.make_input",
        "evaluation.compare",
    }


def test_a_memory_failure_while_reading_a_case_names_the_case(monkeypatch, evaluate_cli):
    """In the main process (a declared challenge reads every case's values there) a MemoryError names the case."""

    class Exhausted:
        @staticmethod
        def loads(*args, **kwargs):
            raise MemoryError

    monkeypatch.setattr(sockets, "json", Exhausted)
    run = evaluate_cli("kits-example", REPO / "test/input/kits-example")
    assert run.exit_code == 1 and not run.wrote_metrics
    assert re.fullmatch(
        r"Case case_\d+: the evaluation ran out of memory \(limit 1024 MiB per process\) in the main process while "
        r"reading the submission\.",
        run.last_error_line,
    ), run.last_error_line


@pytest.mark.parametrize(
    ("data", "space", "said"),
    [
        (None, 512, "limit 512 MiB of address space per process (RLIMIT_AS, ulimit -v)"),
        (1024, 512, "limit 512 MiB of address space per process (RLIMIT_AS, ulimit -v)"),
        (256, 512, "limit 256 MiB per process"),
        (None, None, "no limit set"),
    ],
)
def test_the_memory_message_names_the_lower_of_the_data_and_address_space_limits(monkeypatch, data, space, said):
    import resource

    from evaluation.runner import out_of_memory

    real = resource.getrlimit
    address_space = resource.RLIM_INFINITY if space is None else space * 2**20
    monkeypatch.setattr(files, "data_limit", lambda: None if data is None else data * 2**20)
    monkeypatch.setattr(resource, "getrlimit", lambda which: (address_space,) * 2 if which == resource.RLIMIT_AS
                        else real(which))  # fmt: skip
    assert (
        str(out_of_memory("c1", "while reading"))
        == f"Case c1: the evaluation ran out of memory ({said}) while reading."
    )


# ---------------------------------------------------------------- provenance and replay (issue 27)
# ``--provenance`` hashes under the evaluation's own file rules; ``compare --replay`` is a check; every
# tool reads a JSON file it is given through one bounded reader. Each run is a process of its own
# under an audit hook (``sys.addaudithook``: events open, os.scandir, os.listdir) and RLIMIT_DATA of
# 4 GiB (the largest file the evaluation reads is then 4 GiB); no path is opened outside the case's
# folder (its input, ground truth, output and temporary files), the repository, the Python
# installation and a few files the runtime reads (CPU count, time zone). Faults end in one line.

AUDITED = """import os, runpy, sys
log = open(os.environ["AUDIT_LOG"], "w", encoding="utf-8", buffering=1)
def hook(event, args):
    if event in ("open", "os.scandir", "os.listdir") and args and isinstance(args[0], (str, bytes, os.PathLike)):
        log.write(os.path.abspath(os.fsdecode(args[0])) + "\\n")
sys.addaudithook(hook)
sys.argv = sys.argv[1:]
runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
"""
RUNTIME_FILES = ("/proc/stat", "/proc/meminfo", "/proc/cpuinfo", "/proc/self/cgroup", "/sys/fs/cgroup/",
                 "/usr/share/zoneinfo/", "/dev/null", "/dev/urandom")  # fmt: skip
PROVENANCE_LIMIT = 4 * 2**30


def _audited(root: Path, *command: str) -> tuple[subprocess.CompletedProcess, list[str]]:
    """``python -m command`` in ``root`` under the audit hook (temporary files in a folder of its own);
    the run and every path it opened that lies (itself or through its links) outside where it may look."""
    scratch = Path(tempfile.mkdtemp(prefix="audit-"))  # short: multiprocessing's socket paths live in it
    log = root / "audit.log"
    environment = {**os.environ, "PYTHONPATH": str(REPO), "EVALUATION_WORKERS": "1", "TMPDIR": str(scratch),
                   "AUDIT_LOG": str(log)}  # fmt: skip
    for name in ("EVALUATION_CASE_TIMEOUT", "EVALUATION_CASE_RESULTS", "EVALUATION_CHALLENGE"):
        environment.pop(name, None)

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_DATA, (PROVENANCE_LIMIT, PROVENANCE_LIMIT))

    run = subprocess.run([sys.executable, "-c", AUDITED, *command], cwd=root, env=environment, capture_output=True,
                         text=True, timeout=240, preexec_fn=limited)  # fmt: skip
    shutil.rmtree(scratch, ignore_errors=True)
    places = {root, scratch, REPO, Path(sys.prefix), Path(sys.base_prefix), Path(sys.exec_prefix)}
    places |= {Path(os.path.realpath(place)) for place in places}
    outside = sorted({
        opened for opened in log.read_text(encoding="utf-8").splitlines()
        for seen in (Path(opened), Path(os.path.realpath(opened)))
        if not any(seen == place or place in seen.parents for place in places)
        and not str(seen).startswith(RUNTIME_FILES)
    })  # fmt: skip
    return run, outside


def _last_line(run: subprocess.CompletedProcess) -> str:
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def _kits_case(root: Path) -> Path:
    """A copy of the kits-example demo (input, ground truth, declaration) in ``root``."""
    shutil.copytree(KITS_INPUT, root / "in")
    shutil.copytree(KITS_TRUTH, root / "gt")
    (root / DECLARATION).write_text(KITS, encoding="utf-8")
    return root


def _provenance_run(root: Path) -> tuple[subprocess.CompletedProcess, list[str]]:
    return _audited(root, "evaluation", "--challenge", str(root / DECLARATION), "--input", str(root / "in"),
                    "--ground-truth", str(root / "gt"), "--output", str(root / "out"), "--provenance")  # fmt: skip


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> Path:
    """A folder holding a kits-example case and its record (out/provenance.json beside out/metrics.json)."""
    root = _kits_case(tmp_path_factory.mktemp("recorded"))
    run, outside = _provenance_run(root)
    assert run.returncode == 0 and outside == [], (run.stdout[-3000:], run.stderr[-2000:], outside)
    return root


HOSTILE_INPUT = {  # name: (what is added to the input folder, the words of the record's hash line for it)
    "a link to /etc/passwd": lambda root: link(root / "in" / "passwd", Path("/etc/passwd")),
    "a link to /proc/self/mem": lambda root: link(root / "in" / "mem", Path("/proc/self/mem")),
    "a link to a ground-truth label": lambda root: link(
        root / "in" / "label.mha", next((root / "gt" / "labels").iterdir())
    ),
    "a link to the ground-truth folder": lambda root: link(root / "in" / "truth", root / "gt"),
    "a FIFO": lambda root: fifo(root / "in" / "pipe"),
    "an unreferenced 100 GB sparse file": lambda root: sparse(root / "in" / "huge.bin", 100 * 2**30),
    "a linked input root": lambda root: link(root / "in", (root / "in").rename(root / "real-in")),
}


@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", HOSTILE_INPUT)
def test_provenance_hashes_what_the_evaluation_may_read(tmp_path, name):
    """Issue 27 item 1: a hostile input folder is hashed without opening a file outside it, a FIFO or
    a file larger than any the evaluation reads; the evaluation succeeds and the record replays."""
    root = _kits_case(tmp_path)
    HOSTILE_INPUT[name](root)
    run, outside = _provenance_run(root)
    assert run.returncode == 0 and outside == [], (run.stdout[-3000:], run.stderr[-2000:], outside)
    record = json.loads((root / "out" / "provenance.json").read_text())
    assert record["command"]["input"] == str(root / ("real-in" if "root" in name else "in"))
    run, outside = _audited(root, "evaluation.compare", "--replay", str(root / "out" / "provenance.json"))
    assert run.returncode == 0 and outside == [], (run.stdout[-3000:], run.stderr[-2000:], outside)
    assert "wrote the same metrics.json bytes" in run.stdout.splitlines()[-1]


def test_a_ground_truth_label_behind_a_link_stays_out_of_the_predictions_hash(tmp_path):
    """The content of a label an output links to never enters the predictions' hash."""
    from evaluation.provenance import tree_sha256

    root = _kits_case(tmp_path)
    label = next((root / "gt" / "labels").iterdir())
    link(root / "in" / "label.mha", label)
    before = tree_sha256(root / "in", "input")
    label.write_bytes(label.read_bytes() + b"changed")
    assert tree_sha256(root / "in", "input") == before


def test_a_record_that_cannot_be_written_leaves_no_metrics(tmp_path):
    root = _kits_case(tmp_path)
    (root / "out" / "provenance.json").mkdir(parents=True)
    run, outside = _provenance_run(root)
    assert (run.returncode, outside) == (1, []), run.stderr[-2000:]
    assert _last_line(run) == (f"The reproducibility record {root / 'out' / 'provenance.json'} cannot be written "
                               "(Is a directory).")  # fmt: skip
    assert sorted(p.name for p in (root / "out").iterdir()) == ["provenance.json"]
    assert "Traceback" not in run.stdout + run.stderr


def test_a_read_only_output_folder_says_the_earlier_metrics_is_still_there(tmp_path, monkeypatch):
    """A folder that takes no file (read-only; as root, simulated) cannot lose its old metrics.json either."""
    from evaluation import pipeline
    from evaluation.errors import ConfigurationError

    def refused(*args: Any, **kwargs: Any) -> Any:
        raise PermissionError(13, "Permission denied")

    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "metrics.json").write_text('{"Score": 1}')
    monkeypatch.setattr(pipeline.tempfile, "mkstemp", refused)
    with pytest.raises(ConfigurationError) as failed:
        pipeline.check_output_folder(tmp_path / "out")
    assert str(failed.value) == (f"The output folder {tmp_path / 'out'} is not writable (Permission denied); "
                                 "metrics.json cannot be written; the metrics.json of an earlier run is still "
                                 "there.")  # fmt: skip


def _record(change: Callable[[dict, Path], None]) -> Callable[[Path], None]:
    """A change of the record (its parsed document and the case's folder)."""

    def edit(root: Path) -> None:
        path = root / "out" / "provenance.json"
        document = json.loads(path.read_text())
        change(document, root)
        path.write_text(json.dumps(document))

    return edit


def _setting(*keys: str, value: Any) -> Callable[[Path], None]:
    def put(document: dict, root: Path) -> None:
        *parents, last = keys
        for key in parents:
            document = document[key]
        document[last] = value(root) if callable(value) else value

    return _record(put)


@dataclass
class Replayed:
    """One replay (or JSON reader) fault: what is changed in a copy of the recorded case, the words of
    the last stderr line, and the tool's arguments (``{root}`` is the case's folder)."""

    change: Callable[[Path], None]
    words: tuple[str, ...]
    command: tuple[str, ...] = ("evaluation.compare", "--replay", "{root}/out/provenance.json")


NOT_A_RECORD = "is not a provenance record of python -m evaluation --provenance:"
REPLAY_FAULTS = {
    "the predictions changed": Replayed(lambda root: text(root / "in" / "predictions.json",
                                                          (root / "in" / "predictions.json").read_text() + " "),
                                        ("failed: the predictions (", "/in) changed since the record.")),
    "the ground truth changed": Replayed(lambda root: text(root / "gt" / "extra.csv", "a\n"),
                                         ("failed: the ground truth (", "/gt) changed since the record.")),
    "the declaration changed": Replayed(lambda root: text(root / DECLARATION, KITS + "# edited\n"),
                                        ("failed: the declaration (", "k.toml) changed since the record.")),
    "the predictions and ground truth gone": Replayed(lambda root: [shutil.rmtree(root / f) for f in ("in", "gt")],
                                                      ("/in is gone; the ground truth folder", "/gt is gone since")),
    "metrics.json edited (Score 0.99)": Replayed(
        lambda root: text(root / "out" / "metrics.json", json.dumps({"Score": 0.99})),
        ("out/metrics.json does not have the sha256 the record holds",)),
    "metrics.json gone": Replayed(lambda root: (root / "out" / "metrics.json").unlink(),
                                  ("has no metrics.json beside it to check.",)),
    "the record's metrics.json hash edited": Replayed(_setting("sha256", "metrics.json", value="0" * 64),
                                                      ("does not have the sha256 the record holds",)),
    "the input /etc": Replayed(_setting("command", "input", value="/etc"),
                               (NOT_A_RECORD, "command.input (/etc) is a folder of the operating system")),
    "the ground truth /": Replayed(_setting("command", "ground_truth", value="/"),
                                   (NOT_A_RECORD, "command.ground_truth (/) is a folder of the operating system")),
    "an input linking to /etc": Replayed(
        lambda root: link(root / "etc", Path("/etc")) or _setting("command", "input", value=str(root / "etc"))(root),
        (NOT_A_RECORD, "etc) is a folder of the operating system")),
    "an input with ..": Replayed(_setting("command", "input", value=lambda root: f"{root}/in/../../../../.."),
                                 (NOT_A_RECORD, "is not an absolute path without '..'")),
    "a relative input": Replayed(_setting("command", "input", value="in"),
                                 (NOT_A_RECORD, "command.input ('in') is not an absolute path")),
    "a declaration in /etc": Replayed(
        _record(lambda document, root: document["command"].update(challenge="/etc/k.toml", declaration="/etc/k.toml")),
        (NOT_A_RECORD, "command.declaration (/etc/k.toml) is a folder of the operating system")),
    "a challenge with a slash": Replayed(_setting("command", "challenge", value="../kits"),
                                         (NOT_A_RECORD, "command.challenge is neither a challenge name nor")),
    "set a list": Replayed(_setting("command", "set", value=[]), (NOT_A_RECORD, "command.set is not an object")),
    "set null": Replayed(_setting("command", "set", value=None), (NOT_A_RECORD, "command.set is not an object")),
    "set a key with =": Replayed(_setting("command", "set", value={"seed=1": "2"}), (NOT_A_RECORD, "command.set")),
    "input an integer": Replayed(_setting("command", "input", value=3), (NOT_A_RECORD, "command.input is not a path")),
    "challenge an integer": Replayed(_setting("command", "challenge", value=3), (NOT_A_RECORD, "command.challenge")),
    "case_results an integer": Replayed(_setting("command", "case_results", value=3),
                                        (NOT_A_RECORD, "command.case_results is not one of public, private")),
    "command a list": Replayed(_setting("command", value=[]), (NOT_A_RECORD, "command is not an object")),
    "a hash that is no hash": Replayed(_setting("sha256", "predictions", value=7),
                                       (NOT_A_RECORD, "sha256.predictions is not a SHA-256 hex digest")),
    "libraries a list": Replayed(_setting("libraries", value=[]), (NOT_A_RECORD, "libraries is not an object")),
    "an unknown option": Replayed(_setting("command", "set", value={"colour": "red"}),
                                  ("failed: kits-example has no option 'colour'",)),
    "a record that is a FIFO": Replayed(lambda root: replace_with(root / "out" / "provenance.json", fifo),
                                        ("provenance.json is a FIFO (named pipe), not a regular file;",)),
    "a 20 GB sparse record": Replayed(lambda root: replace_with(root / "out" / "provenance.json", sparse),
                                      ("provenance.json is 20480.0 MiB, more than the 64.0 MiB allowed;",)),
    "a record that is a folder": Replayed(lambda root: replace_with(root / "out" / "provenance.json", folder),
                                          ("provenance.json is a folder, not a regular file",)),
    "a record that is a list": Replayed(lambda root: text(root / "out" / "provenance.json", "[]"),
                                        (NOT_A_RECORD, "it is not a JSON object")),
    "compare A B with a FIFO": Replayed(lambda root: fifo(root / "a.json"), ("a.json is a FIFO (named pipe)",),
                                        ("evaluation.compare", "{root}/a.json", "{root}/out/metrics.json")),
    "compare A B with a 20 GB file": Replayed(lambda root: sparse(root / "b.json"), ("b.json is 20480.0 MiB",),
                                              ("evaluation.compare", "{root}/out/metrics.json", "{root}/b.json")),
    "phase --check of a FIFO": Replayed(lambda root: fifo(root / "a.json"), ("a.json is a FIFO (named pipe)",),
                                        ("evaluation.phase", "--challenge", "kits-example", "--check",
                                         "{root}/a.json")),
    "phase --check of a 20 GB file": Replayed(lambda root: sparse(root / "b.json"), ("b.json is 20480.0 MiB",),
                                              ("evaluation.phase", "--challenge", "kits-example", "--check",
                                               "{root}/b.json")),
    "ranking --collect of a FIFO": Replayed(
        lambda root: (root / "runs" / "a").mkdir(parents=True) or fifo(root / "runs" / "a" / "metrics.json"),
        ("metrics.json is a FIFO (named pipe)",),
        ("evaluation.ranking", "--collect", "--metrics-dir", "{root}/runs", "--output", "{root}/runs.csv")),
}  # fmt: skip


def _copy_recorded(recorded: Path, root: Path) -> None:
    """The recorded case copied to ``root``, its record naming the copy (the hashes stay valid)."""
    for name in ("in", "gt", DECLARATION, "out"):
        (shutil.copytree if (recorded / name).is_dir() else shutil.copy)(recorded / name, root / name)
    record = root / "out" / "provenance.json"
    record.write_text(record.read_text().replace(str(recorded), str(root)))


@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", REPLAY_FAULTS)
def test_replay_fault(recorded, tmp_path, name):
    """Issue 27 items 2-4: each fault fails in one line naming the file or what changed; nothing
    outside the case's folder is opened; nothing is written beside the record."""
    fault = REPLAY_FAULTS[name]
    _copy_recorded(recorded, tmp_path)
    fault.change(tmp_path)
    before = sorted(p.name for p in (tmp_path / "out").iterdir())
    run, outside = _audited(tmp_path, *(part.format(root=tmp_path) for part in fault.command))
    last = _last_line(run)
    assert run.returncode != 0 and all(word in last for word in fault.words), (last, run.stderr[-2000:])
    assert len(last) < 1024 and "Traceback" not in run.stdout + run.stderr, run.stdout[-2000:] + run.stderr[-2000:]
    assert outside == [], outside
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == before
    assert not (tmp_path / "runs.csv").exists()


def test_a_replay_in_another_environment_names_it(recorded, tmp_path):
    """Another image or library version is named in the verdict, not a failure: the bytes decide."""
    _copy_recorded(recorded, tmp_path)
    _setting("image_digest", value="sha256:" + "a" * 64)(tmp_path)
    _setting("libraries", "numpy", value="0.1")(tmp_path)
    run, outside = _audited(tmp_path, "evaluation.compare", "--replay", str(tmp_path / "out" / "provenance.json"))
    assert (run.returncode, outside) == (0, []), run.stderr[-2000:]
    verdict = run.stdout.splitlines()[-1]
    assert "wrote the same metrics.json bytes" in verdict and f"image unknown (recorded sha256:{'a' * 64})" in verdict
    assert f"numpy {np.__version__} (recorded 0.1)" in verdict


def test_at_least_thirty_provenance_and_replay_faults():
    assert len(REPLAY_FAULTS) + len(HOSTILE_INPUT) >= 30


# ------------------------------------------------------------------ the newest surfaces (issue 27)
# By surface, each row one hostile change and the exact answer: the invoke server's requests (a status,
# and no evaluation started), heat maps, the organizer's declarations and ground truth, the ranking tool,
# then three older surfaces (an image read under a memory limit, a prediction CSV, make_input).

# --- the invoke server: real sockets on 127.0.0.1, against a server in this process whose "evaluation"
# only appends a line to a file; every wait is bounded (the server's request time 0.5 s, each client's 10 s)


@pytest.fixture
def invoke_server(tmp_path):
    from evaluation.platform.invoke import InvokeServer

    runs = tmp_path / "runs"
    command = [sys.executable, "-c", f"open({str(runs)!r}, 'a').write('run\\n')"]
    server = InvokeServer(("127.0.0.1", 0), command, request_seconds=0.5)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], runs
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def exchange(port: int, pieces: list[bytes], pause: float = 0.0, close: bool = False) -> int | None:
    """Sends ``pieces`` (``pause`` s apart), half-closes when ``close``; the status answered (None: none)."""
    import contextlib
    import socket
    import time

    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        for piece in pieces:
            try:
                connection.sendall(piece)
            except (BrokenPipeError, ConnectionResetError):
                break  # the server gave up on it: read its answer
            time.sleep(pause)
        if close:
            connection.shutdown(socket.SHUT_WR)
        answer = b""
        with contextlib.suppress(ConnectionResetError):
            while chunk := connection.recv(65536):
                answer += chunk
    match = re.match(rb"HTTP/1\.[01] (\d{3}) ", answer)
    return int(match.group(1)) if match else None


INVOKE = b"POST /invoke HTTP/1.1\r\nHost: localhost\r\n"
HEALTH = b"GET /health HTTP/1.0\r\n\r\n"
INVOKE_REQUESTS = {  # name: (pieces sent, half-close after them, the status answered)
    "huge Content-Length": ([INVOKE + b"Content-Length: " + b"9" * 30 + b"\r\n\r\n"], False, 413),
    "Content-Length over the bound": ([INVOKE + b"Content-Length: 1000000\r\n\r\n"], False, 413),
    "60,000-digit Content-Length": ([INVOKE + b"Content-Length: " + b"9" * 60_000 + b"\r\n\r\n"], False, 413),
    "negative Content-Length": ([INVOKE + b"Content-Length: -1\r\n\r\n"], False, 400),
    "Arabic-Indic Content-Length": ([INVOKE + "Content-Length: \u0661\u0660\r\n\r\n".encode()], False, 400),
    "two Content-Lengths": ([INVOKE + b"Content-Length: 0\r\nContent-Length: 1\r\n\r\nx"], False, 400),
    "chunked body": ([INVOKE + b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n"], False, 400),
    "body cut short": ([INVOKE + b"Content-Length: 10\r\n\r\nabc"], True, 400),
    "body never finished": ([INVOKE + b"Content-Length: 10\r\n\r\nabc"], False, 408),
    "headers cut short": ([INVOKE], True, 400),
    "headers never finished": ([INVOKE], False, 408),
    "request line cut short": ([b"POST /inv"], True, 400),
    "nothing sent": ([], False, 408),
    "control characters for a request line": ([b"\x00\x1b[31m hello\r\n\r\n"], False, 400),
    "a 70,000-byte request line": ([b"GET /" + b"a" * 70_000 + b" HTTP/1.0\r\n\r\n"], False, 414),
    "unsupported version": ([b"POST /invoke HTTP/2.0\r\n\r\n"], False, 505),
    "another method on /invoke": ([b"PUT /invoke HTTP/1.0\r\n\r\n"], False, 405),
    "GET /invoke": ([b"GET /invoke HTTP/1.0\r\n\r\n"], False, 405),
    "another path": ([b"DELETE /admin HTTP/1.0\r\n\r\n"], False, 404),
    "a client sending a byte at a time": ([bytes([c]) for c in b"POST /invoke HTTP/1.0\r\n"], False, 408),
}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("name", INVOKE_REQUESTS)
def test_a_hostile_request_gets_a_status_and_starts_nothing(invoke_server, name):
    port, runs = invoke_server
    pieces, close, status = INVOKE_REQUESTS[name]
    assert exchange(port, pieces, 0.05 if len(pieces) > 1 else 0.0, close) == status
    assert exchange(port, [HEALTH]) == 200  # still serving
    assert not runs.exists()  # no evaluation started


def test_a_whole_invoke_runs_once_and_a_small_body_is_drained(invoke_server):
    port, runs = invoke_server
    assert exchange(port, [INVOKE + b"Content-Length: 5\r\n\r\nhello"]) == 201
    assert exchange(port, [INVOKE + b"\r\n"]) == 201
    assert runs.read_text() == "run\nrun\n"


def test_health_answers_while_idle_clients_hold_connections(invoke_server):
    import socket

    port, runs = invoke_server
    idle = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(100)]
    try:
        for connection in idle[:50]:
            connection.sendall(INVOKE)  # headers never finished
        assert exchange(port, [HEALTH]) == 200
    finally:
        for connection in idle:
            connection.close()
    assert not runs.exists()


@pytest.mark.parametrize(("arguments", "environment", "shown"), [
    (["--port", "70000"], None, "(--port) must be a whole number from 0 to 65535, not '70000'."),
    (["--port", "-1"], None, "(--port) must be a whole number from 0 to 65535, not '-1'."),
    (["--port", "\u0664\u0667"], None, "(--port) must be a whole number from 0 to 65535, not '\u0664\u0667'."),
    ([], "http", "(EVALUATION_INVOKE_PORT) must be a whole number from 0 to 65535, not 'http'."),
])  # fmt: skip
def test_a_bad_invoke_port_is_one_line_and_exit_2(arguments, environment, shown):
    environ = {k: v for k, v in os.environ.items() if k != "EVALUATION_INVOKE_PORT"}
    if environment is not None:
        environ["EVALUATION_INVOKE_PORT"] = environment
    serve = [sys.executable, "-m", "evaluation.platform.invoke", "--host", "127.0.0.1", *arguments]
    run = subprocess.run(serve, cwd=REPO, capture_output=True, text=True, timeout=60, env=environ)
    assert run.returncode == 2
    assert run.stderr.strip().splitlines() == [f"The invoke server's port {shown}"]


# --- heat maps (PI-CAI): two cases, a lesion in the first; the first case's map made hostile

(PICAI_T2,), (PICAI_MAP,) = get("picai2022").phase.inputs, get("picai2022").phase.outputs
PICAI_LESION = "10001_1000001"
PICAI = REPO / "evaluation/declarations/picai2022.toml"


def picai(root: Path, change: Callable[[sitk.Image], sitk.Image] = lambda image: image) -> Built:
    ground_truth, scratch = _folders(root)
    (ground_truth / "labels").mkdir()
    jobs = []
    for case in (PICAI_LESION, "10002_1000002"):
        label = np.zeros((2, 4, 4), np.uint8)
        label[0, :2, :2] = case == PICAI_LESION
        reference = sitk.GetImageFromArray(label)
        reference.SetSpacing((0.5, 0.5, 3.0))
        sitk.WriteImage(reference, str(ground_truth / "labels" / f"{case}.mha"))
        detection = sitk.GetImageFromArray(label.astype(np.float32) * 0.8)
        detection.CopyInformation(reference)
        sitk.WriteImage(change(detection) if case == PICAI_LESION else detection, str(scratch / f"{case}.mha"))
        jobs.append(JobSpec({PICAI_T2: f"{case}_t2w.mha"}, {PICAI_MAP: scratch / f"{case}.mha"}))
    return Built(ground_truth, root / "input", write_input(root / "input", jobs), scratch)


def _geometry(aspect: str, value: tuple[float, ...]) -> Callable[[sitk.Image], sitk.Image]:
    def change(image: sitk.Image) -> sitk.Image:
        getattr(image, f"Set{aspect}")(value)
        return image

    return change


def _values(change: Callable[[np.ndarray], np.ndarray], vector: bool = False) -> Callable[[sitk.Image], sitk.Image]:
    def made(image: sitk.Image) -> sitk.Image:
        changed = sitk.GetImageFromArray(change(sitk.GetArrayFromImage(image)), isVector=vector)
        changed.CopyInformation(image)
        return changed

    return made


def _set(array: np.ndarray, value: float) -> np.ndarray:
    array = array.astype(np.float64)
    array[0, 0, 0] = value
    return array


MAP_OF = f"The 'cspca-detection-map' map of {PICAI_LESION}"
HEAT_MAPS = {
    "another spacing": (_geometry("Spacing", (0.6, 0.5, 3.0)),
                        f"{MAP_OF} has spacing (0.6, 0.5, 3) but the reference grid has (0.5, 0.5, 3)."),
    "another origin": (_geometry("Origin", (0.0, 0.0, 10.0)),
                       f"{MAP_OF} has origin (0, 0, 10) but the reference grid has (0, 0, 0)."),
    "another direction": (_geometry("Direction", (0, 1, 0, 1, 0, 0, 0, 0, 1)),
                          f"{MAP_OF} has direction (0, 1, 0, 1, 0, 0, 0, 0, 1) but the reference grid has "
                          "(1, 0, 0, 0, 1, 0, 0, 0, 1)."),
    "1e300": (_values(lambda a: _set(a, 1e300)), f"{MAP_OF} holds a value too large to score (1e+300; at most "
              "3.403e+38, the float32 range maps are scored in)."),
    "NaN": (_values(lambda a: _set(a, np.nan)), f"{MAP_OF} holds a non-finite value."),
    "a vector image": (_values(lambda a: np.stack([a, a, a], -1), vector=True),
                       f"{MAP_OF} has 3 components per pixel; a single-channel map is expected."),
}  # fmt: skip


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", HEAT_MAPS)
def test_a_hostile_heat_map(tmp_path, evaluate_cli, name):
    change, line = HEAT_MAPS[name]
    built = picai(tmp_path, change)
    run = evaluate_cli("picai2022", built.input, "--workers", "1", ground_truth=built.ground_truth)
    assert (run.exit_code, run.wrote_metrics, run.last_error_line) == (1, False, line), run.stdout[-2000:]


def test_a_heat_map_off_the_grid_is_resampled_when_declared_nearest(tmp_path, evaluate_cli):
    """geometry = "nearest", as for a segmentation: the map of another spacing resampled onto the reference
    grid (here it covers the lesion still: AP 1), and the settings echo the policy (the default echoes none)."""
    declaration = tmp_path / "picai.toml"
    declaration.write_text(
        PICAI.read_text(encoding="utf-8").replace('case_score = "max"', 'case_score = "max"\ngeometry = "nearest"'),
        encoding="utf-8",
    )
    built = picai(tmp_path / "b", _geometry("Spacing", (0.5, 0.5, 3.0001)))
    run = evaluate_cli(str(declaration), built.input, "--workers", "1", ground_truth=built.ground_truth)
    assert run.exit_code == 0, run.stderr
    assert run.metrics["aggregates"]["AP"] == 1.0
    settings = run.metrics["settings"]["outputs"]["cspca-detection-map"]
    assert (settings["geometry"], settings["tolerance"]) == ("nearest", 1e-4)


# --- the organizer's declarations and ground truth (kits-example), as the organizer faults above

ORGANIZER_27 = {
    "a groups column the CSV lacks": Fault("evaluation", (
        "clinical.csv lacks the column(s) cohort, which metric 'ece' reads as groups.",),
        kits((r'^metric = "ece"', 'metric = "ece"\ngroups = "clinical.csv:cohort"'))),
    "dilation 10**17": Fault("evaluation", (
        "k.toml: metrics[7].dilation: must be a whole number of voxels from 0 to 1000 (BraTS: 1-3)",),
        KITS + '\n[[metrics]]\nname = "lw"\nmetric = "lesion_wise_dice"\noutput = "kidney-segmentation"\n'
        'dilation = 100000000000000000\n'),
    "a region of 10,000 voxel values, one twice": Fault("evaluation", (
        "k.toml: outputs[0].labels.kidney: a region lists the voxel value 5 twice",),
        kits((r"^labels = \{.*\}$", "labels = { kidney = [" + ", ".join(map(str, range(1, 9999))) + ", 5], "
              "tumour = 20000, cyst = 20001 }"))),
    "a title of 5,000 numbers": Fault("evaluation", (
        "k.toml: title: " + f"must be a string, not a list {list(range(1, 5001))}"[:496] + " ...",),
        kits((r"^title = .*$", f"title = {list(range(1, 5001))}"))),
    "ESC and NUL in a label name": Fault("evaluation", (
        "k.toml: outputs[0].labels.kid\\x1b[31mney\\x00: a label name may hold letters, digits, '_' and '-' only",),
        kits((r"kidney = 1,", '"kid\\u001b[31mney\\u0000" = 1,'))),
}  # fmt: skip


@pytest.mark.timeout(240)
@pytest.mark.parametrize("name", ORGANIZER_27)
def test_an_organizer_fault_of_the_newest_surfaces(tmp_path, name):
    fault = ORGANIZER_27[name]
    run = _run_fault(tmp_path, fault)
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert run.returncode == 1 and lines[-1] == fault.words[0], run.stderr[-2000:]
    assert "Traceback" not in run.stdout + run.stderr and not (tmp_path / "out" / "metrics.json").exists()
    assert all(character.isprintable() for character in lines[-1])  # no raw ESC or NUL reaches a terminal


def test_every_message_is_one_printable_line_of_at_most_1000_characters():
    """errors.EvaluationError, the one place every participant and organizer line passes: control characters
    escaped as Python writes them, a message over 1,000 characters cut in its middle (its start names the file
    and case, its end says what to do)."""
    from evaluation.errors import ConfigurationError

    error = ConfigurationError("k.toml: labels.kid\x1b[2Jney\x00\u202e: " + "x" * 3000 + " Fix it in the ground truth.")
    text = str(error)
    assert text.startswith("k.toml: labels.kid\\x1b[2Jney\\x00\\u202e: xxx") and text.isprintable()
    assert len(text) <= 1000 and text.endswith(" Fix it in the ground truth.") and " ... " in text


@pytest.mark.parametrize(("column", "cells", "line"), [
    ("cohort", ("\u0661", "1", "\u0662", "2", "\uff11", "\uff12", "1", "2"),
     "clinical.csv:cohort: the group of case case_00000 ('\\u0661') holds non-ASCII digits; write ASCII digits or "
     "a word."),
    ("malignant", ("\uff11",), "clinical.csv:malignant: the value of case case_00000 holds non-ASCII characters "
     "(e.g. Arabic-Indic or full-width digits); write it in ASCII digits."),
])  # fmt: skip
def test_non_ascii_digits_in_the_ground_truth_are_named(tmp_path, evaluate_cli, column, cells, line):
    """float() reads '\u0661' and '\uff11' as 1: a group apart from the '1' it looks like, or a number read silently."""
    truth = tmp_path / "truth"
    shutil.copytree(KITS_TRUTH, truth)
    header, *rows = (truth / "clinical.csv").read_text().splitlines()
    if column == "cohort":  # a new column, a group per case
        header, rows = f"{header},cohort", [f"{row},{cells[k % len(cells)]}" for k, row in enumerate(rows)]
    else:  # the first case's value
        rows[0] = f"{rows[0].rsplit(',', 1)[0]},{cells[0]}"
    (truth / "clinical.csv").write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    declaration = tmp_path / "k.toml"
    declaration.write_text(kits((r'^metric = "ece"', 'metric = "ece"\ngroups = "clinical.csv:cohort"'))
                           if column == "cohort" else KITS, encoding="utf-8")  # fmt: skip
    run = evaluate_cli(str(declaration), KITS_INPUT, "--workers", "1", ground_truth=truth)
    assert (run.exit_code, run.wrote_metrics, run.last_error_line) == (1, False, line)


# --- the ranking tool (python -m evaluation.ranking, in this process)


def rank(*arguments: object) -> tuple[int, list[str]]:
    from contextlib import redirect_stderr, redirect_stdout

    from evaluation.ranking.cli import main

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main([str(a) for a in arguments])
    return code, err.getvalue().strip().splitlines()


def long_table(path: Path, algorithms: int, cases: int) -> Path:
    rows = [f"a{i},c{j},{(i * 7 + j) % 10 / 10}" for i in range(algorithms) for j in range(cases)]
    path.write_text("\n".join(["algorithm,case,value", *rows]) + "\n", encoding="utf-8")
    return path


def test_what_cannot_be_ranked_in_memory_is_refused_in_one_line(tmp_path, monkeypatch):
    """The allocation estimated before it is made (analysis.working_bytes, within 40% of tracemalloc's
    peaks) and refused over the budget, with what to reduce; the same table ranks without the resamples."""
    monkeypatch.setattr(files, "memory_budget", lambda: (64 * 2**20, "the memory limit in force (64 MiB)"))
    data = long_table(tmp_path / "many.csv", 300, 4)
    code, lines = rank("--data", data, "--output", tmp_path / "out", "--scheme", "test-then-rank", "--bootstrap", 1000)
    assert (code, lines) == (2, [
        "Task 'task': ranking 300 algorithms on 4 cases by test-then-rank with 1,000 bootstrap resamples needs about "
        "3.0 GiB, more than the memory limit in force (64 MiB): rank fewer algorithms, or fewer resamples "
        "(--bootstrap), or aggregate-then-rank (its tests compare every pair of algorithms)."])  # fmt: skip
    assert not (tmp_path / "out" / "ranking.json").exists()
    assert rank("--data", data, "--output", tmp_path / "out")[0] == 0


def test_a_huge_line_of_ranking_data_is_refused_unread(tmp_path):
    data = tmp_path / "line.csv"
    data.write_text("algorithm,case,value\n" + "A," * 2**20 + "\n", encoding="utf-8")
    assert rank("--data", data, "--output", tmp_path / "out") == (2, [
        f"The data file {data} has a line longer than 1,048,576 characters (line 2); a row holds an algorithm, a "
        "case and a value."])  # fmt: skip


@pytest.mark.parametrize("url", ["javascript:alert(document.cookie)", "data:text/html,<script>x</script>",
                                 "//evil.example", "http://[::1", "ftp://example.org", " JavaScript:x"])  # fmt: skip
def test_only_http_links_in_the_ranking_report(tmp_path, url):
    from evaluation.ranking.analysis import Design, analyse
    from evaluation.ranking.data import read_long_csv
    from evaluation.ranking.report import Metadata, render

    data = long_table(tmp_path / "data.csv", 3, 4)
    code, lines = rank("--data", data, "--output", tmp_path / "out", "--report", "--challenge-url", url)
    assert code == 2 and lines[-1].startswith("--challenge-url must be an http:// or https:// address, not ")
    page = render(analyse(read_long_csv(data), Design()), Metadata(url=url))  # the library: the address as text
    assert not re.search(r"href='(?!#)", page)


# --- older surfaces


ITK_OUT_OF_MEMORY = (  # SimpleITK 2's text under RLIMIT_DATA (a 1000 x 512 x 512 mask read under 300 MiB here)
    "Exception thrown in SimpleITK ImageFileReader_Execute: /tmp/SimpleITK-build/ITK-prefix/include/ITK-5.4/"
    "itkImportImageContainer.hxx:179:\nFailed to allocate memory for image."
)


@pytest.mark.parametrize("reader", ["label image", "heat map", "2D mask"])
def test_a_memory_limit_met_while_reading_an_image_is_memory(tmp_path, monkeypatch, reader):
    """ITK's allocation failure is the MemoryError it is (the runner's line names the case and the limit:
    "Case case_00006: the evaluation ran out of memory (limit 300 MiB per process) while scoring this case in a
    worker process." in that real run), not "could not be read as an image file"; another reader error still is."""
    from evaluation.declarative.heat_maps import read_map_image
    from evaluation.platform.images import read_label_image, read_nonzero_mask

    read = {"label image": lambda p: read_label_image(p, "c1", "submitted"),
            "heat map": lambda p: read_map_image(p, "c1", "c1", "map"),
            "2D mask": lambda p: read_nonzero_mask(p, "c1", "predicted", "c1")}[reader]  # fmt: skip
    image = tmp_path / "big.mha"
    sitk.WriteImage(sitk.Image([4, 4, 4], sitk.sitkUInt8), str(image))
    text = ITK_OUT_OF_MEMORY

    def failing(*arguments, **keywords):
        raise RuntimeError(text)

    monkeypatch.setattr(sitk, "ReadImage", failing)
    with pytest.raises(MemoryError):
        read(image)
    text = "Exception thrown in SimpleITK ImageFileReader_Execute: Unable to determine ImageIO reader"
    with pytest.raises(Exception, match=r"could not be read|cannot be read"):
        read(image)


def test_an_unclosed_quote_is_reported_at_its_own_line(tmp_path, evaluate_cli):
    """A declared prediction CSV (CIBMTR 2025): the quote opened on line 3 and never closed swallowed the
    rows after it (then named as missing cases), or was reported at a later line as a wrong cell count."""
    submission = tmp_path / "input"
    shutil.copytree(REPO / "test/input/cibmtr2025", submission)
    lines = (submission / "predictions.csv").read_text().splitlines()
    lines[2] = lines[2].replace(",", ',"', 1)
    (submission / "predictions.csv").write_text("\n".join(lines) + "\n")
    run = evaluate_cli("cibmtr2025", submission, "--workers", "1", ground_truth=REPO / "ground-truth/cibmtr2025")
    assert (run.exit_code, run.wrote_metrics, run.last_error_line) == (1, False, (
        f"Line 3 of the prediction file predictions.csv opens a quote that is not closed on that line (the quoted "
        f"cell runs on to line {len(lines)})."))  # fmt: skip


def test_make_input_refuses_a_string_for_a_number_socket(tmp_path, capsys):
    from evaluation.make_input import main

    (tmp_path / "outputs" / "case_00000").mkdir(parents=True)
    (tmp_path / "outputs" / "case_00000" / "malignancy-likelihood.json").write_text('"0.7"')
    code = main(["--challenge", "kits-example", "--outputs", str(tmp_path / "outputs"), "--output",
                 str(tmp_path / "made")])  # fmt: skip
    assert code == 1 and not (tmp_path / "made").exists()
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        "Case case_00000: malignancy-likelihood.json holds a string, but the output 'malignancy-likelihood' is a "
        "Float socket: write a number (JSON, without quotes)."
    )
