"""Write ``metrics.json`` the way the platform reads it.

Numbers become plain JSON numbers (numpy scalars converted, NaN/inf written as ``null`` outside
ranked keys); a ranked path (the leaderboard's ``score_jsonpath`` and result columns) must resolve,
walking dict keys split on ``.``, to a finite number, or the run fails loudly: the platform would
otherwise drop the submission from the leaderboard silently. The file is written atomically.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from evaluation.errors import ConfigurationError
from evaluation.platform.prediction_file import padded_texts, printable_texts


def json_safe(value: Any) -> Any:
    """A copy of ``value`` made of plain JSON types; non-finite floats become ``None``."""
    if isinstance(value, Mapping):
        return {str(key): json_safe(item) for key, item in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [json_safe(item) for item in value]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        number = float(value)
        return number if math.isfinite(number) else None
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"{type(value).__name__} is not JSON-serialisable")


MISSING = object()


def lookup(document: Any, path: str) -> Any:
    """Walk ``path`` as the platform does: split on ``.``, dict keys only; ``MISSING`` if absent."""
    node = document
    for key in path.split("."):
        if not isinstance(node, Mapping) or key not in node:
            return MISSING
        node = node[key]
    return node


def ranked_value_problem(document: Any, path: str) -> str | None:
    """Why ``path`` would not give the leaderboard a number, or ``None`` when it would."""
    value = lookup(document, path)
    if value is MISSING:
        return f"'{path}' is missing"
    if value is None:
        return f"'{path}' is null (not a finite number)"
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        return f"'{path}' is a {type(value).__name__}, not a number"
    if not math.isfinite(float(value)):
        return f"'{path}' is not finite"
    return None


def dumps(metrics: Mapping[str, Any]) -> str:
    """The canonical text of a metrics document (deterministic: same input, same bytes). A per-case section
    held by columns (``CaseColumns``), or a large one of plain values, is written column by column
    (``_case_section``), the same bytes."""
    return "".join(piece if isinstance(piece, str) else piece.decode("ascii") for piece in _pieces_of(metrics))


def _pieces_of(metrics: Mapping[str, Any]) -> list[str | bytes]:
    """``dumps`` in pieces: the document, or with a per-case section written column by column the text before
    it, its bytes in pieces (``_section_bytes``), and the text after it (not joined: a section of 250,000 cases
    is 20 MB)."""
    cases = metrics.get(CASE_SECTION) if isinstance(metrics, Mapping) else None
    fast = None
    if isinstance(cases, CaseColumns):
        fast = cases.writer()
    elif isinstance(cases, dict) and len(cases) >= FAST_CASES:
        fast = _case_section(cases)
    if fast is None:
        return [json.dumps(json_safe(metrics), indent=2, allow_nan=False) + "\n"]
    text = json.dumps(json_safe({**metrics, CASE_SECTION: _PLACE}), indent=2, allow_nan=False) + "\n"
    place = json.dumps(_PLACE)
    at = text.index(place)
    pad = " " * (at - text.rindex("\n", 0, at) - 1 - len(json.dumps(CASE_SECTION)) - 2)  # the key's indent
    return [text[:at], *fast(pad), text[at + len(place) :]]


FAST_CASES = 1000  # per-case entries from which ``dumps`` writes them column by column
SECTION_BYTES = 2**20  # of per-case entries laid out at a time (``_section_bytes``)
LONGEST_TEXT = 256  # characters of the longest case or value a section is laid out with (``_section_bytes``)
_PLACE = "\x00the per-case section\x00"  # its place in the rest of the document (no case id holds a NUL)
_ESCAPED = np.isin(np.arange(256), [ord('"'), ord("\\")])  # the bytes of printable ASCII that json.dumps escapes
_PLAIN = {float: repr, int: repr, bool: {True: "true", False: "false"}.__getitem__,
          str: json.encoder.encode_basestring_ascii}  # fmt: skip


class CaseColumns(Mapping[str, dict[str, Any]]):
    """A per-case section ``{case: {key: value}}`` held as columns: the cases (str) and, per key (str), one
    finite float per case (a float array, in the cases' order), or with ``inner`` keys (``inner[key]``) a
    row of floats per case, the object ``{inner key: float}`` (a 2-D array); written column by column by ``dumps``,
    each float as its ``repr``: of a key in ``texts``, those texts (a ``padded_cells`` array per column: its one,
    or one per inner key), made by the caller; ``ids``: the cases' ``printable_texts``, when the caller made them."""

    def __init__(
        self,
        cases: Sequence[str],
        columns: Mapping[str, np.ndarray],
        inner: Mapping[str, Sequence[str]] | None = None,
        texts: Mapping[str, Sequence[np.ndarray]] | None = None,
        ids: np.ndarray | None = None,
    ) -> None:
        self.cases, self.columns, self.inner = tuple(cases), dict(columns), dict(inner or {})
        self.texts, self.ids = dict(texts or {}), ids
        self._index: dict[str, int] | None = None

    def __getitem__(self, case: str) -> dict[str, Any]:
        if self._index is None:
            self._index = {case: k for k, case in enumerate(self.cases)}
        row = self._index[case]
        return {
            key: dict(zip(self.inner[key], column[row].tolist(), strict=True)) if key in self.inner
            else float(column[row])
            for key, column in self.columns.items()
        }  # fmt: skip

    def __iter__(self) -> Iterator[str]:
        return iter(self.cases)

    def __len__(self) -> int:
        return len(self.cases)

    def writer(self) -> Callable[[str], list[bytes]] | None:
        """``pad -> bytes`` (in pieces) of the section as ``json.dumps(indent=2)`` writes it at the indent ``pad`` (a
        float as ``repr``), or ``None`` when a case's text is longer than ``LONGEST_TEXT`` (``json.dumps`` then)."""
        columns, keys = [], []
        for key, column in self.columns.items():
            values = np.asarray(column, np.float64)
            if key in self.texts:
                columns += self.texts[key]
            else:
                found = (values if values.ndim == 2 else values[:, None]).T.tolist()  # (a column per inner key)
                columns += [padded_texts(list(map(float.__repr__, column))) for column in found]
            keys.append((key, tuple(self.inner.get(key, ()))))
        plain = printable_texts(self.cases) if self.ids is None else self.ids
        if plain is not None and not _ESCAPED[plain.view(np.uint8)].any():  # (printable ASCII as it is)
            return lambda pad: _section_bytes(pad, keys, plain, columns, quote='"')
        texts = list(map(json.encoder.encode_basestring_ascii, self.cases))
        if max(map(len, texts), default=0) > LONGEST_TEXT:
            return None
        ids = padded_texts(texts)
        return lambda pad: _section_bytes(pad, keys, ids, columns)


def _section_bytes(
    pad: str, keys: Sequence[tuple[str, tuple[str, ...]]], ids: np.ndarray, columns: list[np.ndarray], quote: str = ""
) -> list[bytes]:
    """A per-case section from its cases' JSON texts (``ids``; ``quote``: their texts are the cases between
    quotes) and its values' JSON texts, a column per key (``keys``: each key and its inner keys, whose values
    are a column each), all as ``padded_cells`` (ASCII padded with NULs, which no JSON text holds): an entry
    is a row of words, the text between the values the same in every row (the first entry's lead: its own) and
    each column's words at a word of their own, NULs between; ``SECTION_BYTES`` of rows laid out at once (in
    the processor's cache) and their NULs taken out, a piece each."""
    if not len(ids):
        return [b"{}"]
    heads, close = [], ""
    for n, (key, inner) in enumerate(keys):
        lead = f"{quote}: {{" if n == 0 else ","
        head = f"{close}{lead}\n{pad}    {json.encoder.encode_basestring_ascii(key)}: "
        names = [json.encoder.encode_basestring_ascii(name) for name in inner]
        heads += (
            [head]
            if not names
            else [f"{head}{{\n{pad}      {names[0]}: ", *(f",\n{pad}      {name}: " for name in names[1:])]
        )
        close = f"\n{pad}    }}" if names else ""
    tail, first = f"{close}\n{pad}  }},\n{pad}  {quote}".encode(), f"{{\n{pad}  {quote}".encode()
    row, places = bytearray(tail), []  # an entry: the one before's tail, its case, each value's head and value
    for text, cells in zip([None, *heads], [ids, *columns], strict=True):
        row += (text or "").encode()
        row += bytes(-len(row) % 8)
        places.append((len(row) // 8, cells))
        row += bytes(8 * cells.shape[1])
    row += bytes(-len(row) % 8)
    size = max(SECTION_BYTES // len(row), 1)  # entries laid out at a time
    laid = bytearray(min(size, len(ids)) * len(row))
    entries = np.frombuffer(laid, "<u8").reshape(-1, len(row) // 8)
    entries[:] = np.frombuffer(row, "<u8")
    pieces = []
    for start in range(0, len(ids), size):
        count = min(size, len(ids) - start)
        for at, cells in places:
            entries[:count, at : at + cells.shape[1]] = cells[start : start + count]
        if not start:  # (the first entry: after no tail)
            laid[: len(tail)] = first.ljust(len(tail), b"\0")
        pieces.append((laid if count == size else laid[: count * len(row)]).translate(None, b"\0"))
        if not start:
            laid[: len(tail)] = tail
    return [*pieces, f"{close}\n{pad}  }}\n{pad}}}".encode()]


def _case_section(cases: dict[Any, Any]) -> Any:
    """``pad -> bytes`` (in pieces) of the per-case section ``{case: {key: value}}`` as ``json.dumps(indent=2)`` writes
    it at the indent ``pad``, when every case is a str with a dict of the same str keys and each key's
    values are of one plain type (finite floats, ints, booleans or strs) and no text (a case's or a value's) is
    longer than ``LONGEST_TEXT`` (each is laid out at the longest's width); else ``None``."""
    entries = list(cases.values())
    if set(map(type, cases)) != {str} or set(map(type, entries)) != {dict}:
        return None
    keys = set(map(tuple, entries))
    if len(keys) != 1 or not (names := keys.pop()) or set(map(type, names)) != {str}:
        return None
    columns = []
    for name in names:
        column = list(map(dict.__getitem__, entries, [name] * len(entries)))
        kinds = set(map(type, column))
        if len(kinds) != 1 or (kind := kinds.pop()) not in _PLAIN:
            return None
        if kind is float and not all(map(math.isfinite, column)):
            return None
        columns.append(list(map(_PLAIN[kind], column)))
    texts = [list(map(json.encoder.encode_basestring_ascii, cases)), *columns]
    if max(max(map(len, column)) for column in texts) > LONGEST_TEXT:
        return None
    ids, *values = map(padded_texts, texts)
    return lambda pad: _section_bytes(pad, [(name, ()) for name in names], ids, values)


CASE_RESULTS_FILE = "case-results.json"
CASE_SECTION = "case"
CASE_RESULTS = ("public", "private")


def split_case_results(metrics: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """``(public document, organizer document)``: the per-case section (``case``, the shape the
    platform recommends) moved out of the public metrics.json, with the settings copied beside it;
    ``None`` for a document without per-case values (RARE25's flat keys, ISIC's categories)."""
    public = dict(metrics)
    cases = public.pop(CASE_SECTION, None)
    if not cases:
        return dict(metrics), None
    settings = dict(public.get("settings", {}))
    public["settings"] = {**settings, "case_results": f"private: per-case values in {CASE_RESULTS_FILE}"}
    return public, {CASE_SECTION: cases, "settings": settings}


WRITTEN_AT_ONCE = 2**20  # characters of a text encoded at a time (no copy of a whole 20 MB text)


def write_atomically(path: Path, text: str | Sequence[str | bytes]) -> None:
    """``text`` (or its pieces, in turn: texts, or bytes written as they are) to ``path`` through a temporary file
    beside it and a rename: never a partial file."""
    handle, temporary = tempfile.mkstemp(prefix=f".{path.stem}-", suffix=path.suffix, dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as file:
            for piece in [text] if isinstance(text, str) else text:
                if not isinstance(piece, str):
                    file.write(piece)
                    continue
                for at in range(0, len(piece), WRITTEN_AT_ONCE):
                    file.write(piece[at : at + WRITTEN_AT_ONCE].encode("utf-8"))
            file.flush()
            os.fsync(file.fileno())
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def write_metrics(
    path: Path, metrics: Mapping[str, Any], leaderboard_paths: Iterable[str] = (), case_results: str = "public"
) -> None:
    """Check the leaderboard paths, then write ``metrics`` to ``path`` atomically.

    ``case_results="private"`` keeps per-case values out of ``path`` (the public metrics.json) and
    writes them to ``case-results.json`` beside it for the organizer, before metrics.json, so a run
    that fails leaves neither file.
    """
    if case_results not in CASE_RESULTS:
        raise ConfigurationError(f"case results must be one of {', '.join(CASE_RESULTS)}; got '{case_results}'.")
    public, private = split_case_results(metrics) if case_results == "private" else (metrics, None)
    for ranked in leaderboard_paths:
        problem = ranked_value_problem(public, ranked)
        if problem:
            raise ConfigurationError(
                f"The leaderboard value {problem}; metrics.json was not written so that the "
                "submission does not vanish from the leaderboard."
            )
    text = _pieces_of(public)
    path.parent.mkdir(parents=True, exist_ok=True)
    if private is None:
        write_atomically(path, text)
        return
    organizer = path.with_name(CASE_RESULTS_FILE)
    write_atomically(organizer, _pieces_of(private))
    try:
        write_atomically(path, text)
    except BaseException:
        organizer.unlink(missing_ok=True)
        raise
