"""The challenge contract: what a challenge declares (its phase: sockets, leaderboard settings;
options with defaults), how it loads its reference, turns the input into per-case tasks
(``CaseTask``), scores a case and aggregates: what the pipeline, the runners, the organizer's and
participant's tools call. Its one implementation is the declarative engine's ``DeclaredChallenge``
(``evaluation/declarative/``); the defaults here are the ones it uses (test/test_architecture.py).

Below the engine and the runners; above only ``platform/`` and ``errors``. The registry
(``evaluation.registry``) sits above all of them.

The pipeline calls ``prepare`` once (reading predictions.json and matching jobs to cases), its
executor maps ``score_case`` over the tasks (in worker processes, or in the main process when the
challenge declares its cases cheap: ``cases_in_process``), then it calls ``aggregate`` once.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from evaluation.errors import ConfigurationError
from evaluation.platform.matching import Matched, match_jobs, reference_name
from evaluation.platform.predictions import Job, Socket, load_jobs

DECLARATIONS = Path(__file__).resolve().parent / "declarations"  # the packaged <name>.toml challenges


@dataclass(frozen=True, eq=False)
class CaseTask:
    """One unit of per-case work, possibly sent to a worker process (everything in it must pickle)."""

    case: str
    payload: Any = None


@dataclass(frozen=True, eq=False)
class Option:
    """A documented challenge option, overridable with ``--set name=value``."""

    name: str
    default: Any
    help: str
    choices: tuple[Any, ...] | None = None

    def parse(self, text: str) -> Any:
        """``text`` converted to the default's type and checked against ``choices``."""
        kind = type(self.default)
        try:
            if kind is bool:
                lowered = text.strip().lower()
                if lowered not in ("true", "false", "1", "0", "yes", "no"):
                    raise ValueError(text)
                value: Any = lowered in ("true", "1", "yes")
            elif kind in (int, float):
                value = kind(text)
            else:
                value = text
        except ValueError:
            raise ConfigurationError(f"Option {self.name} expects a {kind.__name__}, got '{text}'.") from None
        if self.choices is not None and value not in self.choices:
            allowed = ", ".join(str(choice) for choice in self.choices)
            raise ConfigurationError(f"Option {self.name} must be one of {allowed}; got '{text}'.")
        return value


@dataclass(frozen=True, eq=False)
class Phase:
    """The phase settings on grand-challenge.org, in the platform's own field names."""

    inputs: tuple[Socket, ...]
    outputs: tuple[Socket, ...]
    score_title: str
    score_jsonpath: str
    score_default_sort: str = "desc"
    score_decimal_places: int = 4
    score_error_jsonpath: str | None = None
    extra_results_columns: tuple[Mapping[str, Any], ...] = ()
    scoring_method_choice: str = "abs"
    prediction_file: bool = False

    @property
    def leaderboard_paths(self) -> tuple[str, ...]:
        """Every metrics.json path the leaderboard reads: each must hold a finite number, or the
        platform silently drops the submission (or shows an empty cell)."""
        paths = [self.score_jsonpath, self.score_error_jsonpath]
        for column in self.extra_results_columns:
            paths += [column["path"], column.get("error_path")]
        return tuple(path for path in paths if path)

    def settings_json(self) -> dict[str, Any]:
        """The phase form's fields, in the platform's names, plus the sockets."""

        def sockets(items: tuple[Socket, ...]) -> list[dict[str, Any]]:
            return [
                {"slug": s.slug, "kind": s.kind, "super_kind": s.super_kind, "relative_path": s.relative_path}
                for s in items
            ]

        return {
            "submission_kind": "CSV" if self.prediction_file else "Algorithm",
            "algorithm_inputs": sockets(self.inputs),
            "algorithm_outputs": sockets(self.outputs),
            "score_title": self.score_title,
            "score_jsonpath": self.score_jsonpath,
            "score_error_jsonpath": self.score_error_jsonpath or "",
            "score_default_sort": self.score_default_sort,
            "score_decimal_places": self.score_decimal_places,
            "extra_results_columns": [dict(column) for column in self.extra_results_columns],
            "scoring_method_choice": self.scoring_method_choice,
        }


@dataclass(eq=False)
class Prepared:
    """What ``prepare`` found: the tasks to score and the reference cases without a prediction."""

    tasks: list[CaseTask]
    missing: list[str] = field(default_factory=list)
    scored: dict[str, Any] | None = None  # each case's result, made by prepare: no task left (value columns)


@dataclass(eq=False)
class Checked:
    """What the participant's pre-flight check (``evaluation.check``) found without the ground truth:
    the cases checked, warnings (outputs the evaluation will count as missing under the challenge's
    policy) and what could not be checked; ``later``: the checks of ``score_case``, which the
    evaluation runs after ``prepare`` has read every job (so the first problem is the same)."""

    cases: int = 0
    warnings: list[str] = field(default_factory=list)
    unchecked: list[str] = field(default_factory=list)
    later: list[Callable[[], Any]] = field(default_factory=list)

    def add(self, other: Checked) -> None:
        self.warnings += other.warnings
        self.unchecked += [line for line in other.unchecked if line not in self.unchecked]
        self.later += other.later


def input_image(images: Path | None, job: Job, slug: str) -> Path | None:
    """The job's input image ``slug`` in the participant's local folder of input images (by the
    input's original file name), ``None`` without that folder; absent from it: an error."""
    if images is None:
        return None
    path = images / job.input_name(slug)
    if not path.is_file():
        raise ConfigurationError(f"The input image {path.name} is not in the images folder {images}.")
    return path


class Challenge(ABC):
    """What a challenge is to the tools that run it (implemented by ``declarative.engine.DeclaredChallenge``)."""

    name: ClassVar[str]
    title: ClassVar[str]
    phase: ClassVar[Phase]
    options: ClassVar[tuple[Option, ...]]
    cases_in_process: ClassVar[bool]
    """True when ``score_case`` is cheap (a few numbers from a JSON file): the cases then run in the
    main process, with no pool to start and nothing to pickle (and no per-case timeout). False for
    cases that read images: each runs in a worker process, under the per-case timeout,
    so that a stalled or dying case ends the run naming the case."""

    def settings(self, overrides: Mapping[str, str] | None = None) -> dict[str, Any]:
        """The option values in force: defaults, then ``--set`` overrides (unknown names refused)."""
        by_name = {option.name: option for option in self.options}
        values = {option.name: option.default for option in self.options}
        for key, text in (overrides or {}).items():
            if key not in by_name:
                known = ", ".join(by_name) or "none"
                raise ConfigurationError(f"{self.name} has no option '{key}' (options: {known}).")
            values[key] = by_name[key].parse(text)
        return values

    @abstractmethod
    def job_inputs(self, case: str) -> dict[Socket, str]:
        """The input file names of a job for ``case`` (used to build platform inputs). Inverse of
        ``case_of_job``."""

    @abstractmethod
    def case_of_job(self, job: Job) -> str:
        """The case a job is for (from its input file names)."""

    def jobs_by_case(self, input_dir: Path, cases: Collection[str], *, same_stem: bool = False) -> Matched:
        """predictions.json's jobs matched to the reference ``cases`` by ``case_of_job``. ``same_stem``: a
        job's name taken to the reference case with its stem (``reference_name``)."""
        case_of_job = self.case_of_job
        if same_stem:
            case_of_job = lambda job: reference_name(self.case_of_job(job), cases)  # noqa: E731
        return match_jobs(load_jobs(input_dir), case_of_job, cases)

    def submitted_jobs(self, input_dir: Path) -> list[Job]:
        """predictions.json's jobs, for a challenge that places them itself (a declared stacked input: a job
        per stack of frames, ``declarative.stacks``)."""
        return load_jobs(input_dir)

    def settings_echo(
        self,
        settings: Mapping[str, Any],
        *,
        before: Mapping[str, Any] | None = None,
        after: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """metrics.json's ``settings``: the challenge's name, ``before``, the options in force, ``after``
        (the challenge's fixed choices and notes, in the order its documents have always had)."""
        return {"challenge": self.name, **(before or {}), **settings, **(after or {})}

    @abstractmethod
    def write_prediction_file(self, outputs_dir: Path, output_dir: Path) -> list[str]:
        """A prediction-file phase's input built from per-case outputs (``outputs_dir/<case>/``) into
        ``output_dir``; returns the cases written."""

    @abstractmethod
    def code_files(self) -> tuple[Path, ...]:
        """The organizer's code files the scoring runs besides this package (a declaration's python
        metrics); the provenance record hashes them."""

    @abstractmethod
    def phase_for(self, settings: Mapping[str, Any]) -> Phase:
        """The phase under ``settings`` (an option may set the leaderboard)."""

    @abstractmethod
    def load_reference(self, ground_truth: Path, settings: Mapping[str, Any]) -> Any:
        """Read the ground truth once (organizer data: problems are ``ConfigurationError``)."""

    @abstractmethod
    def prepare(self, input_dir: Path, reference: Any, settings: Mapping[str, Any]) -> Prepared:
        """Read predictions.json (or the prediction file), match to the reference, build tasks."""

    @staticmethod
    @abstractmethod
    def score_case(task: CaseTask, settings: Mapping[str, Any]) -> Any:
        """Score one case (in a worker process unless ``cases_in_process``); must be a plain function
        of its arguments."""

    @abstractmethod
    def aggregate(
        self,
        results: Mapping[str, Any],
        missing: Sequence[str],
        reference: Any,
        settings: Mapping[str, Any],
    ) -> dict[str, Any]:
        """The metrics document from the per-case results (in reference order)."""

    def check_submission(self, input_dir: Path, settings: Mapping[str, Any], images: Path | None = None) -> Checked:
        """Every check of the evaluation that needs no ground truth (the participant's pre-flight
        check): predictions.json, one job per case, then ``check_job`` for each case in name order.
        Raises the evaluation's own ``SubmissionError`` at the first problem."""
        jobs = load_jobs(input_dir)
        matched = match_jobs(jobs, self.case_of_job, sorted({self.case_of_job(job) for job in jobs}))
        checked = Checked(cases=len(matched.jobs))
        for case, job in matched.jobs.items():
            checked.add(self.check_job(input_dir, job, case, settings, images))
        for step in checked.later:
            step()
        return checked

    @abstractmethod
    def check_job(
        self, input_dir: Path, job: Job, case: str, settings: Mapping[str, Any], images: Path | None
    ) -> Checked:
        """The reference-free checks of one job's outputs (``images``: the participant's folder of
        input images, or ``None``), with the very functions ``prepare`` and ``score_case`` call."""
