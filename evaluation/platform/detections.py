"""Detections as the platform stores them: the "Multiple 2D bounding boxes" JSON of an output socket
(``{"type": "Multiple 2D bounding boxes", "boxes": [{"corners": [[x, y, z], ...], "probability": p},
...]}``, grand-challenge.org's interface kind) or a plain ``[[x1, y1, x2, y2, score], ...]`` array,
parsed into arrays for ``evaluation.metrics.detection`` (DigestPath 2019 task 1, declared challenges)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from evaluation.errors import SubmissionError
from evaluation.platform.sockets import finite_number


def parse_detections(document: Any, case: str, scored: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """(boxes (n, 4), scores (n,)) from the platform's "Multiple 2D bounding boxes" JSON or a plain
    ``[[x1, y1, x2, y2, score], ...]`` array; every malformed box is an error naming the image.
    ``scored=False`` (reference boxes): no score is read (a box's "probability" is ignored, a plain row
    is ``[x1, y1, x2, y2]``) and every score is 1.0."""
    rows = []
    if isinstance(document, dict):
        boxes = document.get("boxes")
        if not isinstance(boxes, list):
            raise SubmissionError(f"The detections of image {case} have no list of 'boxes'.", case)
        for position, box in enumerate(boxes):
            corners = box.get("corners") if isinstance(box, dict) else None
            if (
                not isinstance(corners, list)
                or len(corners) < 2
                or not all(isinstance(c, list) and len(c) >= 2 for c in corners)
            ):
                raise SubmissionError(f"Box {position} of image {case} has no valid 'corners'.", case)
            xs = [finite_number(c[0], f"A corner of box {position} of image {case}", case) for c in corners]
            ys = [finite_number(c[1], f"A corner of box {position} of image {case}", case) for c in corners]
            score = box.get("probability") if scored else 1.0
            rows.append([min(xs), min(ys), max(xs), max(ys), score])
    elif isinstance(document, list):
        rows = (
            document
            if scored
            else [[*row, 1.0] if isinstance(row, list) and len(row) == 4 else row for row in document]
        )
    else:
        raise SubmissionError(f"The detections of image {case} are neither a list nor bounding-box JSON.", case)
    parsed = _plain(rows)
    if parsed is None:  # row by row: the first problem named
        parsed = np.empty((len(rows), 5))
        for position, row in enumerate(rows):
            if not isinstance(row, list) or len(row) != 5:
                layout = "[x1, y1, x2, y2, score]" if scored else "[x1, y1, x2, y2]"
                raise SubmissionError(f"Detection {position} of image {case} is not {layout}.", case)
            parsed[position] = [finite_number(v, f"Detection {position} of image {case}", case) for v in row]
    boxes, scores = parsed[:, :4], parsed[:, 4]
    negative = np.flatnonzero((boxes < 0).any(axis=1))
    if negative.size:
        raise SubmissionError(f"Detection {negative[0]} of image {case} has a negative coordinate.", case)
    degenerate = np.flatnonzero((boxes[:, 2] <= boxes[:, 0]) | (boxes[:, 3] <= boxes[:, 1]))
    if degenerate.size:
        raise SubmissionError(f"Detection {degenerate[0]} of image {case} is degenerate (x2 <= x1 or y2 <= y1).", case)
    outside = np.flatnonzero((scores < 0) | (scores > 1))
    if outside.size:
        raise SubmissionError(f"Detection {outside[0]} of image {case} has a score outside [0, 1].", case)
    return boxes, scores


def platform_boxes(rows: Sequence[Sequence[float]]) -> dict[str, Any]:
    """``[x1, y1, x2, y2(, score)]`` rows as the platform's "Multiple 2D bounding boxes" JSON (corners in the
    plane z = 0; a row's score as the box's ``probability``): what make_input and the demos write."""
    boxes = []
    for row in rows:
        x1, y1, x2, y2 = row[:4]
        box: dict[str, Any] = {"corners": [[x1, y1, 0], [x2, y1, 0], [x2, y2, 0], [x1, y2, 0]]}
        if len(row) == 5:
            box["probability"] = row[4]
        boxes.append(box)
    return {"type": "Multiple 2D bounding boxes", "boxes": boxes, "version": {"major": 1, "minor": 0}}


def _plain(rows: list[Any]) -> np.ndarray | None:
    """``rows`` as an (n, 5) array in one conversion when every row is a list of five finite ints or floats
    (the common case); None otherwise, and the row-by-row reading names the first problem."""
    if not rows or not all(type(row) is list and len(row) == 5 for row in rows):
        return None
    if not {type(value) for row in rows for value in row} <= {int, float}:
        return None  # (a boolean, a string, None: refused by name)
    try:
        parsed = np.array(rows, dtype=float)
    except OverflowError:
        return None
    return parsed if np.isfinite(parsed).all() else None


def parse_points(document: Any, case: str, scored: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """(points (n, 3), scores (n,)) from the platform's "Multiple points" JSON (``{"type": "Multiple
    points", "points": [{"point": [x, y, z], "probability": p}, ...]}``) or a plain ``[[x, y, (z,)
    score], ...]`` array; a point of 2 coordinates is in the plane z = 0 (as the platform writes 2D points).
    ``scored=False`` (reference points): no score is read (a plain row is the coordinates only) and
    every score is 1.0. Every malformed point is an error naming the image."""
    rows: list[tuple[Any, Any]] = []  # (coordinates, score)
    if isinstance(document, dict):
        points = document.get("points")
        if not isinstance(points, list):
            raise SubmissionError(f"The points of image {case} have no list of 'points'.", case)
        for position, point in enumerate(points):
            if not isinstance(point, dict):
                raise SubmissionError(f"Point {position} of image {case} is not an object with a 'point'.", case)
            rows.append((point.get("point"), point.get("probability") if scored else 1.0))
    elif isinstance(document, list):
        for row in document:
            valid = isinstance(row, list) and len(row) > 1
            rows.append((row[:-1], row[-1]) if scored and valid else (row, 1.0))
    else:
        raise SubmissionError(f"The points of image {case} are neither a list nor points JSON.", case)
    coordinates, scores = [], np.empty(len(rows))
    for position, (point, score) in enumerate(rows):
        what = f"Point {position} of image {case}"
        if not isinstance(point, list) or len(point) not in (2, 3):
            raise SubmissionError(f"{what} does not have 2 or 3 coordinates.", case)
        coordinates.append([*(finite_number(value, what, case) for value in point), 0.0][:3])
        scores[position] = finite_number(score, f"The score of point {position} of image {case}", case)
    outside = np.flatnonzero((scores < 0) | (scores > 1))
    if outside.size:
        raise SubmissionError(f"Point {outside[0]} of image {case} has a score outside [0, 1].", case)
    return np.array(coordinates, dtype=float).reshape(len(rows), 3), scores


def point_names(document: Any, case: str) -> list[str | None]:
    """Each point's ``name`` in a "Multiple points" JSON that ``parse_points`` accepted (None: a point
    without one; a plain array has none); a name that is not a string is an error naming the image."""
    if not isinstance(document, dict):
        return [None] * len(document)
    names = [point.get("name") for point in document["points"]]
    bad = next((i for i, name in enumerate(names) if name is not None and not isinstance(name, str)), None)
    if bad is not None:
        raise SubmissionError(f"The name of point {bad} of image {case} is not a string.", case)
    return names


def point_numbers(document: Any, key: str, case: str) -> np.ndarray:
    """Each point's number under ``key`` in a "Multiple points" JSON that ``parse_points`` accepted
    (e.g. a reference nodule's ``diameter_mm``), NaN where a point has none (a plain array has none);
    a value that is not a finite number is an error naming the image."""
    if not isinstance(document, dict):
        return np.full(len(document), np.nan)
    values = [point.get(key) for point in document["points"]]
    what = f"The '{key}' of point {{}} of image {case}"
    return np.array([np.nan if v is None else finite_number(v, what.format(i), case) for i, v in enumerate(values)],
                    dtype=float).reshape(len(values))  # fmt: skip
