"""Make the demo of the declared challenge ``cibmtr2025`` (evaluation/declarations/cibmtr2025.toml):
the synthetic cohorts of test/metrics/synthetic_survival.py (whose official numbers are recorded in
test/metrics/golden/cibmtr2025.json): unequal cohorts, about half censored, tied times and risks, a
cohort of two patients, and one cohort without a comparable pair -- as the ground truth
(ground-truth/cibmtr2025/solution.csv: ID, efs, efs_time, race_group) and the participant's CSV
(test/input/cibmtr2025/predictions.csv: ID, prediction).

``generate`` writes the same data anywhere (test/declarative/test_cibmtr2025.py).
Deterministic. Usage: python scripts/make_demo_cibmtr2025.py
"""

from __future__ import annotations

import csv
import importlib.util
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))

from library_demo import write_demo  # noqa: E402

NAME = "cibmtr2025"


def cohorts(seed: int) -> dict:
    """The golden's generator (test/metrics/synthetic_survival.py::cohorts)."""
    spec = importlib.util.spec_from_file_location(
        "synthetic_survival", REPO / "test" / "metrics" / "synthetic_survival.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.cohorts(seed)


def generate(ground_truth: Path, outputs: Path, seed: int = 0) -> dict:
    """``ground_truth/solution.csv`` and each patient's ``outputs/<ID>/prediction.json``."""
    data = cohorts(seed)
    ground_truth.mkdir(parents=True, exist_ok=True)
    with (ground_truth / "solution.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(["ID", "efs", "efs_time", "race_group"])
        for index in range(data["time"].size):
            writer.writerow([f"p{index:03d}", int(data["event"][index]), repr(float(data["time"][index])),
                             data["group"][index]])  # fmt: skip
            (outputs / f"p{index:03d}").mkdir(parents=True, exist_ok=True)
            (outputs / f"p{index:03d}" / "prediction.json").write_text(json.dumps(float(data["risk"][index])))
    return data


def main() -> None:
    write_demo(NAME, generate)


if __name__ == "__main__":
    main()
