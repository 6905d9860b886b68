"""prediction_file.py: the header checks, on hand-written CSVs."""

from __future__ import annotations

import numpy as np
import pytest

from evaluation.errors import SubmissionError
from evaluation.platform.prediction_file import decimal_cells, padded_texts, read_prediction_table


def padded(rows: np.ndarray) -> list[str]:
    """The texts of ``padded_cells`` rows (each row's bytes up to its NULs)."""
    return [row.tobytes().rstrip(b"\0").decode("ascii") for row in rows.view(np.uint8)]


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


TAKEN = ["0", "-0", "+0", "-0.0", ".5", "5.", "0.1", "-7.25", "00012.5000", "123456789012345", "9007199254740991"]
LEFT = ["0.000000000000000000001", "9007199254740993", "999999999999999999", "1e5", "", "-", ".", "+.", "1.2.3",
        "12a", "+-1", "1-", " 1", "\uff11", "0x10", "inf", "nan", "1_0"]  # fmt: skip


@pytest.mark.parametrize("cell", TAKEN + LEFT)
def test_plain_decimals_are_what_float_reads_or_left_to_it(cell):
    """``plain_decimals`` reads a plain decimal exactly as ``float()`` (the same double, -0.0 included) and
    leaves any other cell (``None``: past 18 digits or 2**53, an exponent, a space...) to the reader of cells."""
    found = decimal_cells([cell])
    assert (found is not None) == (cell in TAKEN)
    if found is not None:
        assert repr(float(found[0])) == repr(float(cell))


def test_plain_decimals_of_many_cells_are_float_bit_for_bit():
    rng = np.random.default_rng(7)
    for places in range(16):
        cells = [f"{x:.{places}f}" for x in rng.uniform(-1e3, 1e3, 2000)]
        found = decimal_cells(cells)
        expected = np.array(list(map(float, cells)))
        assert found is not None or places > 12  # (past 15 digits: float() reads them)
        if found is not None:
            assert found.view(np.int64).tolist() == expected.view(np.int64).tolist()


def test_a_file_without_quotes_gives_its_number_columns_from_its_bytes(tmp_path):
    path = tmp_path / "predictions.csv"
    path.write_bytes(b"case,p,q\r\nb,0.25,x\r\n\r\na,-1.5,y\r\n  \r\nc,3,z")
    table = read_prediction_table(path, "case", 1.0)
    assert table.numbers("p").tolist() == [0.25, -1.5, 3.0] and table.numbers("q") is None
    assert table.positions(["c", "a", "b"]).tolist() == [2, 1, 0] and table.positions(["a", "d"]) is None
    assert table.positions(["a", "b", "d"]) is None and table.positions(["a", "b", "é"]) is None
    many = "".join(f"c{k},{k / 8},{k}\n" for k in range(40))  # a cell in 16 at most read by float(): ' 1e-05 '
    path.write_text(f"case,p,q\n{many}d, 1e-05 ,0.30000000000000004\ne,7,1_0\n")
    table = read_prediction_table(path, "case", 1.0)
    assert table.numbers("p").tolist() == [k / 8 for k in range(40)] + [1e-05, 7.0] and table.numbers("q") is None
    path.write_text("case,p\né,1\nb,2\na,3\n")
    assert read_prediction_table(path, "case", 1.0).positions(["a", "b", "é"]).tolist() == [2, 1, 0]


def test_a_number_columns_texts_are_its_floats_repr_its_own_cells_where_they_are_that(tmp_path):
    """``texts``: each number's ``repr`` in the order asked for; a cell's own text kept only where it is that
    (``repr_lengths``: less its 0s at the end), which the many cells written as repr writes them are."""
    rng = np.random.default_rng(3)
    numbers = [
        round(x, k)
        for x, k in zip(rng.uniform(-1e4, 1e4, 3000).tolist(), rng.integers(1, 12, 3000).tolist(), strict=True)
    ]
    written = [repr(x) for x in numbers if abs(x) >= 1e-4]  # (as repr writes them: no trailing 0)
    others = ["0.50", "+0.25", ".5", "1.", "1e-5", "0.00001", "00.5", "0", "-0", "0.000123456789012", "-2.50",
              "0.1234567890123456", "1000000000000000.0", "9999999999999999.0", "12345678901234567890", "+7",
              "0.0", "-0.0", "0.0001", "123456789012345.6", "3.141592653589793", "2.5E3", "0.000099"]  # fmt: skip
    cells = written + others
    path = tmp_path / "predictions.csv"
    path.write_text("case,p\n" + "".join(f"c{k},{cell}\n" for k, cell in enumerate(cells)))
    table = read_prediction_table(path, "case", 10.0)
    assert table.numbers("p").tolist() == list(map(float, cells))
    order = rng.permutation(len(cells))
    assert padded(table.texts("p", order)) == [repr(float(cells[k])) for k in order]
    kept = table.rows._read["p"][1] > 0  # (a rule on the safe side: at most 15 digits written, "0.000" counted)
    assert kept[: len(written)].all()
    own = [cell for cell, kept in zip(others, kept[len(written) :], strict=True) if kept]
    assert own == ["0.50", "-2.50", "0.0", "-0.0", "0.0001"]


def test_padded_texts_are_their_bytes_padded_with_nuls_to_words():
    """``padded_texts`` (``padded_cells``): a row of 8-byte words per text, its bytes then NULs; none: no row."""
    texts = ["", "a", "abcdefgh", "abcdefghi", '"x"', "0.1234567890123456"]
    rows = padded_texts(texts)
    assert rows.shape == (6, 3) and padded(rows) == texts
    assert rows.view(np.uint8)[3].tobytes() == b"abcdefghi" + b"\0" * 15
    assert padded_texts([]).shape == (0, 0) and padded_texts([""]).shape == (1, 0)


@pytest.mark.parametrize("prefix", ["", "ISIC_00", "a_common_prefix_longer_than_a_word_"])
def test_ids_as_words_sort_as_their_bytes(prefix):
    """``_in_order``: the rows of ids' words sorted as the ids' bytes are, the bits they share left out (one
    number when the rest fits in 63 bits, else ``np.lexsort``), repeats side by side."""
    from evaluation.platform.prediction_file import _big_endian, _in_order

    rng = np.random.default_rng(len(prefix))
    for alphabet, size in (("0123456789", 6), ("ab", 30), ("0123456789abcdefXYZ_-", 12)):
        ids = [prefix + "".join(rng.choice(list(alphabet), int(rng.integers(1, size)))) for _ in range(500)]
        words = _big_endian(padded_texts(ids))
        ordered, order = _in_order(words)
        assert [ids[k] for k in order] == sorted(ids) and (ordered == words[order]).all()


def test_ids_read_as_words_match_cases_and_find_a_repeat_past_their_first_eight_bytes(tmp_path):
    """Ids read from the file's bytes as 8-byte words (``_cell_words``): of lengths across word boundaries (and
    one longer than ``MAX_KEY``, read as a str), matched to the cases in any order; a repeat or blank id that
    only its ninth byte tells apart is still found, with the row reader's message."""
    from evaluation.platform.prediction_file import MAX_KEY

    ids = ["a", "ab", "abcdefgh", "abcdefghi", "abcdefghij", "abcdefgh_1234567", "b" * 17, "Z", "0"]
    rng = np.random.default_rng(5)
    order = rng.permutation(len(ids)).tolist()
    path = tmp_path / "predictions.csv"
    for extra in ([], ["c" * (MAX_KEY + 1)]):
        cases = ids + extra
        path.write_text("p,case\n" + "".join(f"{k},{cases[k]}\n" for k in order + list(range(len(ids), len(cases)))))
        table = read_prediction_table(path, "case", 1.0)
        assert (table.rows.keys is None) == bool(extra)
        rows = table.positions(sorted(cases))
        assert rows is not None and [list(table.rows)[k] for k in rows] == sorted(cases)
        assert table.positions([*sorted(cases)[:-1], "abcdefghik"]) is None
    path.write_text("case,p\nabcdefghi,1\nabcdefghj,2\nabcdefghi,3\n")
    with pytest.raises(
        SubmissionError, match=r"^Line 4 of the prediction file predictions.csv repeats case abcdefghi "
    ):
        read_prediction_table(path, "case", 1.0)
    path.write_text("case,p\nabcdefghi,1\n,2\n")
    with pytest.raises(SubmissionError, match=r"^Line 3 of the prediction file predictions.csv has no case"):
        read_prediction_table(path, "case", 1.0)


def test_a_file_with_a_bom_and_other_than_ascii_is_read_from_its_own_bytes(tmp_path):
    """A file without carriage returns is split from its bytes as read (``_split_plain``'s ``data``): less its BOM,
    with characters of several bytes before the cells it cuts out."""
    path = tmp_path / "predictions.csv"
    for bom in (b"", b"\xef\xbb\xbf"):
        path.write_bytes(bom + "cäsé,ñp,p\né,x,0.5\nb,y,-2.25\n".encode())
        table = read_prediction_table(path, "cäsé", 1.0)
        assert [(case, row.line, row.values) for case, row in table.rows.items()] == [
            ("é", 2, ("é", "x", "0.5")), ("b", 3, ("b", "y", "-2.25"))]  # fmt: skip
        assert table.numbers("p").tolist() == [0.5, -2.25]
        assert padded(table.texts("p", np.array([1, 0]))) == ["-2.25", "0.5"]
