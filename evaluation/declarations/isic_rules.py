"""ISIC 2019 / 2018's own rules for isic2019.toml and isic2018.toml (the open interface: ``metric = "python"``
and ``[submission] reader``): what the catalogue does not declare.

Reference: ImageMarkup/isic-challenge-scoring 5.6.0 (PyPI ``isic-challenge-scoring``), ``classification.py``
(which weights score what: ``score_weight`` the scores, ``validation_weight`` the validation value, the
``--metric`` option) and ``metrics.py`` (per-category accuracy, sensitivity, specificity, dice, PPV and NPV of
``> 0.5`` decisions, argmax labels with a tied maximum undecided); the definitions are
``evaluation.metrics.classification``'s. Two behaviours of the reference are not copied (listed under
``deviations``): a category without score-weighted positives crashes it, here its curve values are null and
leave the macro means; ``malignant_auc``, which it lacks, is added.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from evaluation.errors import SubmissionError
from evaluation.metrics.classification import (
    CONFUSION_METRICS,
    UNDECIDED,
    argmax_labels,
    average_precision,
    balanced_multiclass_accuracy,
    confusion_metrics,
    macro_mean,
    roc_auc,
)

if TYPE_CHECKING:
    import pandas as pd

THRESHOLD = 0.5  # a decision is a probability > 0.5, as the reference's metrics.py
TARGETS = {"balanced_accuracy": "balanced_accuracy", "auc": "auroc_macro", "ap": "average_precision_macro"}
# (the --metric option -> the catalogue's value of it under score_weight, declared before ``isic``: ``overall``)
MALIGNANT = ("MEL", "BCC", "AK", "AKIEC", "SCC")
NEWLINE_PROBE = 2000  # characters the reference reads to look for two newlines
MESSAGE_CHARACTERS = 1000  # the platform shows 1,024 characters of the last stderr line


def read_predictions(context: Any) -> tuple[list[str], np.ndarray]:
    """The submitted probabilities (``[submission] reader``), as columns: the images and a matrix of a row each,
    a column per category (``context.columns``). The size is checked before anything is read, then the
    reference's checks (load_csv.py) in its order, with its messages (whitespace joined to one line; lists
    longer than the platform shows shortened): newlines, parsing, UTF-8, the ``image`` column, ``.jpg``
    suffixes stripped and duplicates, missing and extra columns, missing values, non-float columns, values in
    [0, 1], then (with the reference's cases) missing and extra images. (pandas, as the reference reads it, is
    imported here: loading the declaration, as every run loads the packaged ones, does not import it.)"""
    import pandas as pd

    if context.size > context.max_mb * 1e6:
        raise SubmissionError(
            f"The prediction file {context.file} is {context.size / 1e6:.1f} MB, more than the {context.max_mb:g} MB "
            "allowed; a CSV of probabilities for every image is far smaller."
        )
    categories = [column for column in context.columns if column != context.id_column]
    try:
        with context.text() as stream:  # universal newlines, as the reference
            if stream.read(NEWLINE_PROBE).count("\n") < 2:
                raise SubmissionError("No newlines detected in CSV.")
            stream.seek(0)
            try:
                table = pd.read_csv(stream, header=0, index_col=False)
            except (pd.errors.ParserError, pd.errors.EmptyDataError) as error:
                raise SubmissionError(f'Could not parse CSV: "{error}".') from None
    except UnicodeDecodeError:
        message = "Could not parse CSV: could not decode file as UTF-8."
        raise SubmissionError(message + _undecodable_lines(context.data())) from None
    table = _checked(table, categories)
    if context.cases is not None:
        _same_set(table.index, pd.Index(context.cases), "images")
    return table.index.tolist(), table.to_numpy(dtype=float)


def _same_set(found: pd.Index, wanted: pd.Index, what: str) -> None:
    """The reference's check that the CSV holds the ``wanted`` images or columns: the missing ones refused first,
    then the extra ones, each listed in its message."""
    for word, names in (("Missing", wanted.difference(found)), ("Extra", found.difference(wanted))):
        if not names.empty:
            raise SubmissionError(_listing(f"{word} {what} in CSV: ", names.tolist()))


def _listing(prefix: str, items: Sequence[Any]) -> str:
    """``prefix`` + the Python list of ``items`` + ``.``, as the reference writes it, shortened to what the
    platform shows (the total count added) when the whole list is too long."""
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


def _undecodable_lines(data: bytes, shown: int = 3) -> str:
    """Where the reference's "could not decode file as UTF-8" happens: the first few lines (1 = the header)
    that are not UTF-8, each with its image as far as it can be read."""
    bad = []
    for number, line in enumerate(data.splitlines(), start=1):
        try:
            line.decode("utf-8")
        except UnicodeDecodeError:
            bad.append(f"{number} ({line.split(b',', 1)[0].decode('utf-8', 'backslashreplace')[:40]})")
            if len(bad) == shown:
                break
    return f" First lines that are not UTF-8: {', '.join(bad)}." if bad else ""


def _non_float_rows(table: pd.DataFrame, columns: Sequence[str], shown: int = 3) -> str:
    """Which rows make the reference's "non-floating-point value(s)" check fail: the first few values that are
    not numbers, or a column that holds only whole numbers (read as integers)."""
    import pandas as pd

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
    """The reference's checks of the parsed table (load_csv.parse_csv), in its order; the probabilities by image."""
    import pandas as pd

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
    _same_set(table.columns, pd.Index(categories), "columns")
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


def malignant_share(scores: np.ndarray, categories: tuple[str, ...]) -> np.ndarray:
    """Summed probability of the malignant categories over the row's sum; a row of zeros carries no
    preference and counts as the uniform distribution. The sums run over a column-major copy: the module's
    order of additions (its table's array), whose last bits break ties of the ranked shares."""
    scores = np.asfortranarray(scores)
    malignant = np.isin(categories, MALIGNANT)
    totals = scores.sum(axis=1)
    return np.divide(scores[:, malignant].sum(axis=1), totals, out=np.full(totals.shape, malignant.mean()),
                     where=totals > 0)  # fmt: skip


def _target(name: str, positives: np.ndarray, scores: np.ndarray, weights: np.ndarray, skipped: np.ndarray) -> float:
    """The ``--metric`` value under ``weights``: the balanced multi-class accuracy, or the macro AUC or average
    precision over the categories with score-weighted positives."""
    if name == "balanced_accuracy":
        return balanced_multiclass_accuracy(argmax_labels(positives), argmax_labels(scores), weights)
    metric = roc_auc if name == "auc" else average_precision
    values = np.array([metric(positives[:, c], scores[:, c], weights) for c in range(scores.shape[1])])
    return macro_mean(np.where(skipped, np.nan, values))


def isic(predictions: np.ndarray, references: np.ndarray, context: Any) -> dict[str, Any]:
    """``overall`` and ``validation`` (the target metric under the score and validation weights: the first is
    the catalogue's, computed before, ``context.aggregates``), the per-category and macro confusion metrics at
    ``> 0.5``, ``malignant_auc``, the categories without score-weighted positives, a note on ``malignant_auc``,
    the images and the undecided predictions."""
    categories = tuple(context.classes)
    score, validation = context.weights["score_weight"], context.weights["validation_weight"]
    positives = references[:, None] == np.asarray(categories)[None, :]
    skipped = ~(score[:, None] * positives).any(axis=0)
    target = context.options["target_metric"]
    confusion = confusion_metrics(positives, predictions > THRESHOLD, score)
    malignant = np.isin(categories, MALIGNANT)
    found: dict[str, Any] = {
        "overall": context.aggregates[TARGETS[target]],
        "validation": _target(target, positives, predictions, validation, skipped),
        "malignant_auc": roc_auc(positives[:, malignant].any(axis=1), malignant_share(predictions, categories), score),
    }
    for name in CONFUSION_METRICS:
        found.update({f"{name}_{category}": float(confusion[name][c]) for c, category in enumerate(categories)})
        found[f"{name}_macro"] = macro_mean(confusion[name])
    found["categories_without_positives"] = [c for c, skip in zip(categories, skipped, strict=True) if skip]
    found["malignant_note"] = (f"added (not in the reference): malignant = "
                               f"{', '.join(c for c in categories if c in MALIGNANT)}; score = their probabilities' "
                               "sum over the row's sum")  # fmt: skip
    found["images"] = len(references)
    found["undecided_predictions"] = int(np.count_nonzero(argmax_labels(predictions) == UNDECIDED))
    return found
