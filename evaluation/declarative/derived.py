"""The documents derived from the metric records: the README's table of metrics.

``python -m evaluation.declarative.derived`` rewrites it; ``test/declarative/test_records.py``
checks that the committed README equals what this module generates.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evaluation.declarative.metric_records import (
    OMITTED,
    PER_CLASS_FORMS,
    RECORDS,
    REQUIRED,
    RESAMPLINGS,
    MetricRecord,
    Param,
)
from evaluation.declarative.schema import COMBINED

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
BEGIN = "<!-- the table of metrics: generated from evaluation/declarative/metric_records.py by `python -m " \
        "evaluation.declarative.derived`; do not edit -->"  # fmt: skip
END = "<!-- end of the table of metrics -->"

# ---------------------------------------------------------------------------------------- README


def _shown(value: Any) -> str:
    if value is REQUIRED:
        return "required"
    if value == OMITTED:
        return "not set"
    return f"`{json.dumps(value)}`"


def _param_cell(param: Param) -> str:
    if param.derived:
        return f"`{param.key}` (from the output)"
    said = []
    if param.choices:
        said.append(" or ".join(f"`{choice}`" for choice in param.choices))
    if param.choices_by_kind:
        said += [f"{kind}: " + " or ".join(f"`{c}`" for c in choices) for kind, choices in param.choices_by_kind]
    if param.words:
        said.append("a number or " + " or ".join(f"`{word}`" for word in param.words))
    if param.interval is not None:
        said.append(("each " if param.kind is list else "") + f"in {param.interval.shown}")
    if param.when is not None:
        said.append(f"when {param.when[0]} = `{json.dumps(param.when[1])}`")
    said += [f"edge: {param.edge}"] if param.edge else []
    said += [param.doc] if param.doc else []
    return f"`{param.key}` = {_shown(param.default)}" + (f" ({'; '.join(said)})" if said else "")


def _edge_cell(record: MetricRecord) -> str:
    cells = []
    for edge in record.edges:
        words = " or `exclude` per class" if record.per_class and edge.default == "error" else ""
        cells.append(f"`{edge.key}` = {_shown(edge.default)}{words}: {edge.means}")
    return "; ".join(cells)


def metric_table() -> str:
    """The README's table of the declarable metrics, one row per record."""
    rows = [
        "| metric | scores | catalogue | aggregates | parameters (default) | edge values (default) | bootstrap |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for record in RECORDS:
        forms = ", ".join(f"`{form}`" for form in record.forms)
        if record.per_class:
            forms = "one value; per class on probabilities: " + ", ".join(f"`{form}`" for form in PER_CLASS_FORMS)
        catalogue = f"`{record.catalogue}`"
        if record.probability_catalogue:
            catalogue += f" (probabilities: `{record.probability_catalogue}`)"
        flags = [" (3D only)" if record.three_d else "", " (argmax class on probabilities)" if record.argmax else ""]
        params = "; ".join(_param_cell(param) for param in record.params)
        rows.append(
            f"| `{record.name}` | {', '.join(record.kinds)}{''.join(flags)} | {catalogue} | {forms or 'one value'} | "
            f"{params} | {_edge_cell(record)} | {RESAMPLINGS[record.resampling]} |"
        )
    rows.append(f"| `{COMBINED}` | aggregates declared before | | one value | `of` = required (two or more "
                "aggregate paths) | | the mean of its parts, resample by resample |")  # fmt: skip
    return "\n".join(rows) + "\n"


def readme_with_table(readme: str) -> str:
    """``readme`` with the text between the table's markers replaced by ``metric_table()``."""
    head, _, rest = readme.partition(BEGIN + "\n")
    _, _, tail = rest.partition(END)
    return f"{head}{BEGIN}\n{metric_table()}{END}{tail}"


def main() -> None:
    """Rewrites the README's table of metrics from the records."""
    README.write_text(readme_with_table(README.read_text(encoding="utf-8")), encoding="utf-8")


if __name__ == "__main__":
    main()
