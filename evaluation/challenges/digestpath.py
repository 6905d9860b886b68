"""DigestPath 2019 task 1: signet ring cell detection. No official code is public: the seed (002) and
the choices of ../shared/spec/challenges.md are the contract; each choice is an option recorded in
metrics.json. Task 2 (tissue segmentation and classification) is a declaration:
``evaluation/declarations/digestpath2019-task2.toml``.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ElementTree
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from evaluation.contract import CaseTask, Challenge, Checked, Option, Phase, Prepared
from evaluation.errors import ConfigurationError, SubmissionError
from evaluation.metrics.detection import FROC_FP_RATES, MATCHING_METHODS, ImageDetections, match_image, summarise
from evaluation.platform.detections import parse_detections
from evaluation.platform.predictions import Job, Socket
from evaluation.platform.sockets import read_json_output

DETECTION_INPUT = Socket("histopathology-image", "images/histopathology", "Image", "Image")
DETECTIONS = Socket(
    "signet-ring-cell-detections", "signet-ring-cell-detections.json", "Multiple 2D bounding boxes", "Value"
)


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


def _detections(input_dir: Path, job: Job, case: str) -> tuple[np.ndarray, np.ndarray]:
    """The job's detections, parsed and checked (``prepare`` and the pre-flight check)."""
    document = read_json_output(input_dir, job, DETECTIONS.slug, case)
    if document is None:
        raise SubmissionError(f"Image {case} has no output {DETECTIONS.relative_path}.", case)
    return parse_detections(document, case)


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
        Option(
            "matching",
            "greedy",
            "greedy: predictions by descending score take the unmatched box of "
            "highest IoU; hungarian: maximum-IoU one-to-one assignment",
            MATCHING_METHODS,
        ),
    )

    def load_reference(self, ground_truth: Path, settings: Mapping[str, Any]) -> dict[str, np.ndarray]:
        return load_boxes(ground_truth)

    def prepare(self, input_dir: Path, reference: Mapping[str, np.ndarray], settings: Mapping[str, Any]) -> Prepared:
        jobs = self.jobs_by_case(input_dir, list(reference), same_stem=True, every="image").jobs  # no missing policy
        return Prepared([CaseTask(case, _detections(input_dir, job, case)) for case, job in jobs.items()])

    def check_job(
        self, input_dir: Path, job: Job, case: str, settings: Mapping[str, Any], images: Path | None
    ) -> Checked:
        _detections(input_dir, job, case)  # every check of the boxes needs no reference
        return Checked()

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
            "settings": self.settings_echo(
                settings,
                after={
                    "iou": "continuous coordinates, (x2 - x1) * (y2 - y1), match when IoU > threshold",
                    "precision": "true positives / all predictions on positive images (0 without predictions)",
                    "recall_valid": "instance_recall when precision > 0.2, else 0",
                    "froc": "mean recall on positive images at the lowest score threshold with mean FPs per "
                    "negative image <= 1, 2, 4, 8, 16, 32",
                },
            ),
        }
