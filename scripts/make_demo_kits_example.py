"""Make the demo of the declared example challenge ``kits-example``
(evaluation/declarations/kits-example.toml): 12 small synthetic CT-like label volumes (kidney 1,
tumour 2, cyst 3; varied anisotropic spacing; benign cases without a tumour, some without a cyst),
clinical.csv (malignant = the case has a tumour), and a submission in the platform's layout with
plausible errors: shifted masks, a missed or an extra tumour, a cyst labelled as tumour, one job
without its segmentation (empty-mask policy) and one without its likelihood (worst-value policy).

Deterministic: running it again writes the same data. Usage: python scripts/make_demo_kits_example.py
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

NAME = "kits-example"
SEED = 2019
N_CASES = 12
SHAPE = (20, 32, 32)  # z, y, x
SPACINGS = ((3.0, 0.8, 0.8), (2.5, 0.9, 0.9), (1.5, 1.25, 1.25))
KIDNEY, TUMOUR, CYST = 1, 2, 3


def ellipsoid(centre, radii_mm, spacing) -> np.ndarray:
    grid = np.ogrid[tuple(slice(0, n) for n in SHAPE)]
    return sum(((g - c) * s / r) ** 2 for g, c, r, s in zip(grid, centre, radii_mm, spacing, strict=True)) <= 1.0


def make_labels(rng: np.random.Generator, spacing, malignant: bool, with_cyst: bool) -> np.ndarray:
    labels = np.zeros(SHAPE, dtype=np.uint8)
    centre = np.array([10, 16, 16]) + rng.integers(-1, 2, 3)
    labels[ellipsoid(centre, rng.uniform(9, 12, 3), spacing)] = KIDNEY
    if malignant:
        for _ in range(int(rng.integers(1, 3))):  # one or two tumours at the kidney's rim
            spot = centre + np.array([rng.integers(-3, 4), rng.integers(-6, 7), rng.integers(-6, 7)])
            labels[ellipsoid(spot, rng.uniform(3, 5, 3), spacing)] = TUMOUR
    if with_cyst:
        spot = centre + np.array([rng.integers(-3, 4), rng.integers(-5, 6), rng.integers(-5, 6)])
        labels[ellipsoid(spot, rng.uniform(2, 3.5, 3), spacing) & (labels == KIDNEY)] = CYST
    return labels


def perturb(rng: np.random.Generator, labels: np.ndarray, spacing) -> np.ndarray:
    """A plausible prediction: shifted by a voxel, a tumour sometimes missed, a false tumour or a cyst
    taken for a tumour now and then."""
    predicted = np.roll(labels, tuple(int(s) for s in rng.integers(-1, 2, 3)), axis=(0, 1, 2))
    if rng.random() < 0.25:
        predicted[predicted == TUMOUR] = KIDNEY
    if rng.random() < 0.25:
        predicted[ellipsoid((4, 6, 6), (3.0, 3.0, 3.0), spacing)] = TUMOUR
    if rng.random() < 0.2:
        predicted[predicted == CYST] = TUMOUR
    return predicted


def image(array: np.ndarray, spacing) -> sitk.Image:
    result = sitk.GetImageFromArray(array)
    result.SetSpacing(tuple(float(s) for s in reversed(spacing)))
    result.SetOrigin((-150.0, -120.5, 40.25))
    return result


def main() -> None:
    rng = np.random.default_rng(SEED)
    challenge = get(NAME)
    segmentation, likelihood = challenge.phase.outputs
    ground_truth = REPO / "ground-truth" / NAME
    shutil.rmtree(ground_truth, ignore_errors=True)
    (ground_truth / "labels").mkdir(parents=True)
    rows, jobs = ["case,malignant"], []
    with tempfile.TemporaryDirectory() as scratch:
        for index in range(N_CASES):
            case, spacing = f"case_{index:05d}", SPACINGS[index % len(SPACINGS)]
            malignant = index % 3 != 1
            labels = make_labels(rng, spacing, malignant, with_cyst=index % 4 != 0)
            sitk.WriteImage(image(labels, spacing), str(ground_truth / "labels" / f"{case}.mha"), useCompression=True)
            rows.append(f"{case},{int(malignant)}")
            predicted = Path(scratch) / f"{case}.mha"
            sitk.WriteImage(image(perturb(rng, labels, spacing), spacing), str(predicted), useCompression=True)
            probability = round(float(np.clip(rng.normal(0.7 if malignant else 0.35, 0.2), 0, 1)), 3)
            outputs = {segmentation: predicted, likelihood: probability}
            if index == 5:
                del outputs[segmentation]  # missing segmentation: scored as an empty mask
            if index == 8:
                del outputs[likelihood]  # missing likelihood: the worst value of its range
            jobs.append(JobSpec(challenge.job_inputs(case), outputs))
        (ground_truth / "clinical.csv").write_text("\n".join(rows) + "\n")
        demo = REPO / "test" / "input" / NAME
        shutil.rmtree(demo, ignore_errors=True)
        write_input(demo, [jobs[i] for i in rng.permutation(len(jobs))], seed=SEED)
    print(f"{N_CASES} cases -> ground-truth/{NAME}, test/input/{NAME}")


if __name__ == "__main__":
    main()
