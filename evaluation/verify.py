"""``python -m evaluation.verify --challenge DECLARATION (--reference-image IMAGE | --reference-command CMD)
(--synthesize N [--seed S] | --outputs DIR) [--ground-truth GT] [--map MAP.toml] [--tol 1e-9]`` (``gc-verify``)

Proof against the organizer's own evaluation: the declaration and a reference evaluation run on the
same inputs and ground truth, and every number of the reference's metrics.json is compared with one of
ours. The reference is a Docker image that keeps the platform's contract (reads /input, writes
/output/metrics.json; run with --network none and the phase's memory limit, --memory, the ground truth
mounted read-only at --ground-truth-mount), or a command with {input}, {output} and {ground_truth}
placeholders (run by the shell, the paths quoted). The inputs: N submissions generated from the
declaration (--synthesize N --seed S, the same bytes for the same seed: empty and full masks, a single
voxel, shifted / dilated / eroded / split / merged copies of the reference, extra and missing lesions,
missing outputs and jobs, tied scores, boundary values), or the organizer's own outputs (--outputs DIR,
as python -m evaluation.make_input reads them); on the organizer's ground truth (--ground-truth) or,
with --synthesize and none given, a synthetic one drawn from the declaration.

Each reference number is paired with one of ours by the declaration's [verify.map] table or --map
("reference.path" = "our.path"; "*" matches one key and fills the next "*" on our side; "#" matches a
position n among the sorted cases and becomes that case's name; a last "**" matches the rest), or left
out by [verify.ignore] ("reference.path" = "the organizer's reason"). Numbers whose values coincide with
exactly one of ours in every run are suggested as map lines. The report names each number: equal,
differs (the submission, both values, the smallest case that still shows it, saved as a ready-to-run
input under --save), unmapped or ignored; --json writes it as JSON. Exit 0 only when every mapped
number agrees, both sides refuse the same submissions and no number is unmapped; the last line gives
the figure.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import tomllib
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evaluation.cli import _fail, tool_parser
from evaluation.compare import close, is_number, tolerance_argument
from evaluation.errors import ConfigurationError, EvaluationError
from evaluation.platform.files import read_named
from evaluation.platform.predictions import read_json_file

DEFAULT_MEMORY = "8g"  # the platform's default memory of an evaluation method; set the phase's own with --memory
DEFAULT_GROUND_TRUTH_MOUNT = "/opt/app/ground-truth"  # where evalutils' evaluation containers read it
LAYOUTS = ("platform", "flat")  # the reference's /input: the platform's, or one file per case (legacy containers)
Outcome = dict[str, Any] | str  # a metrics.json, or the one line of a refusal


# ---------------------------------------------------------------------------------------------- the map


def _match(pattern: Sequence[str], path: Sequence[str], cases: Sequence[str]) -> list[str] | None:
    """The captures of ``pattern`` ("*": any key, "#": a case position, as the case name; a last "**":
    the rest of the path, one key or more) in ``path``."""
    if pattern and pattern[-1] == "**":
        head = len(pattern) - 1
        if len(path) <= head:
            return None
        captured = _match(pattern[:head], path[:head], cases)
        return None if captured is None else [*captured, ".".join(path[head:])]
    if len(pattern) != len(path):
        return None
    captured = []
    for want, key in zip(pattern, path, strict=True):
        if want == "*":
            captured.append(key)
        elif want == "#":
            if not key.isdigit() or int(key) >= len(cases):
                return None
            captured.append(cases[int(key)])
        elif want != key:
            return None
    return captured


@dataclass(frozen=True)
class NumberMap:
    """Reference path -> our path patterns, and reference paths left out with the organizer's reason."""

    pairs: tuple[tuple[str, str], ...] = ()
    ignored: tuple[tuple[str, str], ...] = ()

    @classmethod
    def from_table(cls, table: Any, where: str) -> NumberMap:
        if not isinstance(table, dict):
            raise ConfigurationError(f"{where}: [verify] must be a table with 'map' and 'ignore' tables.")
        unknown = sorted(set(table) - {"map", "ignore"})
        if unknown:
            raise ConfigurationError(f"{where}: [verify] has an unknown key '{unknown[0]}' (map, ignore).")
        found = []
        for key in ("map", "ignore"):
            part = table.get(key, {})
            if not isinstance(part, dict) or not all(isinstance(v, str) for v in part.values()):
                raise ConfigurationError(f"{where}: [verify.{key}] must map reference paths to strings.")
            found.append(tuple(part.items()))
        for reference, ours in found[0]:
            if ours.count("*") + ours.count("#") > reference.count("*") + reference.count("#"):
                raise ConfigurationError(f"{where}: [verify.map] '{reference}' = '{ours}' has more wildcards on "
                                         "our side than on the reference's.")  # fmt: skip
        return cls(found[0], found[1])

    def __add__(self, other: NumberMap) -> NumberMap:
        return NumberMap(other.pairs + self.pairs, other.ignored + self.ignored)  # the later (--map) wins

    def resolve(self, path: str, cases: Sequence[str]) -> tuple[str, str]:
        """("map", our path), ("ignore", reason) or ("unmapped", "")."""
        keys = path.split(".")
        for pattern, reason in self.ignored:
            if _match(pattern.split("."), keys, cases) is not None:
                return "ignore", reason
        for pattern, ours in self.pairs:
            captured = _match(pattern.split("."), keys, cases)
            if captured is not None:
                filled = iter(captured)
                return "map", ".".join(next(filled, key) if key in ("*", "#", "**") else key for key in ours.split("."))
        return "unmapped", ""


def numbers(document: Any, prefix: str = "") -> Iterator[tuple[str, float]]:
    """Every numeric leaf of a metrics.json as (dotted path, value); null and NaN both as NaN."""
    if isinstance(document, dict):
        for key, value in document.items():
            yield from numbers(value, f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(document, list):
        for index, value in enumerate(document):
            yield from numbers(value, f"{prefix}.{index}" if prefix else str(index))
    elif is_number(document):
        yield prefix, float(document)
    elif document is None and prefix:
        yield prefix, math.nan


# ------------------------------------------------------------------------------------------- the runs


@dataclass
class Reference:
    """How the reference evaluation runs: a Docker image or a shell command."""

    image: str | None = None
    command: str | None = None
    memory: str = DEFAULT_MEMORY
    mount: str = DEFAULT_GROUND_TRUTH_MOUNT
    layout: str = "platform"
    timeout: float = 1800.0

    def run(self, input_dir: Path, ground_truth: Path, output_dir: Path) -> Outcome:
        """Its metrics.json, or the last line it wrote when it wrote none."""
        output_dir.mkdir(parents=True, exist_ok=True)
        os.chmod(output_dir, 0o777)  # the image's own user writes there
        if self.image:
            argv = ["docker", "run", "--rm", "--network", "none", "--memory", self.memory,
                    "--memory-swap", self.memory, "-v", f"{input_dir.resolve()}:/input:ro",
                    "-v", f"{output_dir.resolve()}:/output", "-v", f"{ground_truth.resolve()}:{self.mount}:ro",
                    self.image]  # fmt: skip
            shell = False
        else:
            assert self.command is not None
            quoted = {k: shlex.quote(str(v.resolve())) for k, v in
                      (("input", input_dir), ("output", output_dir), ("ground_truth", ground_truth))}  # fmt: skip
            argv = [self.command.format(**quoted)]
            shell = True
        try:
            done = subprocess.run(argv, shell=shell, capture_output=True, text=True, timeout=self.timeout)
        except subprocess.TimeoutExpired:
            return f"the reference did not finish within {self.timeout:g} s"
        except OSError as error:
            raise ConfigurationError(f"The reference cannot be started: {error.strerror}.") from None
        metrics = output_dir / "metrics.json"
        if os.path.lexists(metrics):  # the one bounded reader: no FIFO, no unbounded file, one line
            try:
                return read_json_file(metrics)
            except ConfigurationError as error:
                return f"the reference wrote a metrics.json that cannot be used: {error}"
        lines = [line for line in (done.stderr or done.stdout).splitlines() if line.strip()]
        return f"the reference wrote no metrics.json (exit {done.returncode}): {lines[-1] if lines else 'no output'}"


def run_ours(challenge: str, input_dir: Path, ground_truth: Path, output_dir: Path) -> Outcome:
    """Our evaluation in this process (one worker, no log): metrics.json or the refusal line."""
    from evaluation.pipeline import METRICS_FILE, evaluate
    from evaluation.runner import LocalPool

    try:
        evaluate(challenge, input_dir, output_dir, ground_truth, executor=LocalPool(1), log=lambda line: None)
    except EvaluationError as error:
        return str(error)
    return read_json_file(output_dir / METRICS_FILE)


def flat_input(outputs_dir: Path, target: Path) -> None:
    """The legacy layout some evaluation containers read: each case's output file as /input/<case><suffix>
    (an image output's one file; a value output's JSON), one output per phase."""
    target.mkdir(parents=True, exist_ok=True)
    for case_dir in sorted(p for p in outputs_dir.iterdir() if p.is_dir()):
        files = sorted(p for p in case_dir.rglob("*") if p.is_file())
        if len(files) > 1:
            raise ConfigurationError("--reference-layout flat takes one output per case; use the platform layout.")
        for path in files:
            shutil.copyfile(path, target / f"{case_dir.name}{''.join(path.suffixes)}")


# ------------------------------------------------------------------------------------------ the driver


@dataclass
class Submission:
    """One submission: the variant of every case's output (synthesised) or the organizer's outputs."""

    name: str
    chosen: dict[str, dict[str, str]] | None = None
    outputs: Path | None = None


@dataclass
class Difference:
    path: str  # the reference's number, "(refusal)" when one side refused and the other did not
    ours_path: str
    submission: str
    reference: Any
    ours: Any
    smallest: str = ""  # the shrunk case (its variants), once shrunk
    saved: str = ""


@dataclass
class Report:
    rows: list[dict[str, Any]] = field(default_factory=list)
    refusals: list[Difference] = field(default_factory=list)
    suggested: dict[str, str] = field(default_factory=dict)
    submissions: int = 0

    def counts(self) -> dict[str, int]:
        found = {"equal": 0, "differs": 0, "unmapped": 0, "ignored": 0}
        for row in self.rows:
            found[row["status"]] += 1
        return found

    @property
    def clean(self) -> bool:
        counts = self.counts()
        return counts["differs"] == 0 and counts["unmapped"] == 0 and not self.refusals and counts["equal"] > 0

    def as_json(self) -> dict[str, Any]:
        return {"clean": self.clean, "counts": self.counts(), "submissions": self.submissions, "numbers": self.rows,
                "refusals": [vars(d) for d in self.refusals], "suggested_map": self.suggested}  # fmt: skip

    def lines(self) -> list[str]:
        out = []
        for row in self.rows:
            if row["status"] == "equal":
                out.append(f"equal     {row['reference']} = {row['ours']} ({row['runs']} run(s))")
            elif row["status"] == "ignored":
                out.append(f"ignored   {row['reference']}: {row['reason']}")
            elif row["status"] == "unmapped":
                hint = f" (suggested: {row['suggested']})" if row.get("suggested") else ""
                out.append(f"unmapped  {row['reference']}{hint}")
            else:
                d = row["difference"]
                smallest = d["smallest"] or "not shrunk (one difference is)"
                out.append(f"differs   {row['reference']} vs {row['ours']}: {d['submission']}: reference "
                           f"{d['reference']!r}, ours {d['ours']!r}; smallest case: {smallest}"
                           + (f" (saved in {d['saved']})" if d["saved"] else ""))  # fmt: skip
        for d in self.refusals:
            out.append(f"refused   {d.submission}: reference: {d.reference}; ours: {d.ours}; smallest case: "
                       f"{d.smallest or '-'}" + (f" (saved in {d.saved})" if d.saved else ""))  # fmt: skip
        if self.suggested:
            out.append("suggested [verify.map] lines (values coincide with exactly one of ours in every run):")
            out += [f'  "{ref}" = "{ours}"' for ref, ours in self.suggested.items()]
        counts = self.counts()
        verdict = "verified" if self.clean else "NOT verified"
        out.append(f"{verdict}: {counts['equal']} equal, {counts['differs']} differ, {counts['unmapped']} unmapped, "
                   f"{counts['ignored']} ignored of {len(self.rows)} reference numbers over {self.submissions} "
                   f"submission(s); {len(self.refusals)} refused by one side only")  # fmt: skip
        return out


class Verifier:
    """The declaration against the reference on one ground truth, in the folder ``work``."""

    def __init__(self, challenge: str, reference: Reference, ground_truth: Path, work: Path, number_map: NumberMap,
                 tolerance: float = 1e-9, seed: int = 0, log: Callable[[str], None] = print) -> None:  # fmt: skip
        from evaluation.registry import get

        self.challenge, self.reference, self.ground_truth, self.work = challenge, reference, ground_truth, work
        self.number_map, self.tolerance, self.seed, self.log = number_map, tolerance, seed, log
        self.made = get(challenge)
        self.declaration = getattr(self.made, "declaration", None)
        self.variants: dict[str, dict[str, dict[str, Any]]] = {}
        self.images: dict[str, dict[str, Any]] = {}
        self.cases: list[str] = []
        self.counter = 0

    # -- inputs
    def synthesize(self, count: int) -> list[Submission]:
        from evaluation.declarative import synthesize

        if self.declaration is None:
            raise ConfigurationError(f"--synthesize needs a declared challenge; {self.challenge} is not one.")
        self.variants = synthesize.case_variants(self.declaration, self.ground_truth, self.seed)
        self.images = synthesize.reference_images(self.declaration, self.ground_truth)
        self.cases = sorted(self.variants)
        first = self.variants[self.cases[0]]
        names = {slug: list(options) for slug, options in first.items()}
        plans = synthesize.plan(self.cases, names, count)
        return [Submission(f"submission {k + 1} (seed {self.seed})", chosen) for k, chosen in enumerate(plans)]

    def write(self, submission: Submission, folder: Path) -> tuple[Path, Path]:
        """The submission's outputs folder and the /input layouts (ours, the reference's)."""
        from evaluation.declarative import synthesize
        from evaluation.make_input import build_input

        outputs = submission.outputs
        if submission.chosen is not None:
            outputs = folder / "outputs"
            outputs.mkdir(parents=True)
            assert self.declaration is not None
            synthesize.write_outputs(self.declaration, self.variants, submission.chosen, outputs, self.images)
        assert outputs is not None
        ours = folder / "input"
        if any(p.is_dir() for p in outputs.iterdir()):
            build_input(self.made, outputs, ours, self.seed)
        else:  # every job missing: an empty submission
            ours.mkdir(parents=True)
            (ours / "predictions.json").write_text("[]")
        theirs = ours
        if self.reference.layout == "flat":
            theirs = folder / "input-flat"
            flat_input(outputs, theirs)
        return ours, theirs

    def run(self, submission: Submission, keep: Path | None = None) -> tuple[Outcome, Outcome, Path]:
        self.counter += 1
        folder = keep or self.work / f"run-{self.counter:03d}"
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        ours_input, their_input = self.write(submission, folder)
        ours = run_ours(self.challenge, ours_input, self.ground_truth, folder / "ours")
        theirs = self.reference.run(their_input, self.ground_truth, folder / "reference")
        return ours, theirs, folder

    # -- comparison
    def differences(self, ours: Outcome, theirs: Outcome, submission: str) -> list[Difference]:
        if isinstance(ours, str) or isinstance(theirs, str):
            if isinstance(ours, str) and isinstance(theirs, str):
                return []  # both refused
            return [Difference("(refusal)", "", submission, theirs if isinstance(theirs, str) else "scored it",
                               ours if isinstance(ours, str) else "scored it")]  # fmt: skip
        mine = dict(numbers(ours))
        found = []
        for path, value in numbers(theirs):
            what, target = self.number_map.resolve(path, self.cases)
            if what != "map":
                continue
            if target not in mine:
                found.append(Difference(path, target, submission, value, "absent"))
            elif not close(value, mine[target], self.tolerance):
                found.append(Difference(path, target, submission, value, mine[target]))
        return found

    def shrink(self, submission: Submission, difference: Difference) -> Submission:
        """The submission with as many outputs as possible back to the identical copy (a missing job back
        to a job), the same reference number still differing (or the same side still refusing alone)."""
        from evaluation.declarative.synthesize import IDENTICAL

        assert submission.chosen is not None
        chosen = {case: dict(outputs) for case, outputs in submission.chosen.items()}

        def still(candidate: dict[str, dict[str, str]]) -> bool:
            ours, theirs, _ = self.run(Submission(submission.name, candidate))
            found = self.differences(ours, theirs, submission.name)
            return any(d.path == difference.path for d in found)

        for case in sorted(chosen):  # whole cases first, then output by output
            if all(v == IDENTICAL for v in chosen[case].values()):
                continue
            trial = {**chosen, case: dict.fromkeys(chosen[case], IDENTICAL)}
            if still(trial):
                chosen = trial
                continue
            for slug in sorted(chosen[case]):
                if chosen[case][slug] != IDENTICAL and len(chosen[case]) > 1:
                    trial = {**chosen, case: {**chosen[case], slug: IDENTICAL}}
                    if still(trial):
                        chosen = trial
        return Submission(f"{submission.name}, shrunk", chosen)

    def describe(self, submission: Submission) -> str:
        from evaluation.declarative.synthesize import IDENTICAL

        assert submission.chosen is not None
        parts = [f"{case}: {slug} {variant}" for case, outputs in sorted(submission.chosen.items())
                 for slug, variant in sorted(outputs.items()) if variant != IDENTICAL]  # fmt: skip
        return "; ".join(parts) or "every output identical to the reference"

    def verify(self, submissions: Sequence[Submission], save: Path | None) -> Report:
        report = Report()
        if not self.cases and self.declaration is not None:
            from evaluation.declarative.reference import load_declared_reference

            self.cases = list(load_declared_reference(self.ground_truth, self.declaration).cases)
        seen: dict[str, list[tuple[float, dict[str, float]]]] = {}  # reference path -> (value, our numbers) per run
        first: dict[str, Difference] = {}
        refusals: list[Difference] = []
        for submission in submissions:
            report.submissions += 1
            ours, theirs, _ = self.run(submission)
            self.log(f"{submission.name}: ours {'refused' if isinstance(ours, str) else 'scored'}, the reference "
                     f"{'refused' if isinstance(theirs, str) else 'scored'}")  # fmt: skip
            for difference in self.differences(ours, theirs, submission.name):
                if difference.path == "(refusal)":
                    refusals.append(difference)
                else:
                    first.setdefault(difference.path, difference)
            if isinstance(ours, dict) and isinstance(theirs, dict):
                mine = {p: v for p, v in numbers(ours) if not p.startswith("settings.")}
                for path, value in numbers(theirs):
                    seen.setdefault(path, []).append((value, mine))
            if first and submission.chosen is not None:
                break  # the first difference is shrunk below; the rest is reported from this run on
        for difference in [*first.values(), *refusals][:1]:
            origin = next(s for s in submissions if s.name == difference.submission)
            if origin.chosen is None:
                continue
            self.log(f"shrinking the case of {difference.path} ...")
            smallest = self.shrink(origin, difference)
            difference.smallest = self.describe(smallest)
            if save is not None:
                ours, theirs, folder = self.run(smallest, keep=save)
                difference.saved = str(folder)
                ground_truth = self.ground_truth.resolve()
                if ground_truth.is_relative_to(self.work.resolve()):  # a synthetic one, gone with the work folder
                    shutil.copytree(ground_truth, folder / "ground-truth")
                    ground_truth = folder / "ground-truth"
                again = self.differences(ours, theirs, smallest.name)
                match = next((d for d in again if d.path == difference.path), None)
                if match is not None:
                    difference.reference, difference.ours = match.reference, match.ours
                (folder / "case.json").write_text(
                    json.dumps(
                        {
                            "challenge": self.challenge,
                            "ground_truth": str(ground_truth),
                            "number": difference.path,
                            "ours": difference.ours_path,
                            "reference_value": difference.reference,
                            "our_value": difference.ours,
                            "variants": smallest.chosen,
                            "run_ours": f"python -m evaluation --challenge {self.challenge} --input {folder / 'input'} "
                            f"--output OUT --ground-truth {ground_truth}",
                        },
                        indent=2,
                        default=str,
                    )
                )
        report.refusals = refusals
        for path, runs in seen.items():
            what, target = self.number_map.resolve(path, self.cases)
            row: dict[str, Any] = {"reference": path, "runs": len(runs)}
            if what == "ignore":
                row.update(status="ignored", reason=target)
            elif what == "unmapped":
                row["status"] = "unmapped"
                candidates = set.intersection(*({p for p, v in mine.items() if close(value, v, self.tolerance)}
                                                for value, mine in runs))  # fmt: skip
                if len(candidates) == 1:
                    row["suggested"] = report.suggested[path] = candidates.pop()
            elif path in first:
                row.update(status="differs", ours=target, difference=vars(first[path]))
            else:
                row.update(status="equal", ours=target)
            report.rows.append(row)
        report.suggested = generalised(report.suggested, self.cases)
        for path, difference in first.items():
            if path not in seen:
                report.rows.append({"reference": path, "runs": 0, "status": "differs", "ours": difference.ours_path,
                                    "difference": vars(difference)})  # fmt: skip
        return report


def generalised(suggested: dict[str, str], cases: Sequence[str]) -> dict[str, str]:
    """Suggested pairs with a case's name on both sides (or its position on the reference's, as evalutils
    keys cases) written once as a pattern ("*" / "#"), where every case of the pattern pairs alike."""
    names = set(cases)
    patterns: dict[tuple[str, str], list[str]] = {}
    for reference, ours in suggested.items():
        left, right = reference.split("."), ours.split(".")
        for index, key in enumerate(left):
            case = key if key in names else (cases[int(key)] if key.isdigit() and int(key) < len(cases) else None)
            if case is not None and right.count(case) == 1:
                wildcard = "*" if key == case else "#"
                pattern = (".".join([*left[:index], wildcard, *left[index + 1 :]]),
                           ".".join(wildcard if k == case else k for k in right))  # fmt: skip
                patterns.setdefault(pattern, []).append(reference)
                break
    found = dict(suggested)
    for (reference, ours), members in patterns.items():
        if len(members) > 1:
            for member in members:
                found.pop(member, None)
            found[reference] = ours
    return found


def declared_map(challenge: str) -> NumberMap:
    """The declaration's own [verify] table (empty without one)."""
    from evaluation.registry import get

    declaration = getattr(get(challenge), "declaration", None)
    data = getattr(declaration, "raw", None) or {}
    if "verify" not in data:
        return NumberMap()
    return NumberMap.from_table(data["verify"], f"{challenge} [verify]")


def map_file(path: Path) -> NumberMap:
    """--map: a TOML file with [verify.map] / [verify.ignore] (or top-level [map] / [ignore]), or JSON."""
    if path.suffix == ".json":
        data = read_json_file(path)
    else:
        try:
            data = tomllib.loads(read_named(path).decode("utf-8"))
        except (UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
            raise ConfigurationError(f"--map {path} cannot be read ({type(error).__name__}).") from None
    return NumberMap.from_table(data.get("verify", data), str(path))


def parser() -> argparse.ArgumentParser:
    result = tool_parser("evaluation.verify", __doc__)
    what = result.add_mutually_exclusive_group(required=True)
    what.add_argument("--reference-image", metavar="IMAGE", help="the reference evaluation's Docker image")
    what.add_argument("--reference-command", metavar="CMD", help="a command with {input}, {output}, {ground_truth}")
    where = result.add_mutually_exclusive_group(required=True)
    where.add_argument("--synthesize", type=int, metavar="N", help="N submissions generated from the declaration")
    where.add_argument("--outputs", type=Path, metavar="DIR", help="the organizer's outputs (DIR/<case>/...)")
    result.add_argument("--seed", type=int, default=0, help="seed of the generated submissions (default: 0)")
    result.add_argument("--ground-truth", type=Path, help="the ground truth (default: synthetic, with --synthesize)")
    result.add_argument("--map", type=Path, help="a TOML file with [verify.map] and [verify.ignore]")
    result.add_argument("--tol", type=tolerance_argument, default=1e-9, help="absolute tolerance (default: 1e-9)")
    result.add_argument("--memory", default=DEFAULT_MEMORY, help="the reference image's memory limit (the phase's)")
    result.add_argument(
        "--ground-truth-mount",
        default=DEFAULT_GROUND_TRUTH_MOUNT,
        help="where the reference image reads the ground truth (default: %(default)s)",
    )
    result.add_argument(
        "--reference-layout",
        choices=LAYOUTS,
        default="platform",
        help="the reference's /input: the platform's layout, or flat (/input/<case><suffix>)",
    )
    result.add_argument("--timeout", type=float, default=1800.0, help="seconds per reference run (default: 1800)")
    result.add_argument("--work", type=Path, help="where the runs are written (default: a temporary folder)")
    result.add_argument(
        "--save",
        type=Path,
        default=Path("verify-smallest-case"),
        help="where the smallest differing case is saved, ready to run (default: %(default)s)",
    )
    result.add_argument("--json", type=Path, help="write the report as JSON here")
    return result


def run(arguments: argparse.Namespace) -> Report:
    """The verification the parsed command line asks for."""
    if not arguments.challenge:
        raise ConfigurationError("No challenge given: use --challenge or set EVALUATION_CHALLENGE.")
    if arguments.synthesize is not None and arguments.synthesize < 1:
        raise ConfigurationError("--synthesize needs at least 1 submission.")
    save = arguments.save
    if save.exists() and (not save.is_dir() or (any(save.iterdir()) and not (save / "case.json").is_file())):
        raise ConfigurationError(f"--save {save} exists and is not a case verify saved: give a new folder.")
    number_map = declared_map(arguments.challenge)
    if arguments.map is not None:
        number_map = number_map + map_file(arguments.map)
    reference = Reference(arguments.reference_image, arguments.reference_command, arguments.memory,
                          arguments.ground_truth_mount, arguments.reference_layout, arguments.timeout)  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="gc-verify-") as scratch:
        work = arguments.work or Path(scratch)
        ground_truth = arguments.ground_truth
        if ground_truth is None and arguments.synthesize is None:
            from evaluation.platform.ground_truth import resolve_ground_truth

            ground_truth = resolve_ground_truth(arguments.challenge, None)
        verifier = Verifier(arguments.challenge, reference, ground_truth or work / "ground-truth", work,
                            number_map, arguments.tol, arguments.seed)  # fmt: skip
        if ground_truth is None:
            from evaluation.declarative.synthesize import synthetic_ground_truth

            if verifier.declaration is None:
                raise ConfigurationError("A synthetic ground truth needs a declared challenge: give --ground-truth.")
            synthetic_ground_truth(verifier.declaration, work / "ground-truth", arguments.seed)
        if arguments.synthesize is not None:
            submissions = verifier.synthesize(arguments.synthesize)
        else:
            submissions = [Submission(f"the outputs in {arguments.outputs}", outputs=arguments.outputs)]
        return verifier.verify(submissions, arguments.save)


def main(argv: Sequence[str] | None = None) -> int:
    arguments = parser().parse_args(argv)
    try:
        report = run(arguments)
        for line in report.lines()[:-1]:
            print(line)
        if arguments.json is not None:
            arguments.json.write_text(json.dumps(report.as_json(), indent=2, default=str))
    except EvaluationError as error:
        return _fail(str(error))
    except Exception as error:  # a defect: the traceback is for the admins, stdout only
        traceback.print_exc(file=sys.stdout)
        return _fail(f"verify failed with an internal error ({type(error).__name__}); the traceback is on stdout.")
    sys.stdout.flush()
    print(report.lines()[-1], file=sys.stdout if report.clean else sys.stderr)
    return 0 if report.clean else 1


if __name__ == "__main__":
    raise SystemExit(main())
