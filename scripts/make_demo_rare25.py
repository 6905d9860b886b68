"""Make the bundled RARE25 demo: synthetic ground truth in the official ``val_metadata.json`` format
(40 patients, about 1,100 frames over 6 stacks) and a submission in the platform's layout.

Deterministic: running it again writes the same bytes. Usage: python scripts/make_demo_rare25.py
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from evaluation.platform.layout import JobSpec, write_input  # noqa: E402
from evaluation.registry import get  # noqa: E402

(INPUT,), (OUTPUT,) = get("rare25").phase.inputs, get("rare25").phase.outputs  # the declaration's sockets

SEED = 25
N_PATIENTS, N_NEOPLASTIC, N_STACKS = 40, 9, 6


def make_metadata(rng: np.random.Generator) -> dict[str, list[dict]]:
    """Patients with 10-45 frames each; neoplastic patients have some NDBE frames too."""
    frames = []
    for patient in range(N_PATIENTS):
        neoplastic = patient % (N_PATIENTS // N_NEOPLASTIC) == 1 and patient // 4 < N_NEOPLASTIC
        count = int(rng.integers(10, 46))
        n_neo = int(rng.integers(count // 3, count)) if neoplastic else 0
        classes = ["neo"] * n_neo + ["ndbe"] * (count - n_neo)
        for k, cls in enumerate(rng.permutation(classes)):
            frames.append({"patient_id": f"RARE-P{patient:03d}", "class": str(cls), "frame": k})
    per_stack = -(-len(frames) // N_STACKS)
    metadata = {}
    for stack in range(N_STACKS):
        chunk = frames[stack * per_stack : (stack + 1) * per_stack]
        name = f"val_batch_{stack}_{len(chunk)}.tiff"
        metadata[name] = [
            {
                "filename": f"{frame['patient_id']}_frame{frame['frame']:03d}.png",
                "index": index,
                "class": frame["class"],
                "patient_id": frame["patient_id"],
            }
            for index, frame in enumerate(chunk)
        ]
    return metadata


def make_likelihoods(rng: np.random.Generator, frames: list[dict]) -> list[float]:
    """A decent classifier: neoplastic frames score higher; rounded to 3 decimals (ties occur)."""
    neo = np.array([frame["class"] == "neo" for frame in frames])
    scores = np.where(neo, rng.beta(5, 2, neo.size), rng.beta(1.2, 6, neo.size))
    return [round(float(s), 3) for s in scores]


def main() -> None:
    rng = np.random.default_rng(SEED)
    metadata = make_metadata(rng)
    ground_truth = REPO / "ground-truth" / "rare25"
    ground_truth.mkdir(parents=True, exist_ok=True)
    (ground_truth / "val_metadata.json").write_text(json.dumps(metadata, indent=1) + "\n")
    demo_input = REPO / "test" / "input" / "rare25"
    shutil.rmtree(demo_input, ignore_errors=True)
    stacks = list(metadata)
    order = rng.permutation(len(stacks))  # the platform lists jobs in no particular order
    jobs = [
        JobSpec(inputs={INPUT: stacks[i]}, outputs={OUTPUT: make_likelihoods(rng, metadata[stacks[i]])}) for i in order
    ]
    write_input(demo_input, jobs, seed=SEED)
    n_frames = sum(len(v) for v in metadata.values())
    print(f"{len(stacks)} stacks, {n_frames} frames -> {ground_truth}, {demo_input}")


if __name__ == "__main__":
    main()
