"""prediction_file.py: the header checks, on hand-written CSVs."""

from __future__ import annotations

import pytest

from evaluation.errors import SubmissionError
from evaluation.platform.prediction_file import read_prediction_table


def test_the_first_header_column_that_repeats_is_named(tmp_path):
    """In header order: 'a' (columns 2 and 6) comes before 'b' (3 and 5), though 'b' repeats first."""
    (tmp_path / "p.csv").write_text("case,a,b,c,b,a\nx,1,2,3,4,5\n")
    with pytest.raises(SubmissionError, match=r"^The header of the prediction file p.csv has the column 'a' twice\.$"):
        read_prediction_table(tmp_path / "p.csv", "case", 1.0)


def test_a_wide_header_with_a_repeat_at_its_end_is_named(tmp_path):
    """200000 columns (1.4 MB): the repeat is found in one pass (``list.count`` per column took minutes)."""
    columns = [f"c{i}" for i in range(200_000)]
    (tmp_path / "p.csv").write_text(",".join(["case", *columns, "c199999"]) + "\n")
    with pytest.raises(SubmissionError, match="has the column 'c199999' twice"):
        read_prediction_table(tmp_path / "p.csv", "case", 10.0)
