"""Input checks run at the top of every catalogue metric, before any arithmetic.

Modelled on scikit-learn's ``sklearn/utils/validation.py`` (``check_consistent_length``,
``assert_all_finite``): each raises ``ValueError`` with a one-line message naming the argument, so a
caller can turn it into a participant-safe error without a traceback.
"""

from __future__ import annotations

import numpy as np


def as_finite(name: str, values: np.ndarray, ndim: int | None = None) -> np.ndarray:
    """``values`` as a float array; ``ValueError`` on NaN/inf or on another dimensionality than ``ndim``."""
    array = np.asarray(values, dtype=float)
    if ndim is not None and array.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional, got shape {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return array


def spacing(values: np.ndarray, ndim: int) -> np.ndarray:
    """A voxel size: ``ndim`` finite positive numbers as a float array; ``ValueError`` otherwise."""
    step = as_finite("spacing", values, ndim=1)
    if step.size != ndim or np.any(step <= 0):
        raise ValueError(f"spacing must be {ndim} positive numbers, got {tuple(step)}")
    return step


def same_length(**arrays: np.ndarray) -> int:
    """The common first-axis length of ``arrays``; ``ValueError`` naming them when they differ."""
    lengths = {name: len(np.asarray(array)) for name, array in arrays.items()}
    if len(set(lengths.values())) > 1:
        raise ValueError(f"inconsistent numbers of samples: {lengths}")
    return next(iter(lengths.values()))


def same_shape(reference: np.ndarray, prediction: np.ndarray) -> None:
    """``ValueError`` when two masks or label maps differ in shape."""
    if np.shape(reference) != np.shape(prediction):
        raise ValueError(f"shapes differ: reference {np.shape(reference)} vs prediction {np.shape(prediction)}")


def binary(name: str, values: np.ndarray) -> np.ndarray:
    """``values`` (0/1 or boolean) as a boolean array; ``ValueError`` on any other value."""
    array = np.asarray(values)
    if array.dtype == bool:
        return array
    if array.dtype.kind in "iu":
        valid = array.size == 0 or (array.min() >= 0 and array.max() <= 1)
    else:
        valid = bool(np.all((array == 0) | (array == 1)))
    if not valid:
        raise ValueError(f"{name} must hold only 0 and 1")
    return array.astype(bool)


def binary_pair(
    reference: np.ndarray, prediction: np.ndarray, ndims: tuple[int, ...] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Two masks of one shape (with ``ndims``, of one of those dimensionalities) as boolean arrays."""
    reference, prediction = np.asarray(reference), np.asarray(prediction)
    same_shape(reference, prediction)
    if ndims is not None and reference.ndim not in ndims:
        raise ValueError(f"masks must be {' or '.join(f'{n}D' for n in ndims)}, got shape {reference.shape}")
    return binary("reference", reference), binary("prediction", prediction)


def probabilities(name: str, values: np.ndarray) -> np.ndarray:
    """Finite 1D values in [0, 1]; ``ValueError`` otherwise."""
    array = as_finite(name, values, ndim=1)
    if array.size and (array.min() < 0 or array.max() > 1):
        raise ValueError(f"{name} must lie in [0, 1]")
    return array


def fraction(name: str, value: float, *, open_low: bool = False) -> float:
    """A parameter in [0, 1] (or (0, 1] with ``open_low``); ``ValueError`` otherwise."""
    value = float(value)
    if not (0 < value <= 1 if open_low else 0 <= value <= 1):
        raise ValueError(f"{name} must be in {'(0, 1]' if open_low else '[0, 1]'}, got {value}")
    return value


def nonempty(name: str, length: int) -> None:
    """``ValueError`` when there is no sample at all."""
    if length == 0:
        raise ValueError(f"{name} is empty")
