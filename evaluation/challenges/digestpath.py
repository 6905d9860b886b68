"""DigestPath 2019: signet ring cell detection (task 1) and colonoscopy tissue segmentation and
classification (task 2). No official code is public: the seed (002) and the choices of
../shared/spec/challenges.md are the contract; each choice is an option recorded in metrics.json.
"""

from __future__ import annotations

import csv
import json
import xml.etree.ElementTree as ElementTree
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from evaluation.challenges.base import Challenge, Option, Phase, Prepared
from evaluation.errors import ConfigurationError, SubmissionError
from evaluation.metrics.detection import FROC_FP_RATES, MATCHING_METHODS, ImageDetections, match_image, summarise
from evaluation.metrics.overlap import aggregated_dice
from evaluation.platform.matching import jobs_for_every_case, reference_name, stem
from evaluation.platform.predictions import Job, Socket, load_jobs
from evaluation.platform.sockets import finite_number, image_output_file, read_json_output
from evaluation.runner import CaseTask

DETECTION_INPUT = Socket("histopathology-image", "images/histopathology", "Image", "Image")
DETECTIONS = Socket(
    "signet-ring-cell-detections", "signet-ring-cell-detections.json", "Multiple 2D bounding boxes", "Value"
)
TISSUE_INPUT = Socket("colonoscopy-tissue-image", "images/colonoscopy-tissue", "Image", "Image")
TISSUE_MASK = Socket(
    "colonoscopy-tissue-segmentation", "images/colonoscopy-tissue-segmentation", "Segmentation", "Image"
)
MALIGNANCY = Socket(
    "colonoscopy-tissue-malignancy-likelihood", "colonoscopy-tissue-malignancy-likelihood.json", "Float", "Value"
)
MASK_SUFFIXES = (".png", ".mha", ".tif", ".tiff")


def _jobs_by_case(challenge: Challenge, input_dir: Path, reference: Sequence[str]) -> dict[str, Job]:
    """Every reference image needs its job (the seed has no missing policy)."""
    return jobs_for_every_case(
        load_jobs(input_dir), lambda job: reference_name(challenge.case_of_job(job), reference), reference, "image"
    )


# --- task 1 ----------------------------------------------------------------------------------------


def _voc_boxes(path: Path) -> list[list[float]]:
    root = ElementTree.parse(path).getroot()
    boxes = []
    for box in root.iter("bndbox"):
        boxes.append([float(box.findtext(tag)) for tag in ("xmin", "ymin", "xmax", "ymax")])
    return boxes


def load_boxes(ground_truth: Path) -> dict[str, np.ndarray]:
    """``boxes.json`` (``{image: [[x1, y1, x2, y2], ...]}``) or PASCAL VOC XML files per image."""
    try:
        if (ground_truth / "boxes.json").is_file():
            document = json.loads((ground_truth / "boxes.json").read_text(encoding="utf-8"))
            raw = {str(name): boxes for name, boxes in document.items()}
        else:
            files = sorted(ground_truth.rglob("*.xml"))
            raw = {ElementTree.parse(p).getroot().findtext("filename") or p.stem: _voc_boxes(p) for p in files}
        reference = {name: np.asarray(boxes, dtype=float).reshape(-1, 4) for name, boxes in sorted(raw.items())}
    except (ValueError, TypeError, AttributeError, RecursionError, ElementTree.ParseError) as error:
        raise ConfigurationError(
            f"The DigestPath ground-truth boxes are malformed ({type(error).__name__}): fix boxes.json (or the "
            "XML files) in the phase's ground truth."
        ) from None
    if not reference:
        raise ConfigurationError("The DigestPath ground truth has no boxes.json and no PASCAL VOC XML file.")
    for name, boxes in reference.items():
        if not np.isfinite(boxes).all() or (boxes[:, 2] <= boxes[:, 0]).any() or (boxes[:, 3] <= boxes[:, 1]).any():
            raise ConfigurationError(f"The ground-truth boxes of {name} include a degenerate or non-finite box.")
    return reference


def to_platform_boxes(rows: Sequence[Sequence[float]]) -> dict[str, Any]:
    """``[x1, y1, x2, y2, score]`` rows as the platform's "Multiple 2D bounding boxes" JSON."""
    boxes = [
        {"corners": [[x1, y1, 0], [x2, y1, 0], [x2, y2, 0], [x1, y2, 0]], "probability": score}
        for x1, y1, x2, y2, score in rows
    ]
    return {"type": "Multiple 2D bounding boxes", "boxes": boxes, "version": {"major": 1, "minor": 0}}


def parse_detections(document: Any, case: str) -> tuple[np.ndarray, np.ndarray]:
    """(boxes (n, 4), scores (n,)) from the platform's "Multiple 2D bounding boxes" JSON or a plain
    ``[[x1, y1, x2, y2, score], ...]`` array; every malformed box is an error naming the image."""
    rows = []
    if isinstance(document, dict):
        boxes = document.get("boxes")
        if not isinstance(boxes, list):
            raise SubmissionError(f"The detections of image {case} have no list of 'boxes'.", case)
        for position, box in enumerate(boxes):
            corners = box.get("corners") if isinstance(box, dict) else None
            if not isinstance(corners, list) or len(corners) < 2 or not all(
                isinstance(c, list) and len(c) >= 2 for c in corners
            ):
                raise SubmissionError(f"Box {position} of image {case} has no valid 'corners'.", case)
            xs = [finite_number(c[0], f"A corner of box {position} of image {case}", case) for c in corners]
            ys = [finite_number(c[1], f"A corner of box {position} of image {case}", case) for c in corners]
            score = box.get("probability")
            rows.append([min(xs), min(ys), max(xs), max(ys), score])
    elif isinstance(document, list):
        rows = document
    else:
        raise SubmissionError(f"The detections of image {case} are neither a list nor bounding-box JSON.", case)
    parsed = np.empty((len(rows), 5))
    for position, row in enumerate(rows):
        if not isinstance(row, list) or len(row) != 5:
            raise SubmissionError(f"Detection {position} of image {case} is not [x1, y1, x2, y2, score].", case)
        parsed[position] = [finite_number(v, f"Detection {position} of image {case}", case) for v in row]
    boxes, scores = parsed[:, :4], parsed[:, 4]
    negative = np.flatnonzero((boxes < 0).any(axis=1))
    if negative.size:
        raise SubmissionError(f"Detection {negative[0]} of image {case} has a negative coordinate.", case)
    degenerate = np.flatnonzero((boxes[:, 2] <= boxes[:, 0]) | (boxes[:, 3] <= boxes[:, 1]))
    if degenerate.size:
        raise SubmissionError(f"Detection {degenerate[0]} of image {case} is degenerate (x2 <= x1 or y2 <= y1).", case)
    outside = np.flatnonzero((scores < 0) | (scores > 1))
    if outside.size:
        raise SubmissionError(f"Detection {outside[0]} of image {case} has a score outside [0, 1].", case)
    return boxes, scores


class DigestPath2019Task1(Challenge):
    name = "digestpath2019-task1"
    cases_in_process = True
    title = "DigestPath 2019 task 1: signet ring cell detection (recall, normal-region FPs, FROC)"
    phase = Phase(
        inputs=(DETECTION_INPUT,),
        outputs=(DETECTIONS,),
        score_title="Instance recall (when precision > 20%)",
        score_jsonpath="aggregates.recall_valid",
        score_default_sort="desc",
        extra_results_columns=(
            {"title": "FP score max(100 - normal-region FPs, 0)", "path": "aggregates.fp_score", "order": "desc"},
            {"title": "FROC", "path": "aggregates.froc", "order": "desc"},
        ),
        scoring_method_choice="avg",
    )
    options = (
        Option("iou_threshold", 0.3, "a prediction matches a reference box when IoU is strictly greater"),
        Option("matching", "greedy", "greedy: predictions by descending score take the unmatched box of "
               "highest IoU; hungarian: maximum-IoU one-to-one assignment", MATCHING_METHODS),
    )

    def load_reference(self, ground_truth: Path, settings: Mapping[str, Any]) -> dict[str, np.ndarray]:
        return load_boxes(ground_truth)

    def prepare(self, input_dir: Path, reference: Mapping[str, np.ndarray], settings: Mapping[str, Any]) -> Prepared:
        jobs = _jobs_by_case(self, input_dir, list(reference))
        tasks = []
        for case, job in jobs.items():
            document = read_json_output(input_dir, job, DETECTIONS.slug, case)
            if document is None:
                raise SubmissionError(f"Image {case} has no output {DETECTIONS.relative_path}.", case)
            tasks.append(CaseTask(case, parse_detections(document, case)))
        return Prepared(tasks)

    @staticmethod
    def score_case(task: CaseTask, settings: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray]:
        return task.payload  # parsed while preparing: the metrics need every image at once

    def aggregate(
        self,
        results: Mapping[str, tuple[np.ndarray, np.ndarray]],
        missing: Sequence[str],
        reference: Mapping[str, np.ndarray],
        settings: Mapping[str, Any],
    ) -> dict[str, Any]:
        images = {case: ImageDetections(reference[case], *results[case]) for case in reference}
        if all(len(image.reference) for image in images.values()):
            raise ConfigurationError(
                "The DigestPath ground truth has no negative (normal) image: normal-region FPs and FROC are "
                "undefined, so the leaderboard values cannot be computed."
            )
        summary = summarise(list(images.values()), settings["iou_threshold"], settings["matching"])
        per_case = {}
        for case, image in images.items():
            matched = match_image(image.reference, image.boxes, image.scores, settings["iou_threshold"],
                                  settings["matching"])  # fmt: skip
            per_case[case] = {
                "predictions": int(image.scores.size),
                "true_positives": int(np.count_nonzero(matched >= 0)),
                "negative_image": not len(image.reference),
            }
            if len(image.reference):
                per_case[case]["recall"] = float(np.count_nonzero(matched >= 0) / len(image.reference))
        return {
            "aggregates": {
                "instance_recall": summary.instance_recall,
                "precision": summary.precision,
                "recall_valid": summary.recall_valid,
                "normal_fp": summary.normal_fp,
                "fp_score": summary.fp_score,
                "froc": summary.froc,
                "froc_recall_at": {f"{rate}_fp": summary.froc_recalls[rate] for rate in FROC_FP_RATES},
                "true_positives": summary.true_positives,
                "reference_boxes": summary.reference_boxes,
            },
            "case": per_case,
            "settings": {
                "challenge": self.name,
                **settings,
                "iou": "continuous coordinates, (x2 - x1) * (y2 - y1), match when IoU > threshold",
                "precision": "true positives / all predictions on positive images (0 without predictions)",
                "recall_valid": "instance_recall when precision > 0.2, else 0",
                "froc": "mean recall on positive images at the lowest score threshold with mean FPs per "
                "negative image <= 1, 2, 4, 8, 16, 32",
            },
        }


# --- task 2 ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TissueReference:
    masks: dict[str, Path]
    labels: dict[str, int]


def read_mask(path: Path, case: str, whose: str) -> np.ndarray:
    """A 2D mask as booleans (any non-zero value is lesion); colour images are reduced by any()."""
    try:
        if path.suffix.lower() == ".png":
            from PIL import Image

            with Image.open(path) as image:
                array = np.asarray(image)
        else:
            import SimpleITK as sitk

            array = sitk.GetArrayFromImage(sitk.ReadImage(str(path)))
    except Exception:  # every reader error means the same to a participant: unreadable
        if whose == "reference":
            raise ConfigurationError(
                f"The reference mask of image {case} cannot be read as an image: replace masks/{path.name} in the "
                "phase's ground truth.",
                case,
            ) from None
        raise SubmissionError(f"The {whose} mask of image {case} cannot be read as an image.", case) from None
    array = np.squeeze(array)
    if array.ndim == 3:
        array = array.any(axis=-1)
    if array.ndim != 2:
        error = ConfigurationError if whose == "reference" else SubmissionError
        raise error(f"The {whose} mask of image {case} is not a 2D image.", case)
    return array != 0


class DigestPath2019Task2(Challenge):
    name = "digestpath2019-task2"
    title = "DigestPath 2019 task 2: colonoscopy tissue segmentation (Dice) and classification (AUC)"
    phase = Phase(
        inputs=(TISSUE_INPUT,),
        outputs=(TISSUE_MASK, MALIGNANCY),
        score_title="Dice (mean over images)",
        score_jsonpath="aggregates.dice",
        score_default_sort="desc",
        extra_results_columns=({"title": "AUC (malignancy)", "path": "aggregates.auc", "order": "desc"},),
        scoring_method_choice="avg",
    )
    options = (
        Option("dice_average", "all", "all: mean Dice over every image (both masks empty = 1.0); "
               "positives: over the images with a lesion in the reference", ("all", "positives")),
    )

    def load_reference(self, ground_truth: Path, settings: Mapping[str, Any]) -> TissueReference:
        labels_file = ground_truth / "labels.csv"
        if not labels_file.is_file():
            raise ConfigurationError("The DigestPath task 2 ground truth has no labels.csv.")
        try:
            with labels_file.open(newline="", encoding="utf-8-sig") as file:
                labels = {row["image"]: int(row["label"]) for row in csv.DictReader(file)}
        except (KeyError, ValueError, csv.Error) as error:
            raise ConfigurationError(
                f"labels.csv must be UTF-8 CSV with columns image,label and 0/1 labels ({type(error).__name__}): "
                "fix it in the phase's ground truth."
            ) from None
        masks = {}
        for image in labels:
            found = [p for p in (ground_truth / "masks").glob(f"{stem(image)}.*") if p.suffix.lower() in MASK_SUFFIXES]
            if len(found) != 1:
                raise ConfigurationError(f"The ground truth needs exactly one mask for {image} (found {len(found)}).")
            masks[image] = found[0]
        if set(labels.values()) - {0, 1} or len(set(labels.values())) < 2:
            raise ConfigurationError("labels.csv needs both labels 0 (benign) and 1 (malignant), and no other.")
        return TissueReference(masks=dict(sorted(masks.items())), labels=dict(sorted(labels.items())))

    def prepare(self, input_dir: Path, reference: TissueReference, settings: Mapping[str, Any]) -> Prepared:
        jobs = _jobs_by_case(self, input_dir, list(reference.labels))
        tasks = []
        for case, job in jobs.items():
            mask = image_output_file(input_dir, job, TISSUE_MASK.slug, case)
            if mask is None:
                raise SubmissionError(f"Image {case} has no segmentation output.", case)
            likelihood = read_json_output(input_dir, job, MALIGNANCY.slug, case)
            if likelihood is None:
                raise SubmissionError(f"Image {case} has no output {MALIGNANCY.relative_path}.", case)
            value = finite_number(likelihood, f"The malignancy likelihood of image {case}", case)
            tasks.append(CaseTask(case, (mask, reference.masks[case], value)))
        return Prepared(tasks)

    @staticmethod
    def score_case(task: CaseTask, settings: Mapping[str, Any]) -> tuple[int, int, int, float]:
        """(|R ∩ P|, |R|, |P|, likelihood): each mask read once, Dice assembled later."""
        prediction_path, reference_path, likelihood = task.payload
        prediction = read_mask(prediction_path, task.case, "predicted")
        reference = read_mask(reference_path, task.case, "reference")
        if prediction.shape != reference.shape:
            raise SubmissionError(
                f"The predicted mask of image {task.case} is {prediction.shape[1]}x{prediction.shape[0]} pixels; "
                f"the image is {reference.shape[1]}x{reference.shape[0]}.",
                task.case,
            )
        overlap = int(np.count_nonzero(prediction & reference))
        return overlap, int(np.count_nonzero(reference)), int(np.count_nonzero(prediction)), likelihood

    def aggregate(
        self,
        results: Mapping[str, tuple[int, int, int, float]],
        missing: Sequence[str],
        reference: TissueReference,
        settings: Mapping[str, Any],
    ) -> dict[str, Any]:
        from sklearn.metrics import roc_auc_score

        cases = list(reference.labels)
        counts = np.array([results[c][:3] for c in cases], dtype=float)
        # per-image Dice: the aggregated Dice of each image alone (identity weights), both empty = 1.0
        dices = aggregated_dice(counts[:, 0], counts[:, 1] + counts[:, 2], weights=np.eye(len(cases)))
        positive = counts[:, 1] > 0
        averaged = dices if settings["dice_average"] == "all" else dices[positive]
        if averaged.size == 0:
            raise ConfigurationError("No reference image has a lesion: the positives-only Dice is undefined.")
        per_case = {
            c: {"dice": float(d), "lesion_in_reference": bool(p)}
            for c, d, p in zip(cases, dices, positive, strict=True)
        }
        auc = roc_auc_score([reference.labels[c] for c in cases], [results[c][3] for c in cases])
        return {
            "aggregates": {
                "dice": float(np.mean(averaged)),
                "auc": float(auc),
                "images": len(cases),
                "dice_images": int(averaged.size),
            },
            "case": per_case,
            "settings": {
                "challenge": self.name,
                **settings,
                "dice": "2|R ∩ P| / (|R| + |P|) per image, any non-zero pixel is lesion; both empty = 1.0",
                "auc": "sklearn.metrics.roc_auc_score of the malignancy likelihood against labels.csv",
            },
        }


