"""RARE25's own rule for ``rare25.toml`` (the open interface, ``metric = "python"``): the official
patient-level bootstrap at a 1:100 prevalence, PPV at 90% recall with AUROC and AUPRC.

Reference: TUE-VCA/Grand-Challenge-RARE25, open-development-phase/example-evaluation-method/evaluate.py
(``bootstrap_metrics``); the computation is ``evaluation.metrics.prevalence_bootstrap``, fed the frames in
the official order (stacks by name, frames by index) with each frame's patient (``[cases] fields``) and the
declared parameters (``params``, which the options set).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from evaluation.metrics.prevalence_bootstrap import prevalence_bootstrap

TARGET_RECALL = 0.9
AT_LEAST_ONE = ("iterations", "sample_size", "imbalance_ratio")
NAMES = {  # returned name -> the official metrics.json key
    "score": "Score",
    "ppv": "PPV@90RECALL",
    "ppv_ci_low": "PPV@90RECALL 95% CI Lower Bound",
    "ppv_ci_high": "PPV@90RECALL 95% CI Upper Bound",
    "auroc": "AUROC",
    "auroc_ci_low": "AUROC 95% CI Lower Bound",
    "auroc_ci_high": "AUROC 95% CI Upper Bound",
    "auprc": "AUPRC",
    "auprc_ci_low": "AUPRC 95% CI Lower Bound",
    "auprc_ci_high": "AUPRC 95% CI Upper Bound",
    "auroc_full": "AUROC Full Dataset",
    "auprc_full": "AUPRC Full Dataset",
    "ppv_full": "PPV@90RECALL Full Dataset",
}


def bootstrap_at_prevalence(predictions: np.ndarray, references: np.ndarray, context: Any) -> dict[str, float]:
    """The thirteen official numbers (``NAMES``) of the frames' likelihoods against their labels (1 = neo)."""
    params = dict(context.params)
    for key in AT_LEAST_ONE:
        if params[key] < 1:
            raise ValueError(f"Option {key} must be at least 1.")
    which = "patients" if params["protocol"] == "official" else "frames"
    try:
        numbers = prevalence_bootstrap(
            references.astype(np.int8), predictions, context.fields["patient_id"], recall=TARGET_RECALL, **params
        )
    except ValueError:
        raise ValueError(f"The RARE25 ground truth needs both neoplastic and NDBE {which}.") from None
    return {name: numbers[key] for name, key in NAMES.items()}
