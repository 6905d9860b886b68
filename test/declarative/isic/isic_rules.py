"""ISIC 2019 / 2018's own rules for the drafts beside this file (the open interface, ``metric = "python"``):
what the catalogue does not declare.

Reference: ImageMarkup/isic-challenge-scoring 5.6.0 (PyPI ``isic-challenge-scoring``), ``classification.py``
(which weights score what: ``score_weight`` the scores, ``validation_weight`` the validation value, the
``--metric`` option) and ``metrics.py`` (per-category accuracy, sensitivity, specificity, dice, PPV and NPV of
``> 0.5`` decisions, argmax labels with a tied maximum undecided); the definitions are
``evaluation.metrics.classification``'s. Two behaviours of the reference are not copied (listed under
``deviations``): a category without score-weighted positives crashes it, here its curve values are null and
leave the macro means; ``malignant_auc``, which it lacks, is added.
"""

from __future__ import annotations

from typing import Any

import numpy as np

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

THRESHOLD = 0.5  # a decision is a probability > 0.5, as the reference's metrics.py
MALIGNANT = ("MEL", "BCC", "AK", "AKIEC", "SCC")


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
    """``overall`` and ``validation`` (the target metric under the score and validation weights), the
    per-category and macro confusion metrics at ``> 0.5``, ``malignant_auc``, the categories without
    score-weighted positives, a note on ``malignant_auc``, the images and the undecided predictions."""
    categories = tuple(context.classes)
    score, validation = context.weights["score_weight"], context.weights["validation_weight"]
    positives = references[:, None] == np.asarray(categories)[None, :]
    skipped = ~(score[:, None] * positives).any(axis=0)
    target = context.options["target_metric"]
    confusion = confusion_metrics(positives, predictions > THRESHOLD, score)
    malignant = np.isin(categories, MALIGNANT)
    found: dict[str, Any] = {
        "overall": _target(target, positives, predictions, score, skipped),
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
