"""The declaration format: one TOML file per challenge, parsed and validated into plain dataclasses.

Every key is checked (type, allowed values, references between sections) before anything runs: a
metric's keys as its record says (``metric_records``), an output's as its kind's class does
(``output_kinds``); the first problem is a ``ConfigurationError`` of one line naming the file and the
key (``tables.Table``), e.g.
``kits.toml: outputs[1].missing: 'zero' is not one of error, empty-mask, exclude (for a segmentation
output)``. Each section's keys, as JSON Schema with their meanings, are its dataclass's ``keys`` (the
documentation's reference of declaration keys is generated from them, through ``derived.json_schema``).
"""

from __future__ import annotations

import copy
import dataclasses
import math
import tomllib
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from evaluation.declarative import bounds, measures, python_metric
from evaluation.declarative.metric_records import (
    COUNT_FORMS,
    COUNTED,
    EVALUTILS,
    HIT_RADIUS,
    NULL,
    OMITTED,
    PER_CLASS_FORMS,
    RECORD,
    RECORDS,
    REQUIRED,
    MetricRecord,
    Param,
    declarable_forms,
)
from evaluation.declarative.output_kinds import KINDS, NONZERO, SURVIVAL_MISSING, OutputSpec, parse_output
from evaluation.declarative.python_metric import PYTHON
from evaluation.declarative.tables import KEY, NAME, SLUG, Table, type_of
from evaluation.errors import ConfigurationError
from evaluation.metrics.groups import GROUP_FORMS
from evaluation.metrics.summary_statistics import STATISTICS
from evaluation.platform.matching import IMAGE_NAME_SUFFIXES

SUBMISSION_KINDS = ("jobs", "csv")  # algorithm jobs (predictions.json) or one prediction CSV
SEGMENTATION_METRICS = tuple(r.name for r in RECORDS if r.segmentation)
VALUE_METRICS = measures.VALUE_METRICS  # the metrics of case-level values (number, boolean, choice, probabilities)
DETECTION_METRICS = tuple(measures.DETECTION_METRICS)  # on a boxes or points output
HEAT_MAP_METRICS = tuple(measures.HEAT_MAP_METRICS)  # on a heat_map output
DECISION_METRICS = tuple(measures.DECISION_METRICS)  # on a boxes or points output, at a decision
SETTINGS_LAYOUTS = ("full", "options")
COMBINED = "mean"  # the mean of aggregates declared before (e.g. HECKTOR's segmentation score)
BINARY_REFERENCE_METRICS = tuple(r.name for r in RECORDS if r.binary_reference)  # a number's reference: 0 / 1
SURFACE_METRICS = tuple(r.name for r in RECORDS if r.three_d)  # 3D only (DeepMind surfels)
SCORING_METHODS = ("abs", "avg", "med")
ORDERS = ("metric", "label")  # [report] order: metrics.json keys metric by metric, or label by label
SORTS = ("asc", "desc")
INCOMPLETE_GROUP = ("score", NULL)  # a group with a case without its output: scored on the others, or null
_STRINGS: dict[str, Any] = {"type": "array", "items": {"type": "string"}}


@dataclass(frozen=True)
class Cases:
    """How a job names its case: the image name of input socket ``input``, minus one of
    ``strip_suffixes`` (file extensions), minus one of ``strip`` (trailing markers such as ``__CT``)."""

    input: str
    strip_suffixes: tuple[str, ...] = IMAGE_NAME_SUFFIXES
    strip: tuple[str, ...] = ()
    id_column: str = "case"
    word: str = ""  # how messages name a case ("image a.png"); "" names it alone
    same_stem: bool = False  # an unknown job name matches the one case with the same stem
    ground_truth_name: str = ""  # how a CSV decoding error names the ground truth ("The HECKTOR ground truth ...")
    stack_size: int = 0  # a job's input is a stack of this many frames, one case each (``stacks``); 0: one case
    stacks: str = ""  # a JSON ground truth {stack: [frame record, ...]}: a job's input names its stack (``stacks``)
    frame_order: str = "index"  # the frame records' field that orders a stack's frames
    fields: tuple[str, ...] = ()  # frame record fields handed to python metrics (``SetContext.fields``)
    keys: ClassVar[dict[str, Any]] = {  # ``[cases]``, as JSON Schema (the site's reference is generated from it)
        "input": {"type": "string", "description": "The input socket whose image name names a job's case; default: "
                  "the first declared input. Not in a prediction-file phase."},
        "strip_suffixes": {**_STRINGS, "description": "File extensions cut off an input name to give its case (the "
                           "first that ends the name, any letter case)."},
        "strip": {**_STRINGS, "description": "Trailing markers then cut off, letter case ignored, e.g. ``['__CT']``."},
        "id_column": {"type": "string", "description": "The case column of every reference CSV (and, by default, of "
                      "the prediction CSV)."},
        "word": {"type": "string", "description": "How messages name a case, e.g. ``'image'`` gives 'The mask of "
                 "image a.png ...'; not set: the case alone."},
        "same_stem": {"type": "boolean", "description": "An input name that is no case stands for the one case with "
                      "the same stem (input ``a.tif`` for the case ``a.png``)."},
        "ground_truth_name": {"type": "string", "description": "How the organizer's messages name the ground truth, "
                              "e.g. ``'HECKTOR'``: 'The HECKTOR ground truth has no clinical.csv.'"},
        "stack_size": {"type": "integer", "minimum": 1, "description": "A job's input is a stack of this many frames, "
                       "each output a JSON list with one value per frame, paired with the rows of the first output's "
                       "reference CSV in file order; the job whose input name ends in k answers stack k. Not set: a "
                       "job's input is one case."},
        "stacks": {"type": "string", "pattern": r"\.json$", "description": "Stacks listed by name in a JSON ground "
                   "truth ``{stack: [frame record, ...]}``; each output's reference is a field of the records "
                   "(``'val_metadata.json:class'``). Not with ``stack_size``."},
        "frame_order": {"type": "string", "description": "The frame records' field that orders a stack's frames."},
        "fields": {**_STRINGS, "description": "Frame record fields given to whole-set python metrics as "
                   "``context.fields``."},
    }  # fmt: skip

    @property
    def stacked(self) -> bool:
        """A job's input is a stack of frames, one case each (numbered, ``stack_size``, or listed, ``stacks``)."""
        return bool(self.stack_size or self.stacks)

    def named(self, case: str) -> str:
        """The case as messages name it."""
        return f"{self.word} {case}" if self.word else case

    @property
    def noun(self) -> str:
        """The word for a case where a message needs one ("image", else "case")."""
        return self.word or "case"

    @property
    def ground_truth(self) -> str:
        """How the organizer's messages open: "The HECKTOR ground truth", or "The ground truth"."""
        return f"The {self.ground_truth_name} ground truth" if self.ground_truth_name else "The ground truth"


@dataclass(frozen=True)
class Submission:
    """What a participant submits (``[submission]``): algorithm jobs (``kind = "jobs"``), or one CSV
    of a prediction-file phase (``kind = "csv"``) with a row per case, found as ``file`` (else the
    single ``*.csv`` of the input), its cases in ``id_column``, refused unread above ``max_mb``."""

    kind: str = "jobs"
    file: str = "predictions.csv"
    id_column: str = "case"
    max_mb: float = 10.0  # a row per case is far smaller; at 10 MB: 1.3 s, 222 MiB (benchmarks/prediction_csv.py)
    strip_suffixes: tuple[str, ...] = ()  # removed from the end of a case id, in any case (ISIC's ".jpg")
    reader: str = ""  # "file.py:function": the challenge's own reader of the CSV (python_metric.ReaderContext)
    keys: ClassVar[dict[str, Any]] = {  # ``[submission]``, as JSON Schema
        "kind": {"enum": list(SUBMISSION_KINDS), "description": "`jobs`: algorithm jobs (predictions.json); `csv`: a "
                 "prediction-file phase, one CSV uploaded by the participant with a row per case (no `[[inputs]]`, no "
                 "`[cases]` `input`, `strip_suffixes`, `strip`, `same_stem`; phase setting `submission_kind = CSV`)."},
        "file": {"type": "string", "pattern": r"\.csv$", "description": "The CSV in the input folder (else its one "
                 "`*.csv`). UTF-8 (a BOM allowed), a header line, then a row per case in any order; cells stripped, "
                 "blank lines skipped, extra columns ignored. A case without a row is that output missing (its "
                 "`missing` policy), listed in `missing.rows`."},
        "id_column": {"type": "string", "description": "The CSV's case column; default: `[cases] id_column`."},
        "max_mb": {"type": "number", "exclusiveMinimum": 0, "description": "A larger file (MB) is "
                   "refused before it is read (benchmarks/prediction_csv.py)."},
        "strip_suffixes": {"type": "array", "items": {"type": "string", "minLength": 1}, "description": "Removed "
                           "from the end of a row's case id, in any letter case (ISIC's `.jpg`); not with `reader`."},
        "reader": {"type": "string", "pattern": r"^.+\.py:[A-Za-z_][A-Za-z0-9_]*$", "description": "`'file.py:"
                   "function'` in the declaration's folder: the challenge's own reader of the CSV (the open "
                   "interface, `ReaderContext`), after the engine has found the file and checked it is a regular "
                   "file inside the input, within `max_mb`."},
    }  # fmt: skip

    @property
    def csv(self) -> bool:
        return self.kind == "csv"

    @property
    def missing_key(self) -> str:
        """The list of cases without a prediction in the ``missing`` block: jobs, or rows of the CSV."""
        return "rows" if self.csv else "jobs"


@dataclass(frozen=True)
class InputSpec:
    slug: str
    relative_path: str
    kind: str = "Image"
    name: str = "{case}.mha"  # the input file name of a case, for make_input
    keys: ClassVar[dict[str, Any]] = {  # ``[[inputs]]``, as JSON Schema
        "slug": {"type": "string", "pattern": f"^{SLUG.pattern}$", "description": "The input socket's slug on "
                 "grand-challenge.org."},
        "relative_path": {"type": "string", "description": "The socket's path in a job's input; default: "
                          "`images/<slug>`."},
        "kind": {"type": "string", "description": "The socket's kind on grand-challenge.org."},
        "name": {"type": "string", "description": "A case's input file name, with exactly one `{case}` "
                 "(`python -m evaluation.make_input` writes it)."},
    }  # fmt: skip


@dataclass(frozen=True)
class MetricSpec:
    """One declared metric; ``params`` holds its parameters and edge-case values, defaults filled in."""

    name: str
    metric: str
    output: str
    labels: tuple[str, ...]
    aggregates: tuple[str, ...]
    bootstrap: bool
    params: tuple[tuple[str, Any], ...]
    group: str | None = None  # the aggregates sub-table the values go to (aggregates.<group>.<key>)
    keys: tuple[tuple[str, str], ...] = ()  # form -> key template with {name}, {label}, {form}
    case_key: str = "{name}_{label}"  # the per-case key template (segmentation metrics); "": none
    case_count_key: str = ""  # lesion_f1: the per-case TP / FP / FN key template ({count}); "": none
    groups: str = ""  # "file.csv:column": the metric per group of cases, combined over the groups; "": none
    over_groups: str = "mean"  # how the groups' values combine (metrics.groups.over_groups)
    undefined_group: str | float = "error"  # a group where the metric is undefined: refused, left out or a number
    incomplete_group: str = "score"  # a group with a case without its output: scored anyway, or "null" (left out)
    sample_weights: tuple[str, ...] = ()  # "file.csv:column": each case's weight (a weighted leaderboard; python: any)
    zero_weight: tuple[str, ...] = ()  # cases weighted 0 whatever the column says (ISIC_0035068 in ISIC's reference)
    absent_weight: float | None = None  # every case's weight when the file lacks the column; None: it must have it
    sorted_weights: bool = False  # weights that vary need the file sorted by case (the reference pairs by position)

    def param(self, key: str) -> Any:
        return dict(self.params)[key]

    def key(self, label: str, form: str) -> str:
        """The aggregate key of one label and form (value metrics: label "" and form "value")."""
        return dict(self.keys)[form].format(name=self.name, label=label, form=form)

    def path(self, key: str) -> str:
        """Where its aggregate ``key`` goes under ``aggregates``: ``group.key`` in a group, else ``key``."""
        return f"{self.group}.{key}" if self.group else key

    def per_case_key(self, label: str) -> str:
        return self.case_key.format(name=self.name, label=label)

    def count_key(self, label: str, count: str) -> str:
        return self.case_count_key.format(name=self.name, label=label, count=count)


@dataclass(frozen=True)
class Column:
    title: str
    path: str
    order: str = "desc"
    exclude_from_ranking: bool = False
    error: str = ""  # the path of its error (the platform's error_path: shown as value ± error); "": none
    keys: ClassVar[dict[str, Any]] = {  # ``[[leaderboard.columns]]``, as JSON Schema
        "title": {"type": "string", "description": "The column's title on the leaderboard."},
        "path": {"type": "string", "description": "Its value's path in metrics.json (`aggregates.<key>`, `<key>` "
                 "when flat)."},
        "order": {"enum": list(SORTS), "description": "The column's sort order."},
        "exclude_from_ranking": {"type": "boolean", "description": "Shown but not ranked."},
        "error": {"type": "string", "description": "The path of the column's error, shown as value ± error (the "
                  "platform's `error_path`)."},
    }  # fmt: skip


@dataclass(frozen=True)
class Leaderboard:
    score: str
    title: str
    sort: str = "desc"
    decimal_places: int = 4
    scoring_method: str = "abs"
    columns: tuple[Column, ...] = ()
    error: str = ""  # the path of the score's error (the platform's score_error_jsonpath); "": none
    keys: ClassVar[dict[str, Any]] = {  # ``[leaderboard]``, as JSON Schema
        "score": {"type": "string", "description": "The ranked value's path in metrics.json (`aggregates.<key>`, "
                  "`<key>` when flat); it must be a key the declaration writes, a finite number."},
        "title": {"type": "string", "description": "The score's title; default: its path."},
        "sort": {"enum": list(SORTS), "description": "`desc`: higher is better; `asc`: lower is better."},
        "decimal_places": {"type": "integer", "description": "Digits shown."},
        "scoring_method": {"enum": list(SCORING_METHODS), "description": "The platform's scoring method: `abs` "
                           "(the score), `avg` or `med` (the mean or median of the columns' ranks)."},
        "error": {"type": "string", "description": "The path of the score's error, shown as value ± error (the "
                  "platform's `score_error_jsonpath`, e.g. `aggregates.Dice.std`; a finite number)."},
        "columns": {"type": "array", "description": "More values shown beside the score.", "items": {
                    "type": "object", "properties": Column.keys, "required": ["title", "path"],
                    "additionalProperties": False}},
    }  # fmt: skip


@dataclass(frozen=True)
class OptionSpec:
    """A ``--set`` option that overrides declared values: ``targets`` are (section, index, key), e.g.
    ("outputs", 0, "geometry") for ``sets = ["outputs.kidney-segmentation.geometry"]``."""

    name: str
    default: Any
    help: str
    choices: tuple[Any, ...] | None
    targets: tuple[tuple[str, int, str], ...]
    sets: tuple[str, ...]
    values: tuple[tuple[str, Any], ...] = ()  # the option's value (as text) -> the declared value it sets
    keys: ClassVar[dict[str, Any]] = {  # ``[[options]]``, as JSON Schema
        "name": {"type": "string", "description": "The option: `--set <name>=<value>` (not `seed`, "
                 "`bootstrap_resamples`, which exist when a metric is bootstrapped)."},
        "default": {"type": ["string", "number", "boolean"], "description": "Its value unless set."},
        "sets": {**_STRINGS, "description": "The declared values it overrides: `outputs.<slug>.<key>`, "
                 "`metrics.<name>.<key>`, `metrics.<name>.params.<key>`, `submission.max_mb`, or `leaderboard`: the "
                 "whole table, one per choice in `values` (ISIC's `target_metric` moves the score and the columns; "
                 "the phase under `--set` is then that table's) (every choice must give a valid declaration); "
                 "settings echo the value in force."},
        "choices": {"type": "array", "description": "The values allowed; not set: any."},
        "values": {"type": "object", "description": "A table `choice = declared value`, one entry per choice "
                   "(booleans spelled `true`, `false`), e.g. `values = { one = 1.0, exclude = 'exclude' }`; not set: "
                   "the option's value sets itself."},
        "help": {"type": "string", "description": "The option's help; default: `sets ...`."},
    }  # fmt: skip

    def declared(self, value: Any) -> Any:
        """The declared value an option value sets (itself without a ``values`` table)."""
        return dict(self.values).get(_text(value), value) if self.values else value


@dataclass(frozen=True)
class Report:
    """The layout of metrics.json beyond the metrics (``[report]``)."""

    missing: bool = True  # write the "missing" block
    settings: str = "full"  # "full": the whole declaration; "options": the challenge and the options only
    case_values: bool = True  # per case: the participant's own value of each value output
    label_presence: bool = False  # per case: "<label>_in_reference" for each segmentation label
    counts: tuple[tuple[str, str], ...] = ()  # aggregate key -> "cases" or the mean aggregate it counts
    notes: tuple[tuple[str, Any], ...] = ()  # constant settings entries: [report.constants], then the prose notes
    notes_first: bool = False  # those entries right after "challenge" (before the options) instead of last
    per_case: bool = True  # false: "case" is an empty object (the phase reports no per-case entries)
    missing_names: tuple[tuple[str, str], ...] = ()  # output slug -> its key in the "missing" block
    order: str = "metric"  # "label": a run of segmentation metrics of one output and group, label by label
    absent_labels: tuple[str, str] | None = None  # (aggregate path, output): the labels in no reference/prediction
    flat: bool = False  # the aggregates at metrics.json's top level (their ``names``), then settings, then dataset
    names: tuple[tuple[str, str], ...] = ()  # flat: aggregate key -> its spelling in metrics.json (any text but '.')
    dataset: tuple[tuple[str, str], ...] = ()  # flat: the "dataset" block, key -> what it counts (DATASET_COUNTS)
    layout: tuple[tuple[str, str], ...] = ()  # flat: metrics.json path (dots nest) -> the aggregate key it holds
    keys: ClassVar[dict[str, Any]] = {  # ``[report]``, as JSON Schema
        "missing": {"type": "boolean", "description": "Write the `missing` block (`false` needs `missing = 'error'` "
                    "on every output)."},
        "settings": {"enum": list(SETTINGS_LAYOUTS), "description": "`full`: settings echo the whole declaration; "
                     "`options`: the challenge and the options in force only."},
        "case_values": {"type": "boolean", "description": "Per case: the participant's own value of each value "
                        "output (null when missing: an imputed value would reveal the reference)."},
        "label_presence": {"type": "boolean", "description": "Per case: `<label>_in_reference` (true / false) for "
                           "each segmentation label."},
        "per_case": {"type": "boolean", "description": "`false`: `\"case\": {}`, no per-case entries at all."},
        "notes_first": {"type": "boolean", "description": "The constants and notes right after `challenge` in "
                        "settings, before the options (`false`: they close settings)."},
        "order": {"enum": list(ORDERS), "description": "`metric`: aggregates and per-case keys metric by metric; "
                  "`label`: each run of consecutive segmentation metrics of one output and group label by label "
                  "(`dice_gtvp`, `hd95_gtvp_mean`, ..., then `dice_gtvn`, ...)."},
        "absent_labels": {"type": "object", "properties": {"path": {"type": "string", "description": "Its key."},
                          "output": {"type": "string", "description": "The segmentation output."}},
                          "required": ["path", "output"], "additionalProperties": False, "description": "`{ path = "
                          "'<key>' or '<group>.<key>', output = '<segmentation slug>' }`: writes the labels that no "
                          "reference and no prediction holds (a list, after the metrics)."},
        "flat": {"type": "boolean", "description": "The aggregates at metrics.json's top level, then `settings`, then "
                 "`dataset` (needs `per_case = false`, `missing = false`)."},
        "names": {"type": "object", "additionalProperties": {"type": "string"}, "description": "Flat: aggregate key "
                  "-> its spelling in metrics.json (no dot)."},
        "dataset": {"type": "object", "additionalProperties": {"type": "string"}, "description": "Flat: the `dataset` "
                    "block, key -> `stacks`, `cases`, `positive:<output>` or `distinct:<field>` (integers)."},
        "layout": {"type": "object", "additionalProperties": {"type": "string"}, "description": "Flat, instead of "
                   "`names`: metrics.json in this order, path (dots nest objects: `per_category.MEL.auc`) -> the "
                   "aggregate key written there; `{class}` in both writes one entry per class of the output with "
                   "classes; every aggregate placed at least once; not under `settings` (nor `dataset` beside "
                   "`[report.dataset]`)."},
        "counts": {"type": "object", "additionalProperties": {"type": "string"}, "description": "`[report.counts]`: "
                   "extra aggregates after the metrics, `<key> = 'cases'` (the number of cases) or `<key> = '<mean "
                   "aggregate>'` (the cases that mean averaged, e.g. `dice_images = 'dice'`)."},
        "notes": {"type": "object", "additionalProperties": {"type": "string"}, "description": "`[report.notes]`: "
                  "constant text entries appended to settings (definitions in prose); not `challenge` nor an "
                  "option's name."},
        "constants": {"type": "object", "additionalProperties": {"type": ["number", "boolean", "string", "array"]},
                      "description": "`[report.constants]`: constant entries of settings before the notes, a number, "
                      "a boolean, a text or a list of those (`ci_level = 0.95`); keys as for notes, none a note's "
                      "too."},
        "missing_names": {"type": "object", "additionalProperties": {"type": "string"}, "description": "`[report."
                          "missing_names]`: output slug -> its list's key in the `missing` block (not `jobs`, no two "
                          "outputs alike); default: the slug."},
    }  # fmt: skip


@dataclass(frozen=True)
class Provenance:
    """The official implementation a declaration reproduces (``[provenance]``), where its golden numbers come
    from: shown on the declaration's page of the documentation; every packaged declaration has one."""

    repository: str
    commit: str
    path: str
    deviations: str
    reproduces: str = ""
    tests: tuple[str, ...] = ()
    keys: ClassVar[dict[str, Any]] = {
        "repository": {"type": "string", "minLength": 1, "description": "The official implementation's repository "
                       "(`owner/name` on GitHub); `none` when no official code is public (`deviations` then names "
                       "the contract)."},
        "commit": {"type": "string", "description": "The commit (or released package version) read and run for the "
                   "golden numbers; `''` with `repository = 'none'`."},
        "path": {"type": "string", "description": "The file (and function) there that computes the numbers; `''` "
                 "with `repository = 'none'`."},
        "deviations": {"type": "string", "description": "What the declaration does otherwise than that code (\"\": "
                       "nothing; slugs and file layout aside)."},
        "reproduces": {"type": "string", "description": "What the official numbers are: what that code computes "
                       "and the declaration writes, with its edge values (Markdown; not set: the title)."},
        "tests": {"type": "array", "items": {"type": "string", "minLength": 1}, "description": "The repository's "
                  "files that make the golden and demo data and compare the declaration with the official numbers "
                  "(paths from the repository's root; each file's docstring says what it covers)."},
    }  # fmt: skip


PROVENANCE_REQUIRED = ("repository", "commit", "path", "deviations")


def _provenance(table: Table) -> Provenance | None:
    """``[provenance]``: its four required keys (``reproduces`` and ``tests`` optional), or no table."""
    if not table.data:
        return None
    required = (table.get(key, str) for key in PROVENANCE_REQUIRED)
    found = Provenance(*required, reproduces=table.get("reproduces", str, ""), tests=table.strings("tests", ()))
    if (found.repository == "none") != (found.commit == found.path == ""):
        table.fail("repository", "names the official code with its commit and path, or is 'none' without them")
    table.done()
    return found


# the top-level keys that are no table of their own, and ``[bootstrap]``, as JSON Schema
TOP_KEYS: dict[str, Any] = {
    "name": {
        "type": "string",
        "pattern": f"^{NAME.pattern}$",
        "description": "The challenge's name (`--challenge`); a packaged declaration's is its file stem.",
    },
    "title": {"type": "string", "description": "The challenge's title."},
    "extends": {
        "type": "string",
        "pattern": r"^[^/\\]+\.toml$",
        "description": "A declaration of the same "
        "folder this one builds on (docs/declare/reference.md): its tables merged key by key; its "
        "`inputs`, `outputs`, `metrics`, `options` and `leaderboard.columns` entry by entry (by slug, "
        "name, metric name, option name, column title: an entry with `remove = true` drops the "
        "base's, another's keys replace the base entry's, a new one is appended); never its `name`, "
        "`title` or `[provenance]`. Its entries state only what changes (their required keys may be the "
        "base's). The provenance record hashes it.",
    },
}
BOOTSTRAP_KEYS: dict[str, Any] = {
    "resamples": {"type": "integer", "minimum": 1, "default": 1000, "description": "The bootstrap's "
                  "resamples (`--set bootstrap_resamples=`)."},
    "seed": {"type": "integer", "default": 0, "description": "Each bootstrapped "
             "metric draws `numpy.random.default_rng(seed).integers(0, n, (resamples, n))` over the n cases it scores "
             "in sorted case order, so metrics over the same cases see the same draws (`--set seed=`)."},
    "level": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1, "default": 0.95, "description": "The "
              "CI: `numpy.percentile(values, [50 (1 - level), 50 (1 + level)])` over the resamples where the metric "
              "is defined."},
}  # fmt: skip


@dataclass(frozen=True)
class Declaration:
    source: str
    name: str
    title: str
    cases: Cases
    inputs: tuple[InputSpec, ...]
    outputs: tuple[OutputSpec, ...]
    metrics: tuple[MetricSpec, ...]
    leaderboard: Leaderboard
    resamples: int
    seed: int
    level: float
    options: tuple[OptionSpec, ...] = ()
    report: Report = Report()
    submission: Submission = Submission()
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)
    folder: str = field(default="", compare=False)  # the declaration's folder (python metrics' files are there)
    in_force: tuple[tuple[str, Any], ...] = field(default=(), compare=False)  # options set otherwise than default
    provenance: Provenance | None = field(default=None, compare=False)  # the official implementation reproduced
    bases: tuple[str, ...] = field(default=(), compare=False)  # the files it extends (``extends``), nearest first

    def option_values(self) -> dict[str, Any]:
        """The declared options' values in force, by name (a python metric's ``context.options``)."""
        return {option.name: option.default for option in self.options} | dict(self.in_force)

    def output(self, slug: str) -> OutputSpec:
        return next(o for o in self.outputs if o.slug == slug)

    @property
    def reads_images(self) -> bool:
        """Whether its evaluation reads images (an image output: label images, heat maps), so its container needs
        the medical-image packages of requirements-images.txt (``python -m evaluation.image_packages``)."""
        return any(output.type.image for output in self.outputs)

    def aggregate_keys(self) -> list[str]:
        """Every path this declaration writes under ``aggregates`` (``group.key`` or ``key``, with CI
        siblings where declared)."""
        keys = []
        for metric in self.metrics:
            for _, form, key in metric_keys(metric):
                path = metric.path(key)
                keys.append(path)
                if metric.bootstrap and form not in COUNT_FORMS:
                    keys += [f"{path}_ci_low", f"{path}_ci_high"]
        return keys


def metric_keys(metric: MetricSpec) -> list[tuple[str, str, str]]:
    """(label, form, key) of every aggregate of one metric: per label and form for a segmentation
    metric (default key ``<name>_<label>_<form>``); per class (``<name>_<class>``) then the macro
    mean (``<name>_macro``) for a per-class metric of a probabilities output; one ``<name>`` for any
    other case-level output metric; a python metric's per returned name (label) and form ("value": over
    the set)."""
    if metric.metric == PYTHON:
        if metric.param("over") == "case" and not metric.aggregates:
            return []  # its values per case only
        forms = metric.aggregates or ("value",)
        return [(label, form, metric.key(label, form)) for label in metric.labels or ("",) for form in forms]
    if metric.metric in SEGMENTATION_METRICS:
        return [(label, form, metric.key(label, form)) for label in metric.labels for form in metric.aggregates]
    if metric.metric in HIT_RADIUS_METRICS:  # the CPM, then the sensitivity at each rate (<name>_at_0_125, ...)
        value = metric.key("", "value")
        return [("", "value", value), *((label, "rate", f"{value}_at_{label}") for label in rate_labels(metric))]
    if metric.aggregates:  # per class and macro (labels: the classes)
        return [(label, form, metric.key(label, form)) for form in metric.aggregates
                for label in (metric.labels if form == "per_class" else ("",))]  # fmt: skip
    return [("", "value", metric.key("", "value"))]


HIT_RADIUS_METRICS = tuple(r.name for r in HIT_RADIUS)


def rate_labels(metric: MetricSpec) -> tuple[str, ...]:
    """A hit radius metric's false-positive rates as key labels: 0.125 -> "0_125", 1.0 -> "1"."""
    return tuple(f"{rate:g}".replace(".", "_").replace("-", "_") for rate in metric.param("fp_rates"))


# ------------------------------------------------------------------------------------- validation


def _prediction_case_column(submission: Submission) -> tuple[str, str] | None:
    """A prediction-file phase's case column, and how messages name it (None: algorithm jobs)."""
    return (submission.id_column, "the case column of the prediction CSV ([submission] id_column)") \
        if submission.csv else None  # fmt: skip


def _metric(
    table: Table, outputs: dict[str, OutputSpec], earlier: Mapping[str, MetricSpec], folder: str = ""
) -> MetricSpec:
    """One ``[[metrics]]`` entry; ``earlier`` maps the aggregate paths of the metrics before it to them.
    Its parameters are its record's (``metric_records``), read in a loop; the rest are cross-field checks."""
    metric = table.get("metric", str)
    known = (*SEGMENTATION_METRICS, *VALUE_METRICS, *DETECTION_METRICS, *DECISION_METRICS, *HEAT_MAP_METRICS, COMBINED,
             PYTHON)  # fmt: skip
    if metric not in known:
        table.fail("metric", f"{metric!r} is not one of {', '.join(known)}")
    name = table.get("name", str, metric)
    if not KEY.fullmatch(name):
        table.fail("name", f"{name!r} may hold letters, digits, '_' and '-' only (it becomes a metrics.json key)")
    bootstrap = table.get("bootstrap", bool, False)
    if metric == COMBINED:
        params: dict[str, Any] = {"of": _combined(table, earlier, bootstrap)}
        slug, labels, aggregates = "", (), ()
    elif metric == PYTHON:  # the organizer's function (python_metric)
        output, labels, aggregates, params = python_metric.parse(table, outputs, folder)
        slug = output.slug
    else:
        record = RECORD[metric]
        output = _scored_output(table, record, outputs)
        slug, per_class = output.slug, record.per_class and output.type.per_class
        labels, aggregates = _classes_and_forms(table, output) if per_class else ((), ())
        if record.segmentation:
            labels, aggregates = _labels_and_forms(table, record, output)
        params = _parameters(table, record, output, per_class)
        _checked_parameters(table, record, output, params)
        if params.get("bootstrap_draws") == "legacy" and not bootstrap:
            table.fail("bootstrap_draws", "'legacy' draws the LUNA16 script's bootstrap: declare bootstrap = true")
        if metric in HIT_RADIUS_METRICS and len(set(params["fp_rates"])) != len(params["fp_rates"]):
            table.fail("fp_rates", "must be distinct rates (each gives a key)")
    group = table.get("group", str, None)
    if group is not None and not KEY.fullmatch(group):
        table.fail("group", f"{group!r} may hold letters, digits, '_' and '-' only (it becomes a metrics.json key)")
    segmentation = metric in SEGMENTATION_METRICS
    python = metric == PYTHON
    per_case = segmentation or (python and params["over"] == "case")
    default_key = python_metric.default_keys(params["over"], labels) if python else None
    keys = _key_templates(table, name, labels, aggregates, segmentation, default_key)
    default_case_key = python_metric.default_case_key(labels) if python else "{name}_{label}"
    case_key = table.get("case_key", str, default_case_key) if per_case else default_case_key
    count_key = _case_keys(table, metric, name, labels or (("",) if python else ()), case_key)
    python_of_one_value = python and params["over"] == "set" and not labels  # a python metric by group
    grouping = _grouping(table, metric, labels, aggregates, bootstrap, python_of_one_value)
    sample_weights = _sample_weights(table, metric, bootstrap, bool(grouping), params.get("over", ""))
    zero_weight = tuple(table.strings("zero_weight", []))
    absent_weight = table.get("absent_weight", float, None)
    sorted_weights = table.get("sorted_weights", bool, False)
    for key in ("zero_weight", "absent_weight", "sorted_weights"):
        if key in table.data and not sample_weights:
            table.fail(key, "applies to a weighted metric (sample_weights = 'file.csv:column')")
    if absent_weight is not None and not (math.isfinite(absent_weight) and absent_weight > 0):
        table.fail("absent_weight", "must be a positive number")
    table.done()
    return MetricSpec(name, metric, slug, labels, aggregates, bootstrap, tuple(params.items()), group, keys, case_key,
                      count_key, *grouping, sample_weights=sample_weights, zero_weight=zero_weight,
                      absent_weight=absent_weight, sorted_weights=sorted_weights)  # fmt: skip


def _sample_weights(table: Table, metric: str, bootstrap: bool, grouped: bool, over: str) -> tuple[str, ...]:
    """``sample_weights`` ("file.csv:column"): each case's weight, a number >= 0 in a reference column (a
    weighted leaderboard: ISIC's ``score_weight``), for a metric whose catalogue entry takes case weights
    (``measures.weighted_metrics()``), or a list of them for a python metric over the set (``SetContext.weights``);
    neither bootstrapped nor by group."""
    if "sample_weights" not in table.data:
        return ()
    python = metric == PYTHON and over == "set"
    texts = table.strings("sample_weights") if python and isinstance(table.data["sample_weights"], list) else [
        table.get("sample_weights", str)]  # fmt: skip
    for text in texts:
        csv_file, _, column = text.partition(":")
        if not csv_file.endswith(".csv") or not column:
            table.fail("sample_weights", f"{text!r} is not 'file.csv:column' (the weight of each case)")
    if len({text.partition(":")[2] for text in texts}) != len(texts):
        table.fail("sample_weights", "names a column twice")
    weighted = measures.weighted_metrics()
    if metric not in weighted and not python:
        table.fail("sample_weights", f"{metric} takes no case weights (these do: {', '.join(weighted)}; "
                   "a python metric over the set)")  # fmt: skip
    if bootstrap or grouped:
        table.fail("sample_weights", "a weighted metric is neither bootstrapped nor scored by group")
    return tuple(texts)


def _grouping(
    table: Table,
    metric: str,
    labels: tuple[str, ...],
    aggregates: tuple[str, ...],
    bootstrap: bool,
    python_of_one_value: bool = False,
) -> tuple[Any, ...]:
    """``groups`` ("file.csv:column": the metric per group of cases, a reference column such as a
    cohort), ``over_groups`` (``metrics.groups.GROUP_FORMS``), ``undefined_group`` ("error",
    "exclude" or a number) and ``incomplete_group`` (``INCOMPLETE_GROUP``); any metric of one value
    (a segmentation metric of one label and one form other than a count; not per class), not
    bootstrapped."""
    if "groups" not in table.data:
        return ()
    text = table.get("groups", str)
    csv_file, _, column = text.partition(":")
    if not csv_file.endswith(".csv") or not column:
        table.fail("groups", f"{text!r} is not 'file.csv:column' (the group of each case)")
    one_value = len(labels) == 1 and len(aggregates) == 1 and aggregates[0] not in COUNT_FORMS
    several = metric in (COMBINED, *HIT_RADIUS_METRICS)
    refused = several or (aggregates and not (metric in SEGMENTATION_METRICS and one_value))
    if refused or (metric == PYTHON and not python_of_one_value):
        table.fail("groups", f"{metric} cannot be scored by group (a metric of one value can: a segmentation "
                   "metric of one label and one form other than a count, a python metric over the set; not the "
                   "CPM's several values)")  # fmt: skip
    if bootstrap:
        table.fail("bootstrap", "a metric by group is not bootstrapped")
    over = table.get("over_groups", str, "mean", GROUP_FORMS)
    undefined = table.get("undefined_group", (float, str), "error")
    if isinstance(undefined, str) and undefined not in ("error", "exclude"):
        table.fail("undefined_group", f"must be a number or 'error' or 'exclude', not {undefined!r}")
    incomplete = table.get("incomplete_group", str, INCOMPLETE_GROUP[0], INCOMPLETE_GROUP)
    return text, over, undefined, incomplete


def _combined(table: Table, earlier: Mapping[str, MetricSpec], bootstrap: bool) -> tuple[str, ...]:
    """A ``mean``'s ``of``: two or more aggregate paths of metrics declared before it."""
    of = table.strings("of")
    for path in of:
        if path not in earlier:
            shown = ", ".join(list(earlier)[:6])
            table.fail("of", f"{path!r} is not a value of a metric declared before this one (e.g. {shown})")
        if bootstrap and not earlier[path].bootstrap:
            table.fail("bootstrap", f"a bootstrapped mean needs {path!r} bootstrapped too")
    if len(of) < 2:
        table.fail("of", "needs two or more aggregate paths")
    return of


def _scored_output(table: Table, record: MetricRecord, outputs: dict[str, OutputSpec]) -> OutputSpec:
    """The declared output a metric scores: of a kind the record scores, with the policies it can take."""
    slug, metric = table.get("output", str), record.name
    if slug not in outputs:
        table.fail("output", f"{slug!r} is not a declared output (outputs: {', '.join(outputs)})")
    output = outputs[slug]
    if output.kind not in record.kinds:
        plain = tuple(kind for kind in record.kinds if not KINDS[kind].per_class) or record.kinds
        also = f" ({metric} also scores a probabilities output)" if plain != record.kinds else ""
        table.fail("output", f"{metric} scores a {' or '.join(plain)} output; {slug!r} is a {output.kind}{also}")
    if output.missing in SURVIVAL_MISSING and metric != "c_index":
        table.fail("output", f"{slug!r} has missing = {output.missing!r} (for c_index): {metric} cannot score it")
    if metric == "c_index" and output.event is None:
        table.fail("output", f"c_index needs the event column: declare event = 'file.csv:column' on {slug!r}")
    return output


def _classes_and_forms(table: Table, output: OutputSpec) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A per-class metric of a probabilities output: its classes and forms (per_class, macro)."""
    aggregates = table.strings("aggregates", list(PER_CLASS_FORMS))
    if not aggregates or len(set(aggregates)) != len(aggregates) or not set(aggregates) <= set(PER_CLASS_FORMS):
        table.fail("aggregates", f"needs one or both of {', '.join(PER_CLASS_FORMS)}, each once")
    return output.classes, aggregates


def _labels_and_forms(
    table: Table, record: MetricRecord, output: OutputSpec
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A segmentation metric's labels (of its output) and aggregate forms (of its record)."""
    metric, label_names = record.name, [label for label, _ in output.labels]
    labels = table.strings("labels", label_names)
    for label in labels:
        if label not in label_names:
            table.fail("labels", f"{label!r} is not a label of {output.slug!r} ({', '.join(label_names)})")
    aggregates = table.strings("aggregates", list(record.forms[:1]))
    aggregates = [f for form in aggregates for f in (STATISTICS if form == EVALUTILS else (form,))]  # evalutils'
    allowed = declarable_forms(record)
    statistics = f" nor a statistic ({', '.join(allowed[len(record.forms) :])} or {EVALUTILS!r})"
    for form in aggregates:
        if form not in allowed:
            table.fail("aggregates", f"{form!r} is not one of {', '.join(record.forms)} (for {metric})"
                       + (statistics if allowed != record.forms else ""))  # fmt: skip
    if not aggregates or len(set(aggregates)) != len(aggregates):
        table.fail("aggregates", "needs one or more distinct forms")
    if record.three_d and output.dimension != 3:
        table.fail("metric", f"{metric} needs a 3D segmentation (output {output.slug!r} has dimension 2)")
    if record.label_image and output.nonzero:
        on_masks = ", ".join(r.name for r in RECORDS if r.segmentation and not r.label_image)
        table.fail("metric", f"{metric} needs a label image; output {output.slug!r} is a {NONZERO!r} mask ({on_masks})")
    return labels, aggregates


# the parameters a metric takes from its output rather than from the declaration
DERIVED = {
    "objects": lambda output: output.kind,  # points match by distance only
    "policy": lambda output: output.missing if output.missing in SURVIVAL_MISSING else "non-concordant",
}


def _parameters(table: Table, record: MetricRecord, output: OutputSpec, per_class: bool) -> dict[str, Any]:
    """The record's parameters then edge values, each checked as its ``Param`` says, defaults filled in
    (in the record's order: settings echo them so)."""
    params: dict[str, Any] = {}
    for param in (*record.params, *(edge.param(per_class) for edge in record.edges)):
        if param.when is not None and {**params, "per_class": per_class}.get(param.when[0]) != param.when[1]:
            continue
        if param.derived:
            params[param.key] = DERIVED[param.key](output)
        elif param.default != OMITTED or param.key in table.data:
            params[param.key] = _parameter(table, param, output.kind)
    return params


def _parameter(table: Table, param: Param, kind: str) -> Any:
    """One declared parameter: its type and choices, then its words or interval."""
    default = param.default_for(kind)
    value = table.get(param.key, param.kind, REQUIRED if default == OMITTED else default, param.choices_for(kind))
    if isinstance(value, str) and param.words and value not in param.words:
        table.fail(param.key, f"must be a number or {' or '.join(map(repr, param.words))}, not {value!r}")
    if param.kind is list and param.items is str:
        if not value or not all(isinstance(item, str) and item for item in value):
            table.fail(param.key, "must be a non-empty list of names")
        return list(value)
    if isinstance(value, float) and not math.isfinite(value):
        null = ' (write "null" for no value)' if NULL in param.words else ""
        table.fail(param.key, f"must be a finite number, not {value}{null}")
    if param.kind is list:
        numbers = all(isinstance(item, (int, float)) and not isinstance(item, bool) for item in value)
        if not value or not numbers or not all(param.interval is None or param.interval.holds(x) for x in value):
            table.fail(param.key, param.interval.problem if param.interval else "must be a list of numbers")
        return [float(item) for item in value]
    if param.interval is not None and not isinstance(value, str) and not param.interval.holds(value):
        table.fail(param.key, param.interval.problem)
    return value


def _checked_parameters(table: Table, record: MetricRecord, output: OutputSpec, params: Mapping[str, Any]) -> None:
    """The checks that join a metric's parameters to its output."""
    if record.decision and params["matching"] == "reference" and params["match"] != "distance":
        table.fail("matching", "'reference' (each reference object takes its nearest prediction) needs match = "
                   "'distance'")  # fmt: skip
    if record.decision and "classes" in params and output.kind != "points":
        table.fail("classes", f"only points have a name ({output.slug!r} is a {output.kind} output)")
    if record.name == "cohen_kappa" and params["weights"] != "none" and output.missing == "misclassification":
        table.fail("weights", f"weighted kappa orders the classes: a missing answer ({output.slug!r} has missing = "
                   "'misclassification') has no place there; use missing = 'error' or 'exclude'")  # fmt: skip
    if "ties" in params and output.kind != "probabilities":
        table.fail("ties", f"applies to the argmax of a probabilities output ({output.slug!r} is a {output.kind})")
    if record.probability and output.type.numeric and output.range != (0.0, 1.0):
        table.fail("output", f"{record.name} needs a probability: declare range = [0, 1] on output {output.slug!r}")


def _key_templates(
    table: Table,
    name: str,
    labels: tuple[str, ...],
    aggregates: tuple[str, ...],
    segmentation: bool,
    default_key: str | None = None,
) -> tuple[tuple[str, str], ...]:
    """``key``: one template for every form, or a table form -> template; each must give valid keys."""
    forms = aggregates or ("value",)
    default: str | dict[str, str] = "{name}_{label}_{form}" if segmentation else "{name}"
    default = default_key or default
    if aggregates and not segmentation and not default_key:  # per class and macro
        default = {form: {"per_class": "{name}_{label}", "macro": "{name}_macro"}[form] for form in forms}
    raw_keys = table.get("key", (str, dict), default)
    templates = {form: raw_keys for form in forms} if isinstance(raw_keys, str) else raw_keys
    if set(templates) != set(forms):
        table.fail("key", f"a table of key templates needs exactly the forms {', '.join(forms)}")
    for form, template in templates.items():
        named = labels if form != "macro" else ("",)
        try:
            rendered = [str(template).format(name=name, label=label, form=form) for label in named or ("",)]
        except (KeyError, IndexError, ValueError):
            table.fail("key", f"{template!r} may use only {{name}}, {{label}} and {{form}}")
        if not all(KEY.fullmatch(key) for key in rendered):
            table.fail("key", f"{template!r} gives a key with characters other than letters, digits, '_', '-'")
    return tuple((form, str(templates[form])) for form in forms)


def _case_keys(table: Table, metric: str, name: str, labels: tuple[str, ...], case_key: str) -> str:
    """Checks the per-case key template; returns lesion_f1's per-case count key template ("" otherwise)."""
    try:
        case_keys = {case_key.format(name=name, label=label) for label in labels}
    except (KeyError, IndexError, ValueError):
        table.fail("case_key", f"{case_key!r} may use only {{name}} and {{label}}")
    if case_key and (not all(KEY.fullmatch(key) for key in case_keys) or len(case_keys) != len(labels)):
        table.fail("case_key", f"{case_key!r} must give one key per label of letters, digits, '_', '-' (or '': none)")
    if metric not in COUNTED:
        return ""
    count_key = table.get("case_count_key", str, f"{case_key}_{{count}}" if case_key else "")
    try:
        count_keys = {count_key.format(name=name, label=label, count=c) for label in labels for c in COUNT_FORMS}
    except (KeyError, IndexError, ValueError):
        table.fail("case_count_key", f"{count_key!r} may use only {{name}}, {{label}} and {{count}}")
    if count_key and (not all(KEY.fullmatch(key) for key in count_keys) or len(count_keys) != 3 * len(labels)):
        table.fail("case_count_key", f"{count_key!r} must give one key per label and count (tp, fp, fn) of "
                   "letters, digits, '_', '-' (or '': none)")  # fmt: skip
    return count_key


def _leaderboard(table: Table, produced: list[str], prefix: str = "aggregates.") -> Leaderboard:
    def path(sub: Table, key: str) -> str:
        value = sub.get(key, str)
        if not value.startswith(prefix) or value.removeprefix(prefix) not in produced:
            examples = ", ".join(f"{prefix}{k}" for k in produced[:6])
            sub.fail(key, f"{value!r} is not a value this declaration writes (for example {examples})")
        return value

    score = path(table, "score")
    columns = []
    for column in table.items("columns") if "columns" in table.data else []:
        columns.append(
            Column(
                title=column.get("title", str),
                path=path(column, "path"),
                order=column.get("order", str, Column.order, SORTS),
                exclude_from_ranking=column.get("exclude_from_ranking", bool, Column.exclude_from_ranking),
                error=path(column, "error") if "error" in column.data else "",
            )
        )
        if columns[-1].title in (
            earlier.title for earlier in columns[:-1]
        ):  # the leaderboard's header tells them apart
            column.fail("title", f"{columns[-1].title!r} is another column's title too")
        column.done()
    table.read.add("columns")
    board = Leaderboard(
        score=score,
        title=table.get("title", str, score),
        sort=table.get("sort", str, Leaderboard.sort, SORTS),
        decimal_places=table.get("decimal_places", int, Leaderboard.decimal_places),
        scoring_method=table.get("scoring_method", str, Leaderboard.scoring_method, SCORING_METHODS),
        columns=tuple(columns),
        error=path(table, "error") if "error" in table.data else "",
    )
    table.done()
    return board


RESERVED_OPTIONS = ("seed", "bootstrap_resamples")


def _text(value: Any) -> str:
    """An option value as a key of its ``values`` table (TOML spells booleans true / false)."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def _constant(value: Any) -> bool:
    """A settings constant's scalar: a number, a boolean or a text (ISIC's reference version)."""
    return isinstance(value, (int, float, bool, str))


def _report(
    table: Table, outputs: Mapping[str, OutputSpec], metrics: list[MetricSpec], submission: Submission
) -> Report:
    """The ``[report]`` table: what metrics.json holds beside the declared metrics."""
    missing = table.get("missing", bool, True)
    if not missing:
        loose = next((o for o in outputs.values() if o.missing != "error"), None)
        if loose is not None:
            table.fail(
                "missing", f"false needs missing = 'error' on every output ({loose.slug!r} has {loose.missing!r})"
            )
    means = {
        m.path(key): (m, label)
        for m in metrics
        for label, form, key in metric_keys(m)
        if form == "mean" and m.metric in SEGMENTATION_METRICS
    }
    written = [m.path(key) for m in metrics for _, _, key in metric_keys(m)]
    counts = table.get("counts", dict, {})
    for key, counted in counts.items():
        if not KEY.fullmatch(key) or key in written:
            table.fail(f"counts.{key}", "must be a new aggregate key of letters, digits, '_' and '-'")
        if not isinstance(counted, str):
            table.fail(f"counts.{key}", f"must be a string, not {type_of(counted)}")
        if counted != "cases" and counted not in means:
            shown = ", ".join(["cases", *means][:6])
            table.fail(f"counts.{key}", f"{counted!r} is not 'cases' or the path of a mean aggregate ({shown})")
    notes = table.get("notes", dict, {})
    for key, text in notes.items():
        if not isinstance(text, str):
            table.fail(f"notes.{key}", f"must be a string, not {type_of(text)}")
    constants = table.get("constants", dict, {})
    for key, value in constants.items():
        if not (_constant(value) or (isinstance(value, list) and all(_constant(item) for item in value))):
            table.fail(f"constants.{key}", f"must be a number, a boolean, a text or a list of those, not "
                       f"{type_of(value)}")  # fmt: skip
        if key in notes:
            table.fail(f"constants.{key}", "is a note's key too")
    names = table.get("missing_names", dict, {})
    for slug, key in names.items():
        if slug not in outputs:
            table.fail(f"missing_names.{slug}", f"is not an output (one of {', '.join(outputs)})")
        if not isinstance(key, str) or not KEY.fullmatch(key) or key == submission.missing_key:
            table.fail(
                f"missing_names.{slug}", f"must be a key of letters, digits, '_' and '-' other than "
                f"'{submission.missing_key}'"
            )  # fmt: skip
    listed = [names.get(slug, slug) for slug in outputs]
    if len(set(listed)) != len(listed):
        table.fail("missing_names", "gives two outputs the same key in the missing block")
    absent = None
    if "absent_labels" in table.data:
        sub = table.sub("absent_labels")
        path, slug = sub.get("path", str), sub.get("output", str)
        if outputs.get(slug) is None or not outputs[slug].type.image:
            sub.fail("output", f"{slug!r} is not a segmentation output")
        parts = path.split(".")
        if len(parts) > 2 or not all(KEY.fullmatch(part) for part in parts) or path in written:
            sub.fail("path", f"{path!r} must be a new aggregate key, or group.key (letters, digits, '_', '-')")
        if len(parts) == 2 and any(w.startswith(f"{path}.") or w == parts[0] for w in written):
            sub.fail("path", f"{path!r} clashes with a value this declaration writes")
        sub.done()
        absent = (path, slug)
    report = Report(
        missing=missing,
        settings=table.get("settings", str, "full", SETTINGS_LAYOUTS),
        case_values=table.get("case_values", bool, True),
        label_presence=table.get("label_presence", bool, False),
        counts=tuple(counts.items()),
        notes=tuple(constants.items()) + tuple(notes.items()),
        notes_first=table.get("notes_first", bool, False),
        per_case=table.get("per_case", bool, True),
        missing_names=tuple(names.items()),
        order=table.get("order", str, "metric", ORDERS),
        absent_labels=absent,
    )
    table.read.update(("flat", "names", "dataset", "layout"))  # (read by _flat)
    table.done()
    return report


DATASET_COUNTS = ("stacks", "cases", "positive:<output>", "distinct:<field>")  # [report.dataset]'s counts


def _flat(table: Table, report: Report, declaration: Declaration, cases: Cases) -> Report:
    """``[report] flat``, ``names`` and ``dataset``: metrics.json as a challenge's own flat file (RARE25's
    ``{"Score": ..., "PPV@90RECALL 95% CI Lower Bound": ..., "settings": ..., "dataset": {...}}``)."""
    flat = table.get("flat", bool, False)
    names = table.get("names", dict, {})
    dataset = table.get("dataset", dict, {})
    if not flat:
        for key in ("names", "dataset", "layout"):
            if key in table.data:
                table.fail(key, "applies to a flat metrics.json (flat = true)")
        return report
    if report.per_case or report.missing:
        table.fail("flat", "needs per_case = false and missing = false (the aggregates alone at the top level)")
    keys = declaration.aggregate_keys()
    if any("." in key for key in keys):
        table.fail("flat", "needs aggregates without a group (their keys at the top level)")
    for key, written in names.items():
        if key not in keys:
            table.fail(f"names.{key}", f"is not an aggregate key ({', '.join(keys[:6])})")
        if not isinstance(written, str) or not written.strip() or "." in written:
            table.fail(f"names.{key}", "must be a key without '.' (the platform splits paths on dots)")
    spelled = [names.get(key, key) for key in keys]
    counts = Counter(spelled)
    clash = next((key for key in spelled if counts[key] > 1 or key in ("settings", "dataset")), None)
    if clash is not None:
        table.fail("names", f"{clash!r} would be written twice (or over settings or dataset)")
    outputs = [o.slug for o in declaration.outputs]
    for key, what in dataset.items():
        kind, _, which = str(what).partition(":")
        valid = (kind in ("stacks", "cases") and not which) or (kind == "positive" and which in outputs) or (
            kind == "distinct" and which in cases.fields)  # fmt: skip
        if not KEY.fullmatch(key) or not valid or (kind == "stacks" and not cases.stacks):
            table.fail(f"dataset.{key}", f"{what!r} is not one of {', '.join(DATASET_COUNTS)} (stacks: listed stacks; "
                       "a distinct field: one of [cases] fields)")  # fmt: skip
    layout = _layout(table, keys, declaration, "dataset" not in table.data) if "layout" in table.data else ()
    if layout and names:
        table.fail("names", "is given by the layout's paths (declare one of names and layout)")
    return dataclasses.replace(report, flat=True, names=tuple(names.items()), dataset=tuple(dataset.items()),
                               layout=layout)  # fmt: skip


def _objects(paths: list[str]) -> set[str]:
    """The objects that dotted ``paths`` nest in: each one's parts before a dot ("a.b.c": "a", "a.b")."""
    found = set()
    for path in paths:
        parts = path.split(".")
        found.update(".".join(parts[:k]) for k in range(1, len(parts)))
    return found


CLASS = "{class}"  # a layout path and key written once per class of the declaration's output with classes


def _layout(table: Table, keys: list[str], declaration: Declaration, dataset_free: bool) -> tuple[tuple[str, str], ...]:
    """``[report.layout]``: metrics.json in this order, path (dots nest objects: "per_category.MEL.auc") -> the
    aggregate key written there; ``{class}`` in both writes one entry per class of the output with classes. Every
    aggregate is written at least once; no path is another's object; "settings" (and "dataset" beside a
    ``[report.dataset]``) are the engine's."""
    found: list[tuple[str, str]] = []
    classes = [o.classes for o in declaration.outputs if o.classes]
    for path, key in table.get("layout", dict).items():
        where = f"layout.{path}"
        if not isinstance(key, str):
            table.fail(where, f"must be an aggregate key, not {type_of(key)}")
        if (CLASS in path) != (CLASS in key) or (CLASS in path and len(classes) != 1):
            table.fail(where, f"{CLASS} goes in both the path and the key, with one output of classes")
        for label in classes[0] if CLASS in path else ("",):
            written, value = path.replace(CLASS, label), key.replace(CLASS, label)
            if value not in keys:
                table.fail(where, f"{value!r} is not an aggregate key ({', '.join(keys[:6])})")
            parts = written.split(".")
            if not all(part.strip() for part in parts) or parts[0] == "settings" or (
                    parts[0] == "dataset" and not dataset_free):  # fmt: skip
                table.fail(where, f"{written!r} is not a path of non-empty keys outside settings (and dataset)")
            found.append((written, value))
    paths = [path for path, _ in found]
    counts, objects = Counter(paths), _objects(paths)
    clash = next((p for p in paths if counts[p] > 1 or p in objects), None)
    if clash is not None:
        table.fail("layout", f"{clash!r} is written twice, or both a value and an object")
    placed = {value for _, value in found}
    unplaced = next((key for key in keys if key not in placed), None)
    if unplaced is not None:
        table.fail("layout", f"places no path for the aggregate {unplaced!r} (every value is written)")
    return tuple(found)


def _submission(table: Table, cases: Table, folder: str = "") -> Submission:
    """The ``[submission]`` table; a CSV's ``id_column`` defaults to the references' (``[cases]``)."""
    kind = table.get("kind", str, "jobs", SUBMISSION_KINDS)
    if kind == "jobs":
        table.done()  # the other keys describe a CSV
        return Submission()
    file = table.get("file", str, Submission.file)
    if Path(file).name != file or not file.lower().endswith(".csv"):
        table.fail("file", f"{file!r} must be a file name ending in .csv (the file in the input folder)")
    default = cases.data.get("id_column")
    id_column = table.get("id_column", str, default if isinstance(default, str) else "case")
    if not id_column or id_column != id_column.strip():
        table.fail("id_column", f"{id_column!r} is not a column name (none, or with surrounding spaces)")
    max_mb = table.get("max_mb", float, Submission.max_mb)
    if not max_mb > 0:
        table.fail("max_mb", "must be positive")
    strip = table.strings("strip_suffixes", [])
    if not all(strip):
        table.fail("strip_suffixes", "must be suffixes of one character or more")
    reader = table.get("reader", str, "")
    if reader:
        python_metric.function(table, reader, folder, "reader", "reader")
        if strip:
            table.fail("strip_suffixes", "is the reader's to apply (reader = ...)")
    table.done()
    return Submission(kind, file, id_column, max_mb, tuple(strip), reader)


def _overridden(data: Mapping[str, Any], targets: tuple[tuple[str, int, str], ...], value: Any) -> dict[str, Any]:
    changed = copy.deepcopy(dict(data))
    for section, index, key in targets:
        if not key:  # a whole table
            changed[section] = copy.deepcopy(value)
            continue
        *tables, last = key.split(".")  # "params.<name>": a python metric's parameter
        entry = changed[section] if index < 0 else changed[section][index]
        for name in tables:
            entry = entry[name]
        entry[last] = value
    return changed


def _unchanged(data: Mapping[str, Any], targets: tuple[tuple[str, int, str], ...], value: Any) -> bool:
    """Whether ``_overridden(data, targets, value)`` is ``data`` itself: every target already holds ``value``
    (of the same types throughout: ``1`` is not ``1.0`` nor ``true``)."""
    for section, index, key in targets:
        entry: Any = data.get(section) if index < 0 else data[section][index]
        for name in key.split(".") if key else ():
            if not isinstance(entry, dict) or name not in entry:
                return False
            entry = entry[name]
        if not _same(entry, value):
            return False
    return True


def _same(one: Any, other: Any) -> bool:
    """Equal values of equal types, tables and arrays item by item (a NaN is never the same)."""
    if type(one) is not type(other):
        return False
    if isinstance(one, dict):
        return one.keys() == other.keys() and all(_same(one[key], other[key]) for key in one)
    if isinstance(one, list):
        return len(one) == len(other) and all(_same(a, b) for a, b in zip(one, other, strict=True))
    return bool(one == other)


SUBMISSION_TARGETS = ("max_mb",)  # [submission] keys an option may set (ISIC's max_file_mb)


def _target(table: Table, data: Mapping[str, Any], text: str) -> tuple[str, int, str]:
    section, _, rest = text.partition(".")
    if section == "submission" and rest in SUBMISSION_TARGETS and isinstance(data.get("submission"), dict):
        return section, -1, rest  # (a table, not a list of entries)
    if text == "leaderboard":  # the whole table, a choice's own (values): ISIC's target metric moves its columns
        return section, -1, ""
    which, _, key = rest.rpartition(".")
    if which.endswith(".params") and section == "metrics":  # metrics.<name>.params.<key>
        which, key = which.removesuffix(".params"), f"params.{key}"
        entry = next((e for e in data.get("metrics", []) if isinstance(e, dict) and e.get("name") == which), {})
        if key.removeprefix("params.") not in (entry.get("params") or {}):
            table.fail("sets", f"{text!r} names no declared parameter (declare it in the metric's params table)")
    entries = data.get(section) if section in ("outputs", "metrics") else None
    if isinstance(entries, list) and which and key:
        for index, entry in enumerate(entries):
            named = entry.get("slug") if section == "outputs" else entry.get("name", entry.get("metric"))
            if isinstance(entry, dict) and named == which:
                return section, index, key
    table.fail("sets", f"{text!r} names no declared value (outputs.<slug>.<key>, metrics.<name>.<key>, "
               f"submission.{'/'.join(SUBMISSION_TARGETS)} or leaderboard)")  # fmt: skip


def _python_parameters(data: Mapping[str, Any], targets: tuple[tuple[str, int, str], ...], value: Any) -> bool:
    """Whether ``targets`` are all python metrics' own parameters (``params.<key>``, declared: ``_target``) and
    ``value`` a string, number or boolean, which is all ``python_metric.parse`` asks of one: the declaration with
    it is then valid when the declared one is (no parse of its own)."""
    return isinstance(value, (str, int, float, bool)) and all(
        section == "metrics" and key.startswith("params.") and data[section][index].get("metric") == PYTHON
        for section, index, key in targets
    )


def _options(top: Table, data: Mapping[str, Any], folder: str = "") -> tuple[OptionSpec, ...]:
    """The ``[[options]]``: each default and choice must give a valid declaration where it applies."""
    options: list[OptionSpec] = []
    metrics = [m for m in data.get("metrics", []) if isinstance(m, dict)]
    reserved = RESERVED_OPTIONS if any(m.get("bootstrap") for m in metrics) else ()  # the bootstrap's own options
    for table in top.items("options"):
        name = table.get("name", str)
        if not KEY.fullmatch(name) or name in reserved or name in [o.name for o in options]:
            table.fail("name", f"{name!r} must be a new option name (letters, digits, '_', '-'; not seed, "
                       "bootstrap_resamples)")  # fmt: skip
        table.read.add("default")
        default = table.data.get("default")
        if not isinstance(default, (str, int, float, bool)):
            table.fail("default", "is required: a string, number or boolean")
        choices = table.get("choices", list, None)
        sets = table.strings("sets", [])
        read_by_python = any(isinstance(m, dict) and m.get("metric") == PYTHON for m in data.get("metrics", []))
        if not sets and not read_by_python:  # (a python metric reads every option: context.options)
            table.fail("sets", "needs at least one declared value to override")
        targets = tuple(_target(table, data, text) for text in sets)
        values = table.get("values", dict, {})
        offered = [default, *(choices or [])]
        if values and (choices is None or set(values) != {_text(v) for v in offered}):
            table.fail("values", "needs choices, and one entry per choice (the declared value each one sets)")
        if "leaderboard" in sets and not values:
            table.fail("values", "needs a whole [leaderboard] per choice (the default's: the declared one)")
        for key, value in [("default", default)] + [("choices", choice) for choice in choices or []]:
            if type(value) is not type(default):
                table.fail(key, f"{value!r} is not of the default's type ({type(default).__name__})")
            declared = values.get(_text(value), value)
            if _unchanged(data, targets, declared):  # the declaration itself, which this parse checks
                continue
            if _python_parameters(data, targets, declared):  # valid as the declaration this parse checks
                continue
            try:
                parse_data(_overridden(data, targets, declared), top.file, check_options=False, folder=folder)
            except ConfigurationError as error:
                table.fail(key, f"{value!r} does not give a valid declaration ({error})")
        help_text = table.get("help", str, f"sets {', '.join(sets)}")
        table.done()
        options.append(
            OptionSpec(
                name, default, help_text, tuple(choices) if choices else None, targets, tuple(sets),
                tuple(values.items()),
            )
        )  # fmt: skip
    return tuple(options)


def with_options(declaration: Declaration, values: Mapping[str, Any]) -> Declaration:
    """The declaration with the option ``values`` in force (itself when all are the defaults): the changed
    declaration validated whole; its options are the declared ones (checked when it loaded)."""
    changed = [o for o in declaration.options if values.get(o.name, o.default) != o.default]
    if not changed:
        return declaration
    data: Mapping[str, Any] = declaration.raw
    for option in changed:
        data = _overridden(data, option.targets, option.declared(values[option.name]))
    in_force = tuple((option.name, values[option.name]) for option in changed)
    changed_declaration = parse_data(data, declaration.source, check_options=False, folder=declaration.folder)
    return dataclasses.replace(changed_declaration, options=declaration.options, in_force=in_force,
                               bases=declaration.bases)  # fmt: skip


def parse(text: str, file: str, folder: str = "", chain: tuple[str, ...] = ()) -> Declaration:
    """A validated declaration from TOML ``text``; ``file`` names it in error messages, ``folder`` holds
    the Python files its python metrics name and the declaration it ``extends`` (``chain``: the files
    that extend this one, nearest last)."""
    try:
        data = bounds.loads(text, file)  # size, nesting, lengths, integers, key bounds
    except tomllib.TOMLDecodeError as error:
        raise ConfigurationError(f"{file}: not valid TOML ({error}).") from None
    if "extends" not in data:
        return parse_data(data, file, folder=folder)
    base = _base(Table(file, "", data), folder, (*chain, file))
    merged = _merged(file, "", {k: v for k, v in base.raw.items() if k not in NOT_INHERITED}, data)
    del merged["extends"]
    bounds.check_data(merged, file)  # two arrays merged may pass the bounds each kept
    return dataclasses.replace(parse_data(merged, file, folder=folder), bases=(base.source, *base.bases))


# ``extends``: the keys a declaration never inherits (it states its own), and each array of tables
# merged entry by entry: its path -> the key naming an entry (a metric without ``name`` is its ``metric``)
NOT_INHERITED = ("name", "title", "provenance")
IDENTITIES = {"inputs": "slug", "outputs": "slug", "metrics": "name", "options": "name",
              "leaderboard.columns": "title"}  # fmt: skip
REMOVE = "remove"  # ``remove = true`` in an entry of one of those arrays drops the base's entry


def _base(top: Table, folder: str, chain: tuple[str, ...]) -> Declaration:
    """The declaration ``extends`` names: a .toml file of ``folder``, at most ``bounds.MAX_EXTENDS``
    deep, in no cycle; itself parsed as a declaration (a base that is none is refused there)."""
    name = top.data["extends"]
    if not isinstance(name, str) or not name.endswith(".toml") or Path(name).name != name:
        top.fail("extends", f"{name!r} is not the file name of a .toml declaration in the same folder")
    if not folder:
        top.fail("extends", "needs the declaration's folder (load the declaration from its file)")
    here = Path(folder).resolve()
    path = (here / name).resolve()
    if not path.is_relative_to(here):
        top.fail("extends", f"{name!r} leaves the declaration's folder")
    if name in chain:
        top.fail("extends", f"{' -> '.join((*chain[chain.index(name) :], name))} is a cycle")
    if len(chain) > bounds.MAX_EXTENDS:
        top.fail("extends", f"a chain of more than {bounds.MAX_EXTENDS} declarations extending each other")
    if not path.is_file():
        top.fail("extends", f"{name} is not a file beside the declaration")
    bounds.check_size(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        top.fail("extends", f"{name} cannot be read ({error.__class__.__name__})")
    return parse(text, name, folder, chain)


def _merged(file: str, where: str, base: Mapping[str, Any], own: Mapping[str, Any]) -> dict[str, Any]:
    """``own`` over ``base``: tables merged key by key, the arrays of ``IDENTITIES`` entry by entry (an
    entry's keys replace the base entry's of the same identity, a new entry is appended, ``remove = true``
    drops the base's), any other value replaced."""
    merged = copy.deepcopy(dict(base))
    for key, value in own.items():
        path = f"{where}.{key}" if where else key
        if path in IDENTITIES and isinstance(value, list) and isinstance(merged.get(key), list):
            merged[key] = _merged_entries(file, path, merged[key], value)
        elif isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merged(file, path, merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def _merged_entries(file: str, path: str, base: list[dict[str, Any]], own: list[Any]) -> list[dict[str, Any]]:
    """The entries of the array of tables at ``path``: ``base``'s (a parsed declaration's) with ``own``'s
    merged by identity."""
    identity = IDENTITIES[path]
    merged = {_identity(entry, path): entry for entry in base}
    if len(merged) < len(base):
        Table(file, "", {}).fail(path, f"the base declaration's {path} has two entries of one {identity}: "
                                 "they cannot be told apart")  # fmt: skip
    for index, entry in enumerate(own):
        table = Table(file, f"{path}[{index}]", entry)
        name = _identity(entry, path)
        if not isinstance(name, str):
            table.fail(identity, "names the base's entry it changes, or a new one (a string)")
        if REMOVE not in entry:
            merged[name] = {**merged.get(name, {}), **copy.deepcopy(entry)}
            continue
        if entry[REMOVE] is not True or set(entry) - {REMOVE, identity, "metric"}:
            table.fail(REMOVE, f"takes true and no other key than {identity!r}")
        if merged.pop(name, None) is None:
            table.fail(identity, f"{name!r} is no entry of the base declaration's {path} to remove")
    return list(merged.values())


def _identity(entry: Mapping[str, Any], path: str) -> Any:
    """An entry's identity: its ``IDENTITIES`` key (a metric without ``name`` is named by its ``metric``)."""
    key = IDENTITIES[path]
    return entry.get(key, entry.get("metric")) if path == "metrics" else entry.get(key)


def parse_data(data: Mapping[str, Any], file: str, check_options: bool = True, folder: str = "") -> Declaration:
    """A validated declaration from parsed TOML ``data`` (``check_options=False``: the options are
    not checked again, as when checking what an option's value gives; ``folder``: as ``parse``)."""
    top = Table(file, "", data)
    name = top.get("name", str)
    if not NAME.fullmatch(name):
        top.fail("name", f"{name!r} may hold lower-case letters, digits, '.', '_' and '-' only")
    title = top.get("title", str)
    submission = _submission(top.sub("submission"), top.sub("cases"), folder)
    inputs = []
    if submission.csv and "inputs" in data:
        top.fail("inputs", "a prediction-file phase ([submission] kind = 'csv') has no algorithm inputs")
    top.read.add("inputs")
    for table in top.items("inputs") if not submission.csv else []:
        slug = table.get("slug", str)
        if not SLUG.fullmatch(slug):
            table.fail("slug", f"{slug!r} is not a socket slug (lower-case letters, digits, '-')")
        spec = InputSpec(
            slug=slug,
            relative_path=table.get("relative_path", str, f"images/{slug}"),
            kind=table.get("kind", str, InputSpec.kind),
            name=table.get("name", str, InputSpec.name),
        )
        if spec.name.count("{case}") != 1:
            table.fail("name", f"{spec.name!r} needs exactly one {{case}}")
        table.done()
        inputs.append(spec)
    input_slugs = [spec.slug for spec in inputs]
    cases_table = top.sub("cases")
    if submission.csv:  # no job, no input name to read the case from
        job_keys = ("input", "strip_suffixes", "strip", "same_stem")
        for key in (key for key in job_keys if key in cases_table.data):
            cases_table.fail(key, "names a job's case; a prediction-file phase ([submission] kind = 'csv') has no jobs")
    cases = Cases(
        input=cases_table.get("input", str, input_slugs[0] if input_slugs else ""),
        strip_suffixes=cases_table.strings("strip_suffixes", list(Cases.strip_suffixes)),
        strip=cases_table.strings("strip", list(Cases.strip)),
        id_column=cases_table.get("id_column", str, Cases.id_column),
        word=cases_table.get("word", str, ""),
        same_stem=cases_table.get("same_stem", bool, False),
        ground_truth_name=cases_table.get("ground_truth_name", str, ""),
        stack_size=cases_table.get("stack_size", int, 0),
        stacks=cases_table.get("stacks", str, ""),
        frame_order=cases_table.get("frame_order", str, "index"),
        fields=tuple(cases_table.strings("fields", [])),
    )
    if cases.input not in input_slugs and not submission.csv:
        cases_table.fail("input", f"{cases.input!r} is not a declared input ({', '.join(input_slugs)})")
    cases_table.done()
    outputs: dict[str, OutputSpec] = {}
    for table in top.items("outputs"):
        output = parse_output(table, _prediction_case_column(submission), cases.id_column)
        if output.slug in outputs or output.slug in input_slugs:
            table.fail("slug", f"{output.slug!r} is declared twice")
        taken = {column: o.slug for o in outputs.values() for column in o.csv_columns}
        shared = next((column for column in output.csv_columns if column in taken), None)
        if shared is not None:
            key = next((f"columns.{c}" for c, column in output.columns if column == shared), "column")
            table.fail(key, f"{shared!r} is the column of another output too ({taken[shared]!r})")
        outputs[output.slug] = output
    for index, output in enumerate(outputs.values()):
        for slug in output.together_with:  # a case scored for all of them or for none (HECKTOR 2026's staging)
            other = outputs.get(slug)
            if other is None or other is output or other.reference.column is None:
                Table(file, f"outputs[{index}]", {}).fail(
                    "together_with", f"{slug!r} is not another output with a CSV column reference"
                )
    if all(output.reference.per_case for output in outputs.values()):
        top.fail("outputs", "no output's reference lists the cases: one needs a {case} pattern or a CSV column")
    if "stack_size" in cases_table.data:
        _stacked(cases_table, top, submission, tuple(outputs.values()))
    _listed_stacks(cases_table, top, cases, submission, tuple(outputs.values()))
    listed = next((o for o in outputs.values() if o.list_noun), None)
    if listed is not None and not cases.stacked:
        top.fail("outputs", f"{listed.slug!r}: list_noun names the list a job answers for a stacked input ([cases] "
                 "stack_size or stacks)")  # fmt: skip
    metrics: list[MetricSpec] = []
    earlier: dict[str, MetricSpec] = {}
    for table in top.items("metrics"):
        metrics.append(_metric(table, outputs, earlier, folder))
        for _, _, key in metric_keys(metrics[-1]):
            earlier[metrics[-1].path(key)] = metrics[-1]
    names = [m.path(key) for m in metrics for _, _, key in metric_keys(m)]
    counts = Counter(names)
    duplicate = next((key for key in names if counts[key] > 1), None)
    if duplicate:
        top.fail("metrics", f"two values go to aggregates.{duplicate}: give one a different name or key")
    objects = _objects(names)
    clash = next((key for key in names if key in objects), None)
    if clash:
        top.fail("metrics", f"aggregates.{clash} is both a value and a group")
    boot = top.sub("bootstrap")
    resamples, seed, level = (
        boot.get(key, type(spec["default"]), spec["default"]) for key, spec in BOOTSTRAP_KEYS.items()
    )
    if resamples < 1:
        boot.fail("resamples", "must be at least 1")
    if not 0 < level < 1:
        boot.fail("level", "must be between 0 and 1")
    boot.done()
    partial = Declaration(file, name, title, cases, tuple(inputs), tuple(outputs.values()), tuple(metrics),
                          Leaderboard("", "", "desc", 4, "abs", ()), resamples, seed, level)  # fmt: skip
    report = _report(top.sub("report"), outputs, metrics, submission)
    report = _flat(top.sub("report"), report, partial, cases)
    written = [path for path, _ in report.layout] or [dict(report.names).get(key, key) for key in
                                                      partial.aggregate_keys()]  # fmt: skip
    leaderboard = _leaderboard(top.sub("leaderboard"), written, "" if report.flat else "aggregates.")
    top.read.add("options")
    top.read.add("verify")  # python -m evaluation.verify's [verify.map] and [verify.ignore] (read there)
    provenance = _provenance(top.sub("provenance"))
    options = _options(top, data, folder) if check_options and "options" in data else ()
    hidden = next((key for key, _ in report.notes if key in ("challenge", *(o.name for o in options))), None)
    if hidden is not None:
        where = "notes" if hidden in data.get("report", {}).get("notes", {}) else "constants"
        top.fail(
            f"report.{where}.{hidden}", "would hide the settings entry of the same name (the challenge or an option)"
        )
    top.done()
    return Declaration(file, name, title, cases, tuple(inputs), tuple(outputs.values()), tuple(metrics),
                       leaderboard, resamples, seed, level, options, report, submission, data, folder,
                       provenance=provenance)  # fmt: skip


def _stacked(cases_table: Table, top: Table, submission: Submission, outputs: tuple[OutputSpec, ...]) -> None:
    """``[cases] stack_size``: jobs answer stacks of frames, a list of values per output, paired with
    the rows of the reference CSV in file order (``stacks``); a CSV must list the cases, and every
    output is a value (a list's elements)."""
    if cases_table.get("stack_size", int) < 1:
        cases_table.fail("stack_size", "must be at least 1 (the frames of a stacked input)")
    if submission.csv:
        cases_table.fail("stack_size", "a prediction-file phase ([submission] kind = 'csv') has no stacked inputs")
    first = next(o for o in outputs if not o.reference.per_case)
    if first.reference.csv_file is None:
        cases_table.fail("stack_size", f"the frames are the rows of a reference CSV in file order; the first output's "
                         f"reference {first.reference.text!r} is no CSV")  # fmt: skip
    lacking = next((o for o in outputs if not o.type.value), None)
    if lacking is not None:
        top.fail("outputs", f"a {lacking.kind} output ({lacking.slug!r}) cannot answer a stacked input: each output "
                 "is a JSON list with one value per frame")  # fmt: skip


def _listed_stacks(
    cases_table: Table, top: Table, cases: Cases, submission: Submission, outputs: tuple[OutputSpec, ...]
) -> None:
    """``[cases] stacks``: a JSON ground truth lists the stacks by name, each a list of frame records
    (``frame_order`` orders them); every output is a value whose reference is a field of those records."""
    framed = next((o for o in outputs if o.reference.frames_file), None)
    if not cases.stacks:
        if framed is not None:
            top.fail("outputs", f"{framed.slug!r}: a reference 'file.json:field' reads the frame records of "
                     "[cases] stacks; declare stacks = 'file.json'")  # fmt: skip
        for key in ("frame_order", "fields"):
            if key in cases_table.data:
                cases_table.fail(key, "applies to stacks listed in a JSON ground truth ([cases] stacks)")
        return
    if not cases.stacks.endswith(".json") or Path(cases.stacks).is_absolute() or ".." in Path(cases.stacks).parts:
        cases_table.fail("stacks", f"{cases.stacks!r} must be a JSON file inside the ground truth")
    if cases.stack_size:
        cases_table.fail("stacks", "stacks are numbered (stack_size) or listed by name (stacks), not both")
    if submission.csv:
        cases_table.fail("stacks", "a prediction-file phase ([submission] kind = 'csv') has no stacked inputs")
    other = next((o for o in outputs if o.reference.frames_file != cases.stacks), None)
    if other is not None:
        top.fail("outputs", f"{other.slug!r}: each output of listed stacks reads a field of their frame records "
                 f"(reference = '{cases.stacks}:<field>'), not {other.reference.text!r}")  # fmt: skip


def load(path: Path) -> Declaration:
    """The validated declaration in ``path``."""
    bounds.check_size(path)
    try:
        text = path.read_text(encoding="utf-8-sig")  # a byte-order mark (Windows editors) is not TOML
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigurationError(f"{path.name}: cannot be read ({error.__class__.__name__}).") from None
    return parse(text, path.name, str(path.parent))
