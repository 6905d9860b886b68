"""``python -m evaluation.ranking``: the organizer's ranking tool (contract: ../shared/spec/cli.md).

Three modes: rank a long CSV (``--data``), rank submissions by a challenge's rule (``--leaderboard``),
or build the long CSV from metrics.json files (``--collect``). Bad input ends with one clear sentence
as the last stderr line and a non-zero exit, never a traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from evaluation.errors import ConfigurationError, EvaluationError
from evaluation.platform.metrics_json import write_metrics
from evaluation.ranking import bootstrap, robustness
from evaluation.ranking.data import Task, collect, read_long_csv, submission_documents
from evaluation.ranking.leaderboards import NAMES, leaderboard
from evaluation.ranking.primitives import TIES, rank_na
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
DEFAULT_ANALYSES = ("leave-one-out", "annotators")  # cheap; --report adds every analysis it plots


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m evaluation.ranking",
        description="Rank challenge results with challengeR's schemes, quantify ranking robustness "
        "(Maier-Hein et al. 2018) and write ranking.json (and report.html).",
    )
    mode = p.add_mutually_exclusive_group(required=True)
    mode.add_argument("--data", type=Path, help="long CSV: algorithm, case, value[, task][, annotator]")
    mode.add_argument("--leaderboard", choices=NAMES, help="rank submissions by a challenge's own rule")
    mode.add_argument("--collect", action="store_true", help="build the long CSV from --metrics-dir")
    p.add_argument("--output", type=Path, required=True, help="output folder (CSV file with --collect)")
    p.add_argument("--metrics-dir", type=Path, help="DIR/<submission>/metrics.json or DIR/<submission>.json")
    p.add_argument("--path", action="append", default=[], help="gc-* leaderboards: value path[:smaller], repeatable")
    p.add_argument("--scheme", choices=SCHEMES, default="aggregate-then-rank")
    p.add_argument("--aggregate", default="mean", help="mean, median or a quantile in (0, 1) (default mean)")
    p.add_argument("--ties", choices=TIES, default="min")
    p.add_argument("--na", help="drop | worst | NUMBER (default: missing values are an error)")
    p.add_argument("--smaller-better", action="store_true", help="smaller values are better (distances)")
    p.add_argument(
        "--smaller-better-task",
        action="append",
        default=[],
        metavar="TASK",
        help="this task's smaller values are better (repeatable; e.g. hd95 beside dice)",
    )
    p.add_argument("--alpha", type=float, default=0.05)
    p.add_argument("--p-adjust", choices=("none", "holm"), default="none")
    p.add_argument("--bootstrap", type=int, default=0, metavar="N", help="number of bootstrap resamples")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--compat", choices=("challengeR",), help="reproduce challengeR's bootstrap handling of copies")
    p.add_argument("--bootstrap-indices", type=Path, help="CSV of 0-based resample indices (one row per resample)")
    p.add_argument(
        "--scheduler",
        default=os.environ.get("EVALUATION_SCHEDULER") or None,
        metavar="ADDRESS",
        help="spread the bootstrap resamples over this Dask scheduler (default: $EVALUATION_SCHEDULER, else local)",
    )
    p.add_argument("--consensus", choices=("euclidean",), help="consensus ranking over tasks")
    p.add_argument("--consensus-weights", help="task=weight,... for the consensus (default equal)")
    p.add_argument(
        "--manipulation-threshold", type=float, help="missing-data check threshold (default: 0.5 or worst decile)"
    )
    p.add_argument(
        "--analyses",
        default=",".join(DEFAULT_ANALYSES),
        metavar="LIST",
        help=f"robustness analyses to compute, comma-separated from {', '.join(ANALYSES)}, or all / none "
        f"(default {','.join(DEFAULT_ANALYSES)}; --report computes all)",
    )
    p.add_argument("--report", action="store_true", help="also write the self-contained report.html (all analyses)")
    return p


def _analyses(text: str, report: bool) -> tuple[str, ...]:
    """The robustness analyses asked for (every one when the report needs them), in ``ANALYSES`` order."""
    names = {item.strip() for item in text.split(",") if item.strip()}
    if report or names == {"all"}:
        return ANALYSES
    if names == {"none"}:
        return ()
    unknown = sorted(names - set(ANALYSES))
    if unknown:
        raise ConfigurationError(
            f"--analyses: unknown analysis {', '.join(unknown)}; choose from {', '.join(ANALYSES)}, all or none."
        )
    return tuple(a for a in ANALYSES if a in names)


def _na(text: str | None) -> str | float | None:
    if text is None or text in ("drop", "worst"):
        return text
    try:
        return float(text)
    except ValueError:
        raise ConfigurationError(f"--na must be drop, worst or a number, not {text!r}.") from None


def _aggregate(text: str) -> str | float:
    if text in ("mean", "median"):
        return text
    try:
        quantile = float(text)
    except ValueError:
        quantile = -1.0
    if not 0 < quantile < 1:
        raise ConfigurationError(f"--aggregate must be mean, median or a quantile in (0, 1), not {text!r}.")
    return quantile


def _named(task: Task, array: np.ndarray) -> dict[str, float]:
    return {a: float(v) for a, v in zip(task.algorithms, array, strict=True)}


def _robustness(
    task: Task, scheme: Scheme, full: Ranking, analyses: tuple[str, ...], threshold: float | None
) -> dict[str, Any]:
    """The robustness analyses asked for, under their ranking.json keys."""
    result: dict[str, Any] = {}
    if "leave-one-out" in analyses:
        result["leave_one_case_out"] = robustness.leave_one_out(task, scheme, full)
    if "schemes" in analyses:
        result["schemes"] = robustness.scheme_sensitivity(task, scheme)
    if "annotators" in analyses:
        result["annotators"] = robustness.annotator_sensitivity(task, scheme)
    if "manipulation" in analyses:
        result["missing_data_manipulation"] = robustness.manipulation_check(task, scheme, threshold)
    if "significance" in analyses:
        result["significance_map"] = robustness.significance_map(task, scheme)
    return result


def rank_tasks(args: argparse.Namespace, tasks: dict[str, Task]) -> dict[str, Any]:
    """ranking.json for a checked table: every task ranked, analysed and (optionally) bootstrapped."""
    scheme = Scheme(
        args.scheme, _aggregate(args.aggregate), args.ties, _na(args.na), args.smaller_better, args.alpha, args.p_adjust
    )
    compat = args.compat == "challengeR"
    analyses = _analyses(args.analyses, args.report)
    warnings: list[str] = []
    document: dict[str, Any] = {"tasks": {}}
    unknown = sorted(set(args.smaller_better_task) - set(tasks))
    if unknown:
        raise ConfigurationError(f"--smaller-better-task names unknown task(s) {', '.join(unknown)}.")
    base = scheme
    for name, task in tasks.items():
        scheme = replace(base, smaller_better=True) if name in args.smaller_better_task else base
        rng = np.random.default_rng(args.seed)
        full = rank_task(task.values, scheme, rng=rng, task=name, compat=compat)
        warning = warn_compat_na(scheme, task.values, compat)
        if warning:
            warnings.append(f"Task {name!r}: {warning}")
        if task.missing:
            print(f"Task {name!r}: {len(task.missing)} missing (algorithm, case) pair(s) completed as NA.")
        entry: dict[str, Any] = {
            "algorithms": list(task.algorithms),
            "n_cases": len(task.cases),
            "ranks": _named(task, full.ranks),
            "scores": _named(task, full.scores),
            "missing": [list(pair) for pair in task.missing],
        }
        if args.bootstrap or args.bootstrap_indices:
            if args.bootstrap_indices:
                indices = bootstrap.read_indices(args.bootstrap_indices, task.n_units, name)
            else:
                indices = bootstrap.draw(task.n_units, args.bootstrap, args.seed)
            columns = task.columns(indices)
            if args.scheduler:
                resampled = bootstrap.rank_resamples_on_dask(task.values, scheme, columns, compat, name, args.scheduler)
            else:
                resampled = rank_resamples(task.values, scheme, columns, compat=compat, rng=rng, task=name)
            entry["bootstrap"] = bootstrap.summarise(full, resampled, task.algorithms, compat)
        entry["robustness"] = _robustness(task, scheme, full, analyses, args.manipulation_threshold)
        document["tasks"][name] = entry
    task_ranks = {name: entry["ranks"] for name, entry in document["tasks"].items()}
    if len(tasks) > 1:
        document["tasks_kendall_tau"] = robustness.tau_matrix(task_ranks)
    if args.consensus:
        if len(tasks) < 2:
            raise ConfigurationError("--consensus needs a task column with at least two tasks.")
        weights = _weights(args.consensus_weights, tasks)
        scores = consensus_euclidean(task_ranks, weights)
        names = list(scores)
        ranks = rank_na(np.array([scores[a] for a in names]), args.ties, smaller_better=True)
        document["consensus"] = {
            "method": "euclidean",
            "weights": weights,
            "scores": scores,
            "ranks": dict(zip(names, map(float, ranks), strict=True)),
        }
    document["design"] = {
        **base.describe(),
        "smaller_better_tasks": sorted(args.smaller_better_task),
        "reference": REFERENCE,
        "data": str(args.data),
        "tasks": list(tasks),
        "bootstrap": {
            "n_resamples": args.bootstrap,
            "seed": args.seed,
            "compat": args.compat,
            "indices": str(args.bootstrap_indices) if args.bootstrap_indices else None,
            "copies_of_a_case": "ranked jointly / tested once (challengeR)" if compat else "separate cases",
        },
        "consensus": args.consensus,
        "analyses": list(analyses),
        "seed": args.seed,
        "kendall_tau": "tau-b (scipy.stats.kendalltau, R cor(method = 'kendall'))",
        "significance_map": {"test": "one-sided paired Wilcoxon signed-rank, normal approximation", "p_adjust": "holm"},
    }
    document["warnings"] = warnings
    for warning in warnings:
        print(f"Warning: {warning}", file=sys.stderr)
    return document


def _weights(text: str | None, tasks: dict[str, Task]) -> dict[str, float] | None:
    if not text:
        return None
    weights = {}
    for item in text.split(","):
        task, _, weight = item.partition("=")
        if task.strip() not in tasks:
            raise ConfigurationError(f"--consensus-weights names the unknown task {task.strip()!r}.")
        try:
            weights[task.strip()] = float(weight)
        except ValueError:
            raise ConfigurationError(f"--consensus-weights: {item!r} is not task=number.") from None
    return weights


def run(argv: Sequence[str] | None = None) -> None:
    args = parser().parse_args(argv)
    if args.collect or args.leaderboard:
        if args.metrics_dir is None:
            raise ConfigurationError("--collect and --leaderboard need --metrics-dir.")
        if args.collect:
            frame = collect(args.metrics_dir)
            args.output.parent.mkdir(parents=True, exist_ok=True)
            frame.to_csv(args.output, index=False)
            print(f"Wrote {len(frame)} rows to {args.output}.")
            return
        board = leaderboard(args.leaderboard, submission_documents(args.metrics_dir), args.path)
        write_metrics(args.output / "leaderboard.json", board)
        for submission, reason in board["excluded"].items():
            print(f"Excluded {submission}: {reason}.")
        print(f"Wrote {args.output / 'leaderboard.json'}.")
        return
    if args.bootstrap < 0:
        raise ConfigurationError("--bootstrap must be a non-negative number of resamples.")
    tasks = read_long_csv(args.data)
    document = rank_tasks(args, tasks)
    write_metrics(args.output / "ranking.json", document)
    print(f"Wrote {args.output / 'ranking.json'}.")
    if args.report:
        from evaluation.ranking.report import write_report

        write_report(args.output / "report.html", document, tasks)
        print(f"Wrote {args.output / 'report.html'}.")


def main(argv: Sequence[str] | None = None) -> int:
    """Run; an EvaluationError becomes the last stderr line and exit code 2."""
    try:
        run(argv)
    except EvaluationError as error:
        print(str(error), file=sys.stderr)
        return 2
    except Exception:  # an unforeseen defect: traceback for the organizer on stdout, one line on stderr
        traceback.print_exc(file=sys.stdout)
        print("The ranking tool failed unexpectedly; the traceback is on stdout.", file=sys.stderr)
        return 1
    return 0
