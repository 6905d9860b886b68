"""The documents derived from the metric records and the output kinds: the documentation site's table of
metrics (``metric_table``, made at every site build by scripts/docs_hooks.py, never committed) and the
editors' JSON Schema of a declaration (``evaluation/declarations/declaration.schema.json``).

``python -m evaluation.declarative.derived`` rewrites the JSON Schema; ``test/declarative/test_records.py``
checks that the committed file equals what this module generates.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from evaluation.declarative import measures
from evaluation.declarative.bounds import KEYS as KEY_BOUNDS
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
from evaluation.declarative.output_kinds import OutputSpec, outputs_schema
from evaluation.declarative.python_metric import CASE_FORMS, NAN_WORDS, OVER, PYTHON
from evaluation.declarative.schema import (
    BOOTSTRAP_KEYS,
    COMBINED,
    INCOMPLETE_GROUP,
    KEY,
    PROVENANCE_REQUIRED,
    TOP_KEYS,
    Cases,
    InputSpec,
    Leaderboard,
    OptionSpec,
    Provenance,
    Report,
    Submission,
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


def _param_said(param: Param) -> list[str]:
    """What a parameter allows and means, in a few phrases (the table's cell and the JSON Schema's description)."""
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
    return said + ([param.doc] if param.doc else [])


def _param_cell(param: Param) -> str:
    if param.derived:
        return f"`{param.key}` (from the output)"
    said = _param_said(param)
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
    """A parameter's JSON Schema: its type, choices (every kind's), words and interval, default and meaning."""
    if isinstance(param.kind, tuple):  # a number or a word
        schema: dict[str, Any] = {"anyOf": [{"type": "number"}, {"enum": list(param.words)}]}
    else:
        schema = _type(param.kind)
        if param.kind is list and param.items is str:
            schema["items"] = {"type": "string", "minLength": 1}
        choices = list(dict.fromkeys([*param.choices, *(c for _, cs in param.choices_by_kind for c in cs)]))
        if choices:
            schema["enum"] = choices
        if param.interval is not None:
            (schema["items"] if param.kind is list else schema).update(param.interval.json)
    if param.default is not REQUIRED and param.default != OMITTED:
        schema["default"] = param.default
    said = "; ".join(_param_said(param)) or f"The catalogue's `{param.parameter or param.key}`."
    return {**schema, "description": said}


def _metric_schema(record: MetricRecord) -> dict[str, Any]:
    named = {"const": record.name, "description": f"The catalogue's `{record.catalogue}`."}
    properties: dict[str, Any] = {"metric": named, **_COMMON_METRIC}
    if record.segmentation:
        properties["labels"] = {
            "type": "array",
            "items": {"type": "string"},
            "minItems": 1,
            "description": "The output's labels it scores; default: all.",
        }
        forms = [*declarable_forms(record), *([EVALUTILS] if declarable_forms(record) != record.forms else [])]
        properties["aggregates"] = {
            "type": "array",
            "items": {"enum": forms},
            "minItems": 1,
            "default": [forms[0]],
            "description": f"Its forms over the cases (`{EVALUTILS}`: every statistic evalutils "
            "writes beside the mean).",
        }
        properties["case_key"] = {
            "type": "string",
            "default": "{name}_{label}",
            "description": "The per-case key template (`{name}`, `{label}`); `''`: no per-case value.",
        }
    if record.per_class:
        properties["aggregates"] = {
            "type": "array",
            "items": {"enum": list(PER_CLASS_FORMS)},
            "minItems": 1,
            "description": "On a probabilities output: one-vs-rest per class "
            "(`<name>_<class>`) and their macro mean (`<name>_macro`).",
        }
    if record.name in COUNTED:
        properties["case_count_key"] = {
            "type": "string",
            "description": "The per-case TP / FP / FN key template "
            "(`{name}`, `{label}`, `{count}`); default: `case_key` + `_{count}`; `''`: "
            "none.",
        }
    properties.update(_GROUPS)  # a metric of one value per group of cases (one label and form: checked on parsing)
    if record.name in measures.weighted_metrics():  # a weighted leaderboard: each case's weight from a reference column
        properties.update({**_WEIGHTS, "sample_weights": _WEIGHT_COLUMN})
    required = ["metric", "output"]
    for param in (*record.params, *(edge.param(record.per_class) for edge in record.edges)):
        if param.derived:
            continue
        schema = _param_schema(param)
        if param.key in properties:  # a key whose constraint depends on another (detection's threshold)
            described = [properties[param.key]["description"], schema["description"]]
            properties[param.key] = {"anyOf": [properties[param.key], schema], "description": "; or ".join(described)}
        else:
            properties[param.key] = schema
        if param.default is REQUIRED and param.when is None:
            required.append(param.key)
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


_STRINGS = {"type": "array", "items": {"type": "string"}}
_GROUPS = {
    "groups": {
        "type": "string",
        "pattern": r"^.+\.csv:.+$",
        "description": "`'file.csv:column'`: the metric per "
        "group of cases (a metric of one value; not bootstrapped), combined over the groups.",
    },
    "over_groups": {
        "enum": list(GROUP_FORMS),
        "default": GROUP_FORMS[0],
        "description": "How the groups' values combine (`mean_minus_std`: population std).",
    },
    "undefined_group": {
        "anyOf": [{"type": "number"}, {"enum": ["error", "exclude"]}],
        "default": "error",
        "description": "A group where the metric is undefined: refused, left out, or this value.",
    },
    "incomplete_group": {
        "enum": list(INCOMPLETE_GROUP),
        "default": INCOMPLETE_GROUP[0],
        "description": "A group with a case without its output: scored on the others, or null (left out).",
    },
}
_WEIGHT_COLUMN = {
    "type": "string",
    "pattern": r"^.+\.csv:.+$",
    "description": "`'file.csv:column'`: each case's weight in the one value, a finite number >= 0, not all 0 (a "
    "weighted leaderboard, ISIC's `score_weight`: scikit-learn's `sample_weight` where the catalogue takes it, else "
    "one row of its `weights` form); neither bootstrapped nor by group.",
}
_WEIGHTS = {
    "zero_weight": {**_STRINGS, "description": "Cases weighted 0 whatever the column says (ISIC_0035068)."},
    "absent_weight": {"type": "number", "exclusiveMinimum": 0, "description": "Every case's weight when the file "
                      "lacks the column; not set: the column is required."},
    "sorted_weights": {"type": "boolean", "default": False, "description": "Weights that vary need the file sorted "
                       "by case (a reference that pairs weights by position would misplace them)."},
}  # fmt: skip
_COMMON_METRIC = {
    "name": {
        "type": "string",
        "pattern": f"^{KEY.pattern}$",
        "description": "Its name in metrics.json's keys; default: the metric.",
    },
    "output": {"type": "string", "description": "The slug of the output it scores."},
    "bootstrap": {
        "type": "boolean",
        "default": False,
        "description": "Write `<key>_ci_low` / `<key>_ci_high`, the `[bootstrap]` percentile interval.",
    },
    "group": {"type": "string", "pattern": f"^{KEY.pattern}$", "description": "Write under `aggregates.<group>`."},
    "key": {
        "anyOf": [{"type": "string"}, {"type": "object", "additionalProperties": {"type": "string"}}],
        "description": "The aggregate key template (`{name}`, `{label}`, `{form}`; default "
        "`{name}_{label}_{form}` for segmentation metrics, `{name}` otherwise), or a table per form, e.g. "
        "`key = { dataset = 'dice_{label}', mean = 'dice_{label}_mean' }`.",
    },
}


_PYTHON = {
    "type": "object",
    "properties": {"metric": {"const": PYTHON, "description": "The organizer's function."}, **_COMMON_METRIC, **_GROUPS,
                   "function": {"type": "string", "pattern": r"^.+\.py:[A-Za-z_][A-Za-z0-9_]*$", "description":
                                "`'file.py:function'` in the declaration's folder."},
                   "over": {"enum": list(OVER), "default": OVER[0], "description": "The function scores one case "
                            "(`case`) or the whole set (`set`, value outputs)."},
                   "returns": {**_STRINGS, "minItems": 1, "description": "The names of the mapping it returns, each "
                               "a `{label}`; not set: one number."},
                   "aggregates": {"type": "array", "items": {"enum": list(CASE_FORMS)}, "description":
                                  "Per case: the forms over the cases (`[]`: per case only)."},
                   "nan": {"anyOf": [{"type": "number"}, {"enum": list(NAN_WORDS["case"])}], "default": "error",
                           "description": "A NaN returned: refused, this value, or (per case) `exclude`."},
                   "case_key": {"type": "string", "description": "The per-case key template."},
                   "params": {"type": "object", "additionalProperties": {"type": ["string", "number", "boolean"]},
                              "description": "A table the function reads as `context.params` (options may set "
                              "`metrics.<name>.params.<key>`)."}, **_WEIGHTS,
                   "sample_weights": {"anyOf": [_WEIGHT_COLUMN, {"type": "array", "items": _WEIGHT_COLUMN}],
                                      "description": "`'file.csv:column'`, or a list of them: each case's weights, "
                                      "read as `context.weights['<column>']` (over the set only)."}},
    "required": ["metric", "output", "function"],
    "additionalProperties": False,
}  # fmt: skip


def _metrics_schema() -> dict[str, Any]:
    names = [record.name for record in RECORDS] + [COMBINED, PYTHON]
    mean = {
        "type": "object",
        "properties": {"metric": {"const": COMBINED, "description": "A mean of aggregates."},
                       **{k: v for k, v in _COMMON_METRIC.items() if k != "output"},
                       "of": {**_STRINGS, "minItems": 2, "description": "Two or more aggregate paths (relative to "
                              "`aggregates`) of metrics declared before it, averaged (resample by resample)."}},
        "required": ["metric", "of"],
        "additionalProperties": False,
    }  # fmt: skip
    branches = [(record.name, _metric_schema(record)) for record in RECORDS] + [(COMBINED, mean), (PYTHON, _PYTHON)]
    return {
        "type": "object",
        "properties": {"metric": {"enum": names, "description": "The metric (the reference of metrics)."}},
        "required": ["metric"],
        "allOf": [
            {"if": {"properties": {"metric": {"const": name}}, "required": ["metric"]}, "then": branch}
            for name, branch in branches
        ],
    }


def _defaults(keys: dict[str, Any], spec: type | None, required: tuple[str, ...] = ()) -> dict[str, Any]:
    """The keys, each not required with the default its dataclass field (``spec``) declares, when it has
    one that means a value (not "", None or below the key's minimum: "not set")."""
    properties = {}
    for key, node in keys.items():
        field = getattr(spec, "__dataclass_fields__", {}).get(key)
        default = getattr(spec, key) if field is not None and hasattr(spec, key) and key not in required else None
        if isinstance(default, tuple):
            default = {} if node.get("type") == "object" else list(default)
        if (
            "default" not in node
            and default not in (None, "")
            and not ("minimum" in node and default < node["minimum"])
        ):
            node = {**node, "default": default}
        properties[key] = node
    return properties


def _section(keys: dict[str, Any], spec: type | None = None, **more: Any) -> dict[str, Any]:
    """A table of keys with their defaults."""
    return {"type": "object", "properties": _defaults(keys, spec), **more, "additionalProperties": False}


def _outputs() -> dict[str, Any]:
    """An ``[[outputs]]`` entry, each kind's keys with the defaults of ``OutputSpec``'s fields of their name."""
    schema = outputs_schema()
    for branch in schema["allOf"]:
        then = branch["then"]
        then["properties"] = _defaults(then["properties"], OutputSpec, tuple(then["required"]))
    return schema


def _bounded(schema: dict[str, Any]) -> dict[str, Any]:
    """The bounds checked as a declaration is read (``bounds.KEYS``) added to their keys."""
    for dotted, (lowest, highest, _) in KEY_BOUNDS.items():
        section, key = dotted.split(".")
        node = schema["properties"][section]["properties"][key]
        node["maximum"] = highest
        if lowest is not None and "exclusiveMinimum" not in node:
            node["minimum"] = lowest
    return schema


def json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a declaration, for editors (e.g. VS Code's Even Better TOML
    or taplo with ``#:schema ./declaration.schema.json``) and the documentation's reference: every key's
    type, constraint, default and ``description`` from where it is defined (the sections' dataclasses in
    ``schema``, the outputs' kinds, the metrics' records); the parser's checks remain the authority
    (references between sections, paths, key templates)."""
    _strings = {"type": "object", "additionalProperties": {"type": "string"}}  # [verify.map], [verify.ignore]
    return _bounded({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://github.com/evaluation/declaration.schema.json",
        "title": "A challenge declaration (evaluation/declarations/*.toml)",
        "type": "object",
        "properties": {
            **TOP_KEYS,
            "submission": _section(Submission.keys, Submission, description=_first(Submission)),
            "inputs": {"type": "array", "minItems": 1, "description": "The algorithm's input sockets.",
                       "items": _section(InputSpec.keys, InputSpec, required=["slug"])},
            "cases": _section(Cases.keys, Cases, description=_first(Cases)),
            "outputs": {"type": "array", "minItems": 1, "items": _outputs(),
                        "description": "The outputs scored, each of a `kind` (its own keys below)."},
            "metrics": {"type": "array", "minItems": 1, "items": _metrics_schema(),
                        "description": "The metrics, each a record's (see the reference of metrics)."},
            "bootstrap": _section(BOOTSTRAP_KEYS, description="The bootstrap of the metrics declared with "
                                  "`bootstrap = true`."),
            "leaderboard": _section(Leaderboard.keys, Leaderboard, required=["score"],
                                    description="The phase's leaderboard on grand-challenge.org."),
            "report": _section(Report.keys, Report, description=_first(Report)),
            "options": {"type": "array", "description": "Run options: `--set <name>=<value>` changes the declared "
                        "values its `sets` lists.", "items": {
                **_section(OptionSpec.keys, OptionSpec), "required": ["name", "default"]}},
            "provenance": _section(Provenance.keys, Provenance, required=list(PROVENANCE_REQUIRED),
                                   description=_first(Provenance)),
            "verify": {"type": "object", "description": "`python -m evaluation.verify`'s tables: `[verify.map]` "
                       "(a reference metrics.json path -> ours) and `[verify.ignore]` (a path left out -> why).",
                       "properties": {"map": {**_strings, "description": "Reference path -> our path pattern."},
                                      "ignore": {**_strings, "description": "Reference path -> why it is left out."}},
                       "additionalProperties": False},
        },
        "required": ["name", "title"],  # and what it does not inherit from a declaration it extends:
        "anyOf": [{"required": ["extends"]}, {"required": ["outputs", "metrics", "leaderboard"]}],
        "additionalProperties": False,
    })  # fmt: skip


def _first(spec: type) -> str:
    """The first sentence of a dataclass's docstring."""
    return re.split(r"(?<!e\.g)\. ", " ".join((spec.__doc__ or "").split()))[0].rstrip(".") + "."


def schema_text() -> str:
    return json.dumps(json_schema(), indent=2, ensure_ascii=False) + "\n"


def main() -> None:
    """Rewrites the JSON Schema from the records and the kinds."""
    SCHEMA.write_text(schema_text(), encoding="utf-8")


if __name__ == "__main__":
    main()
