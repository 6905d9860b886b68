"""ISIC 2019 and ISIC 2018 task 3: multi-class skin lesion diagnosis from a CSV of probabilities.

Reference: ImageMarkup/isic-challenge-scoring 5.6.0 (PyPI ``isic-challenge-scoring``):
``load_csv.py`` (the submission checks, their order and message texts, the truth file and its
weights), ``classification.py`` (which weights score what) and ``metrics.py`` (definitions, in
evaluation/metrics/classification.py). Choices: ../shared/spec/challenges.md (ISIC).

A prediction-file phase: the participant's CSV is ``/input/predictions.csv`` (or the single
``*.csv`` there). Its size is checked before anything is read; then the reference's checks run in
its order with its messages (whitespace joined to one line; lists longer than the platform shows
are shortened). Two behaviours of the reference are not copied: a category without score-weighted
positives makes it crash, here its auc, ap and auc_sens_80 are null and leave the macro means
(listed under ``deviations``); ``malignant_auc``, which the reference lacks, is added.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from evaluation.contract import CaseTask, Challenge, Checked, Option, Phase, Prepared
from evaluation.errors import ConfigurationError, SubmissionError
from evaluation.metrics.classification import (
    CATEGORY_METRICS,
    CURVE_METRICS,
    argmax_labels,
    average_precision,
    balanced_multiclass_accuracy,
    category_metrics,
    macro_mean,
    roc_auc,
)
from evaluation.platform.files import open_text, read_bytes, regular_size
from evaluation.platform.prediction_file import find_prediction_file

TRUTH_FILE = "truth.csv"
# The reference zeroes both weights of this image whatever truth.csv says (load_csv.parse_truth_csv).
ZERO_WEIGHT_IMAGE = "ISIC_0035068"
WEIGHT_COLUMNS = ("score_weight", "validation_weight")
TARGET_METRICS = ("balanced_accuracy", "auc", "ap")
SCORE_TITLES = {
    "balanced_accuracy": "Balanced multi-class accuracy",
    "auc": "AUC (macro average over categories)",
    "ap": "Average precision (macro average over categories)",
}
MALIGNANT = frozenset({"MEL", "BCC", "AK", "AKIEC", "SCC"})
NEWLINE_PROBE = 2000  # characters the reference reads to look for two newlines
MESSAGE_CHARACTERS = 1000  # the platform shows 1,024 characters of the last stderr line


@dataclass(frozen=True)
class Truth:
    """The reference: images sorted by name, one-hot categories, both weights, row-aligned."""

    images: pd.Index
    categories: tuple[str, ...]
    values: np.ndarray
    score_weight: np.ndarray
    validation_weight: np.ndarray


def load_truth(path: Path, categories: Sequence[str]) -> Truth:
    """``truth.csv``: ``image``, the categories in the challenge's order, optional weights (1.0).

    Rows are sorted by image as the reference sorts them. The reference pairs its weights, kept
    in file order, with the sorted rows by position; a file whose weights would move is refused
    rather than scored with misplaced weights.
    """
    if not path.is_file():
        raise ConfigurationError(f"The ISIC ground truth has no {path.name}.")
    try:
        table = pd.read_csv(path, header=0)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as error:
        raise ConfigurationError(
            f"The ISIC ground truth {path.name} cannot be parsed as UTF-8 CSV ({type(error).__name__}): fix it in "
            "the phase's ground truth."
        ) from None
    columns = [c for c in table.columns if c not in WEIGHT_COLUMNS]
    if columns != ["image", *categories]:
        raise ConfigurationError(
            f"The ISIC ground truth {path.name} must have the columns image, {', '.join(categories)} "
            f"(and optionally {' and '.join(WEIGHT_COLUMNS)}); it has {', '.join(map(str, table.columns))}."
        )
    images = table["image"].astype(str)
    if not images.is_unique:
        raise ConfigurationError(f"The ISIC ground truth {path.name} lists an image twice.")
    for column in WEIGHT_COLUMNS:
        if column not in table:
            table[column] = 1.0
    table.loc[images == ZERO_WEIGHT_IMAGE, list(WEIGHT_COLUMNS)] = 0.0
    try:
        values = table[list(categories)].to_numpy(dtype=float)
        weights = table[list(WEIGHT_COLUMNS)].to_numpy(dtype=float)
    except (TypeError, ValueError):
        raise ConfigurationError(f"The ISIC ground truth {path.name} holds a non-numeric value.") from None
    if not np.isin(values, (0.0, 1.0)).all():
        raise ConfigurationError(f"The ISIC ground truth {path.name} must hold 0 or 1 in every category column.")
    if not (np.isfinite(weights).all() and (weights >= 0).all()):
        raise ConfigurationError(f"The ISIC ground truth {path.name} has a weight that is not a number >= 0.")
    if not weights[:, 0].any():
        raise ConfigurationError(f"The ISIC ground truth {path.name} gives every image a score_weight of 0.")
    order = np.argsort(images.to_numpy(dtype=object), kind="stable")
    if not np.array_equal(weights[order], weights):
        raise ConfigurationError(
            f"The ISIC ground truth {path.name} is not sorted by image and its weights vary; "
            "isic-challenge-scoring would pair those weights with other images: sort it by image."
        )
    return Truth(
        images=pd.Index(images.to_numpy()[order], name="image"),
        categories=tuple(categories),
        values=values[order],
        score_weight=weights[order, 0],
        validation_weight=weights[order, 1],
    )


def _listing(prefix: str, items: Sequence[Any]) -> str:
    """``prefix`` + the Python list of ``items`` + ``.``, as the reference writes it, shortened to
    what the platform shows (the total count added) when the whole list is too long."""
    full = f"{prefix}{list(items)!r}."
    if len(full) <= MESSAGE_CHARACTERS:
        return full
    shown: list[str] = []
    budget = MESSAGE_CHARACTERS - len(prefix) - 40
    for item in items:
        text = repr(item)
        if sum(len(s) + 2 for s in shown) + len(text) > budget:
            break
        shown.append(text)
    return f"{prefix}[{', '.join(shown)}, ...] ({len(items)} in all)."


def read_submission(path: Path, categories: Sequence[str], max_megabytes: float) -> pd.DataFrame:
    """The submitted probabilities indexed by image, columns in ``categories`` order.

    The size is checked first (no read); then the reference's checks in its order, with its
    messages: newlines, parsing, UTF-8, the ``image`` column, ``.jpg`` suffixes stripped and
    duplicates, missing and extra columns, missing values, non-float columns, values in [0, 1].
    """
    size = regular_size(path, f"The prediction file {path.name}")
    if size > max_megabytes * 1e6:
        raise SubmissionError(
            f"The prediction file {path.name} is {size / 1e6:.1f} MB, more than the {max_megabytes:g} MB allowed; "
            "a CSV of probabilities for every image is far smaller."
        )
    try:
        with open_text(path, f"The prediction file {path.name}") as stream:  # universal newlines, as the reference
            if stream.read(NEWLINE_PROBE).count("\n") < 2:
                raise SubmissionError("No newlines detected in CSV.")
            stream.seek(0)
            try:
                table = pd.read_csv(stream, header=0, index_col=False)
            except (pd.errors.ParserError, pd.errors.EmptyDataError) as error:
                raise SubmissionError(f'Could not parse CSV: "{error}".') from None
    except UnicodeDecodeError:
        message = "Could not parse CSV: could not decode file as UTF-8."
        raise SubmissionError(message + _undecodable_lines(path)) from None
    return _checked(table, categories)


def _undecodable_lines(path: Path, shown: int = 3) -> str:
    """Where the reference's "could not decode file as UTF-8" happens: the first few lines (1 = the
    header) that are not UTF-8, each with its image as far as it can be read."""
    lines = read_bytes(path, path.name, max_bytes=None).splitlines()  # size already bounded by max_file_mb
    bad = []
    for number, line in enumerate(lines, start=1):
        try:
            line.decode("utf-8")
        except UnicodeDecodeError:
            bad.append(f"{number} ({line.split(b',', 1)[0].decode('utf-8', 'backslashreplace')[:40]})")
            if len(bad) == shown:
                break
    return f" First lines that are not UTF-8: {', '.join(bad)}." if bad else ""


def _non_float_rows(table: pd.DataFrame, columns: Sequence[str], shown: int = 3) -> str:
    """Which rows make the reference's "non-floating-point value(s)" check fail: the first few
    values that are not numbers, or a column that holds only whole numbers (read as integers)."""
    rows, whole = [], []
    for column in columns:
        values = table[column]
        if values.dtype == np.dtype("O"):
            wrong = values[pd.to_numeric(values, errors="coerce").isna()]
            rows += [f"{image} ({column}={value!r:.40})" for image, value in wrong.head(shown).items()]
        else:
            whole.append(column)
    located = f" First rows at fault: {', '.join(rows[:shown])}." if rows else ""
    if whole:
        located += f" Only whole numbers in {', '.join(whole)}: write probabilities such as 1.0."
    return located


def _checked(table: pd.DataFrame, categories: Sequence[str]) -> pd.DataFrame:
    if "image" not in table.columns:
        raise SubmissionError("Missing column in CSV: 'image'.")
    images = table["image"]
    if images.dtype != np.dtype("O"):
        images = images.astype(np.dtype("U"))
    images = images.str.replace(r"\.jpg$", "", case=False, regex=True)
    if not images.is_unique:
        duplicates = images[images.duplicated()].unique().tolist()
        raise SubmissionError(_listing("Duplicate image rows detected in CSV: ", duplicates))
    table = table.drop(columns="image").set_axis(pd.Index(images, name="image"), axis="index")
    wanted = pd.Index(categories)
    missing = wanted.difference(table.columns)
    if not missing.empty:
        raise SubmissionError(_listing("Missing columns in CSV: ", missing.tolist()))
    extra = table.columns.difference(wanted)
    if not extra.empty:
        raise SubmissionError(_listing("Extra columns in CSV: ", extra.tolist()))
    table = table[list(categories)]
    incomplete = table.index[table.isna().to_numpy().any(axis=1)]
    if not incomplete.empty:
        raise SubmissionError(_listing("Missing value(s) in CSV for images: ", incomplete.tolist()))
    not_float = [c for c in categories if table[c].dtype != np.float64]
    if not_float:
        listing = _listing("CSV contains non-floating-point value(s) in columns: ", not_float)
        raise SubmissionError(listing + _non_float_rows(table, not_float))
    values = table.to_numpy()
    outside = table.index[((values < 0.0) | (values > 1.0)).any(axis=1)]
    if not outside.empty:
        prefix = "Values in CSV are outside the interval [0.0, 1.0] for images: "
        raise SubmissionError(_listing(prefix, outside.tolist()))
    return table


def match_rows(truth: Truth, table: pd.DataFrame) -> np.ndarray:
    """The submitted probabilities in the reference's row order; every image exactly once."""
    missing = truth.images.difference(table.index)
    if not missing.empty:
        raise SubmissionError(_listing("Missing images in CSV: ", missing.tolist()))
    extra = table.index.difference(truth.images)
    if not extra.empty:
        raise SubmissionError(_listing("Extra images in CSV: ", extra.tolist()))
    return table.reindex(truth.images).to_numpy(dtype=float)


def malignant_share(scores: np.ndarray, categories: Sequence[str]) -> np.ndarray:
    """Summed probability of the malignant categories over the row's sum; a row of zeros carries
    no preference and counts as the uniform distribution."""
    malignant = np.isin(categories, sorted(MALIGNANT))
    totals = scores.sum(axis=1)
    uniform = malignant.mean()
    return np.divide(scores[:, malignant].sum(axis=1), totals, out=np.full(totals.shape, uniform), where=totals > 0)


def score(truth: Truth, scores: np.ndarray, target: str) -> dict[str, Any]:
    """Every number of the metrics document for ``scores`` (rows aligned with ``truth``)."""
    categories = truth.categories
    positives = truth.values > 0.5
    per_category = category_metrics(truth.values, scores, truth.score_weight)
    # The reference crashes on these (its issue 100): documented deviation, null and left out.
    without_positives = ~(truth.score_weight[:, None] * positives).any(axis=0)
    for name in CURVE_METRICS:
        per_category[name][without_positives] = np.nan
    truth_labels, predicted_labels = argmax_labels(truth.values), argmax_labels(scores)
    balanced = balanced_multiclass_accuracy(truth_labels, predicted_labels, truth.score_weight)
    if target == "balanced_accuracy":
        overall = balanced
        validation = balanced_multiclass_accuracy(truth_labels, predicted_labels, truth.validation_weight)
    else:
        overall = macro_mean(per_category[target])
        metric = roc_auc if target == "auc" else average_precision
        values = np.array(
            [metric(positives[:, c], scores[:, c], truth.validation_weight) for c in range(len(categories))]
        )
        validation = macro_mean(np.where(without_positives, np.nan, values))
    malignant = np.isin(categories, sorted(MALIGNANT))
    return {
        "overall": overall,
        "validation": validation,
        "aggregates": {
            "balanced_accuracy": balanced,
            "auc": macro_mean(per_category["auc"]),
            "ap": macro_mean(per_category["ap"]),
            "auc_sens_80": macro_mean(per_category["auc_sens_80"]),
            "malignant_auc": roc_auc(
                positives[:, malignant].any(axis=1), malignant_share(scores, categories), truth.score_weight
            ),
        },
        "macro_average": {name: macro_mean(per_category[name]) for name in CATEGORY_METRICS},
        "per_category": {
            category: {name: float(per_category[name][c]) for name in CATEGORY_METRICS}
            for c, category in enumerate(categories)
        },
        "deviations": {
            "categories_without_positives": [c for c, e in zip(categories, without_positives, strict=True) if e],
        },
        "dataset": {
            "images": len(truth.images),
            "undecided_predictions": int(np.count_nonzero(predicted_labels < 0)),
        },
    }


def leaderboard(target: str) -> Phase:
    """The phase: ``overall`` ranks, the macro AUC (the seed's tie-break) is shown beside it."""
    columns = [("aggregates.auc", "AUC (macro, tie-break)")]
    if target != "balanced_accuracy":
        columns.insert(0, ("aggregates.balanced_accuracy", "Balanced multi-class accuracy"))
    return Phase(
        inputs=(),
        outputs=(),
        score_title=SCORE_TITLES[target],
        score_jsonpath="overall",
        score_default_sort="desc",
        score_decimal_places=4,
        extra_results_columns=tuple(
            {"title": title, "path": path, "order": "desc", "exclude_from_ranking": True}
            for path, title in columns
            if path != f"aggregates.{target}"
        ),
        prediction_file=True,
    )


class _Isic(Challenge):
    """Shared by both editions: only the categories and names differ."""

    cases_in_process = True

    categories: ClassVar[tuple[str, ...]]
    options = (
        Option("target_metric", "balanced_accuracy", "what 'overall' and 'validation' hold, as the reference's "
               "--metric: balanced multi-class accuracy, macro AUC or macro average precision", TARGET_METRICS),
        Option("max_file_mb", 100.0, "largest prediction file accepted, in MB (checked before reading it)"),
    )  # fmt: skip

    def phase_for(self, settings: Mapping[str, Any]) -> Phase:
        return leaderboard(settings["target_metric"])

    def load_reference(self, ground_truth: Path, settings: Mapping[str, Any]) -> Truth:
        if settings["max_file_mb"] <= 0:
            raise ConfigurationError("Option max_file_mb must be positive.")
        return load_truth(ground_truth / TRUTH_FILE, self.categories)

    def prepare(self, input_dir: Path, reference: Truth, settings: Mapping[str, Any]) -> Prepared:
        path = find_prediction_file(input_dir)
        table = read_submission(path, reference.categories, settings["max_file_mb"])
        return Prepared([CaseTask(path.name, (reference, match_rows(reference, table)))])

    def check_submission(self, input_dir: Path, settings: Mapping[str, Any], images: Path | None = None) -> Checked:
        """Every check of ``read_submission`` (the reference's, in its order); which images the CSV
        must list is the ground truth's."""
        table = read_submission(find_prediction_file(input_dir), self.categories, settings["max_file_mb"])
        return Checked(cases=len(table), unchecked=["the images listed against the test set (Missing/Extra images)"])

    @staticmethod
    def score_case(task: CaseTask, settings: Mapping[str, Any]) -> dict[str, Any]:
        truth, scores = task.payload
        return score(truth, scores, settings["target_metric"])

    def aggregate(
        self,
        results: Mapping[str, dict[str, Any]],
        missing: Sequence[str],
        reference: Truth,
        settings: Mapping[str, Any],
    ) -> dict[str, Any]:
        (document,) = results.values()
        document["deviations"]["malignant_auc"] = (
            "added (not in the reference): malignant = "
            + ", ".join(c for c in self.categories if c in MALIGNANT)
            + "; score = their probabilities' sum over the row's sum"
        )
        return {
            **document,
            "settings": self.settings_echo(
                settings,
                before={
                    "reference": "isic-challenge-scoring 5.6.0",
                    "threshold": 0.5,
                    "sensitivity_for_auc_sens_80": 0.8,
                },
            ),
        }


class Isic2019(_Isic):
    name = "isic2019"
    title = "ISIC 2019: skin lesion diagnosis in nine categories (balanced multi-class accuracy)"
    categories = ("MEL", "NV", "BCC", "AK", "BKL", "DF", "VASC", "SCC", "UNK")
    phase = leaderboard("balanced_accuracy")


class Isic2018(_Isic):
    name = "isic2018"
    title = "ISIC 2018 task 3: skin lesion diagnosis in seven categories (balanced multi-class accuracy)"
    categories = ("MEL", "NV", "BCC", "AKIEC", "BKL", "DF", "VASC")
    phase = leaderboard("balanced_accuracy")
