"""HECKTOR 2025 task 2 (C-index of recurrence-free survival) end to end at 20,000 patients:
``clinical.csv`` and a complete submission of ``rfs.json`` risks written in the platform layout
(evaluation/platform/layout.py ``write_input``) into a temp dir, then
``python -m evaluation --challenge hecktor2025-task2`` with its 1,000-resample bootstrap CI.

Prints the wall time, the peak RSS of every process of the run, and checks the C-index against
``lifelines.utils.concordance_index`` on the same data (computed here, in the same run). Timing
reference, run as a subprocess from the same files: a plain script of the same job (pandas reads
clinical.csv, each job's rfs.json read by json, lifelines' C-index, and its 1,000-resample
bootstrap as one lifelines call per resample, timed on ``--reference-resamples`` resamples and
scaled to 1,000).
Acceptance (issue 12): under 60 s on 2 cores, every process under 1.5 GiB, C-index equal to lifelines.

Usage: .venv/bin/python benchmarks/hecktor_prognosis_run.py [--patients 20000] [--workdir DIR] [--full]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import harness
import numpy as np
from lifelines.utils import concordance_index

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "benchmarks")]

from hecktor_full_run import run_and_watch  # noqa: E402

from evaluation.platform.layout import JobSpec, write_input  # noqa: E402
from evaluation.registry import get  # noqa: E402

CT, PET = get("hecktor2026").phase.inputs  # the declared challenge's sockets
*_, RFS = get("hecktor2026").phase.outputs

REFERENCE_SCRIPT = """
import json, sys, time
from pathlib import Path
import numpy as np, pandas as pd
from lifelines.utils import concordance_index
start = time.perf_counter()
ground_truth, input_dir, resamples = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
clinical = pd.read_csv(ground_truth / "clinical.csv").set_index("PatientID")
risk = {}
for job in json.loads((input_dir / "predictions.json").read_text()):
    patient = job["inputs"][0]["image"]["name"].split("__")[0]
    output = job["outputs"][0]["interface"]["relative_path"]
    risk[patient] = json.loads((input_dir / job["pk"] / "output" / output).read_text())
predicted = -np.array([risk[p] for p in clinical.index])
time_, event = clinical["RFS"].to_numpy(float), clinical["Relapse"].to_numpy(bool)
value = concordance_index(time_, predicted, event)
setup = time.perf_counter() - start
rng, n = np.random.default_rng(0), len(time_)
start = time.perf_counter()
for _ in range(resamples):
    draw = rng.integers(0, n, n)
    concordance_index(time_[draw], predicted[draw], event[draw])
print(json.dumps({"value": value, "seconds": setup + (time.perf_counter() - start) * 1000 / resamples}))
"""


def reference(ground_truth: Path, input_dir: Path, resamples: int) -> dict:
    """The plain script's C-index and its time scaled to 1,000 resamples (plus its start-up, reading
    and full-data C-index); the interpreter's start-up included, as for ours."""
    start = time.perf_counter()
    command = [sys.executable, "-c", REFERENCE_SCRIPT, str(ground_truth), str(input_dir), str(resamples)]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return {**result, "seconds": result["seconds"] + (time.perf_counter() - start)}


def make_data(root: Path, patients: int) -> tuple[Path, Path, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    time_ = rng.integers(30, 2500, patients).astype(float)  # days: many tied times
    event = rng.random(patients) < 0.4
    risk = np.round(-time_ / 1000 + rng.normal(0, 0.8, patients), 2)  # tied predictions too
    ground_truth = root / "ground-truth"
    ground_truth.mkdir(parents=True)
    rows = ["PatientID,RFS,Relapse,T-stage,N-stage,HPV Status"]
    rows += [f"P{i:05d},{t:g},{int(e)},T2,N1,1" for i, (t, e) in enumerate(zip(time_, event, strict=True))]
    (ground_truth / "clinical.csv").write_text("\n".join(rows) + "\n")
    jobs = [JobSpec({CT: f"P{i:05d}__CT.mha", PET: f"P{i:05d}__PT.mha"}, {RFS: float(r)}) for i, r in enumerate(risk)]
    write_input(root / "input", jobs)
    return ground_truth, root / "input", time_, event, risk


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--patients", type=int)
    parser.add_argument("--reference-resamples", type=int, help="lifelines bootstrap calls timed (scaled to 1,000)")
    parser.add_argument("--workdir", type=Path, default=None)
    args = harness.parse(
        parser, dict(patients=200, reference_resamples=10), dict(patients=20_000, reference_resamples=50)
    )
    root = Path(tempfile.mkdtemp(prefix="hecktor-task2-", dir=args.workdir))
    try:
        start = time.perf_counter()
        ground_truth, input_dir, time_, event, risk = make_data(root, args.patients)
        print(f"{args.patients} patients written in {time.perf_counter() - start:.0f} s")
        command = [sys.executable, "-m", "evaluation", "--challenge", "hecktor2025-task2", "--input", str(input_dir),
                   "--output", str(root / "output"), "--ground-truth", str(ground_truth)]  # fmt: skip
        start = time.perf_counter()
        done, peaks = run_and_watch(command)
        seconds = time.perf_counter() - start
        if done.returncode != 0:
            raise SystemExit(f"evaluation failed: {done.stderr.strip().splitlines()[-1]}")
        start = time.perf_counter()
        expected = concordance_index(time_, -risk, event)
        lifelines_seconds = time.perf_counter() - start
        prognosis = json.loads((root / "output" / "metrics.json").read_text())["aggregates"]["prognosis"]
        same = abs(prognosis["c_index"] - expected) <= 1e-12
        main_peak = peaks.pop(next(iter(peaks)))
        others = ", ".join(f"{p:.2f} GiB" for p in sorted(peaks.values(), reverse=True)) or "none (cases in-process)"
        print(f"evaluation: {seconds:.1f} s end to end; peak RSS main process {main_peak:.2f} GiB, other processes "
              f"{others}")  # fmt: skip
        print(f"C-index {prognosis['c_index']:.15f} (CI {prognosis['c_index_ci_low']:.4f}-"
              f"{prognosis['c_index_ci_high']:.4f}); lifelines {expected:.15f} in {lifelines_seconds:.2f} s: "
              f"{'equal' if same else 'DIFFERENT'}")  # fmt: skip
        met = seconds < 60 and max([main_peak, *peaks.values()]) < 1.5 and same
        print(f"acceptance (< 60 s, every process < 1.5 GiB, equal to lifelines): {'met' if met else 'NOT met'}")
        theirs = reference(ground_truth, input_dir, args.reference_resamples)
        print(f"plain script (pandas + json + lifelines, 1,000 resamples scaled from {args.reference_resamples}): "
              f"{theirs['seconds']:.1f} s | ours {seconds:.1f} s | {theirs['seconds'] / seconds:.1f}x")  # fmt: skip
        if not same or abs(theirs["value"] - expected) > 1e-12:
            raise SystemExit(1)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
