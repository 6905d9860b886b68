"""detections.py: messages name the image exactly as the submission does."""

from __future__ import annotations

import pytest

from evaluation.errors import SubmissionError
from evaluation.platform.detections import parse_points


def test_a_missing_point_score_names_the_image_in_its_own_case():
    """The image name is the case: 'Slide_A.TIF' must not come out as 'slide_a.tif'."""
    with pytest.raises(SubmissionError, match=r"^The score of point 0 of image Slide_A\.TIF is not a number\.$"):
        parse_points({"points": [{"point": [1, 2]}]}, "Slide_A.TIF")
