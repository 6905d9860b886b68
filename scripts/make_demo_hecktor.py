"""Make the bundled HECKTOR demos: synthetic PET/CT-like label volumes (small, varied spacing, some
patients without GTVn), clinical.csv, and submissions in the platform's layout for hecktor2026 and
the three hecktor2025 tasks.

Deterministic: running it again writes the same data. Usage: python scripts/make_demo_hecktor.py
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np
import SimpleITK as sitk

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from evaluation.platform.layout import JobSpec, write_input  # noqa: E402
from evaluation.registry import get  # noqa: E402

(HPV,) = get("hecktor2025-task3").phase.outputs  # the declared task 3's socket
CT, PET = get("hecktor2026").phase.inputs  # the declared challenge's sockets
SEGMENTATION_2026, T_STAGE, N_STAGE, RFS = get("hecktor2026").phase.outputs
(SEGMENTATION_2025,) = get("hecktor2025-task1").phase.outputs  # the declared task 1's socket

SEED = 2026
CENTRES = ("CHUM", "CHUV", "HGJ", "MDA")
N_PATIENTS = 8
SHAPE = (24, 40, 40)  # z, y, x
SPACINGS = ((3.0, 0.98, 0.98), (2.0, 1.0, 1.0), (3.27, 0.9766, 0.9766), (1.5, 1.2, 1.2))


def ellipsoid(shape, centre, radii_mm, spacing) -> np.ndarray:
    grid = np.ogrid[tuple(slice(0, n) for n in shape)]
    total = sum(((g - c) * s / r) ** 2 for g, c, r, s in zip(grid, centre, radii_mm, spacing, strict=True))
    return total <= 1.0


def make_labels(rng: np.random.Generator, spacing, with_nodes: bool) -> np.ndarray:
    labels = np.zeros(SHAPE, dtype=np.uint8)
    centre = (SHAPE[0] // 2 + rng.integers(-2, 3), 20 + rng.integers(-4, 5), 16 + rng.integers(-4, 5))
    labels[ellipsoid(SHAPE, centre, rng.uniform(6, 12, 3), spacing)] = 1
    if with_nodes:
        for _ in range(int(rng.integers(1, 4))):
            node = (int(rng.integers(4, SHAPE[0] - 4)), int(rng.integers(6, 34)), int(rng.integers(28, 36)))
            labels[ellipsoid(SHAPE, node, rng.uniform(3, 6, 3), spacing) & (labels == 0)] = 2
    return labels


def perturb(rng: np.random.Generator, labels: np.ndarray) -> np.ndarray:
    """A plausible prediction: the labels shifted by a voxel or two, a node sometimes missed or added."""
    shift = tuple(int(s) for s in rng.integers(-1, 2, 3))
    predicted = np.roll(labels, shift, axis=(0, 1, 2))
    if rng.random() < 0.3:
        predicted[predicted == 2] = 0
    if rng.random() < 0.3:
        predicted[2:5, 3:7, 3:7] = 2
    return predicted


def image(array: np.ndarray, spacing) -> sitk.Image:
    result = sitk.GetImageFromArray(array)
    result.SetSpacing(tuple(float(s) for s in reversed(spacing)))
    result.SetOrigin((-120.5, -80.25, 310.0))
    return result


def stage(rng: np.random.Generator, axis: str, classes: range) -> str:
    return f"{axis}{int(rng.choice(classes))}"


def main() -> None:
    rng = np.random.default_rng(SEED)
    patients = [f"{CENTRES[i % len(CENTRES)]}-{i + 1:03d}" for i in range(N_PATIENTS)]
    truth = []
    for index, patient in enumerate(patients):
        spacing = SPACINGS[index % len(SPACINGS)]
        labels = make_labels(rng, spacing, with_nodes=index % 3 != 2)
        t, n = stage(rng, "T", range(1, 5)), stage(rng, "N", range(0, 4))
        risk = int(t[1]) + int(n[1]) + rng.normal(0, 1.5)
        rfs = float(np.round(np.clip(2000 - 300 * risk + rng.normal(0, 200), 60, 2500)))
        relapse = int(rng.random() < (0.8 if rfs < 1200 else 0.2))
        truth.append({"patient": patient, "spacing": spacing, "labels": labels, "t": t, "n": n, "rfs": rfs,
                      "relapse": relapse, "hpv": int(rng.random() < 0.6), "risk": risk})  # fmt: skip
    csv = ["PatientID,RFS,Relapse,T-stage,N-stage,HPV Status"]
    csv += [f"{p['patient']},{p['rfs']:g},{p['relapse']},{p['t']},{p['n']},{p['hpv']}" for p in truth]
    for name, with_labels in (("hecktor2026", True), ("hecktor2025-task1", True), ("hecktor2025-task2", False),
                              ("hecktor2025-task3", False)):  # fmt: skip
        folder = REPO / "ground-truth" / name
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        if with_labels:
            (folder / "labels").mkdir()
            for p in truth:
                path = folder / "labels" / f"{p['patient']}.mha"
                sitk.WriteImage(image(p["labels"], p["spacing"]), str(path), useCompression=True)
        if name != "hecktor2025-task1":
            (folder / "clinical.csv").write_text("\n".join(csv) + "\n")
    with tempfile.TemporaryDirectory() as scratch:
        segmentations = {}
        for p in truth:
            path = Path(scratch) / f"{p['patient']}.mha"
            sitk.WriteImage(image(perturb(rng, p["labels"]), p["spacing"]), str(path), useCompression=True)
            segmentations[p["patient"]] = path
        order = rng.permutation(len(truth))  # the platform lists jobs in no particular order
        jobs: dict[str, list[JobSpec]] = {
            name: [] for name in ("hecktor2026", "hecktor2025-task1", "hecktor2025-task2", "hecktor2025-task3")
        }
        for i in order:
            p = truth[i]
            inputs = {CT: f"{p['patient']}__CT.mha", PET: f"{p['patient']}__PT.mha"}
            guess_t = p["t"] if rng.random() < 0.6 else stage(rng, "T", range(1, 5))
            guess_n = p["n"] if rng.random() < 0.6 else stage(rng, "N", range(0, 4))
            predicted_days = float(np.round(max(30.0, 2000 - 300 * (p["risk"] + rng.normal(0, 1))), 1))
            segmentation = segmentations[p["patient"]]
            outputs_2026 = {SEGMENTATION_2026: segmentation, T_STAGE: guess_t,
                            N_STAGE: guess_n, RFS: predicted_days}  # fmt: skip
            if i == 3:
                del outputs_2026[RFS]  # one patient without a prognosis: the missing policy applies
            jobs["hecktor2026"].append(JobSpec(inputs, outputs_2026))
            jobs["hecktor2025-task1"].append(JobSpec(inputs, {SEGMENTATION_2025: segmentation}))
            risk = round(float(p["risk"] + rng.normal(0, 1)), 3)
            jobs["hecktor2025-task2"].append(JobSpec(inputs, {RFS: risk}))
            hpv = bool(p["hpv"]) if rng.random() < 0.75 else not p["hpv"]
            jobs["hecktor2025-task3"].append(JobSpec(inputs, {HPV: hpv}))
        for name, specs in jobs.items():
            target = REPO / "test" / "input" / name
            shutil.rmtree(target, ignore_errors=True)
            write_input(target, specs, seed=SEED)
    print(f"{len(truth)} patients -> ground-truth/hecktor*, test/input/hecktor*")


if __name__ == "__main__":
    main()
