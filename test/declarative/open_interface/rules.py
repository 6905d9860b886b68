"""The open interface's demonstration (test only): official metric functions imported unmodified from their
public packages (isic-challenge-scoring 5.6, picai_eval 1.4, both in requirements-dev.txt, not in the image),
each wrapped in the signature a declared ``metric = "python"`` calls."""

from __future__ import annotations

import numpy as np
import pandas as pd
from isic_challenge_scoring.confusion import create_binary_confusion_matrix
from isic_challenge_scoring.metrics import auc_above_sensitivity, binary_jaccard, binary_threshold_jaccard
from picai_eval.analysis_utils import calculate_dsc
from scipy import ndimage


def isic2018_lesion(prediction: np.ndarray, reference: np.ndarray, context: object) -> dict[str, float]:
    """ISIC 2018 Task 1 per image (isic_challenge_scoring/segmentation.py): the confusion matrix of the two
    masks, then the thresholded Jaccard (0 below 0.65) and the Jaccard index."""
    matrix = create_binary_confusion_matrix(reference > 0, prediction > 0)
    return {"threshold_jaccard": binary_threshold_jaccard(matrix, threshold=0.65), "jaccard": binary_jaccard(matrix)}


def picai_dsc(prediction: np.ndarray, reference: np.ndarray, context: object) -> float:
    """PI-CAI's Dice of a detection map against a binary label (picai_eval/analysis_utils.py, epsilon 1e-8)."""
    return calculate_dsc((prediction > 0).astype(np.float32), (reference > 0).astype(np.int32))


def isic_auc_above_80_sensitivity(predictions: np.ndarray, references: np.ndarray, context: object) -> float:
    """ISIC's partial AUC above 80 % sensitivity (isic_challenge_scoring/metrics.py, ``auc_sens_80``), equal weights."""
    weights = pd.Series(np.ones(len(predictions)))
    return auc_above_sensitivity(pd.Series(references), pd.Series(predictions), weights, 0.80)


def lesion_count_difference(prediction: np.ndarray, reference: np.ndarray, context: object) -> float:
    """The README's worked example: predicted minus reference lesions (26-connected components)."""
    structure = np.ones((3,) * reference.ndim)
    return float(ndimage.label(prediction > 0, structure)[1] - ndimage.label(reference > 0, structure)[1])
