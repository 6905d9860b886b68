"""Small deterministic label-map pairs with the edge cases of lesion-wise, region and volume metrics.

numpy only (the generator also runs inside the throwaway environments of the official evaluation
code that produced ``test/metrics/golden/*.json``). Arrays are (z, y, x) with spacing in the same
order; voxel values 0 (background) and 1, 2, 3 (BraTS: necrosis, oedema, enhancing tumour; KiTS:
kidney, tumour, cyst). Cases:

- ``nested``: two tumours with nested labels (3 in 1 in 2), predicted with shifts; anisotropic spacing;
- ``empty_reference`` / ``empty_prediction`` / ``both_empty``;
- ``touching``: two reference lesions two voxels apart (merged by a dilation) and one far away;
- ``small_lesion``: a reference lesion below 50 mm³ (predicted) and one below it (missed);
- ``many_to_one``: one reference lesion predicted as three pieces, one of them only near it;
- ``corners``: blobs meeting at an edge or a corner only (one lesion at 18/26, two at 6);
- ``random``: a seeded random scatter of balls of each label;
- ``no_enhancing``: ``nested`` with label 3 predicted as 1 (a region empty in the prediction only).

``PET_SPACING`` is a PET-like spacing that float32 does not hold exactly (the autoPET goldens use it,
to pin the voxel volume the official code computes in float32 from the NIfTI header).
"""

from __future__ import annotations

import numpy as np

SHAPE = (24, 28, 32)
PET_SPACING = (3.0, 2.0364201068878174, 2.0364201068878174)


def _ball(volume: np.ndarray, centre: tuple[float, float, float], radius: float, value: int) -> None:
    """Set the voxels within ``radius`` voxels of ``centre`` to ``value``."""
    z, y, x = np.ogrid[: volume.shape[0], : volume.shape[1], : volume.shape[2]]
    inside = (z - centre[0]) ** 2 + (y - centre[1]) ** 2 + (x - centre[2]) ** 2 <= radius**2
    volume[inside] = value


def _tumour(volume: np.ndarray, centre: tuple[float, float, float], radius: float) -> None:
    """Oedema (2) around necrosis (1) around an enhancing core (3)."""
    _ball(volume, centre, radius, 2)
    _ball(volume, centre, radius * 0.7, 1)
    _ball(volume, centre, radius * 0.4, 3)


def _empty() -> np.ndarray:
    return np.zeros(SHAPE, dtype=np.uint8)


def _nested() -> tuple[np.ndarray, np.ndarray]:
    reference, prediction = _empty(), _empty()
    _tumour(reference, (8, 9, 10), 5.5)
    _tumour(reference, (15, 19, 22), 4.5)
    _tumour(prediction, (9, 9, 11), 5.0)
    _tumour(prediction, (15, 20, 21), 5.0)
    _ball(prediction, (20, 4, 28), 1.5, 3)  # a small false positive of every region
    return reference, prediction


def _touching() -> tuple[np.ndarray, np.ndarray]:
    reference, prediction = _empty(), _empty()
    reference[4:10, 4:10, 4:9] = 3  # two lesions two voxels apart: one after a dilation of 1 or more
    reference[4:10, 4:10, 11:16] = 3
    reference[16:21, 18:24, 20:26] = 1  # a third lesion far away
    prediction[5:10, 4:9, 5:14] = 3  # one prediction over both halves
    prediction[16:20, 19:24, 21:26] = 1
    prediction[16:20, 10:14, 24:28] = 2  # oedema only: a false positive of WT, not of TC
    return reference, prediction


def _small_lesion() -> tuple[np.ndarray, np.ndarray]:
    reference, prediction = _empty(), _empty()
    _tumour(reference, (10, 12, 12), 5.0)
    reference[2:4, 2:5, 2:6] = 3  # 24 voxels (36 mm³ at 1.5 mm³): below 50 mm³, predicted
    reference[20:22, 24:26, 26:30] = 1  # 16 voxels: below, missed
    reference[18:21, 3:7, 20:25] = 3  # 60 voxels (90 mm³): kept, missed
    _tumour(prediction, (10, 13, 12), 5.0)
    prediction[2:4, 2:4, 3:6] = 3
    prediction[20:23, 10:14, 2:6] = 2  # a false positive of the whole tumour
    return reference, prediction


def _many_to_one() -> tuple[np.ndarray, np.ndarray]:
    reference, prediction = _empty(), _empty()
    _ball(reference, (12, 14, 16), 7.0, 2)
    _ball(reference, (12, 14, 16), 3.0, 3)
    prediction[6:18, 8:20, 10:15] = 2  # three pieces of one lesion
    prediction[6:18, 8:20, 16:22] = 2
    prediction[12:14, 13:16, 15:17] = 3
    prediction[20:23, 12:16, 14:18] = 1  # not overlapping, within 2 voxels of the reference lesion
    return reference, prediction


def _corners() -> tuple[np.ndarray, np.ndarray]:
    reference, prediction = _empty(), _empty()
    reference[4:8, 4:8, 4:8] = 1
    reference[8:12, 8:12, 8:12] = 1  # meets the first at a corner only
    reference[14:18, 14:18, 14:18] = 3
    reference[18:22, 18:22, 14:18] = 3  # meets the previous at an edge only
    prediction[4:8, 4:8, 4:8] = 1  # the first predicted, its corner partner not
    prediction[18:22, 18:22, 14:18] = 3  # the edge partner predicted, the other not
    prediction[12:14, 24:27, 24:27] = 2  # a false positive everywhere
    prediction[14:16, 27, 27] = 2  # meets it at a corner only
    return reference, prediction


def _random(seed: int = 20231012) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    reference, prediction = _empty(), _empty()
    for _ in range(7):
        centre = tuple(float(c) for c in rng.uniform(3, np.array(SHAPE) - 3))
        radius, value = float(rng.uniform(1.0, 4.0)), int(rng.integers(1, 4))
        _ball(reference, centre, radius, value)
        if rng.uniform() < 0.7:  # predicted with a shift and another radius
            shifted = tuple(c + float(rng.normal(0, 1.0)) for c in centre)
            _ball(prediction, shifted, radius * float(rng.uniform(0.6, 1.3)), value)
    for _ in range(3):  # false positives
        centre = tuple(float(c) for c in rng.uniform(3, np.array(SHAPE) - 3))
        _ball(prediction, centre, float(rng.uniform(0.8, 2.5)), int(rng.integers(1, 4)))
    return reference, prediction


def cases() -> dict[str, tuple[np.ndarray, np.ndarray, tuple[float, float, float]]]:
    """Every case as (reference, prediction, spacing mm along (z, y, x)); spacings are exact in
    float32, as NIfTI headers store them."""
    nested, touching = _nested(), _touching()
    return {
        "nested": (*nested, (1.5, 0.75, 1.25)),
        "empty_reference": (_empty(), nested[1], (1.0, 1.0, 1.0)),
        "empty_prediction": (nested[0], _empty(), (1.0, 1.0, 1.0)),
        "both_empty": (_empty(), _empty(), (1.0, 1.0, 1.0)),
        "touching": (*touching, (1.0, 1.0, 1.0)),
        "small_lesion": (*_small_lesion(), (1.5, 1.0, 1.0)),
        "many_to_one": (*_many_to_one(), (2.0, 1.0, 0.5)),
        "corners": (*_corners(), (1.0, 1.0, 1.0)),
        "random": (*_random(), (1.0, 0.875, 0.875)),
        "no_enhancing": (nested[0], np.where(nested[1] == 3, 1, nested[1]).astype(np.uint8), (1.0, 1.0, 1.0)),
    }
