"""Make the demo of the declared challenge ``airogs`` (evaluation/declarations/airogs.toml), and the
synthetic data whose official numbers are recorded in test/metrics/golden/airogs.json.

``generate`` writes ``ground_truth/reference.csv`` (challenge_id, class: NRG, RG or U, in a shuffled
row order: the frames are the rows in file order, not sorted) and, per stack k, what an algorithm job
writes: ``outputs/<k>/<slug>.json``, four JSON lists with one value per frame. The edge cases: tied
likelihoods (two decimals) and tied ungradability scores (one decimal, negative ones too), likelihoods of
exactly 0 and 1, ungradable frames (left out of the screening metrics), a last stack shorter than the
others, and ``negatives``: a number of NRG frames that is a multiple of 20, so that a threshold lands
at specificity 0.95 exactly. ``kind`` makes the degenerate sets: ``"perfect"`` (every likelihood 0 or
1 and the right decision), ``"no_ungradable"`` (no U: the ungradability AUC is undefined) and
``"no_glaucoma"`` (no RG: the screening metrics are undefined).

Deterministic. Usage: python scripts/make_demo_airogs.py (seed 0: 340 frames, stacks of 300).
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))

from library_demo import write_demo  # noqa: E402

NAME = "airogs"
SLUGS = ("multiple-referable-glaucoma-likelihoods", "multiple-referable-glaucoma-binary-decisions",
         "multiple-referable-ungradability-scores", "multiple-referable-ungradability-binary-decisions")  # fmt: skip
# (seed, frames, stack_size, negatives or 0, kind): the golden's runs; the first is the bundled demo
RUNS = (
    (0, 340, 300, 0, "mixed"),
    (1, 47, 10, 0, "mixed"),
    (2, 60, 7, 40, "mixed"),
    (3, 83, 20, 20, "mixed"),
    (4, 25, 25, 0, "perfect"),
    (5, 30, 8, 0, "no_ungradable"),
    (6, 30, 8, 0, "no_glaucoma"),
)


def classes(rng: np.random.Generator, frames: int, negatives: int, kind: str) -> list[str]:
    """Each frame's class, in file order (shuffled)."""
    if kind == "no_ungradable":
        drawn = rng.choice(["NRG", "RG"], frames, p=[0.7, 0.3])
    elif kind == "no_glaucoma":
        drawn = rng.choice(["NRG", "U"], frames, p=[0.8, 0.2])
    elif negatives:
        rest = rng.choice(["RG", "U"], frames - negatives, p=[0.7, 0.3])
        drawn = rng.permutation(np.r_[np.full(negatives, "NRG"), rest])
    else:
        drawn = rng.choice(["NRG", "RG", "U"], frames, p=[0.65, 0.22, 0.13])
    return [str(c) for c in drawn]


def answers(rng: np.random.Generator, labels: list[str], kind: str) -> dict[str, list]:
    """The four lists of one set of frames."""
    glaucoma = np.array([c == "RG" for c in labels])
    ungradable = np.array([c == "U" for c in labels])
    if kind == "perfect":
        likelihoods = glaucoma.astype(float)
        scores = ungradable.astype(float) * 3.0 - 1.0
    else:
        likelihoods = np.round(np.abs(glaucoma - rng.beta(2, 5, glaucoma.size)), 2)
        likelihoods[rng.random(glaucoma.size) < 0.05] = 0.0
        likelihoods[rng.random(glaucoma.size) < 0.05] = 1.0
        scores = np.round(np.abs(ungradable - rng.beta(2, 5, glaucoma.size)) * 6 - 1, 1)
    return {
        SLUGS[0]: [float(v) for v in likelihoods],
        SLUGS[1]: [bool(v >= 0.5) for v in likelihoods],
        SLUGS[2]: [float(v) for v in scores],
        SLUGS[3]: [bool(v >= 2) for v in scores],
    }


def generate(ground_truth: Path, outputs: Path, seed: int = 0) -> dict:
    """``ground_truth/reference.csv`` and ``outputs/<stack>/<slug>.json`` for the run of ``seed`` in
    ``RUNS``; returns {"ids", "classes", "answers", "stack_size"}."""
    _, frames, stack_size, negatives, kind = next(run for run in RUNS if run[0] == seed)
    rng = np.random.default_rng(seed)
    labels = classes(rng, frames, negatives, kind)
    ids = [f"TRAIN{n:06d}" for n in rng.permutation(np.arange(100, 100 + 3 * frames))[:frames]]
    lists = answers(rng, labels, kind)
    ground_truth.mkdir(parents=True, exist_ok=True)
    with (ground_truth / "reference.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(["challenge_id", "class"])
        writer.writerows(zip(ids, labels, strict=True))
    for stack, start in enumerate(range(0, frames, stack_size)):
        folder = outputs / str(stack)
        folder.mkdir(parents=True, exist_ok=True)
        for slug, values in lists.items():
            (folder / f"{slug}.json").write_text(json.dumps(values[start : start + stack_size]))
    return {"ids": ids, "classes": labels, "answers": lists, "stack_size": stack_size}


def main() -> None:
    write_demo(NAME, generate)


if __name__ == "__main__":
    main()
