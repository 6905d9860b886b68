"""``python -m evaluation.ranking``: the organizer's ranking tool (contract: ../shared/spec/cli.md).

Three modes: rank a long CSV (``--data``), rank submissions by a challenge's rule (``--leaderboard``),
or build the long CSV from metrics.json files (``--collect``). The command only parses options into a
:class:`evaluation.ranking.analysis.Design` and prints what the library returns. Bad input ends with
one clear sentence (naming the file or option) as the last stderr line and a non-zero exit, never a
traceback; an earlier run's result in the output folder is removed first.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evaluation.errors import ConfigurationError, EvaluationError
from evaluation.platform.metrics_json import write_metrics
from evaluation.ranking.analysis import ANALYSES, Design, analyse, default_analyses
from evaluation.ranking.bootstrap import MAX_RESAMPLES
from evaluation.ranking.data import collect, read_json, read_long_csv, submission_documents
from evaluation.ranking.primitives import TIES
from evaluation.ranking.schemes import SCHEMES, Scheme


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m evaluation.ranking",
        description="Rank challenge results with challengeR's schemes, quantify ranking robustness "
        "(Maier-Hein et al. 2018) and write ranking.json (and report.html).",
    )
    mode = p.add_mutually_exclusive_group(required=True)
    mode.add_argument("--data", type=Path, help="long CSV: algorithm, case, value[, task][, annotator]")
    mode.add_argument(
        "--leaderboard",
        metavar="NAME",
        help="rank submissions by a challenge's own rule (its phase's paths), or gc-absolute / gc-mean-of-ranks / "
        "gc-median-of-ranks over --path",
    )
    mode.add_argument("--collect", action="store_true", help="build the long CSV from --metrics-dir")
    p.add_argument("--output", type=Path, required=True, help="output folder (CSV file with --collect)")
    p.add_argument("--metrics-dir", type=Path, help="DIR/<submission>/metrics.json or DIR/<submission>.json")
    p.add_argument("--path", action="append", default=[], help="gc-* leaderboards: value path[:smaller], repeatable")
    p.add_argument(
        "--phase",
        type=Path,
        metavar="PHASE.json",
        help="--leaderboard: the phase settings (python -m evaluation.phase's output) instead of asking that command",
    )
    p.add_argument("--scheme", choices=SCHEMES, default="aggregate-then-rank", help="default aggregate-then-rank")
    p.add_argument("--aggregate", default="mean", help="mean, median or a quantile in (0, 1) (default mean)")
    p.add_argument("--ties", choices=TIES, default="min", help="ties method of every ranking (default min)")
    p.add_argument("--na", help="drop | worst | NUMBER (default: missing values are an error)")
    p.add_argument("--smaller-better", action="store_true", help="smaller values are better (distances)")
    p.add_argument(
        "--smaller-better-task",
        action="append",
        default=[],
        metavar="TASK",
        help="this task's smaller values are better (repeatable; e.g. hd95 beside dice)",
    )
    p.add_argument("--alpha", type=float, default=0.05, help="significance level of the Wilcoxon tests (default 0.05)")
    p.add_argument(
        "--p-adjust",
        choices=("none", "holm"),
        default="none",
        help="test-then-rank's p-value adjustment (default none)",
    )
    p.add_argument(
        "--bootstrap",
        type=int,
        default=0,
        metavar="N",
        help=f"number of bootstrap resamples, 0 to {MAX_RESAMPLES:,} (default 0: no bootstrap)",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the resamples and random ties (default 0)")
    p.add_argument("--compat", choices=("challengeR",), help="reproduce challengeR's bootstrap handling of copies")
    p.add_argument("--bootstrap-indices", type=Path, help="CSV of 0-based resample indices (one row per resample)")
    p.add_argument(
        "--scheduler",
        default=os.environ.get("EVALUATION_SCHEDULER") or None,
        metavar="ADDRESS",
        help="spread the bootstrap resamples over this Dask scheduler (default: $EVALUATION_SCHEDULER, else local)",
    )
    p.add_argument(
        "--consensus",
        choices=("euclidean",),
        help="consensus ranking over tasks in ranking.json (default none; "
        "the report shows it with several tasks anyway)",
    )
    p.add_argument("--consensus-weights", help="task=weight,... for the consensus (default equal)")
    p.add_argument(
        "--manipulation-threshold", type=float, help="missing-data check threshold (default: 0.5 or worst decile)"
    )
    p.add_argument(
        "--analyses",
        metavar="LIST",
        help=f"robustness analyses to compute, comma-separated from {', '.join(ANALYSES)}, or all / none "
        "(default annotators, plus leave-one-out with a bootstrap; --report computes all)",
    )
    p.add_argument("--report", action="store_true", help="also write the self-contained report.html (all analyses)")
    p.add_argument("--title", help="--report: the challenge's name, the report's title")
    p.add_argument("--challenge-url", metavar="URL", help="--report: the challenge's web page")
    p.add_argument("--organizers", help="--report: who organizes the challenge")
    p.add_argument("--description", help="--report: one paragraph on the challenge (task, data, metric)")
    return p


def _analyses(text: str | None, report: bool, resampling: bool) -> tuple[str, ...]:
    """The robustness analyses asked for (every one when the report needs them), in ``ANALYSES`` order."""
    if text is None:
        return ANALYSES if report else default_analyses(resampling)
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
        number = float(text)
    except ValueError:
        number = math.nan
    if not math.isfinite(number):
        raise ConfigurationError(f"--na must be drop, worst or a finite number, not {text!r}.")
    return number


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


def _weights(text: str | None) -> dict[str, float] | None:
    if not text:
        return None
    weights = {}
    for item in text.split(","):
        task, _, weight = item.partition("=")
        try:
            weights[task.strip()] = float(weight)
        except ValueError:
            raise ConfigurationError(f"--consensus-weights: {item!r} is not task=number.") from None
    return weights


def _design(args: argparse.Namespace) -> Design:
    """The run's design from the parsed options (no data read yet)."""
    resampling = bool(args.bootstrap or args.bootstrap_indices)
    return Design(
        scheme=Scheme(
            args.scheme,
            _aggregate(args.aggregate),
            args.ties,
            _na(args.na),
            args.smaller_better,
            args.alpha,
            args.p_adjust,
        ),
        smaller_better_tasks=tuple(args.smaller_better_task),
        analyses=_analyses(args.analyses, args.report, resampling),
        n_resamples=args.bootstrap,
        seed=args.seed,
        compat=args.compat == "challengeR",
        indices=args.bootstrap_indices,
        consensus=args.consensus,
        consensus_weights=_weights(args.consensus_weights),
        manipulation_threshold=args.manipulation_threshold,
        source=str(args.data),
    )


def _phase(path: Path | None) -> dict[str, Any] | None:
    """The phase settings file given with --phase (a JSON object), or None."""
    if path is None:
        return None
    phase = read_json(path, "--phase file")
    if not isinstance(phase, dict):
        raise ConfigurationError(f"--phase {path} does not hold a JSON object (python -m evaluation.phase's output).")
    return phase


def _clear(*paths: Path) -> None:
    """Remove the results of an earlier run first, so that a failed run leaves no stale one behind."""
    for path in paths:
        try:
            path.unlink(missing_ok=True)
        except OSError as error:
            raise ConfigurationError(f"Cannot replace the earlier result {path} ({error.strerror}).") from None


def run(argv: Sequence[str] | None = None) -> None:
    args = parser().parse_args(argv)
    if args.data is not None:
        _clear(args.output / "ranking.json", args.output / "report.html")
    elif args.leaderboard:
        _clear(args.output / "leaderboard.json")
    if args.collect or args.leaderboard:
        if args.metrics_dir is None:
            raise ConfigurationError("--collect and --leaderboard need --metrics-dir.")
        if args.collect:
            frame = collect(args.metrics_dir)
            args.output.parent.mkdir(parents=True, exist_ok=True)
            frame.to_csv(args.output, index=False)
            print(f"Wrote {len(frame)} rows to {args.output}.")
            return
        from evaluation.ranking.leaderboards import leaderboard  # only here: ranking a table does not need it

        board = leaderboard(args.leaderboard, submission_documents(args.metrics_dir), args.path, _phase(args.phase))
        write_metrics(args.output / "leaderboard.json", board)
        for submission, reason in board["excluded"].items():
            print(f"Excluded {submission}: {reason}.")
        print(f"Wrote {args.output / 'leaderboard.json'}.")
        return
    design = _design(args)
    design.check()  # before reading the data: a bad setting fails at once
    if args.challenge_url is not None:
        from evaluation.ranking.report import check_url

        check_url(args.challenge_url)
    result = analyse(read_long_csv(args.data), design, args.scheduler)
    for name, entry in result.tasks.items():
        if entry.task.missing:
            print(f"Task {name!r}: {len(entry.task.missing)} missing (algorithm, case) pair(s) completed as NA.")
    for warning in result.warnings:
        print(f"Warning: {warning}", file=sys.stderr)
    write_metrics(args.output / "ranking.json", result.to_json())
    print(f"Wrote {args.output / 'ranking.json'}.")
    if args.report:
        from evaluation.ranking.report import Metadata, write_report

        metadata = Metadata(args.title, args.challenge_url, args.organizers, args.description)
        write_report(args.output / "report.html", result, metadata)
        print(f"Wrote {args.output / 'report.html'}.")


def main(argv: Sequence[str] | None = None) -> int:
    """Run; an EvaluationError becomes the last stderr line and exit code 2."""
    try:
        run(argv)
    except EvaluationError as error:
        print(str(error), file=sys.stderr)
        return 2
    except MemoryError:  # past the estimate of analysis.check_memory (e.g. a data file of many millions of rows)
        from evaluation.platform.files import memory_budget

        print(f"The ranking tool ran out of memory ({memory_budget()[1]}): rank fewer algorithms, cases or "
              "resamples.", file=sys.stderr)  # fmt: skip
        return 2
    except Exception:  # an unforeseen defect: traceback for the organizer on stdout, one line on stderr
        traceback.print_exc(file=sys.stdout)
        print("The ranking tool failed unexpectedly; the traceback is on stdout.", file=sys.stderr)
        return 1
    return 0
