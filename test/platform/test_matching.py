"""Jobs to reference cases: one job per case, unknown cases refused, missing cases listed."""

from __future__ import annotations

import pytest

from evaluation.errors import SubmissionError
from evaluation.platform.matching import match_jobs
from evaluation.platform.predictions import Job


def test_match_keeps_reference_order_and_lists_missing():
    jobs = [Job("j2"), Job("j1")]
    matched = match_jobs(jobs, lambda job: {"j1": "a", "j2": "c"}[job.pk], ["a", "b", "c"])
    assert list(matched.jobs) == ["a", "c"] and matched.missing == ["b"]


def test_unknown_and_duplicate_cases():
    with pytest.raises(SubmissionError, match="'z', which is not in the reference"):
        match_jobs([Job("j")], lambda job: "z", ["a"])
    with pytest.raises(SubmissionError, match=r"two jobs \(j1 and j2\)"):
        match_jobs([Job("j1"), Job("j2")], lambda job: "a", ["a"])
