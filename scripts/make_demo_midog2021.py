"""Make the demo of the declared challenge ``midog2021`` (evaluation/declarations/midog2021.toml):
the synthetic images of ``midog_points`` (test/metrics/test_detection_decision.py, whose official
numbers are recorded in test/metrics/golden/midog2021.json): hits, duplicates, near misses, hard
negatives named "non-mitotic figure", unnamed points, points without a probability, an image without
reference points, and one prediction between two reference points (the matching order decides) --
as reference points (ground-truth/midog2021/points/<image>.json) and the platform's "Multiple points"
outputs (test/input/midog2021).

``generate`` writes the same data anywhere (test/declarative/test_midog2021.py).
Deterministic. Usage: python scripts/make_demo_midog2021.py
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))

from library_demo import write_demo  # noqa: E402

NAME = "midog2021"
OUTPUT = "mitotic-figures"


def midog_points(seed: int) -> dict[str, tuple[list, list]]:
    """The golden's generator (test/metrics/test_detection_decision.py::midog_points)."""
    path = REPO / "test" / "metrics" / "test_detection_decision.py"
    spec = importlib.util.spec_from_file_location("midog_golden_generator", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.midog_points(seed)


def generate(ground_truth: Path, outputs: Path, seed: int = 0) -> dict[str, tuple[list, list]]:
    """Reference points under ``ground_truth/points`` and each image's output under
    ``outputs/<image>/mitotic-figures.json``; returns the points keyed by image ("001.tiff")."""
    images = midog_points(seed)
    for image, (reference, predictions) in images.items():
        case = image.removesuffix(".tiff")
        (ground_truth / "points").mkdir(parents=True, exist_ok=True)
        (ground_truth / "points" / f"{case}.json").write_text(json.dumps(reference))
        (outputs / case).mkdir(parents=True, exist_ok=True)
        document = {"type": "Multiple points", "points": predictions, "version": {"major": 1, "minor": 0}}
        (outputs / case / f"{OUTPUT}.json").write_text(json.dumps(document))
    return images


def main() -> None:
    write_demo(NAME, generate)


if __name__ == "__main__":
    main()
