"""Detection matching at scale: 100,000 predicted boxes over 1,000 images (about 30,000 reference
boxes), ours (evaluation/metrics/detection.py: greedy one-to-one matching by descending score, IoU >
0.3, then every DigestPath metric including the FROC) against faster-coco-eval set to the same rule
(one IoU threshold 0.3, no area ranges, no detection cap; COCO matches each detection, by
descending score, to the unmatched reference box of highest IoU), timed in the same run. Checks that
both find the same true positives and prints the ratio.

Usage: .venv/bin/python benchmarks/detection_matching.py [--images 1000] [--predictions 100000] [--full]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import time
from pathlib import Path

import harness
import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from evaluation.metrics.detection import ImageDetections, match_image, summarise  # noqa: E402


def synthetic(n_images: int, n_predictions: int, seed: int = 0) -> list[ImageDetections]:
    rng = np.random.default_rng(seed)
    per_image = rng.multinomial(n_predictions, np.full(n_images, 1 / n_images))
    images = []
    for index, count in enumerate(per_image):
        n_reference = 0 if index % 5 == 0 else int(rng.integers(10, 50))
        corners = rng.uniform(0, 1900, (n_reference, 2))
        reference = np.hstack([corners, corners + rng.uniform(15, 45, (n_reference, 2))])
        found = reference[rng.random(n_reference) < 0.7]
        found = found[: min(len(found), count)]
        jittered = found + rng.normal(0, 4, found.shape)
        jittered[:, 2:] = np.maximum(jittered[:, 2:], jittered[:, :2] + 1)
        extra = count - len(jittered)
        corners = rng.uniform(0, 1900, (extra, 2))
        noise = np.hstack([corners, corners + rng.uniform(15, 45, (extra, 2))])
        boxes = np.vstack([jittered, noise])
        scores = np.concatenate([rng.uniform(0.4, 1, len(jittered)), rng.uniform(0, 0.8, extra)])
        images.append(ImageDetections(reference, boxes, np.round(scores, 6)))
    return images


def coco_true_positives(images: list[ImageDetections]) -> int:
    from faster_coco_eval import COCO, COCOeval_faster

    gt = {"images": [], "annotations": [], "categories": [{"id": 1, "name": "cell"}]}
    detections = []
    for image_id, image in enumerate(images, start=1):
        gt["images"].append({"id": image_id, "width": 2000, "height": 2000})
        for x1, y1, x2, y2 in image.reference:
            w, h = x2 - x1, y2 - y1
            gt["annotations"].append({"id": len(gt["annotations"]) + 1, "image_id": image_id, "category_id": 1,
                                      "bbox": [x1, y1, w, h], "area": w * h, "iscrowd": 0})  # fmt: skip
        for (x1, y1, x2, y2), score in zip(image.boxes, image.scores, strict=True):
            detections.append({"image_id": image_id, "category_id": 1, "bbox": [x1, y1, x2 - x1, y2 - y1],
                               "score": float(score)})  # fmt: skip
    with contextlib.redirect_stdout(io.StringIO()):
        coco_gt = COCO(gt)
        coco_dt = coco_gt.loadRes(detections)
        evaluator = COCOeval_faster(coco_gt, coco_dt, "bbox", extra_calc=True, print_function=lambda *a: None)
        evaluator.params.iouThrs = np.array([0.3])
        evaluator.params.maxDets = [max(len(i.scores) for i in images)]
        evaluator.params.areaRng = [[0, 1e10]]
        evaluator.params.areaRngLbl = ["all"]
        evaluator.evaluate()
        evaluator.accumulate()
    return len(evaluator.eval["matched"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int)
    parser.add_argument("--predictions", type=int)
    arguments = harness.parse(parser, dict(images=50, predictions=5000), dict(images=1000, predictions=100_000))
    images = synthetic(arguments.images, arguments.predictions)
    n_reference = sum(len(i.reference) for i in images)

    start = time.perf_counter()
    ours_tp = sum(int(np.count_nonzero(match_image(i.reference, i.boxes, i.scores) >= 0)) for i in images)
    ours_matching = time.perf_counter() - start
    start = time.perf_counter()
    summary = summarise(images)
    ours_all = time.perf_counter() - start

    start = time.perf_counter()
    coco_tp = coco_true_positives(images)
    coco = time.perf_counter() - start

    print(f"{arguments.predictions} predictions, {n_reference} reference boxes, {arguments.images} images")
    print(f"ours: matching {ours_matching:.2f} s, every DigestPath metric incl. FROC {ours_all:.2f} s, TP {ours_tp}")
    print(f"faster-coco-eval (IoU 0.3, one area range, no cap): {coco:.2f} s, TP {coco_tp}")
    print(f"same true positives: {ours_tp == coco_tp == summary.true_positives}; "
          f"ratio faster-coco-eval / ours (matching): {coco / ours_matching:.2f}x")  # fmt: skip


if __name__ == "__main__":
    main()
