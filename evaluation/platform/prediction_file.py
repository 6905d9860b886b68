"""The participant's CSV of a prediction-file phase: found, size-checked, decoded and split into rows.

A prediction-file phase has no algorithm jobs: the participant uploads one CSV, which the platform
puts at ``/input/predictions.csv`` (../shared/spec/platform.md). ``find_prediction_file`` finds it
(that name, else the single ``*.csv`` of the input folder; never a path whose links leave the
folder); ``read_prediction_table`` reads it through ``files.read_bytes`` (a regular file, its size
refused from ``os.stat`` before a byte is read) and returns each row as a mapping column -> text,
keyed by the row's case, so that a challenge can read one column per output or several (per-class
probabilities). Every problem is one line naming the file and the line (and the case when known).
"""

from __future__ import annotations

import codecs
import csv
import io
import os
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from evaluation.errors import SubmissionError
from evaluation.platform.files import contained, read_bytes, regular_size

PREDICTION_FILE = "predictions.csv"
SHOWN_CHARACTERS = 40  # of a participant's own cell or header, quoted in a message
MAX_KEY = 256  # bytes of the longest id read as words (``_cell_words``): a wider one is read as a str


class PredictionRow(NamedTuple):
    """One data row: its line in the file (1 = the header; a row with a quoted line break: its last
    line) and its cells (stripped) in the header's order. A tuple, not a dict per row: a file at the
    size limit holds hundreds of thousands of rows (benchmarks/prediction_csv.py)."""

    line: int
    columns: tuple[str, ...]
    values: tuple[str, ...]

    @property
    def cells(self) -> Mapping[str, str]:
        """The row as a mapping column -> text."""
        return dict(zip(self.columns, self.values, strict=True))


@dataclass(frozen=True, eq=False)
class PredictionTable:
    """The rows of a prediction CSV by case (file order), and its header's columns."""

    file: str
    columns: tuple[str, ...]
    rows: Mapping[str, PredictionRow]

    def column(self, name: str) -> list[str]:
        """The stripped cells of column ``name``, one per row in the order of ``rows``."""
        if isinstance(self.rows, _Rows):
            return self.rows.column(name)
        return [row.cells[name] for row in self.rows.values()]

    def numbers(self, name: str) -> np.ndarray | None:
        """Column ``name`` as floats in the order of ``rows``, read from the file's bytes (``_Rows.numbers``);
        ``None``: read its cells (``column``)."""
        return self.rows.numbers(name) if isinstance(self.rows, _Rows) else None

    def texts(self, name: str, order: np.ndarray) -> np.ndarray | None:
        """``repr`` of each number of column ``name`` (as ``numbers`` read it) in the row order ``order``, as NUL-padded
        bytes (``padded_cells``); ``None`` when not read from the file's bytes (``_Rows.texts``)."""
        return self.rows.texts(name, order) if isinstance(self.rows, _Rows) else None

    def positions(self, cases: Sequence[str], ids: np.ndarray | None = None) -> np.ndarray | None:
        """The row of each of ``cases`` (distinct) in the order of ``rows``, or ``None`` when one has no row.
        As many cases as rows, in printable ASCII (``ids``: the cases' ``printable_texts`` when at hand): both
        sorted as bytes by numpy (as 8-byte words: ``_cell_words``; the file's ids read so from its bytes: ``keys``)
        and matched in turn (a look-up per case would reach the rows' table in random order)."""
        keys = self.rows.keys if isinstance(self.rows, _Rows) else None
        if len(self.rows) == len(cases):
            wanted = printable_texts(cases) if ids is None else ids
            found = printable_texts(list(self.rows)) if keys is None and wanted is not None else None
            if wanted is not None and (keys is not None or found is not None):
                words, by_row = keys or _in_order(_big_endian(found))
                wanted = _big_endian(wanted)
                wanted, by_case = (wanted, np.arange(len(cases))) if _ascending(wanted) else _in_order(wanted)
                width = max(words.shape[1], wanted.shape[1])
                if not (_widened(words, width) == _widened(wanted, width)).all():
                    return None
                rows = np.empty(len(cases), np.intp)
                rows[by_case] = by_row
                return rows
        index = self.rows.index if isinstance(self.rows, _Rows) else {case: k for k, case in enumerate(self.rows)}
        try:
            return np.fromiter(map(index.__getitem__, cases), np.intp, len(cases))
        except KeyError:
            return None


_POWERS = np.array([float(10**k) for k in range(23)])  # each a double exactly (10**22 is the last)


def plain_decimals(data: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray | None:
    """The cells ``data[starts[k]:ends[k]]`` (UTF-8 bytes) as floats, each what ``float()`` reads, or ``None``
    unless every cell is a plain decimal (``_plain``)."""
    values, plain, _ = _plain(data, starts, ends)
    return values if starts.size and plain.all() else None


def _plain(data: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The cells ``data[starts[k]:ends[k]]`` as floats where each is a plain decimal (``[+-]digits[.digits]``,
    ``.5`` and ``5.`` included; no space, no exponent; at most 20 bytes) of at most 18 digits whose digits make
    an integer below 2**53, and which those are: that integer over a power of ten up to 10**22, both doubles
    exactly, is one correctly rounded division, what ``float()`` reads (Clinger's fast path: W. D. Clinger,
    "How to read floating point numbers accurately", PLDI 1990); and each cell's points."""
    lengths = ends - starts
    mantissa, dots, point = (np.zeros(starts.size, np.int64) for _ in range(3))
    bad = (lengths < 1) | (lengths > 20)
    first = data.take(starts, mode="clip")
    negative = first == ord("-")
    signed = negative | (first == ord("+"))
    for j in range(min(int(lengths.max(initial=0)), 21)):
        live = lengths > j
        chars = data.take(starts + j, mode="clip")
        value = chars - np.uint8(ord("0"))
        digit, dot = value < 10, chars == ord(".")
        other = ~(digit | dot)
        bad |= (other & ~signed if j == 0 else other) & live
        digit &= live
        dot &= live
        mantissa = np.where(digit, mantissa * 10 + value, mantissa)
        dots += dot
        np.add(point, j, out=point, where=dot)  # (the point's place: of a plain decimal, the one)
    digits = lengths - dots - signed  # (of a plain decimal: every byte but its point and sign)
    places = np.where(dots > 0, lengths - 1 - point, 0)
    plain = ~bad & (dots <= 1) & (digits >= 1) & (digits <= 18) & (mantissa < 2**53)
    values = np.where(plain, mantissa, 0) / _POWERS[np.where(plain, places, 0)]
    return np.where(negative, -values, values), plain, dots


def repr_lengths(
    data: np.ndarray, starts: np.ndarray, ends: np.ndarray, values: np.ndarray, points: np.ndarray
) -> np.ndarray:
    """Of plain decimal cells (``_plain``: their floats ``values``, their points ``points``), how many of each
    cell's bytes are its float's ``repr`` (0: none, repr is written otherwise): those of a cell with "-" or no
    sign, one point with a digit either side, no 0 before another digit at the start, the float 0 or of size in
    [1e-4, 1e16) (repr's fixed notation: Python's ``format_float_short``), less its 0s at the end (but one after
    the point), if then at most 15 digits. A decimal of at most 15 significant digits is the only one of them
    within its float's rounding interval (they are at least 1e-15 of it apart, the interval at most 2.3e-16 of
    it wide), so repr, the shortest decimal that reads back (``float_repr_style`` 'short'), has its digits."""
    first = data.take(starts, mode="clip")
    body = starts + (first == ord("-"))
    lead, after = data.take(body, mode="clip"), data.take(body + 1, mode="clip")
    kept, zeros = ends.copy(), points == 1
    while zeros.any():  # the 0s at the end after a digit after the point
        zeros &= (data.take(kept - 1, mode="clip") == ord("0")) & (data.take(kept - 2, mode="clip") != ord(".")) & (
            kept - 2 > body)  # fmt: skip
        kept -= zeros
    size = np.abs(values)
    written = (
        (first != ord("+")) & (points == 1) & (lead != ord(".")) & (data.take(kept - 1, mode="clip") != ord("."))
        & ((lead != ord("0")) | (after == ord("."))) & (kept - body <= 16)
        & ((size == 0) | ((size >= 1e-4) & (size < 1e16)))
    )  # fmt: skip
    return np.where(written, kept - starts, 0)


def decimal_cells(cells: Sequence[str], joined: str | None = None) -> np.ndarray | None:
    """``plain_decimals`` of a list of cells (``None`` for one that holds a line break); ``joined``: the cells
    joined by line breaks, when at hand."""
    data = np.frombuffer(("\n".join(cells) if joined is None else joined).encode(), np.uint8)
    ends = np.r_[np.flatnonzero(data == ord("\n")), data.size]
    if ends.size != len(cells) or not data.size:  # (a line break in a cell; no cell but one empty)
        return None
    return plain_decimals(data, np.r_[0, ends[:-1] + 1], ends)


def float_cells(cells: Sequence[str], separators: bool = True) -> np.ndarray | None:
    """The cells as floats, each as ``float()`` reads it (plain decimals at once: ``decimal_cells``), or ``None``
    when one is not in ASCII (float() reads full-width digits), is no number, or (``separators=False``) holds
    Python's digit separator "_"."""
    joined = "\n".join(cells)
    if not joined.isascii() or (not separators and "_" in joined):
        return None
    numbers = decimal_cells(cells, joined)
    if numbers is not None:
        return numbers
    try:
        return np.fromiter(map(float, cells), np.float64, len(cells))
    except ValueError:
        return None


_KEPT_BYTES = np.array([(1 << 8 * k) - 1 for k in range(8)] + [2**64 - 1], np.uint64)  # the first k bytes of 8


def _words_at(data: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """The 8 bytes of ``data`` from each of ``offsets`` (at most its size; 0s past its end) as a little-endian
    word (an unaligned view of ``data``: no copy of it; within its last 8 bytes from a copy of them)."""
    cut = max(data.size - 8, 0)
    if data.size >= 8:
        words = np.ndarray((cut + 1,), "<u8", data, strides=(1,))[np.minimum(offsets, cut)]
        late = np.flatnonzero(offsets > cut)
    else:
        words, late = np.zeros(offsets.size, "<u8"), np.arange(offsets.size)
    if late.size:
        end = np.zeros(16, np.uint8)
        end[: data.size - cut] = data[cut:]
        words[late] = np.ndarray((9,), "<u8", end, strides=(1,))[offsets[late] - cut]
    return words


def padded_cells(data: np.ndarray, starts: np.ndarray, lengths: np.ndarray, width: int | None = None) -> np.ndarray:
    """The cells ``data[starts[k] : starts[k] + lengths[k]]`` (bytes) as rows of ``width`` 8-byte words (default:
    the fewest that hold the longest cell), each row the cell's bytes in order and 0s after them (little-endian
    words: viewed as bytes, the row is the cell's text padded with NULs); read at once, 8 bytes a word
    (``_words_at``)."""
    width = -(-int(lengths.max(initial=0)) // 8) if width is None else width
    rows = np.empty((starts.size, width), "<u8")
    for j in range(width):
        kept = _KEPT_BYTES[np.clip(lengths - 8 * j, 0, 8)]
        rows[:, j] = _words_at(data, np.minimum(starts + 8 * j, data.size)) & kept
    return rows


def padded_texts(texts: Sequence[str]) -> np.ndarray:
    """``padded_cells`` of ASCII ``texts`` without NULs (joined at NULs and encoded at once)."""
    data = np.frombuffer("\0".join([*texts, ""]).encode("ascii"), np.uint8)
    starts, ends = _joined(data)
    return padded_cells(data, starts, ends - starts)


def printable_texts(texts: Sequence[str]) -> np.ndarray | None:
    """``padded_texts`` of ``texts`` when every one is printable ASCII (what ``str.isprintable`` passes) of at most
    ``MAX_KEY`` characters (each row is as wide as the longest), else ``None``."""
    joined = "\0".join([*texts, ""])
    if not joined.isascii():
        return None
    data = np.frombuffer(joined.encode("ascii"), np.uint8)
    if not (((data >= 0x20) & (data < 0x7F)) | (data == 0)).all():
        return None
    starts, ends = _joined(data)
    return padded_cells(data, starts, ends - starts) if (ends - starts).max(initial=0) <= MAX_KEY else None


def _joined(data: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where the texts that end at each NUL of ``data`` start and end."""
    ends = np.flatnonzero(data == 0)
    return np.r_[0, ends + 1][: ends.size], ends


def _big_endian(padded: np.ndarray) -> np.ndarray:
    """Rows of ``padded_cells`` (at least one word) read big-endian, so that rows compare (first word, then the
    next) as the cells' bytes do."""
    return _widened(padded, max(padded.shape[1], 1)).byteswap()


def _cell_words(data: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """The cells ``data[starts[k]:ends[k]]`` (bytes) as ``_big_endian`` rows of their ``padded_cells``."""
    return _big_endian(padded_cells(data, starts, ends - starts))


def cell_texts(padded: np.ndarray, lengths: np.ndarray) -> list[str]:
    """The cells of ``padded_cells`` rows with a NUL after each (``lengths``: theirs; ASCII without NULs or line
    breaks) as strs, at once: a line break put after each cell, the rows' bytes without their NULs, decoded and
    split at the line breaks."""
    laid = bytearray(padded.tobytes())
    np.frombuffer(laid, np.uint8).reshape(len(padded), -1)[np.arange(len(padded)), lengths] = ord("\n")
    return laid.translate(None, b"\0").decode("ascii").split("\n")[:-1]


def _in_order(words: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rows of ``words`` (``_cell_words``) sorted, and their order: of each word only the bits from the
    highest to the lowest that differ between rows (the others are every row's), those of all the words put
    side by side in one number when they fit in 63 bits (ids of a common prefix: sorted as numbers), else the
    words that differ sorted by ``np.lexsort``."""
    spans = []  # (word, its lowest differing bit, how many bits from there)
    for j in range(words.shape[1] if len(words) else 0):
        differ = int(np.bitwise_or.reduce(words[:, j] ^ words[0, j]))  # (a column at a time: quicker than axis=0)
        if differ:
            low = (differ & -differ).bit_length() - 1
            spans.append((j, low, differ.bit_length() - low))
    if sum(bits for _, _, bits in spans) <= 63:
        key = np.zeros(len(words), np.uint64)
        for j, low, bits in spans:
            key = (key << np.uint64(bits)) | ((words[:, j] >> np.uint64(low)) & np.uint64((1 << bits) - 1))
        order = np.argsort(key.view(np.int64)) if spans else np.arange(len(words))
    else:
        order = np.lexsort([words[:, j] for j, _, _ in spans[::-1]])
    return words[order], order


def _ascending(words: np.ndarray) -> bool:
    """Whether the rows of ``words`` are distinct and sorted (each above the one before at their first other
    word)."""
    above, same = np.zeros(max(len(words) - 1, 0), bool), np.ones(max(len(words) - 1, 0), bool)
    for column in words.T:  # (word by word: above at the first word that differs)
        above |= same & (column[1:] > column[:-1])
        same &= column[1:] == column[:-1]
    return bool(above.all())


def _repeats(ordered: np.ndarray) -> bool:
    """Whether two rows of ``ordered`` (words sorted: ``_in_order``) are the same: two in turn, word by word."""
    same = np.ones(max(len(ordered) - 1, 0), bool)
    for column in ordered.T:
        same &= column[1:] == column[:-1]
    return bool(same.any())


def distinct_rows(padded: np.ndarray) -> bool:
    """Whether the cells of ``padded_cells`` rows (bytes without NULs) are distinct, their rows read big-endian
    (``_big_endian``): ascending, else sorted (``_in_order``) without a repeat."""
    words = _big_endian(padded)
    return _ascending(words) or not _repeats(_in_order(words)[0])


def _widened(words: np.ndarray, width: int) -> np.ndarray:
    """``words`` with 0 words after each row's, ``width`` in all (``words`` itself at that width)."""
    return words if words.shape[1] == width else np.pad(words, ((0, 0), (0, width - words.shape[1])))


def find_prediction_file(input_dir: Path, name: str = PREDICTION_FILE) -> Path:
    """``name`` in the input folder, else its single ``*.csv`` (resolved, never a path outside it);
    ``input_dir`` itself when it is a file (the participant's pre-flight check of one CSV: the
    evaluation refuses an input that is not a folder before it gets here)."""
    if input_dir.is_file():
        return Path(os.path.realpath(input_dir))
    if os.path.lexists(input_dir / name):
        return contained(input_dir, name)
    found = sorted(p.name for p in input_dir.iterdir() if p.name.lower().endswith(".csv"))
    if len(found) != 1:
        detail = f"it holds {len(found)} ({', '.join(found)})" if found else "it holds none"
        raise SubmissionError(f"Expected one CSV file of predictions ({name}) in the input; {detail}.")
    return contained(input_dir, found[0])


def shown(text: str) -> str:
    """A participant's own text, quoted and cut for a one-line message."""
    return repr(text[:SHOWN_CHARACTERS] + ("..." if len(text) > SHOWN_CHARACTERS else ""))


class _Rows(Mapping[str, PredictionRow]):
    """The rows by case, each made when asked for: a row's record is its line's text (a file without
    quotes, split at its commas then) or its stripped cells (the ``csv`` module's); every check was
    made when the file was read. ``cells``: a file without quotes, its bytes, where its cells end (its
    separators, then its end) and each row's first cell's separator before it (``Cells``); ``keys``: its ids
    read from those bytes (``Keys``), which ``positions`` matches, the look-up by case (``index``) made from
    ``ids`` only when asked for."""

    def __init__(
        self,
        columns: tuple[str, ...],
        records: Callable[[], list[Any]],
        lines: Sequence[int],
        ids: Callable[[], list[str]],
        cells: Cells | None = None,
        keys: Keys | None = None,
        index: dict[str, int] | None = None,
    ) -> None:
        self._columns, self._lines, self._ids, self._cells = columns, lines, ids, cells
        self._records_of = records
        self._made: list[Any] | None = None
        self.keys, self._index = keys, index
        self._read: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}  # ``numbers``' columns (``texts``)

    @property
    def index(self) -> dict[str, int]:
        """Each case's row, made on first use (a file read as columns needs none: ``keys``)."""
        if self._index is None:
            self._index = dict(zip(self._ids(), range(len(self._lines)), strict=True))
        return self._index

    @property
    def _records(self) -> list[Any]:
        """Each row's record, made on first use (a file read as columns needs none)."""
        if self._made is None:
            self._made = self._records_of()
        return self._made

    def __getitem__(self, case: str) -> PredictionRow:
        row = self.index[case]
        record = self._records[row]
        values = record if isinstance(record, tuple) else tuple(map(str.strip, record.split(",")))
        return PredictionRow(self._lines[row], self._columns, values)

    def __contains__(self, case: object) -> bool:
        return case in self.index

    def __iter__(self) -> Iterator[str]:
        return iter(self.index)

    def __len__(self) -> int:
        return len(self._lines)

    def numbers(self, name: str) -> np.ndarray | None:
        """Column ``name`` as floats read from the file's bytes (a file without quotes): its plain decimals at
        once (``_plain``), a few other cells (at most one in 16) each by ``float`` as ``column`` gives it
        (stripped; ``None`` for a cell blank, not in ASCII, with Python's digit separator "_" or not a number)."""
        if self._cells is None:
            return None
        data, edges, firsts = self._cells
        cell = firsts + self._columns.index(name)
        starts, ends = edges[cell] + 1, edges[cell + 1]
        values, plain, points = _plain(data, starts, ends)
        others = np.flatnonzero(~plain).tolist()
        if len(others) > starts.size // 16:
            return None
        for k in others:
            text = data[starts[k] : ends[k]].tobytes().decode().strip()
            if not text or "_" in text or not text.isascii():
                return None
            try:
                values[k] = float(text)
            except ValueError:
                return None
        self._read[name] = starts, np.where(plain, repr_lengths(data, starts, ends, values, points), 0), values
        return values

    def texts(self, name: str, order: np.ndarray) -> np.ndarray | None:
        """``repr`` of each number of column ``name`` read by ``numbers`` (else ``None``), in the row order ``order``,
        as ``padded_cells``: of a cell that holds it (``repr_lengths``), cut out of the file's bytes (all at once),
        any other by ``repr``."""
        if name not in self._read:
            return None
        data, (starts, lengths, values) = self._cells[0], self._read[name]
        texts = padded_cells(data, starts, lengths)[order]  # (read in file order, then put in order: quicker)
        others = np.flatnonzero(lengths[order] == 0)
        if others.size:
            written = padded_texts(list(map(repr, values[order[others]].tolist())))
            width = max(texts.shape[1], written.shape[1])
            texts = _widened(texts, width)
            texts[others] = _widened(written, width)
        return texts

    def column(self, name: str) -> list[str]:
        """The stripped cells of column ``name``, one per row in file order (each row's ``cells[name]``),
        cut out of all the rows at once: a line's record is joined and split whole (every record of a
        file without quotes has the header's width)."""
        position, width = self._columns.index(name), len(self._columns)
        if not self._records or isinstance(self._records[0], tuple):
            return [record[position] for record in self._records]
        return list(map(str.strip, ",".join(self._records).split(",")[position::width]))


def read_prediction_table(
    path: Path, id_column: str, max_mb: float, word: str = "case", strip: tuple[str, ...] = ()
) -> PredictionTable:
    """The rows of the CSV at ``path`` by their ``id_column`` (``word`` names it in messages), each id without
    the first of the suffixes ``strip`` it ends with (in any case: ISIC's ``.jpg``).

    Refused, each with one line: a file larger than ``max_mb`` MB (unread), one that is not UTF-8
    (a BOM is allowed) or not CSV, an empty file, a header without ``id_column`` or with a column
    twice, a row with more or fewer cells than the header, a row without an id, an id twice (the
    first of these in the file). Blank lines are skipped; cells are stripped of surrounding spaces.
    A file without quotes (nearly every one) is split whole, at C speed (as fast as
    ``pandas.read_csv``, benchmarks/prediction_csv.py); any other by the ``csv`` module, row by row.
    """
    name, what, max_bytes = path.name, f"The prediction file {path.name}", int(max_mb * 1e6)
    size = regular_size(path, what)
    if size > max_bytes:
        raise SubmissionError(
            f"{what} is {size / 1e6:.1f} MB ({size} bytes), more than the {max_mb:g} MB allowed; it was not read."
        )
    data = read_bytes(path, what, max_bytes=max_bytes)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise SubmissionError(f"The prediction file {name} is not UTF-8 text (line {line}).") from None
    if not text or text.isspace():  # (as ``not text.strip()``, without a copy of the text)
        raise SubmissionError(f"The prediction file {name} is empty; it needs a header line with the column "
                              f"'{id_column}'.")  # fmt: skip
    plain = '"' not in text and "\x00" not in text and ("\r" not in text or text.count("\r") == text.count("\r\n"))
    if plain and "\r" not in text:  # (its bytes as read, less a BOM)
        read = data[len(codecs.BOM_UTF8) :] if data.startswith(codecs.BOM_UTF8) else data
        columns, records, ids_of, lines, stop, cells, keys = _split_plain(text, id_column, name, read)
    else:
        split = _split_plain if plain else _split_csv
        columns, records, ids_of, lines, stop, cells, keys = split(
            text.replace("\r\n", "\n") if plain else text, id_column, name
        )
    if keys is not None and stop is None and not strip:  # no id blank or twice: the ids made when asked for
        return PredictionTable(name, columns, _Rows(columns, records, lines, ids_of, cells, keys))
    ids = ids_of()
    if strip:
        ids = [_without_suffix(case, strip) for case in ids]
    index = dict(zip(ids, range(len(ids)), strict=True))
    problems = [stop] if stop else []
    if "" in index:
        row = ids.index("")
        message = f"Line {lines[row]} of the prediction file {name} has no {word} in column '{id_column}'."
        problems.append((lines[row], SubmissionError(message)))
    seen: dict[str, int] = {}
    row = next((k for k, case in enumerate(ids) if case and seen.setdefault(case, k) != k), None) \
        if len(index) < len(ids) else None  # fmt: skip
    if row is not None:
        case, first = ids[row], lines[seen[ids[row]]]
        message = f"Line {lines[row]} of the prediction file {name} repeats {word} {case} (first on line {first})."
        problems.append((lines[row], SubmissionError(message, case)))
    if problems:
        raise min(problems, key=lambda problem: problem[0])[1]
    return PredictionTable(name, columns, _Rows(columns, records, lines, lambda: ids, cells, index=index))


def _without_suffix(case: str, suffixes: tuple[str, ...]) -> str:
    """``case`` without the first of ``suffixes`` it ends with, compared without case."""
    folded = case.casefold()
    found = next((suffix for suffix in suffixes if folded.endswith(suffix.casefold())), "")
    return case[: len(case) - len(found)] if found else case


# a file without quotes: its bytes, the byte of each separator (comma or line break) and then its end, and
# each row's separator before its first cell (an index into the former)
Cells = tuple[np.ndarray, np.ndarray, np.ndarray]
# the ids of a file's rows as words (``_cell_words``) sorted, and their rows' order (``_in_order``)
Keys = tuple[np.ndarray, np.ndarray]
# (columns, each row's record and its stripped ids (each made when called), its line, the first malformed row's
# line and error or None, the rows' ``Cells`` or None, their ``Keys`` when every id is plain ASCII, none blank or
# twice)
Split = tuple[
    tuple[str, ...],
    Callable[[], list[Any]],
    Callable[[], list[str]],
    Sequence[int],
    tuple[int, SubmissionError] | None,
    Cells | None,
    Keys | None,
]


def _columns(header: list[str], id_column: str, name: str) -> tuple[str, ...]:
    """The header's stripped columns; refused: a column twice, no ``id_column``."""
    columns = tuple(cell.strip() for cell in header)
    counts = Counter(columns)  # one pass: list.count per column is quadratic in a hostile header's width
    twice = next((c for c in columns if counts[c] > 1), None)
    if twice is not None:
        raise SubmissionError(f"The header of the prediction file {name} has the column {shown(twice)} twice.")
    if id_column not in columns:
        listed = ", ".join(shown(c) for c in columns[:10])
        raise SubmissionError(f"The prediction file {name} has no column '{id_column}' (its header: {listed}).")
    return columns


def _width_error(line: int, cells: int, width: int, name: str) -> tuple[int, SubmissionError]:
    return line, SubmissionError(f"Line {line} of the prediction file {name} has {cells} cells; its header has "
                                 f"{width} columns.")  # fmt: skip


def _split_plain(text: str, id_column: str, name: str, data: bytes | None = None) -> Split:
    """A CSV without quotes, NULs or lone carriage returns (``\\r\\n`` already made ``\\n``): every
    record is one line and every comma a separator, so its lines come from one ``str.split`` and the
    cells of every line are counted with numpy; the id cells are read from the bytes as words (``Keys``: an
    id a str only when asked for) when every one is plain ASCII (no space), none blank or twice, else cut out
    of each line here. The rows are the well-formed lines before the first malformed one (the returned error);
    their lines' texts are made only when asked for. ``data``: the text's UTF-8 bytes when at hand."""
    encoded = np.frombuffer(text.encode() if data is None else data, np.uint8)
    low = np.flatnonzero(encoded <= ord(","))  # (bytes up to the comma, few in a CSV but its separators: one pass)
    separators = low[(encoded[low] == ord("\n")) | (encoded[low] == ord(","))]
    breaks = np.flatnonzero(encoded[separators] == ord("\n"))  # the line breaks, as indices into separators
    if not text.endswith("\n"):
        breaks = np.r_[breaks, separators.size]  # the last line ends at the end of the text
    edges = np.r_[separators, encoded.size]
    ends = edges[breaks]  # each line's end (its break) in bytes
    if np.max(np.diff(ends, prepend=-1)) > csv.field_size_limit():
        return _split_csv(text, id_column, name)  # the csv module's own error for a field too large
    header = text[: text.find("\n")] if "\n" in text else text  # (the first line, no copy of the others)
    columns = _columns(header.split(",") if header else [], id_column, name)
    width, position = len(columns), columns.index(id_column)
    count = np.diff(breaks)  # the cells of each line after the header (its commas + 1)
    keep = np.diff(ends) > 1  # an empty line is skipped
    stop = None
    for k in np.flatnonzero((count != width) & keep).tolist():
        if count[k] == 1 and not encoded[ends[k] + 1 : ends[k + 1]].tobytes().decode().strip():
            keep[k] = False  # spaces only: a blank line
        else:
            stop = _width_error(k + 2, int(count[k]), width, name)
            keep[k:] = False
            break
    rows = None if keep.all() else np.flatnonzero(keep).tolist()
    numbers = range(2, count.size + 2) if rows is None else [k + 2 for k in rows]
    firsts = breaks[:-1][keep]

    def records() -> list[str]:
        lines = text.split("\n")[1 : count.size + 1]
        return lines if rows is None else [lines[k] for k in rows]

    stripped = not text.isascii() or any(space in text for space in " \t\x0b\x0c\x1c\x1d\x1e\x1f")

    def ids() -> list[str]:
        lines = records()
        found = lines if width == 1 else (
            [line.partition(",")[0] for line in lines] if position == 0
            else [line.split(",", position + 1)[position] for line in lines]
        )  # fmt: skip
        return list(map(str.strip, found)) if stripped else found

    keys = None
    starts, ends = edges[firsts + position] + 1, edges[firsts + position + 1]
    if not stripped and (ends - starts).max(initial=0) <= MAX_KEY:
        keys = _in_order(_cell_words(encoded, starts, ends))
        if (ends == starts).any() or _repeats(keys[0]):
            keys = None  # (an id blank or twice: the row reader words it)
    return columns, records, ids, numbers, stop, (encoded, edges, firsts), keys


def _split_csv(text: str, id_column: str, name: str) -> Split:
    """Any CSV, by the ``csv`` module (quoted cells, line breaks inside them), row by row: the same
    as :func:`_split_plain`, the records the rows' stripped cells."""
    reader = csv.reader(io.StringIO(text, newline=""))
    records: list[tuple[str, ...]] = []
    lines: list[int] = []
    try:
        header = next(reader)
    except csv.Error as error:
        raise _not_csv(reader.line_num, error, name) from None
    columns = _columns(header, id_column, name)
    width, position = len(columns), columns.index(id_column)
    stop = None
    first = start = reader.line_num + 1  # the line the next row starts on, the line the last row started on
    try:
        for row in reader:
            if len(row) != width:
                if not row or (len(row) == 1 and not row[0].strip()):
                    first = reader.line_num + 1
                    continue  # a blank line
                stop = _width_error(reader.line_num, len(row), width, name) if reader.line_num == first else \
                    _open_quote(first, reader.line_num, name)  # fmt: skip
                break
            records.append(tuple(map(str.strip, row)))
            lines.append(reader.line_num)
            start, first = first, reader.line_num + 1
    except csv.Error as error:
        stop = reader.line_num, _not_csv(reader.line_num, error, name)
    if stop is None and lines and lines[-1] > start and text.count('"') % 2:  # the last row ran on to the end
        stop = _open_quote(start, lines[-1], name)
    ids = [record[position] for record in records]
    return columns, lambda: records, lambda: ids, lines, stop, None, None


def _open_quote(first: int, last: int, name: str) -> tuple[int, SubmissionError]:
    """A malformed row that spans lines: a quote opened on its first line ran on (unclosed, or closed later)."""
    return first, SubmissionError(f"Line {first} of the prediction file {name} opens a quote that is not closed on "
                                  f"that line (the quoted cell runs on to line {last}).")  # fmt: skip


def _not_csv(line: int, error: csv.Error, name: str) -> SubmissionError:
    return SubmissionError(f"The prediction file {name} is not valid CSV (line {line}: {error}).")
