"""The engine of declared challenges: a ``Challenge`` built from a parsed declaration (``schema``).

``DeclaredChallenge`` ties together the modules that do the work:

- ``reference``: ``load_reference`` lists the cases and reads every reference from the ground truth;
- ``answers``: ``prepare`` reads predictions.json once, matches jobs to cases by their input image names
  (``Challenge.jobs_by_case``) or, in a prediction-file phase, reads the participant's one CSV, checks each
  answer and applies each output's missing policy;
- ``segmentation``: ``score_case`` (a worker) reduces each label image pair to small numbers per label;
- ``aggregate``: ``aggregate`` turns those numbers and values into every declared metric with bootstrap CIs.

Here: the phase settings, the options, the settings echo and the registry entries (``from_file``,
``challenge_class``).
"""

from __future__ import annotations

import csv
import dataclasses
import io
import re
import shutil
from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any, ClassVar

from evaluation.contract import CaseTask, Challenge, Checked, Option, Phase, Prepared, input_image
from evaluation.declarative.aggregate import aggregate_metrics
from evaluation.declarative.answers import (
    add_value,
    cell_text,
    checked_value,
    class_cell_texts,
    no_cell,
    no_output,
    read_cell,
    read_table,
)
from evaluation.declarative.columns import read_columns, scored_columns
from evaluation.declarative.python_metric import (
    PYTHON,
    ReadColumns,
    ReaderContext,
    code_files,
    read_rows,
    value_cases,
)
from evaluation.declarative.reference import DeclaredReference, load_declared_reference, strip_marker
from evaluation.declarative.schema import SEGMENTATION_METRICS, Declaration, load, with_options
from evaluation.declarative.segmentation import (
    CasePayload,
    CaseResult,
    check_segmentation,
    segmentation_task,
)
from evaluation.declarative.stacks import Stack, frame_answers, scored_stacks, stack_answer, stack_number
from evaluation.errors import ConfigurationError, EvaluationError, SubmissionError
from evaluation.platform.files import not_there, open_binary, read_bytes, regular_size
from evaluation.platform.images import image_frames
from evaluation.platform.matching import stem
from evaluation.platform.prediction_file import find_prediction_file
from evaluation.platform.predictions import Job, Socket
from evaluation.platform.sockets import image_output_file, parse_json_bytes, read_json_output

STACKED_KIND = "Anything"  # the socket of a stacked input's answer: a JSON list, one value per frame
NEEDS_TRUTH_ROWS = "which cases the test set holds (a case without a row, a row for an unknown case)"


def _phase(declaration: Declaration) -> Phase:
    """The phase settings; a prediction-file phase has no sockets (the platform's "CSV" submission kind)."""
    board = declaration.leaderboard
    csv_phase = declaration.submission.csv
    return Phase(
        inputs=tuple(Socket(i.slug, i.relative_path, i.kind, "Image") for i in declaration.inputs),
        outputs=()
        if csv_phase
        else tuple(
            Socket(o.slug, o.relative_path, _platform_kind(declaration, o), o.super_kind) for o in declaration.outputs
        ),
        score_title=board.title,
        score_jsonpath=board.score,
        score_default_sort=board.sort,
        score_decimal_places=board.decimal_places,
        score_error_jsonpath=board.error or None,
        extra_results_columns=tuple(
            {
                "title": c.title,
                "path": c.path,
                "order": c.order,
                **({"exclude_from_ranking": True} if c.exclude_from_ranking else {}),
                **({"error_path": c.error} if c.error else {}),
            }
            for c in board.columns
        ),
        scoring_method_choice=board.scoring_method,
        prediction_file=csv_phase,
    )


def _options(declaration: Declaration) -> tuple[Option, ...]:
    """The declared options, and the bootstrap's seed and resamples when a metric is bootstrapped."""
    bootstrap = (
        Option("seed", declaration.seed, "bootstrap seed (numpy.random.default_rng)"),
        Option("bootstrap_resamples", declaration.resamples, "bootstrap resamples of the cases for the CIs"),
    )
    declared = tuple(Option(o.name, o.default, o.help, o.choices) for o in declaration.options)
    return declared + bootstrap if any(m.bootstrap for m in declaration.metrics) else declared


def _platform_kind(declaration: Declaration, output: Any) -> str:
    """The output socket's kind: a stacked input's answer is a JSON list (``STACKED_KIND``)."""
    return STACKED_KIND if declaration.cases.stacked else output.platform_kind


class DeclaredChallenge(Challenge):
    """A challenge defined by a declaration: ``DeclaredChallenge(declaration)``, or a subclass with
    the class attribute ``declaration`` (how the registry exposes packaged declarations)."""

    declaration: ClassVar[Declaration]

    def __init__(self, declaration: Declaration | None = None) -> None:
        if declaration is not None:
            vars(self).update(_attributes(declaration))

    def case_of_job(self, job: Job) -> str:
        cases = self.declaration.cases
        return strip_marker(stem(job.input_name(cases.input), cases.strip_suffixes), cases.strip)

    def job_inputs(self, case: str) -> dict[Socket, str]:
        """Each input's file name for ``case``; a case already named as the file (a stack "s1.tiff" of
        ``name = "{case}.tiff"``, as the ground truth lists it) is that name."""
        names = {}
        for spec in self.declaration.inputs:
            tail = spec.name.split("{case}")[1]
            names[spec.slug] = case if tail and case.endswith(tail) else spec.name.replace("{case}", case)
        return {socket: names[socket.slug] for socket in self.phase.inputs}

    def code_files(self) -> tuple[Path, ...]:
        """Its python metrics' files and the declarations it extends (the provenance record hashes them)."""
        declaration = self.declaration
        bases = tuple(Path(declaration.folder).resolve() / name for name in declaration.bases)
        return code_files(declaration.metrics, declaration.folder, declaration.submission.reader) + bases

    def phase_for(self, settings: Mapping[str, Any]) -> Phase:
        """The phase under the declared options of ``settings`` (an option may set the leaderboard)."""
        declaration = self.in_force(settings)
        return self.phase if declaration is self.declaration else _phase(declaration)

    def in_force(self, settings: Mapping[str, Any]) -> Declaration:
        """The declaration with the declared options of ``settings`` applied (made once per set of values: a
        run asks for it at each step)."""
        made: dict[tuple[Any, ...], Declaration] = vars(self).setdefault("_in_force", {})
        values = tuple(
            (type(value), value) for value in (settings.get(o.name, o.default) for o in self.declaration.options)
        )
        if values not in made:
            made[values] = with_options(self.declaration, settings)
        return made[values]

    def load_reference(self, ground_truth: Path, settings: Mapping[str, Any]) -> DeclaredReference:
        if settings.get("bootstrap_resamples", 1) < 1:
            raise ConfigurationError("Option bootstrap_resamples must be at least 1.")
        return load_declared_reference(ground_truth, self.in_force(settings))

    def prepare(self, input_dir: Path, reference: DeclaredReference, settings: Mapping[str, Any]) -> Prepared:
        declaration = self.in_force(settings)
        if declaration.submission.csv:
            return self._prepare_rows(input_dir, reference, declaration)
        stacked, answers = None, {}
        if declaration.cases.stacked:  # a job per stack of frames, a case per frame
            stacked = frame_answers(input_dir, self.submitted_jobs(input_dir), self.case_of_job, declaration, reference)
            scored = scored_stacks(stacked, declaration, reference)
            if scored is not None:  # every frame answered with numbers: scored as columns
                return Prepared([], scored=scored)
            answers = {output.slug: stacked.by_case(output.slug) for output in declaration.outputs}
        matched = stacked.matched(reference.cases) if stacked else self.jobs_by_case(
            input_dir, reference.cases, same_stem=declaration.cases.same_stem
        )  # fmt: skip
        needs_job = [o.slug for o in declaration.outputs if o.missing == "error"]
        word = declaration.cases.noun
        if matched.missing and needs_job:
            raise SubmissionError(
                f"No algorithm job for {word} {', '.join(matched.missing)}; every {word} needs the output "
                f"'{needs_job[0]}'.",
                matched.missing[0],
            )
        tasks = []
        for case in reference.cases:
            job = matched.jobs.get(case)
            segmentations, values, submitted = [], {}, {}
            for output in declaration.outputs:
                if output.type.image:
                    path = image_output_file(input_dir, job, output.slug, case) if job else None
                    if path is None and output.missing == "error":
                        raise no_output(output, case)
                    if path is not None or output.missing == "empty-mask":
                        file = reference.files[output.slug][case]
                        shown = file.relative_to(reference.root).as_posix()
                        make = output.type.worker_task or segmentation_task
                        segmentations.append(make(declaration, output, case, file, shown, path))
                    submitted[output.slug] = path is not None
                    continue
                if stacked:  # the case's frame of its stack's list (checked there)
                    raw = answers[output.slug].get(case)
                else:
                    raw = read_json_output(input_dir, job, output.slug, case) if job else None
                named = declaration.cases.named(case)
                absent = partial(no_output, output, case)
                add_value(declaration, output, case, named, raw, absent, reference, values, submitted)
            python = _python_cases(declaration, reference, case, values)
            tasks.append(CaseTask(case, CasePayload(tuple(segmentations), values, submitted, python)))
        return Prepared(tasks, matched.missing)

    # ------------------------------------------------------------------------ prediction-file phases

    def _prepare_rows(self, input_dir: Path, reference: DeclaredReference, declaration: Declaration) -> Prepared:
        """A prediction-file phase: one row per reference case (an unknown case is an error, a case
        without a row gets each output's missing policy, a blank cell is that output missing)."""
        if declaration.submission.reader:
            return self._prepare_read(input_dir, reference, declaration)
        table = read_table(input_dir, declaration)
        scored = scored_columns(table, reference, declaration)
        if scored is not None:  # a well-formed submission of number columns, read and scored whole
            return Prepared([], scored=scored)
        word = declaration.cases.noun
        known = set(reference.cases)
        unknown = next((case for case in table.rows if case not in known), None)
        if unknown is not None:
            raise SubmissionError(
                f"Line {table.rows[unknown].line} of the prediction file {table.file} is for {word} {unknown}, "
                "which is not in the test set.",
                unknown,
            )
        missing = [case for case in reference.cases if case not in table.rows]
        needs_row = [o.slug for o in declaration.outputs if o.missing == "error"]
        if missing and needs_row:
            listed = ", ".join(missing[:10]) + (f", ... ({len(missing)} in all)" if len(missing) > 10 else "")
            raise SubmissionError(
                f"The prediction file {table.file} has no row for {word} {listed}; every {word} needs the output "
                f"'{needs_row[0]}'.",
                missing[0],
            )
        tasks = []
        for case in reference.cases:
            values: dict[str, Any] = {}
            submitted: dict[str, bool] = {}
            for output in declaration.outputs:
                raw, named = (None, declaration.cases.named(case))
                if case in table.rows:
                    raw, named = read_cell(declaration, output, table, case)
                absent = partial(no_cell, table, output, case, word)
                add_value(declaration, output, case, named, raw, absent, reference, values, submitted)
            python = _python_cases(declaration, reference, case, values)
            tasks.append(CaseTask(case, CasePayload((), values, submitted, python)))
        return Prepared(tasks, missing)

    def _prepare_read(self, input_dir: Path, reference: DeclaredReference, declaration: Declaration) -> Prepared:
        """A prediction-file phase with its own reader (``[submission] reader``): its rows, which must be the
        reference's cases, each output's cells (a probabilities output: its class columns) as a job's answer;
        columns it returned, scored whole when they pass (``read_columns``), else row by row."""
        rows = _reader_rows(input_dir, declaration, reference.cases)
        if isinstance(rows, ReadColumns):
            scored = read_columns(rows, reference, declaration)
            if scored is not None:
                return Prepared([], scored=scored)
            rows = rows.rows()
        word, known = declaration.cases.noun, set(reference.cases)
        stray = next((case for case in rows if case not in known), None)
        lacking = next((case for case in reference.cases if case not in rows), None)
        if stray is not None or lacking is not None:
            raise ConfigurationError(f"{declaration.submission.reader}: returned a row for {word} {stray} (not in the "
                                     "test set)" if stray is not None else f"{declaration.submission.reader}: "
                                     f"returned no row for {word} {lacking} (the reader checks the cases)")  # fmt: skip
        tasks = []
        for case in reference.cases:
            values: dict[str, Any] = {}
            submitted: dict[str, bool] = {}
            named = declaration.cases.named(case)
            for output in declaration.outputs:
                row = rows[case]
                raw = {name: row.get(column) for name, column in output.columns} if output.columns else row.get(
                    output.column)  # fmt: skip
                if isinstance(raw, dict) and all(value is None for value in raw.values()):
                    raw = None
                absent = partial(no_output, output, case)
                add_value(declaration, output, case, named, raw, absent, reference, values, submitted)
            python = _python_cases(declaration, reference, case, values)
            tasks.append(CaseTask(case, CasePayload((), values, submitted, python)))
        return Prepared(tasks, [])

    def write_prediction_file(self, outputs_dir: Path, output_dir: Path) -> list[str]:
        """The CSV of a prediction-file phase from ``outputs_dir/<case>/<slug>.json`` (what an algorithm
        would write): a row per case folder, a column per output (a probabilities output: a column per
        class, from its JSON object or list), a blank cell for an absent file."""
        declaration = self.declaration
        if not outputs_dir.is_dir():
            raise ConfigurationError(f"The outputs folder {outputs_dir} {not_there(outputs_dir, folder=True)}.")
        case_dirs = sorted(p for p in outputs_dir.iterdir() if p.is_dir())
        if not case_dirs:
            raise ConfigurationError(f"The outputs folder {outputs_dir} holds no case folder.")
        known = {f"{o.slug}.json": o for o in declaration.outputs}
        rows = []
        for case_dir in case_dirs:
            files = {p.relative_to(case_dir).as_posix(): p for p in case_dir.rglob("*") if p.is_file()}
            unknown = sorted(set(files) - set(known))
            if unknown:
                raise SubmissionError(f"{', '.join(unknown)} is not an output of {self.name}.", case_dir.name)
            cells = [case_dir.name]
            for name, output in known.items():
                value = None
                if name in files:
                    value = parse_json_bytes(files[name].read_bytes(), name, case_dir.name)
                if output.columns:
                    cells += class_cell_texts(output, value, case_dir.name)
                else:
                    cells.append(cell_text(output, value))
            rows.append(cells)
        if output_dir.exists():
            shutil.rmtree(output_dir)
        output_dir.mkdir(parents=True)
        with (output_dir / declaration.submission.file).open("w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle, lineterminator="\n")
            writer.writerow(
                [declaration.submission.id_column, *(c for o in declaration.outputs for c in o.csv_columns)]
            )
            writer.writerows(rows)
        return [cells[0] for cells in rows]

    def check_submission(self, input_dir: Path, settings: Mapping[str, Any], images: Path | None = None) -> Checked:
        """A prediction-file phase: every row as ``prepare`` reads it (columns, cells, kinds, ranges; a
        blank cell fails under the policy "error", unless the reference is blank there: unknown here)."""
        declaration = self.in_force(settings)
        if not declaration.submission.csv:
            return super().check_submission(input_dir, settings, images)
        if declaration.submission.reader:  # its own checks (which cases: the reference's)
            rows = _reader_rows(input_dir, declaration, None)
            cases = len(rows.rows() if isinstance(rows, ReadColumns) else rows)
            return Checked(cases=cases, unchecked=[NEEDS_TRUTH_ROWS])
        table = read_table(input_dir, declaration)
        word = declaration.cases.noun
        checked = Checked(cases=len(table.rows))
        for case in table.rows:
            for output in declaration.outputs:
                raw, named = read_cell(declaration, output, table, case)
                if raw is not None:
                    checked_value(output, raw, case, named, declaration)
                elif output.missing == "error":
                    raise no_cell(table, output, case, word)
                else:
                    checked.warnings.append(
                        f"{named}: no value; the evaluation applies the missing policy '{output.missing}'."
                    )
        checked.unchecked.append(NEEDS_TRUTH_ROWS)
        return checked

    def check_job(
        self, input_dir: Path, job: Job, case: str, settings: Mapping[str, Any], images: Path | None
    ) -> Checked:
        """Every output as ``prepare`` reads it (kind, range) and each segmentation as ``score_case``
        checks it, on the grid of the case's input image when ``images`` holds it. A missing output
        fails under the policy "error" (unless the reference is blank there: unknown here) and is a
        warning under any other policy."""
        declaration = self.in_force(settings)
        if declaration.cases.stacked:
            return _check_stack(input_dir, job, case, declaration, images)
        checked = Checked()
        named = declaration.cases.named(case)
        for output in declaration.outputs:
            if output.type.image:
                found = image_output_file(input_dir, job, output.slug, case)
                if found is not None:
                    grid = input_image(images, job, declaration.cases.input)
                    if grid is None:
                        checked.unchecked.append("the segmentations' grid against the input image (give --images)")
                    check = output.type.check_file or check_segmentation
                    checked.later.append(partial(check, declaration, output, found, grid, case, named))
            elif (found := read_json_output(input_dir, job, output.slug, case)) is not None:
                checked_value(output, found, case, named, declaration)
            if found is None and output.missing == "error":
                raise no_output(output, case)
            if found is None:
                checked.warnings.append(
                    f"Case {case} has no output '{output.slug}'; the evaluation applies its missing policy "
                    f"'{output.missing}'."
                )
        return checked

    @staticmethod
    def score_case(task: CaseTask, settings: Mapping[str, Any]) -> CaseResult:
        numbers = {}
        python = {value.call.metric: value.run() for value in task.payload.python}  # (value outputs)
        for segmentation in task.payload.segmentations:
            try:
                with_python = getattr(segmentation, "score_with_python", None)  # (another image kind: none)
                if with_python is None:
                    numbers[segmentation.slug] = segmentation.score(task.case)
                else:
                    numbers[segmentation.slug], found = with_python(task.case)
                    python.update(found)
            except EvaluationError:
                raise
            except RuntimeError as error:  # SimpleITK failures on a submitted file
                what = segmentation.noun or f"output '{segmentation.slug}'"
                raise SubmissionError(
                    f"The {what} of {task.case} could not be evaluated ({error.__class__.__name__}).", task.case
                ) from None
        return CaseResult(numbers, dict(task.payload.values), dict(task.payload.submitted), python)

    def aggregate(
        self,
        results: Mapping[str, CaseResult],
        missing: Sequence[str],
        reference: DeclaredReference,
        settings: Mapping[str, Any],
    ) -> dict[str, Any]:
        declaration = self.in_force(settings)
        aggregated = aggregate_metrics(declaration, self.declaration, results, missing, reference, settings)
        report = declaration.report
        if report.flat:  # the aggregates at the top level under their written names, then settings and dataset
            names = dict(report.names)
            placed = _placed(report.layout, aggregated["aggregates"]) if report.layout else {
                names.get(k, k): v for k, v in aggregated["aggregates"].items()}  # fmt: skip
            return {**placed,
                    "settings": self._settings(declaration, settings),
                    **({"dataset": dataset_counts(declaration, reference)} if report.dataset else {})}  # fmt: skip
        return {**aggregated, "settings": self._settings(declaration, settings)}

    def _settings(self, declaration: Declaration, settings: Mapping[str, Any]) -> dict[str, Any]:
        """What settings echo: the challenge, the options in force and (layout "full") the whole
        declaration, then the declared constants and notes (or, ``notes_first``, these after the challenge)."""
        notes = dict(declaration.report.notes)
        first, last = (notes, {}) if declaration.report.notes_first else ({}, notes)
        if declaration.report.settings == "options":
            return self.settings_echo(settings, before=first, after=last)
        return self.settings_echo(settings, before={**first, "declaration": declaration.source}, after={
            "ci_level": declaration.level,
            **({"submission": _submission_echo(declaration)} if declaration.submission.csv else {}),
            "outputs": {
                o.slug: {"kind": o.kind, "reference": o.reference.text, "missing": o.missing, **o.type.settings(o),
                         **({"blank": o.blank} if o.reference.csv_file else {}),
                         **({"blank_values": list(o.blank_values)} if o.blank_values != ("",) else {}),
                         **({"event": o.event.text} if o.event else {}),
                         **({"column": o.column} if o.column else {}),
                         **({"columns": dict(o.columns)} if o.columns else {}),
                         **({"reference_columns": dict(o.reference.columns)} if o.reference.columns else {}),
                         **({"reference_none": o.reference.none} if o.reference.none != "error" else {}),
                         **({"true_values": list(o.true_values), "false_values": list(o.false_values)}
                            if o.type.spelled or o.reference.one_hot else {})}
                for o in declaration.outputs
            },
            "metrics": {
                m.name: {"metric": m.metric, **({"output": m.output} if m.output else {}), "bootstrap": m.bootstrap,
                         **({"labels": list(m.labels), "aggregates": list(m.aggregates)}
                            if m.metric in SEGMENTATION_METRICS else {}),
                         **({"aggregates": list(m.aggregates)} if m.aggregates and m.metric not in SEGMENTATION_METRICS
                            else {}), **dict(m.params),
                         **({"group": m.group} if m.group else {}),
                         **({"groups": m.groups, "over_groups": m.over_groups, "undefined_group": m.undefined_group}
                            if m.groups else {}),
                         **({"incomplete_group": m.incomplete_group} if m.incomplete_group != "score" else {}),
                         **({"sample_weights": list(m.sample_weights)} if m.sample_weights else {}),
                         **({"zero_weight": list(m.zero_weight)} if m.zero_weight else {}),
                         **({"absent_weight": m.absent_weight} if m.absent_weight is not None else {}),
                         **({"sorted_weights": True} if m.sorted_weights else {}),
                         "keys": dict(m.keys)}
                for m in declaration.metrics
            },
            **last,
        })  # fmt: skip


# metrics.json's sections as ``aggregate_metrics`` and ``DeclaredChallenge.aggregate`` write them, in order (the
# documentation's page of the layout shows each beside a real run's)
METRICS_JSON = {
    "aggregates": "The declared metrics' values over the cases: `<name>_<label>_<form>` for segmentation metrics "
    "(`dice_tumour_mean`), `<name>` for value metrics, `<name>_<class>` and `<name>_macro` per class on "
    "probabilities, under `<group>.` when a metric declares `group`, each with `_ci_low` / `_ci_high` when "
    "bootstrapped; then `[report.counts]`. A metric by group (`groups`) writes `<name>` (the groups combined) and "
    "`<name>_by_group`: an object group -> the metric's value on that group's cases (null: left out).",
    "case": "Per case (sorted): each per-case metric value (`<name>_<label>`, lesion `_tp` / `_fp` / `_fn`), then "
    "the participant's own value of each value output (null when missing: an imputed value would reveal the "
    "reference). `[report] per_case = false`: an empty object.",
    "missing": "`jobs` (a prediction-file phase: `rows`): the cases without a job; then per output (its slug, or "
    "`[report.missing_names]`) the cases without that output. Left out with `[report] missing = false`.",
    "settings": "`challenge` and the options in force, then (`[report] settings = 'full'`) the declaration file, "
    "seed, resamples, `ci_level`, every output's policies and every metric's parameters, edge values and keys; the "
    "declared constants and notes last (or right after `challenge`: `notes_first`).",
    "flat": "`[report] flat = true`: the aggregates at the top level under their `names`, then `settings`, then the "
    "`dataset` counts (`[report.dataset]`); no `case`, no `missing`.",
    "leaderboard": "The leaderboard reads metrics.json by path: `[leaderboard] score` and each column's `path` "
    "(`aggregates.<key>`, or `<key>` when flat) become the phase's `score_jsonpath` and `extra_results_columns`, "
    "`error` paths the `score_error_jsonpath` / `error_path` (`python -m evaluation.phase`).",
}


def _check_stack(input_dir: Path, job: Job, case: str, declaration: Declaration, images: Path | None) -> Checked:
    """A stacked job's lists as ``prepare`` reads them (``stacks.stack_answer``), their lengths against the
    frames of its input stack when ``images`` holds it (counted from the image's header)."""
    cases, checked = declaration.cases, Checked()
    key = job.input_name(cases.input) if cases.stacks else stack_number(case, job)  # (listed: its image's name)
    image = input_image(images, job, cases.input)
    count = None if image is None else image_frames(image)
    if image is None:
        nouns = ", ".join(dict.fromkeys(output.noun or "value" for output in declaration.outputs))
        checked.unchecked.append(f"one {nouns} per frame (give --images to count the frames)")
    stack = Stack(key, key if cases.stacks else case, count=count, size=cases.stack_size)
    for output in declaration.outputs:
        if stack_answer(input_dir, job, output, stack, declaration) is None:
            checked.warnings.append(
                f"Stack {key} has no output '{output.slug}'; the evaluation applies its missing policy "
                f"'{output.missing}'."
            )
    return checked


def _reader_rows(
    input_dir: Path, declaration: Declaration, cases: Sequence[str] | None
) -> dict[str, dict[str, Any]] | ReadColumns:
    """The rows (or columns) the declared reader returns for the participant's CSV (found as any CSV, and a
    regular file: nothing read here), the reference's ``cases`` given (None: checked without them)."""
    submission = declaration.submission
    path = find_prediction_file(input_dir, submission.file)
    what = f"The prediction file {path.name}"
    size = regular_size(path, what)
    context = ReaderContext(
        path.name, size, submission.max_mb, submission.id_column,
        tuple(column for output in declaration.outputs for column in output.csv_columns),
        None if cases is None else tuple(cases),
        text=lambda: io.TextIOWrapper(open_binary(path, what, max_bytes=size), encoding="utf-8"),
        data=lambda: read_bytes(path, what, max_bytes=size),
    )  # fmt: skip
    return read_rows(submission.reader, declaration.folder, context)


def _placed(layout: Sequence[tuple[str, str]], aggregates: Mapping[str, Any]) -> dict[str, Any]:
    """``[report.layout]``: each aggregate at its paths, in the layout's order (dots nest objects)."""
    document: dict[str, Any] = {}
    for path, key in layout:
        *parents, last = path.split(".")
        target = document
        for parent in parents:
            target = target.setdefault(parent, {})
        target[last] = aggregates[key]
    return document


def _submission_echo(declaration: Declaration) -> dict[str, Any]:
    """A prediction-file phase's ``[submission]`` as settings echo it (``strip_suffixes``, ``reader``: if declared)."""
    echoed = dataclasses.asdict(declaration.submission)
    return {key: value for key, value in echoed.items() if value or key not in ("strip_suffixes", "reader")}


def dataset_counts(declaration: Declaration, reference: DeclaredReference) -> dict[str, int]:
    """``[report.dataset]``: the listed stacks, the cases, the cases whose reference of an output is 1
    (``positive:<output>``) or the distinct values of a ``[cases] fields`` field (``distinct:<field>``)."""
    counts = {}
    for key, what in declaration.report.dataset:
        kind, _, which = what.partition(":")
        if kind == "stacks":
            counts[key] = len(reference.stacks)
        elif kind == "cases":
            counts[key] = len(reference.cases)
        elif kind == "positive":
            counts[key] = sum(1 for value in reference.values[which].values() if value == 1)
        else:
            counts[key] = len(set(reference.fields[which].values()))
    return counts


def _python_cases(
    declaration: Declaration, reference: DeclaredReference, case: str, values: Mapping[str, Any]
) -> tuple[Any, ...]:
    """A case's per-case python metrics of value (and boxes / points) outputs, with the value and its reference."""
    if not any(m.metric == PYTHON and m.param("over") == "case" for m in declaration.metrics):
        return ()
    return tuple(
        call
        for output in declaration.outputs
        if not output.type.image and output.slug in values
        for call in value_cases(declaration.metrics, output, case, values, reference.values[output.slug][case],
                                declaration.folder, declaration.option_values())
    )  # fmt: skip


def _in_process(declaration: Declaration) -> bool:
    """Cases without a segmentation output are a few JSON values: scored in the main process."""
    return not any(output.type.image for output in declaration.outputs)


def from_file(path: Path) -> DeclaredChallenge:
    """The challenge declared in the TOML file ``path``."""
    if not path.is_file():
        raise ConfigurationError(f"The declaration {path} {not_there(path, folder=False)}.")
    return DeclaredChallenge(load(path))


def _attributes(declaration: Declaration) -> dict[str, Any]:
    """What a ``Challenge`` states about itself, from the declaration (an instance's or a subclass's)."""
    return {
        "name": declaration.name,
        "title": declaration.title,
        "phase": _phase(declaration),
        "options": _options(declaration),
        "declaration": declaration,
        "cases_in_process": _in_process(declaration),
    }


def challenge_class(declaration: Declaration) -> type[DeclaredChallenge]:
    """A registry entry for a packaged declaration: a subclass carrying it as class attributes."""
    class_name = "Declared_" + re.sub(r"\W", "_", declaration.name)
    return type(class_name, (DeclaredChallenge,), {**_attributes(declaration), "__module__": __name__})
