"""Synthetic cases of the second outsider check (``test_outsider_more.py``), with their edge cases.

The same generators made the data the official code was run on (scratch venv, numbers recorded in
test/metrics/golden/flare22.json, hntsmrg2024.json, conic2022.json); numpy only, deterministic.
``hntsmrg_cases`` is also the demo of the library's ``hntsmrg2024`` (scripts/make_demo_hntsmrg2024.py).
Arrays are (z, y, x); spacings are (z, y, x) mm, each exactly a float32 (NIfTI headers hold float32).
"""

from __future__ import annotations

import numpy as np

FLARE_ORGANS = (
    "Liver",
    "RK",
    "Spleen",
    "Pancreas",
    "Aorta",
    "IVC",
    "RAG",
    "LAG",
    "Gallbladder",
    "Esophagus",
    "Stomach",
    "Duodenum",
    "LK",
)
CONIC_CLASSES = ("epithelial", "lymphocyte", "plasma", "neutrophil", "eosinophil", "connective")


def _box(shape: tuple[int, int, int], lo: tuple[int, int, int], hi: tuple[int, int, int]) -> np.ndarray:
    mask = np.zeros(shape, bool)
    mask[lo[0] : hi[0], lo[1] : hi[1], lo[2] : hi[2]] = True
    return mask


def flare_cases() -> dict[str, tuple[np.ndarray, np.ndarray, tuple[float, float, float]]]:
    """Six abdominal CT cases with the 13 FLARE22 labels in a 4 x 4 grid of 5 x 5 cells.

    Edge cases: an organ absent from both masks, absent from the prediction, absent from the
    reference; a prediction overlapping with Dice < 0.2 (its surface Dice is forced to 0); aorta,
    IVC and oesophagus predicted beyond the reference's slices; an aorta labelled on two slices (an
    organ on one slice fails the official code: the crop is empty);
    random shifts and erosions elsewhere.
    """
    rng = np.random.default_rng(22)
    shape = (12, 20, 20)
    spacings = [(2.5, 0.75, 0.75), (1.5, 1.0, 1.0), (2.0, 0.5, 0.625), (1.0, 1.0, 1.0), (3.0, 0.875, 0.875)]
    spacings.append((2.5, 0.75, 0.75))
    cases = {}
    for index, spacing in enumerate(spacings):
        reference = np.zeros(shape, np.uint8)
        prediction = np.zeros(shape, np.uint8)
        for label in range(1, 14):
            cy, cx = divmod(label - 1, 4)
            y0, x0 = 5 * cy, 5 * cx
            z0 = int(rng.integers(1, 4))
            z1 = int(rng.integers(z0 + 3, 11))
            ref = _box(shape, (z0, y0, x0), (z1, y0 + 4, x0 + 4))
            shift = rng.integers(-1, 2, size=3)
            pred = np.roll(ref, tuple(int(s) for s in shift), axis=(0, 1, 2))
            if rng.random() < 0.3:
                pred &= ~_box(shape, (0, y0, x0), (12, y0 + 1, x0 + 4))
            if label in (5, 6, 10):  # predicted beyond the reference's slices
                pred |= _box(shape, (z1, y0 + 1, x0 + 1), (min(z1 + 2, 12), y0 + 3, x0 + 3))
            reference[ref] = label
            prediction[pred & (prediction == 0)] = label
        if index == 1:
            reference[reference == 7] = 0  # absent from both
            prediction[prediction == 7] = 0
            prediction[prediction == 9] = 0  # absent from the prediction
        if index == 2:
            reference[reference == 8] = 0  # absent from the reference only
            low = reference == 11  # Dice < 0.2: a sliver of the stomach
            prediction[prediction == 11] = 0
            sliver = low & (np.cumsum(low, axis=2) == 1) & (np.cumsum(low, axis=1) == 1)
            prediction[sliver] = 11
            prediction[_box(shape, (0, 10, 8), (12, 14, 9)) & (prediction == 0)] = 11
        if index == 3:
            reference[reference == 5] = 0  # the aorta on two slices of the reference: only the first is scored
            reference[_box(shape, (5, 6, 1), (7, 9, 4))] = 5
        if index == 4:
            prediction[:] = 0  # an empty prediction
        cases[f"flare_{index:02d}"] = (reference, prediction, spacing)
    return cases


def hntsmrg_cases() -> dict[str, tuple[np.ndarray, np.ndarray, tuple[float, float, float]]]:
    """Eight head-and-neck MRI cases, GTVp = 1 and GTVn = 2, of different spacings.

    Edge cases: a perfect case, an empty prediction, no GTVn in the reference (a false-positive
    node), no GTVn predicted, no GTVn in either mask (SimpleITK's overlap filter warns "Label 2 not
    found" and gives Dice 0), random overlaps elsewhere.
    """
    rng = np.random.default_rng(24)
    shape = (10, 14, 14)
    spacings = [(2.0, 0.5, 0.5), (1.5, 0.75, 0.75), (1.0, 1.0, 1.0), (3.0, 0.5, 0.5)]
    spacings += [(2.0, 0.625, 0.625), (1.25, 1.0, 1.0), (2.0, 0.5, 0.5), (4.0, 0.25, 0.25)]
    cases = {}
    for index, spacing in enumerate(spacings):
        reference = np.zeros(shape, np.uint8)
        prediction = np.zeros(shape, np.uint8)
        for label, (y0, x0) in ((1, (1, 1)), (2, (8, 7))):
            lo = (int(rng.integers(1, 4)), y0 + int(rng.integers(0, 2)), x0 + int(rng.integers(0, 2)))
            hi = (lo[0] + int(rng.integers(2, 6)), lo[1] + int(rng.integers(2, 5)), lo[2] + int(rng.integers(2, 5)))
            ref = _box(shape, lo, hi)
            pred = np.roll(ref, tuple(int(s) for s in rng.integers(-1, 2, size=3)), axis=(0, 1, 2))
            if rng.random() < 0.5:
                pred |= np.roll(pred, 1, axis=2)
            reference[ref] = label
            prediction[pred & (prediction == 0)] = label
        if index == 0:
            prediction = reference.copy()
        if index == 3:
            prediction[:] = 0
        if index == 5:
            reference[reference == 2] = 0
        if index == 6:
            prediction[prediction == 2] = 0
        if index == 7:  # no GTVn in either mask
            reference[reference == 2] = 0
            prediction[prediction == 2] = 0
        cases[f"hnts_{index:02d}"] = (reference, prediction, spacing)
    return cases


def conic_counts(seed: int = 2022) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Patch ids, reference and predicted nucleus counts (patches x the six classes, CONIC_CLASSES order).

    Edge cases: eosinophils constant in the reference and predicted wrong (R² is then 0 in
    scikit-learn), neutrophils constant and predicted exactly (R² 1), a class predicted worse than
    its mean (negative R²), exact predictions of plasma cells, fractional predicted counts.
    """
    rng = np.random.default_rng(seed)
    n = 16
    reference = rng.poisson((30.0, 12.0, 4.0, 2.0, 1.0, 8.0), size=(n, 6)).astype(float)
    reference[:, 3] = 2.0
    reference[:, 4] = 1.0
    prediction = np.round(reference + rng.normal(0.0, 2.0, size=(n, 6)), 1).clip(0)
    prediction[:, 1] = rng.permutation(reference[:, 1]) + 3.0
    prediction[:, 2] = reference[:, 2]
    prediction[:, 3] = 2.0
    prediction[:, 4] = np.arange(n) % 3
    ids = [f"patch_{i:03d}" for i in range(n)]
    return ids, reference, prediction
