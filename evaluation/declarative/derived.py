"""The documents derived from the metric records and the output kinds: the documentation site's table of
metrics (``metric_table``, made at every site build by scripts/docs_hooks.py, never committed) and the
editors' JSON Schema of a declaration (``evaluation/declarations/declaration.schema.json``).

``python -m evaluation.declarative.derived`` rewrites the JSON Schema; ``test/declarative/test_records.py``
checks that the committed file equals what this module generates.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evaluation.declarative.metric_records import (
    COUNTED,
    EVALUTILS,
    OMITTED,
    PER_CLASS_FORMS,
    RECORDS,
    REQUIRED,
    RESAMPLINGS,
    MetricRecord,
    Param,
    declarable_forms,
)
from evaluation.declarative.output_kinds import outputs_schema
from evaluation.declarative.python_metric import CASE_FORMS, NAN_WORDS, OVER, PYTHON
from evaluation.declarative.schema import (
    COMBINED,
    INCOMPLETE_GROUP,
    KEY,
    NAME,
    SCORING_METHODS,
    SLUG,
    SORTS,
    SUBMISSION_KINDS,
    WEIGHTED_METRICS,
)
from evaluation.metrics.groups import GROUP_FORMS

REPO = Path(__file__).resolve().parents[2]
SCHEMA = REPO / "evaluation" / "declarations" / "declaration.schema.json"

# ------------------------------------------------------------------------------ the table of metrics


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
    """The site's table of the declarable metrics, one row per record."""
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
    rows.append(f"| `{PYTHON}` | segmentation, number, boolean, choice, probabilities | the organizer's function "
                f"(\"Your own metric in Python\") | over = `case`: {', '.join(f'`{f}`' for f in CASE_FORMS)}; "
                "`set`: one value | `function` = required (`file.py:name` beside the declaration); `over` = `case` "
                "(or `set`: value outputs); `returns` = none (a list of names); `params` = none (a table a whole-set "
                "function reads as `context.params`, options may set) | `nan` = `error` (or a number; "
                "per case also `exclude`): a NaN returned | per case: the per-case values of the resampled cases; "
                "over the set: the function on each resample's drawn cases |")  # fmt: skip
    return "\n".join(rows) + "\n"


def _type(kind: Any) -> dict[str, Any]:
    return {float: {"type": "number"}, int: {"type": "integer"}, str: {"type": "string"}, bool: {"type": "boolean"},
            list: {"type": "array", "items": {"type": "number"}, "minItems": 1}}[kind]  # fmt: skip


def _param_schema(param: Param) -> dict[str, Any]:
    """A parameter's JSON Schema: its type, choices (every kind's), words and interval."""
    if isinstance(param.kind, tuple):  # a number or a word
        return {"anyOf": [{"type": "number"}, {"enum": list(param.words)}]}
    schema = _type(param.kind)
    if param.kind is list and param.items is str:
        schema["items"] = {"type": "string", "minLength": 1}
    choices = list(dict.fromkeys([*param.choices, *(c for _, cs in param.choices_by_kind for c in cs)]))
    if choices:
        schema["enum"] = choices
    if param.interval is not None:
        (schema["items"] if param.kind is list else schema).update(param.interval.json)
    return schema


def _metric_schema(record: MetricRecord) -> dict[str, Any]:
    properties: dict[str, Any] = {"metric": {"const": record.name}, **_COMMON_METRIC}
    if record.segmentation:
        properties["labels"] = {"type": "array", "items": {"type": "string"}, "minItems": 1}
        forms = [*declarable_forms(record), *([EVALUTILS] if declarable_forms(record) != record.forms else [])]
        properties["aggregates"] = {"type": "array", "items": {"enum": forms}, "minItems": 1}
        properties["case_key"] = {"type": "string"}
    if record.per_class:
        properties["aggregates"] = {"type": "array", "items": {"enum": list(PER_CLASS_FORMS)}, "minItems": 1}
    if record.name in COUNTED:
        properties["case_count_key"] = {"type": "string"}
    properties.update(_GROUPS)  # a metric of one value per group of cases (one label and form: checked on parsing)
    if record.name in WEIGHTED_METRICS:  # a weighted leaderboard: each case's weight from a reference column
        properties.update({**_WEIGHTS, "sample_weights": _WEIGHT_COLUMN})
    required = ["metric", "output"]
    for param in (*record.params, *(edge.param(record.per_class) for edge in record.edges)):
        if param.derived:
            continue
        schema = _param_schema(param)
        if param.key in properties:  # a key whose constraint depends on another (detection's threshold)
            properties[param.key] = {"anyOf": [properties[param.key], schema]}
        else:
            properties[param.key] = schema
        if param.default is REQUIRED and param.when is None:
            required.append(param.key)
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


_STRINGS = {"type": "array", "items": {"type": "string"}}
_GROUPS = {
    "groups": {"type": "string", "pattern": r"^.+\.csv:.+$"},
    "over_groups": {"enum": list(GROUP_FORMS)},
    "undefined_group": {"anyOf": [{"type": "number"}, {"enum": ["error", "exclude"]}]},
    "incomplete_group": {"enum": list(INCOMPLETE_GROUP)},
}
_WEIGHT_COLUMN = {"type": "string", "pattern": r"^.+\.csv:.+$"}
_WEIGHTS = {
    "zero_weight": _STRINGS,
    "absent_weight": {"type": "number", "exclusiveMinimum": 0},
    "sorted_weights": {"type": "boolean"},
}
_COMMON_METRIC = {
    "name": {"type": "string", "pattern": f"^{KEY.pattern}$"},
    "output": {"type": "string"},
    "bootstrap": {"type": "boolean"},
    "group": {"type": "string", "pattern": f"^{KEY.pattern}$"},
    "key": {"anyOf": [{"type": "string"}, {"type": "object", "additionalProperties": {"type": "string"}}]},
}


_PYTHON = {
    "type": "object",
    "properties": {"metric": {"const": PYTHON}, **_COMMON_METRIC, **_GROUPS,
                   "function": {"type": "string", "pattern": r"^.+\.py:[A-Za-z_][A-Za-z0-9_]*$"},
                   "over": {"enum": list(OVER)}, "returns": {**_STRINGS, "minItems": 1},
                   "aggregates": {"type": "array", "items": {"enum": list(CASE_FORMS)}},  # []: per case only
                   "nan": {"anyOf": [{"type": "number"}, {"enum": list(NAN_WORDS["case"])}]},
                   "case_key": {"type": "string"}, "params": {"type": "object", "additionalProperties": {
                       "type": ["string", "number", "boolean"]}}, **_WEIGHTS,
                   "sample_weights": {"anyOf": [_WEIGHT_COLUMN, {"type": "array", "items": _WEIGHT_COLUMN}]}},
    "required": ["metric", "output", "function"],
    "additionalProperties": False,
}  # fmt: skip


def _metrics_schema() -> dict[str, Any]:
    names = [record.name for record in RECORDS] + [COMBINED, PYTHON]
    mean = {
        "type": "object",
        "properties": {"metric": {"const": COMBINED}, **{k: v for k, v in _COMMON_METRIC.items() if k != "output"},
                       "of": {**_STRINGS, "minItems": 2}},
        "required": ["metric", "of"],
        "additionalProperties": False,
    }  # fmt: skip
    branches = [(record.name, _metric_schema(record)) for record in RECORDS] + [(COMBINED, mean), (PYTHON, _PYTHON)]
    return {
        "type": "object",
        "properties": {"metric": {"enum": names}},
        "required": ["metric"],
        "allOf": [
            {"if": {"properties": {"metric": {"const": name}}, "required": ["metric"]}, "then": branch}
            for name, branch in branches
        ],
    }


def json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a declaration, for editors (e.g. VS Code's Even Better TOML
    or taplo with ``#:schema ./declaration.schema.json``): the metrics from their records, the
    outputs from their kinds; the parser's checks remain the authority (references between sections,
    paths, key templates)."""
    table = {"type": "object"}
    _strings = {"type": "object", "additionalProperties": {"type": "string"}}  # [verify.map], [verify.ignore]
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://github.com/evaluation/declaration.schema.json",
        "title": "A challenge declaration (evaluation/declarations/*.toml)",
        "type": "object",
        "properties": {
            "name": {"type": "string", "pattern": f"^{NAME.pattern}$"},
            "title": {"type": "string"},
            "submission": {"type": "object", "properties": {"kind": {"enum": list(SUBMISSION_KINDS)},
                           "file": {"type": "string", "pattern": r"\.csv$"}, "id_column": {"type": "string"},
                           "max_mb": {"type": "number", "exclusiveMinimum": 0},
                           "strip_suffixes": {"type": "array", "items": {"type": "string", "minLength": 1}},
                           "reader": {"type": "string", "pattern": r"^.+\.py:[A-Za-z_][A-Za-z0-9_]*$"}},
                           "additionalProperties": False},
            "inputs": {"type": "array", "minItems": 1, "items": {"type": "object", "properties": {
                "slug": {"type": "string", "pattern": f"^{SLUG.pattern}$"}, "relative_path": {"type": "string"},
                "kind": {"type": "string"}, "name": {"type": "string"}},
                "required": ["slug"], "additionalProperties": False}},
            "cases": {"type": "object", "properties": {
                "input": {"type": "string"}, "strip_suffixes": _STRINGS, "strip": _STRINGS,
                "id_column": {"type": "string"}, "word": {"type": "string"}, "same_stem": {"type": "boolean"},
                "ground_truth_name": {"type": "string"}, "stack_size": {"type": "integer", "minimum": 1},
                "stacks": {"type": "string", "pattern": r"\.json$"}, "frame_order": {"type": "string"},
                "fields": _STRINGS},
                "additionalProperties": False},
            "outputs": {"type": "array", "minItems": 1, "items": outputs_schema()},
            "metrics": {"type": "array", "minItems": 1, "items": _metrics_schema()},
            "bootstrap": {"type": "object", "properties": {"resamples": {"type": "integer", "minimum": 1},
                          "seed": {"type": "integer"}, "level": {"type": "number", "exclusiveMinimum": 0,
                          "exclusiveMaximum": 1}}, "additionalProperties": False},
            "leaderboard": {"type": "object", "properties": {
                "score": {"type": "string"}, "title": {"type": "string"},  # aggregates.<key>, <key> when flat
                "sort": {"enum": list(SORTS)}, "decimal_places": {"type": "integer"},
                "error": {"type": "string"},
                "scoring_method": {"enum": list(SCORING_METHODS)}, "columns": {"type": "array", "items": {
                    "type": "object", "properties": {"title": {"type": "string"}, "path": {"type": "string"},
                    "order": {"enum": list(SORTS)}, "exclude_from_ranking": {"type": "boolean"},
                    "error": {"type": "string"}},
                    "required": ["title", "path"], "additionalProperties": False}}},
                "required": ["score"], "additionalProperties": False},
            "report": table,
            "options": {"type": "array", "items": {"type": "object", "required": ["name", "default"]}},
            "verify": {"type": "object", "properties": {"map": _strings, "ignore": _strings},
                       "additionalProperties": False},
        },
        "required": ["name", "title", "outputs", "metrics", "leaderboard"],
        "additionalProperties": False,
    }  # fmt: skip


def schema_text() -> str:
    return json.dumps(json_schema(), indent=2, ensure_ascii=False) + "\n"


def main() -> None:
    """Rewrites the JSON Schema from the records and the kinds."""
    SCHEMA.write_text(schema_text(), encoding="utf-8")


if __name__ == "__main__":
    main()
