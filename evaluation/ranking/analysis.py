"""The ranking tool as a library: rank a task, bootstrap it, analyse its robustness, combine tasks.

::

    tasks = read_long_csv(Path("results.csv"))
    ranking = rank(tasks["dice"], Scheme("test-then-rank", na=0))
    resampled = bootstrap(ranking, 1000, seed=0)
    result = analyse(tasks, Design(Scheme(na=0), n_resamples=1000, consensus="euclidean"))
    result.to_json()  # ranking.json; evaluation.ranking.report.write_report(path, result) for report.html

Every result is a typed, frozen dataclass (``to_json`` gives its ranking.json entry). The command line
(:mod:`evaluation.ranking.cli`) only parses options into a :class:`Design` and prints the result.
Semantics: challengeR 1.0.5 (github wiesenfa/challengeR) and Maier-Hein et al. 2018 (seed 004).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from evaluation.errors import ConfigurationError
from evaluation.ranking import bootstrap as resampling
from evaluation.ranking import robustness
from evaluation.ranking.bootstrap import BootstrapResult
from evaluation.ranking.data import Task
from evaluation.ranking.primitives import TIES, Record, rank_na
from evaluation.ranking.schemes import (
    SCHEMES,
    Ranking,
    Scheme,
    consensus_euclidean,
    rank_resamples,
    rank_task,
    warn_compat_na,
)

REFERENCE = "challengeR 1.0.5 (github wiesenfa/challengeR) semantics"
ANALYSES = ("leave-one-out", "annotators", "schemes", "manipulation", "significance")
# the robustness key each analysis writes, in ranking.json's order
ANALYSIS_KEYS = {
    "leave_one_case_out": "leave-one-out",
    "schemes": "schemes",
    "annotators": "annotators",
    "missing_data_manipulation": "manipulation",
    "significance_map": "significance",
}
MAX_SEED = 2**63 - 1


def default_analyses(resampling_asked: bool) -> tuple[str, ...]:
    """The cheap analyses: tau between annotators always; leave one case out beside a bootstrap (it is
    a resampling analysis too, and costs as much as hundreds of resamples: never unasked)."""
    return ("leave-one-out", "annotators") if resampling_asked else ("annotators",)


@dataclass(frozen=True)
class TaskRanking:
    """One task ranked by one scheme: scores (what was ranked) and ranks per algorithm."""

    task: Task
    scheme: Scheme
    arrays: Ranking
    compat: bool = False
    # the generator after the full ranking: the bootstrap continues it (random tie-breaking stays seeded)
    generator: np.random.Generator = field(default_factory=np.random.default_rng, repr=False, compare=False)

    @property
    def ranks(self) -> dict[str, float]:
        return {a: float(r) for a, r in zip(self.task.algorithms, self.arrays.ranks, strict=True)}

    @property
    def scores(self) -> dict[str, float]:
        return {a: float(s) for a, s in zip(self.task.algorithms, self.arrays.scores, strict=True)}

    @property
    def order(self) -> list[str]:
        """The algorithms best first (ties by name)."""
        ranks = self.ranks
        return sorted(ranks, key=lambda a: (ranks[a], a))


def rank(task: Task, scheme: Scheme, seed: int = 0, compat: bool = False) -> TaskRanking:
    """``task`` ranked by ``scheme`` (``seed`` draws the random tie-breaks of ties ``random``)."""
    generator = np.random.default_rng(seed)
    arrays = rank_task(task.values, scheme, rng=generator, task=task.name, compat=compat)
    return TaskRanking(task, scheme, arrays, compat, generator)


def bootstrap(
    ranking: TaskRanking,
    n: int = 1000,
    seed: int = 0,
    indices: np.ndarray | None = None,
    scheduler: str | Any | None = None,
) -> BootstrapResult:
    """Re-rank ``n`` seeded resamples of the cases (or the given index matrix, resamples x cases, into
    the task's sorted cases), locally or on a Dask scheduler, and summarise them."""
    task = ranking.task
    if indices is None:
        indices = resampling.draw(task.n_units, n, seed)
    columns = task.columns(indices)
    if scheduler:
        resampled = resampling.rank_resamples_on_dask(
            task.values, ranking.scheme, columns, ranking.compat, task.name, scheduler
        )
    else:
        resampled = rank_resamples(
            task.values, ranking.scheme, columns, compat=ranking.compat, rng=ranking.generator, task=task.name
        )
    return resampling.summarise(ranking.arrays, resampled, task.algorithms, ranking.compat)


def working_bytes(n_algorithms: int, n_cases: int, scheme: Scheme, design: Design) -> int:
    """About the most memory ranking one task takes at once (bytes), measured on this code (tracemalloc
    peaks: within 40% from 100 to 400 algorithms): Kendall's tau of every resample against the full ranking
    holds a few (resamples x algorithm pairs) arrays; the pairwise tests a (pairs x cases) layout and their
    p-values and decisions (resamples x algorithms x algorithms); everything else (resamples x algorithms)."""
    pairs = n_algorithms * (n_algorithms - 1) // 2
    resamples = design.n_resamples if design.resampling else 0
    if "leave-one-out" in design.analyses:
        resamples = max(resamples, n_cases)  # n_cases rankings, each tau'd against the full one
    rows = max(1, resamples)
    need = 4 * 8 * rows * n_algorithms + 3 * 8 * resamples * pairs
    if scheme.kind == "test-then-rank" or {"schemes", "significance"} & set(design.analyses):
        need += 80 * pairs * n_cases + 3 * 8 * (rows if scheme.kind == "test-then-rank" else 1) * n_algorithms**2
    return need


def check_memory(task: Task, scheme: Scheme, design: Design) -> None:
    """Refuse, before any array is made, a task whose ranking needs more memory than the process may use
    (the memory limit in force, else the machine's), in one line saying what to reduce."""
    from evaluation.platform.files import memory_budget  # only here: the library's other uses need no platform

    n_algorithms, n_cases = task.values.shape
    need = working_bytes(n_algorithms, n_cases, scheme, design)
    budget, said = memory_budget()
    if need <= budget:
        return
    resamples = f" with {design.n_resamples:,} bootstrap resamples" if design.resampling else ""
    fewer = ["fewer algorithms"] + (["fewer resamples (--bootstrap)"] if resamples else [])
    if scheme.kind == "test-then-rank":
        fewer.append("aggregate-then-rank (its tests compare every pair of algorithms)")
    raise ConfigurationError(
        f"Task {task.name!r}: ranking {n_algorithms:,} algorithms on {n_cases:,} cases by {scheme.kind}{resamples} "
        f"needs about {need / 2**30:.1f} GiB, more than {said}: rank {', or '.join(fewer)}."
    )


@dataclass(frozen=True)
class Robustness(Record):
    """The robustness analyses of one task; only those in ``asked`` were computed (and go to the JSON)."""

    asked: tuple[str, ...] = field(metadata={"internal": True})
    leave_one_case_out: robustness.LeaveOneOut | None = None
    schemes: robustness.SchemeSensitivity | None = None
    annotators: robustness.AnnotatorSensitivity | None = None
    missing_data_manipulation: robustness.ManipulationCheck | None = None
    significance_map: robustness.SignificanceMap | None = None

    def to_json(self) -> dict[str, Any]:
        return {key: value for key, value in super().to_json().items() if ANALYSIS_KEYS[key] in self.asked}


def analyse_robustness(ranking: TaskRanking, analyses: tuple[str, ...], threshold: float | None = None) -> Robustness:
    """The robustness analyses named in ``analyses`` (from :data:`ANALYSES`) of one ranked task."""
    task, scheme = ranking.task, ranking.scheme
    return Robustness(
        asked=analyses,
        leave_one_case_out=robustness.leave_one_out(task, scheme, ranking.arrays)
        if "leave-one-out" in analyses
        else None,
        schemes=robustness.scheme_sensitivity(task, scheme) if "schemes" in analyses else None,
        annotators=robustness.annotator_sensitivity(task, scheme) if "annotators" in analyses else None,
        missing_data_manipulation=robustness.manipulation_check(task, scheme, threshold)
        if "manipulation" in analyses
        else None,
        significance_map=robustness.significance_map(task, scheme) if "significance" in analyses else None,
    )


@dataclass(frozen=True)
class Consensus(Record):
    """challengeR's euclidean consensus over tasks: weighted mean of average-tie ranks, then ranked."""

    method: str
    weights: dict[str, float] | None
    scores: dict[str, float]
    ranks: dict[str, float]

    @property
    def order(self) -> list[str]:
        return sorted(self.ranks, key=lambda a: (self.ranks[a], a))


def consensus(
    rankings: Mapping[str, Mapping[str, float]], weights: Mapping[str, float] | None = None, ties: str = "min"
) -> Consensus:
    """The euclidean consensus of several tasks' ranks (task -> algorithm -> rank)."""
    if len(rankings) < 2:
        raise ConfigurationError("--consensus needs a task column with at least two tasks.")
    scores = consensus_euclidean(rankings, weights)
    names = list(scores)
    ranks = rank_na(np.array([scores[a] for a in names]), ties, smaller_better=True)
    return Consensus(
        "euclidean",
        None if weights is None else dict(weights),
        scores,
        dict(zip(names, map(float, ranks), strict=True)),
    )


@dataclass(frozen=True)
class Design:
    """Everything a run decides: the ranking scheme and what is computed around it (seed 004, Table 1)."""

    scheme: Scheme = field(default_factory=Scheme)
    smaller_better_tasks: tuple[str, ...] = ()
    analyses: tuple[str, ...] = ("annotators",)
    n_resamples: int = 0
    seed: int = 0
    compat: bool = False
    indices: Path | None = None  # injected resamples (CSV) instead of random draws
    consensus: str | None = None
    consensus_weights: Mapping[str, float] | None = None
    manipulation_threshold: float | None = None
    source: str | None = None  # where the data came from, for the record

    def check(self) -> None:
        """Refuse settings that cannot run, before any data is read."""
        scheme = self.scheme
        if scheme.kind not in SCHEMES:
            raise ConfigurationError(f"Unknown scheme {scheme.kind!r}; use one of {', '.join(SCHEMES)}.")
        if scheme.ties not in TIES:
            raise ConfigurationError(f"Unknown ties method {scheme.ties!r}; use one of {', '.join(TIES)}.")
        if not 0 < scheme.alpha < 1:
            raise ConfigurationError(f"--alpha must lie strictly between 0 and 1, not {scheme.alpha}.")
        resampling.check_count(self.n_resamples)
        if not 0 <= self.seed <= MAX_SEED:
            raise ConfigurationError(f"--seed must be an integer from 0 to 2**63 - 1, not {self.seed}.")
        if self.manipulation_threshold is not None and not np.isfinite(self.manipulation_threshold):
            raise ConfigurationError("--manipulation-threshold must be a finite number.")
        unknown = sorted(set(self.analyses) - set(ANALYSES))
        if unknown:
            raise ConfigurationError(
                f"--analyses: unknown analysis {', '.join(unknown)}; choose from {', '.join(ANALYSES)}, all or none."
            )
        weights = self.consensus_weights or {}
        if any(not np.isfinite(w) or w < 0 for w in weights.values()) or (weights and not any(weights.values())):
            raise ConfigurationError("--consensus-weights must be finite, non-negative numbers, not all zero.")

    @property
    def resampling(self) -> bool:
        return bool(self.n_resamples or self.indices)

    def scheme_for(self, task: str) -> Scheme:
        return replace(self.scheme, smaller_better=True) if task in self.smaller_better_tasks else self.scheme

    def to_json(self, tasks: list[str]) -> dict[str, Any]:
        return {
            **self.scheme.describe(),
            "smaller_better_tasks": sorted(self.smaller_better_tasks),
            "reference": REFERENCE,
            "data": self.source,
            "tasks": tasks,
            "bootstrap": {
                "n_resamples": self.n_resamples,
                "seed": self.seed,
                "compat": "challengeR" if self.compat else None,
                "indices": str(self.indices) if self.indices else None,
                "copies_of_a_case": "ranked jointly / tested once (challengeR)" if self.compat else "separate cases",
            },
            "consensus": self.consensus,
            "analyses": list(self.analyses),
            "seed": self.seed,
            "kendall_tau": "tau-b (scipy.stats.kendalltau, R cor(method = 'kendall'))",
            "significance_map": {
                "test": "one-sided paired Wilcoxon signed-rank, normal approximation",
                "p_adjust": "holm",
            },
        }


@dataclass(frozen=True)
class TaskResult:
    """One task: its ranking, bootstrap (when asked) and robustness analyses."""

    ranking: TaskRanking
    bootstrap: BootstrapResult | None
    robustness: Robustness

    @property
    def task(self) -> Task:
        return self.ranking.task

    def to_json(self) -> dict[str, Any]:
        task = self.ranking.task
        entry: dict[str, Any] = {
            "algorithms": list(task.algorithms),
            "n_cases": len(task.cases),
            "ranks": self.ranking.ranks,
            "scores": self.ranking.scores,
            "missing": [list(pair) for pair in task.missing],
        }
        if self.bootstrap is not None:
            entry["bootstrap"] = self.bootstrap.to_json()
        entry["robustness"] = self.robustness.to_json()
        return entry


@dataclass(frozen=True)
class Result:
    """A whole analysis: every task, tau between tasks, the consensus, the design and the warnings."""

    tasks: dict[str, TaskResult]
    design: Design
    tasks_kendall_tau: robustness.TauMatrix | None = None
    consensus: Consensus | None = None
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The ranking.json document (its keys are a public interface: extended, never renamed)."""
        document: dict[str, Any] = {"tasks": {name: entry.to_json() for name, entry in self.tasks.items()}}
        if self.tasks_kendall_tau is not None:
            document["tasks_kendall_tau"] = self.tasks_kendall_tau
        if self.consensus is not None:
            document["consensus"] = self.consensus.to_json()
        document["design"] = self.design.to_json(list(self.tasks))
        document["warnings"] = list(self.warnings)
        return document


def analyse(tasks: Mapping[str, Task], design: Design, scheduler: str | Any | None = None) -> Result:
    """Rank every task, bootstrap and analyse it as ``design`` asks, and combine the tasks."""
    design.check()
    unknown = sorted(set(design.smaller_better_tasks) - set(tasks))
    if unknown:
        raise ConfigurationError(f"--smaller-better-task names unknown task(s) {', '.join(unknown)}.")
    unknown = sorted(set(design.consensus_weights or {}) - set(tasks))
    if unknown:
        raise ConfigurationError(f"--consensus-weights names the unknown task {unknown[0]!r}.")
    for name, task in tasks.items():  # every task before the first is ranked: a refusal costs nothing
        check_memory(task, design.scheme_for(name), design)
    warnings: list[str] = []
    results: dict[str, TaskResult] = {}
    for name, task in tasks.items():
        scheme = design.scheme_for(name)
        ranking = rank(task, scheme, design.seed, design.compat)
        warning = warn_compat_na(scheme, task.values, design.compat)
        if warning:
            warnings.append(f"Task {name!r}: {warning}")
        boot = None
        if design.resampling:
            indices = resampling.read_indices(design.indices, task.n_units, name) if design.indices else None
            boot = bootstrap(ranking, design.n_resamples, design.seed, indices, scheduler)
        results[name] = TaskResult(
            ranking, boot, analyse_robustness(ranking, design.analyses, design.manipulation_threshold)
        )
    task_ranks = {name: entry.ranking.ranks for name, entry in results.items()}
    agreement = robustness.tau_matrix(task_ranks) if len(tasks) > 1 else None
    combined = None
    if design.consensus:
        combined = consensus(task_ranks, design.consensus_weights, design.scheme.ties)
    return Result(results, design, agreement, combined, warnings)
