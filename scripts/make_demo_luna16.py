"""Make the demo of the declared challenge ``luna16`` (evaluation/declarations/luna16.toml): synthetic
CT scans (world coordinates in mm) whose nodules and CAD marks hold LUNA16's edge cases -- marks
exactly on a nodule's radius (a miss: the distance is strict), duplicate marks, marks on excluded
(irrelevant) findings, one mark inside two overlapping nodules, nodules of unknown size (diameter -1:
10 mm), scans without nodules, without marks or without either, and one scan with more than 100
marks tied at the cap -- as the LUNA16 script reads its ground truth (ground-truth/luna16/
annotations.csv, annotations_excluded.csv, seriesuids.csv; world coordinates in mm) and the platform's
"Multiple points" outputs (test/input/luna16).

``luna_scans`` is the data; ``official_csvs`` writes it as the LUNA16 script reads it (with the marks
as its results CSV), which is how test/metrics/golden/luna16.json was made; ``reference="json"``
writes the reference as one "Multiple points" JSON per scan instead (nodules/<scan>.json, each point
with its ``diameter_mm``, the excluded findings named "excluded").
Deterministic. Usage: python scripts/make_demo_luna16.py
"""

from __future__ import annotations

import csv
import json
import random
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))

NAME = "luna16"
OUTPUT = "nodule-locations"
EXCLUDED = "excluded"  # the name of an excluded (irrelevant) finding in a reference JSON


def luna_scans(seed: int = 0) -> dict[str, dict[str, list[list[float]]]]:
    """Each scan's ``nodules`` and ``excluded`` findings ([x, y, z, diameter_mm]) and ``marks``
    ([x, y, z, probability]), scans in order."""
    rng = random.Random(seed)
    scans: dict[str, dict[str, list[list[float]]]] = {}

    def scan(name: str) -> dict[str, list[list[float]]]:
        scans[name] = {"nodules": [], "excluded": [], "marks": []}
        return scans[name]

    edge = scan("scan-01")  # exactly on the radius, inside it, duplicates
    edge["nodules"] += [[-60.5, 20.25, -110.0, 10.0], [40.0, -35.5, -150.25, 6.0]]
    edge["marks"] += [[-57.5, 24.25, -110.0, 0.97],  # distance 5 = radius: a miss (a false positive)
                      [-60.5, 20.25, -105.0, 0.35],  # distance 5 again
                      [-58.5, 21.25, -109.0, 0.6],  # inside: a hit
                      [40.5, -35.0, -150.0, 0.8], [40.5, -35.0, -150.0, 0.8],  # duplicates: one hit
                      [41.0, -35.5, -149.25, 0.42],  # a third mark on the same nodule
                      [10.0, 10.0, 10.0, 0.55]]  # fmt: skip
    overlap = scan("scan-02")  # one mark in two overlapping nodules; an excluded finding
    overlap["nodules"] += [[0.0, 0.0, 0.0, 8.0], [5.0, 0.0, 0.0, 8.0], [-80.0, 60.0, 30.0, -1.0]]
    overlap["excluded"] += [[30.0, 30.0, 30.0, -1.0], [-20.0, 5.0, 12.0, 4.0]]
    overlap["marks"] += [[2.5, 0.0, 0.0, 0.9],  # hits both nodules
                         [-77.0, 63.0, 30.0, 0.3],  # 4.24 mm from a nodule of unknown size (radius 5): a hit
                         [32.0, 31.0, 29.0, 0.99],  # on an excluded finding: ignored
                         [-20.0, 5.0, 13.5, 0.65],  # on the other excluded finding: ignored
                         [-20.0, 5.0, 14.0, 0.4],  # on its radius (2 mm): a false positive
                         [50.0, 50.0, 50.0, 0.8]]  # fmt: skip
    scan("scan-03")["marks"] += [
        [float(rng.randint(-90, 90)), float(rng.randint(-90, 90)), -200.0 + i, 0.05 * i] for i in range(1, 8)
    ]  # no nodule: false positives only
    scan("scan-04")["nodules"] += [[12.0, -40.0, -80.0, 5.5]]  # a nodule and no mark: a miss
    scan("scan-05")  # neither
    many = scan("scan-06")  # more than 100 marks: the cap (ties at its threshold dropped)
    many["nodules"] += [[-30.0, -30.0, -30.0, 12.0], [70.0, 0.0, -60.0, 7.0]]
    scores = [round(0.3 + 0.006 * i, 3) for i in range(98)] + [0.3, 0.3, 0.3, 0.3, 0.3]  # 103, rank 101 tied
    rng.shuffle(scores)
    many["marks"] += [[-30.0 + rng.uniform(-3, 3), -30.0 + rng.uniform(-3, 3), -30.0, s] for s in scores[:4]]
    many["marks"] += [[rng.uniform(-100, 100), rng.uniform(-100, 100), rng.uniform(-250, -50), s] for s in scores[4:]]
    many["marks"].append([70.0, 1.0, -60.0, 0.3])  # a hit, but tied at the cap's threshold: dropped
    for number in range(7, 15):  # random scans: nodules, near and far marks, an excluded finding
        case = scan(f"scan-{number:02d}")
        for _ in range(rng.randint(0, 3)):
            centre = [rng.uniform(-120, 120), rng.uniform(-120, 120), rng.uniform(-300, -20)]
            diameter = rng.choice([-1.0, round(rng.uniform(3.5, 25.0), 2)])
            case["nodules"].append([*centre, diameter])
            for _ in range(rng.randint(0, 2)):
                case["marks"].append([c + rng.uniform(-4, 4) for c in centre] + [round(rng.random(), 2)])
        if rng.random() < 0.4:
            centre = [rng.uniform(-120, 120), rng.uniform(-120, 120), rng.uniform(-300, -20)]
            case["excluded"].append([*centre, -1.0])
            case["marks"].append([c + 1.0 for c in centre] + [round(rng.random(), 2)])
        for _ in range(rng.randint(0, 6)):
            case["marks"].append([rng.uniform(-150, 150), rng.uniform(-150, 150), rng.uniform(-300, 0),
                                  round(rng.random(), 2)])  # fmt: skip
    return scans


def scan_findings(scans: dict[str, dict[str, list[list[float]]]], excluded: bool = True) -> list:
    """The scans as ``evaluation.metrics.hit_radius`` takes them (the excluded findings ignored, or
    left out), in order."""
    import numpy as np

    from evaluation.metrics.hit_radius import ScanFindings

    found = []
    for scan in scans.values():
        rows = np.array(scan["nodules"] + (scan["excluded"] if excluded else []), float).reshape(-1, 4)
        marks = np.array(scan["marks"], float).reshape(-1, 4)
        ignored = np.arange(len(rows)) >= len(scan["nodules"])
        found.append(ScanFindings(rows[:, :3], rows[:, 3], ignored, marks[:, :3], marks[:, 3]))
    return found


def reference_document(scan: dict[str, list[list[float]]]) -> dict:
    """A scan's reference points: the nodules, then the excluded findings named "excluded"."""
    points = [{"point": row[:3], "diameter_mm": row[3]} for row in scan["nodules"]]
    points += [{"point": row[:3], "diameter_mm": row[3], "name": EXCLUDED} for row in scan["excluded"]]
    return {"type": "Multiple points", "points": points, "version": {"major": 1, "minor": 0}}


def generate(
    ground_truth: Path, outputs: Path, seed: int = 0, reference: str = "csv"
) -> dict[str, dict[str, list[list[float]]]]:
    """The reference under ``ground_truth`` (the script's CSVs, or ``reference="json"``: one JSON per
    scan under ``nodules``) and each scan's output under ``outputs/<scan>/nodule-locations.json``;
    returns :func:`luna_scans`."""
    scans = luna_scans(seed)
    if reference == "csv":
        official_csvs(scans, ground_truth, results=False)
    for case, scan in scans.items():
        if reference == "json":
            (ground_truth / "nodules").mkdir(parents=True, exist_ok=True)
            (ground_truth / "nodules" / f"{case}.json").write_text(json.dumps(reference_document(scan)))
        (outputs / case).mkdir(parents=True, exist_ok=True)
        points = [{"point": row[:3], "probability": row[3]} for row in scan["marks"]]
        document = {"type": "Multiple points", "points": points, "version": {"major": 1, "minor": 0}}
        (outputs / case / f"{OUTPUT}.json").write_text(json.dumps(document))
    return scans


def official_csvs(scans: dict[str, dict[str, list[list[float]]]], folder: Path, results: bool = True) -> None:
    """The scans as the LUNA16 script reads them: annotations.csv, annotations_excluded.csv (seriesuid,
    coordX, coordY, coordZ, diameter_mm), seriesuids.csv and (``results``) results.csv (..., probability);
    numbers written with ``repr`` (read back exactly)."""
    folder.mkdir(parents=True, exist_ok=True)
    header = ["seriesuid", "coordX", "coordY", "coordZ"]
    files = [("annotations", "nodules", "diameter_mm"), ("annotations_excluded", "excluded", "diameter_mm")]
    for name, key, last in files + ([("results", "marks", "probability")] if results else []):
        with (folder / f"{name}.csv").open("w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow([*header, last])
            rows = ([case, *(repr(float(v)) for v in row)] for case, scan in scans.items() for row in scan[key])
            writer.writerows(rows)
    (folder / "seriesuids.csv").write_text("".join(f"{case}\n" for case in scans))


def main() -> None:
    from library_demo import write_demo

    write_demo(NAME, generate)


if __name__ == "__main__":
    main()
