"""RARE25 ground truth and a submission written from frames: the one writer of the RARE25 tests
(``test/challenges/test_rare25.py``) and the end-to-end benchmark (``benchmarks/rare25_end_to_end.py``)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from evaluation.platform.layout import JobSpec, write_input
from evaluation.registry import get

(INPUT,), (OUTPUT,) = get("rare25").phase.inputs, get("rare25").phase.outputs  # the declaration's sockets

Frames = Sequence[tuple[str, str, float]]  # (patient, class "neo" / "ndbe", the submitted likelihood)


def write_case(
    ground_truth: Path, input_dir: Path, stacks: Mapping[str, Frames], jobs: list[JobSpec] | None = None
) -> None:
    """``ground_truth/val_metadata.json`` in the official format (frame i of stack s named
    ``s-i.png``) and, in the platform layout, one job per stack submitting its frames' likelihoods
    (or ``jobs``)."""
    ground_truth.mkdir(parents=True, exist_ok=True)
    metadata = {
        stack: [
            {"filename": f"{stack}-{i}.png", "index": i, "class": cls, "patient_id": patient}
            for i, (patient, cls, _) in enumerate(frames)
        ]
        for stack, frames in stacks.items()
    }
    (ground_truth / "val_metadata.json").write_text(json.dumps(metadata))
    if jobs is None:
        jobs = [
            JobSpec({INPUT: stack}, {OUTPUT: [score for _, _, score in frames]}) for stack, frames in stacks.items()
        ]
    write_input(input_dir, jobs)
