"""One class per output kind (``[[outputs]] kind``): what the platform calls it, its missing policies,
how a prediction CSV holds it, and its own keys (their JSON Schema for editors). A new kind is one
more class here, registered in ``KINDS``.
"""

from __future__ import annotations

from typing import Any, ClassVar

_STRINGS = {"type": "array", "items": {"type": "string"}}
_SPELLINGS = {"true_values": _STRINGS, "false_values": _STRINGS}
_CLASSES = {"classes": {**_STRINGS, "minItems": 2, "uniqueItems": True}}
_ONE_HOT = {"reference_columns": {"type": "object", "additionalProperties": {"type": "string"}},
            "reference_none": {"type": "string"}, **_SPELLINGS}  # fmt: skip
_COLUMN = {"column": {"type": "string", "minLength": 1}}


class OutputKind:
    """An output kind. ``platform_kind``: the socket's kind on grand-challenge.org; ``missing``: the
    policies an absent answer may get (the first the default); ``image``: a label image, scored in a
    worker; ``objects``: a JSON file of objects per image; ``csv``: how a prediction CSV holds it
    ("column", "columns": one per class, "": it cannot); ``one_hot``: its reference may be a one-hot
    CSV; ``keys``: its own ``[[outputs]]`` keys as JSON Schema."""

    name: ClassVar[str]
    platform_kind: ClassVar[str]
    missing: ClassVar[tuple[str, ...]]
    image: ClassVar[bool] = False
    objects: ClassVar[bool] = False
    csv: ClassVar[str] = ""
    one_hot: ClassVar[bool] = False
    keys: ClassVar[dict[str, Any]] = {}
    required: ClassVar[tuple[str, ...]] = ()


class Segmentation(OutputKind):
    name, platform_kind = "segmentation", "Segmentation"
    missing = ("error", "empty-mask", "exclude")
    image = True
    required = ("labels",)
    keys: ClassVar[dict[str, Any]] = {
        "labels": {"type": "object", "minProperties": 1,
                   "additionalProperties": {"anyOf": [{"type": "integer", "minimum": 1}, {"const": "nonzero"}]}},
        "geometry": {"enum": ["error", "nearest"]},
        "tolerance": {"type": "number", "minimum": 0, "exclusiveMaximum": 1},
        "grid": {"type": "string"},
        "dimension": {"enum": [2, 3]},
    }  # fmt: skip


class Number(OutputKind):
    name, platform_kind = "number", "Float"
    missing = ("error", "worst-value", "exclude", "non-concordant", "tie")  # the last two: c_index's
    csv = "column"
    keys: ClassVar[dict[str, Any]] = {
        "range": {"type": "array", "items": {"type": "number"}, "minItems": 2, "maxItems": 2},
        "event": {"type": "string", "pattern": r"^.+\.csv:.+$"},
        **_COLUMN,
    }


class Boolean(OutputKind):
    name, platform_kind = "boolean", "Bool"
    missing = ("error", "misclassification", "exclude")
    csv = "column"
    keys: ClassVar[dict[str, Any]] = {**_SPELLINGS, **_COLUMN}


class Choice(OutputKind):
    name, platform_kind = "choice", "String"
    missing = ("error", "misclassification", "exclude")
    csv = "column"
    one_hot = True
    required = ("classes",)
    keys: ClassVar[dict[str, Any]] = {**_CLASSES, **_ONE_HOT, **_COLUMN}


class Probabilities(OutputKind):
    name, platform_kind = "probabilities", "Anything"
    missing = ("error", "worst-value", "uniform", "exclude")
    csv = "columns"
    one_hot = True
    required = ("classes",)
    keys: ClassVar[dict[str, Any]] = {**_CLASSES, **_ONE_HOT, "sum": {"enum": ["one", "any"]},
            "sum_tolerance": {"type": "number", "minimum": 0, "exclusiveMaximum": 1},
            "columns": {"type": "object", "additionalProperties": {"type": "string"}}}  # fmt: skip


class Boxes(OutputKind):
    name, platform_kind = "boxes", "Multiple 2D bounding boxes"
    missing = ("error", "empty", "exclude")  # empty: an image without detections
    objects = True


class Points(OutputKind):
    name, platform_kind = "points", "Multiple points"
    missing = ("error", "empty", "exclude")
    objects = True


KINDS: dict[str, OutputKind] = {kind.name: kind() for kind in (Segmentation, Number, Boolean, Choice, Probabilities,
                                                                Boxes, Points)}  # fmt: skip

# every output's own keys beside its kind's (JSON Schema)
COMMON_KEYS = {
    "slug": {"type": "string", "pattern": "^[a-z0-9][a-z0-9-]*$"},
    "reference": {"type": "string"},
    "reference_suffixes": _STRINGS,
    "noun": {"type": "string"},
    "unit": {"type": "string"},
    "relative_path": {"type": "string"},
    "platform_kind": {"type": "string"},
    "blank": {"enum": ["error", "skip"]},
    "blank_values": _STRINGS,
}


def outputs_schema() -> dict[str, Any]:
    """The JSON Schema of one ``[[outputs]]`` entry: its kind's keys and missing policies."""
    return {
        "type": "object",
        "properties": {"kind": {"enum": list(KINDS)}},
        "required": ["slug", "kind", "reference"],
        "allOf": [
            {
                "if": {"properties": {"kind": {"const": name}}, "required": ["kind"]},
                "then": {
                    "properties": {
                        "kind": {"const": name},
                        **COMMON_KEYS,
                        "missing": {"enum": list(kind.missing)},
                        **kind.keys,
                    },
                    "required": list(kind.required),
                    "additionalProperties": False,
                },
            }
            for name, kind in KINDS.items()
        ],
    }
